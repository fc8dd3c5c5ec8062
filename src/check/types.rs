//! Types beyond the reference: `{steps.T.json.a.b}` paths checked against T's `expect`
//! contract (W0106), reported at the placeholder with a second label on the contract.

use super::refs::Use;
use crate::diag::{Code, Diagnostic};
use crate::flow::{Contract, Flow};
use crate::source::Span;

/// W0106: `{steps.X.json.path}` paths that X's `expect` contract rules out.
pub fn contract_paths(flow: &Flow, all: &[Use<'_>], out: &mut Vec<Diagnostic>) {
    for u in all {
        if u.path.target != crate::syntax::Target::StepJson {
            continue;
        }
        let Some(t) = u.path.step_id().and_then(|id| flow.index_of(id)) else {
            continue;
        };
        let Some(contract) = &flow.phases[t].expect else {
            continue;
        };
        let target = &flow.phases[t];
        let root_key = target
            .written
            .get("expect")
            .copied()
            .unwrap_or(contract.span);
        if let Some(found) = walk(contract, root_key, u.path.dig_path()) {
            let p = &flow.phases[u.phase];
            let help = match found.near {
                Some(near) => {
                    let path = u.path.dig_path();
                    let mut keys: Vec<&str> = path[..found.at].iter().map(|s| &*s.key).collect();
                    keys.push(near);
                    format!(
                        "did you mean {{steps.{}.json.{}}}?",
                        target.id,
                        keys.join(".")
                    )
                }
                None => format!(
                    "fix the path, or extend the 'expect' contract of '{}'",
                    target.id
                ),
            };
            out.push(
                Diagnostic::new(
                    Code::ContractMissingProperty,
                    format!(
                        "{}: {{{}}} {}, so {}",
                        p.id,
                        u.path.text,
                        found.problem,
                        unresolved_effect(&u.field)
                    ),
                )
                .at(u.span)
                .phase(&p.id)
                .with_label("contradicts the contract")
                .label(found.key, format!("'{}' promises this shape", target.id))
                .help(help),
            );
        }
    }
}

/// What an unresolved placeholder does at run time, by the field it is in (SPEC §4.4, §6): a
/// text field keeps it verbatim (the model sees `{steps.t.json.x}` itself); a condition
/// operand is undefined.
fn unresolved_effect(field: &str) -> String {
    match field {
        "when" | "until" | "eval" => {
            "it is undefined when the condition is evaluated (empty text, falsy)".to_owned()
        }
        "task" | "context" | "judge" | "score.judge.task" => {
            "it stays verbatim in the prompt at run time".to_owned()
        }
        f if f.starts_with("branches[") => "it stays verbatim in the prompt at run time".to_owned(),
        f => format!("it stays verbatim in '{f}' at run time"),
    }
}

/// Where a path leaves its contract.
struct Contradiction<'c> {
    problem: String,
    /// The key of the contract node it contradicts (`expect`, or a property's key).
    key: Span,
    /// The index of the offending path segment, and a declared property it resembles.
    at: usize,
    near: Option<&'c str>,
}

/// Walk a path through a contract; the first contradiction.
fn walk<'c>(
    root: &'c Contract,
    root_key: Span,
    path: &[crate::syntax::Seg],
) -> Option<Contradiction<'c>> {
    let mut cur = root;
    let mut key = root_key;
    for (i, seg) in path.iter().enumerate() {
        let here = || {
            if i == 0 {
                "the output".to_owned()
            } else {
                format!(
                    "'{}'",
                    path[..i]
                        .iter()
                        .map(|s| &*s.key)
                        .collect::<Vec<_>>()
                        .join(".")
                )
            }
        };
        let found = |problem: String, near: Option<&'c str>| Contradiction {
            problem,
            key,
            at: i,
            near,
        };
        let ty = cur.ty.as_ref().map(|t| t.value.as_str());
        let is_object = ty == Some("object")
            || (ty.is_none() && (!cur.properties.is_empty() || !cur.required.is_empty()));
        let is_array = ty == Some("array") || (ty.is_none() && cur.items.is_some());
        if let Some(t @ ("string" | "number" | "integer" | "boolean" | "null")) = ty {
            return Some(found(
                format!("descends into {} which the contract types as {t}", here()),
                None,
            ));
        }
        if is_array {
            if seg.index.is_none() && &*seg.key != "length" {
                return Some(found(
                    format!(
                        "uses '{}' on {}, which the contract types as an array (index it with a number)",
                        seg.key,
                        here()
                    ),
                    None,
                ));
            }
            if &*seg.key == "length" {
                // The array's length: a number, whatever the items are.
                return None;
            }
            match &cur.items {
                Some(items) => {
                    key = items.key;
                    cur = &items.value;
                }
                None => return None,
            }
        } else if is_object {
            if seg.index.is_some() && !cur.properties.contains_key(&*seg.key) {
                return Some(found(
                    format!(
                        "indexes {} with {}, but the contract types it as an object, not an array",
                        here(),
                        seg.key
                    ),
                    None,
                ));
            }
            match cur.properties.get(&*seg.key) {
                Some(p) => {
                    key = p.key;
                    cur = &p.value;
                }
                None if cur.properties.is_empty() => return None,
                None => {
                    let known: Vec<&str> = cur.properties.keys().map(String::as_str).collect();
                    let near = crate::diag::did_you_mean(&seg.key, known.iter().copied())
                        .and_then(|n| cur.properties.get_key_value(n).map(|(k, _)| k.as_str()));
                    return Some(found(
                        format!(
                            "reads property '{}', which the contract{} does not declare (it has: {})",
                            seg.key,
                            if i == 0 {
                                String::new()
                            } else {
                                format!(" of {}", here())
                            },
                            known.join(", ")
                        ),
                        near,
                    ));
                }
            }
        } else {
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests;
