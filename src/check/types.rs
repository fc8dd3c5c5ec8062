//! Types beyond the reference: `{steps.T.json.a.b}` paths checked against T's `expect`
//! contract (W0106), reported at the placeholder with a second label on the contract.

use super::refs::Use;
use crate::diag::{Code, Diagnostic};
use crate::flow::{Contract, Flow};

pub fn contract_paths(
    flow: &Flow,
    graph: &super::graph::Graph,
    all: &[Use<'_>],
    out: &mut Vec<Diagnostic>,
) {
    for u in all {
        if u.path.target != crate::syntax::Target::StepJson {
            continue;
        }
        let Some(&t) = u.path.step_id().and_then(|id| graph.ids.get(id)) else {
            continue;
        };
        let Some(contract) = &flow.phases[t].expect else {
            continue;
        };
        if let Some((problem, at)) = walk(contract, u.path.dig_path()) {
            let p = &flow.phases[u.phase];
            out.push(
                Diagnostic::new(
                    Code::ContractMissingProperty,
                    format!(
                        "{}: {{{}}} {problem}, so it resolves empty at run time",
                        p.id, u.path.text
                    ),
                )
                .at(u.span)
                .phase(&p.id)
                .with_label("contradicts the contract")
                .label(
                    at.span,
                    format!("'{}' promises this shape", flow.phases[t].id),
                )
                .help("fix the path, or extend the contract of the referenced phase"),
            );
        }
    }
}

/// Walk a path through a contract; the first contradiction and the contract node it hits.
fn walk<'c>(root: &'c Contract, path: &[crate::syntax::Seg]) -> Option<(String, &'c Contract)> {
    let mut cur = root;
    for (i, seg) in path.iter().enumerate() {
        let ty = cur.ty.as_ref().map(|t| t.value.as_str());
        let is_object = ty == Some("object")
            || (ty.is_none() && (!cur.properties.is_empty() || !cur.required.is_empty()));
        let is_array = ty == Some("array") || (ty.is_none() && cur.items.is_some());
        let so_far = || {
            path[..i]
                .iter()
                .map(|s| &*s.key)
                .collect::<Vec<_>>()
                .join(".")
        };
        let here = || {
            if i == 0 {
                "the output".to_owned()
            } else {
                format!("'{}'", so_far())
            }
        };
        if let Some(t @ ("string" | "number" | "integer" | "boolean" | "null")) = ty {
            return Some((
                format!("descends into {} which the contract types as {t}", here()),
                cur,
            ));
        }
        if is_array {
            if seg.index.is_none() && &*seg.key != "length" {
                return Some((
                    format!(
                        "uses '{}' on {}, which the contract types as an array (index it with a number)",
                        seg.key,
                        here()
                    ),
                    cur,
                ));
            }
            match &cur.items {
                Some(items) => cur = &items.value,
                None => return None,
            }
        } else if is_object {
            if seg.index.is_some() && !cur.properties.contains_key(&*seg.key) {
                return Some((
                    format!(
                        "indexes {} with {}, but the contract types it as an object, not an array",
                        here(),
                        seg.key
                    ),
                    cur,
                ));
            }
            match cur.properties.get(&*seg.key) {
                Some(p) => cur = &p.value,
                None if cur.properties.is_empty() => return None,
                None => {
                    let known: Vec<&str> = cur.properties.keys().map(String::as_str).collect();
                    return Some((
                        format!(
                            "reads property '{}' that the contract of {} does not declare (it has: {})",
                            seg.key,
                            here(),
                            known.join(", ")
                        ),
                        cur,
                    ));
                }
            }
        } else {
            return None;
        }
    }
    None
}
