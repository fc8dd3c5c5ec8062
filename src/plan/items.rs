//! How many items a map fans out over (SPEC §18): `--items N`, else the `over` source's
//! contract (`minItems`/`maxItems` of the array it names), else at least 0 and an unknown most.

use crate::eval::coerce_array;
use crate::flow::{Contract, Flow, Phase, PhaseKind};
use crate::value::{Map, Value};

/// The fewest and most items, or why the most is unknown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Items {
    /// The fewest (0 when nothing says more).
    pub min: u64,
    /// The most; `None` when unknown.
    pub max: Option<u64>,
}

/// A map's items: `fixed` (`--items N`) wins; else from what `over` names.
pub fn of_map(flow: &Flow, p: &Phase, fixed: Option<u64>, args: Option<&Map>) -> Items {
    if let Some(n) = fixed {
        return Items {
            min: n,
            max: Some(n),
        };
    }
    from_over(flow, p, args, 0)
}

/// Sources are followed through maps over maps at most this deep.
const MAX_CHAIN: usize = 16;

fn unknown() -> Items {
    Items { min: 0, max: None }
}

fn from_over(flow: &Flow, p: &Phase, args: Option<&Map>, depth: usize) -> Items {
    let PhaseKind::Map(k) = &p.kind else {
        return unknown();
    };
    let Some(over) = &k.over else {
        return unknown();
    };
    // Exactly one placeholder: its raw value is the array (SPEC §3.4).
    let refs = over.template.refs();
    let [one] = refs else { return unknown() };
    let text = over.as_str();
    if one.span.start != 0 || one.span.end as usize != text.len() {
        return unknown();
    }
    let path = text[1..text.len() - 1].trim();
    let mut segs = path.split('.');
    match segs.next() {
        Some("args") => {
            let (Some(args), Some(name)) = (args, segs.next()) else {
                return unknown();
            };
            let mut v = args.get(name);
            for s in segs {
                v = v.and_then(|v| match v {
                    Value::Object(o) => o.get(s),
                    Value::Array(a) => s.parse::<usize>().ok().and_then(|i| a.get(i)),
                    _ => None,
                });
            }
            match v.and_then(coerce_array) {
                Some(a) => Items {
                    min: a.len() as u64,
                    max: Some(a.len() as u64),
                },
                None => unknown(),
            }
        }
        Some("steps") => {
            let Some(src) = segs.next().and_then(|id| flow.phase(id)) else {
                return unknown();
            };
            let field = segs.next();
            let rest: Vec<&str> = segs.collect();
            if field != Some("json") && field != Some("output") {
                return unknown();
            }
            if rest.is_empty() && depth < MAX_CHAIN {
                // A map's and a parallel's json: one element per successful item or branch.
                match &src.kind {
                    PhaseKind::Map(_) if field == Some("json") => {
                        return from_over(flow, src, args, depth + 1);
                    }
                    PhaseKind::Parallel(par) if field == Some("json") => {
                        let n = par.branches.len() as u64;
                        return Items {
                            min: n,
                            max: Some(n),
                        };
                    }
                    _ => {}
                }
            }
            let Some(mut c) = src.expect.as_deref() else {
                return unknown();
            };
            for s in rest {
                let next = if s.parse::<usize>().is_ok() {
                    c.items.as_deref().map(|f| &f.value)
                } else {
                    c.properties.get(s).map(|f| &f.value)
                };
                match next {
                    Some(n) => c = n,
                    None => return unknown(),
                }
            }
            of_contract(c)
        }
        _ => unknown(),
    }
}

/// The item bounds an array contract states.
fn of_contract(c: &Contract) -> Items {
    Items {
        min: c.min_items.as_ref().map_or(0, |m| m.value),
        max: c.max_items.as_ref().map(|m| m.value),
    }
}

/// The phase a map's `over` reads (`{steps.X…}`), for the assumption that would settle an
/// unknown count.
pub fn source_id(p: &Phase) -> Option<&str> {
    let PhaseKind::Map(k) = &p.kind else {
        return None;
    };
    let text = k.over.as_ref()?.as_str();
    let inner = text.trim().strip_prefix("{steps.")?;
    inner.split(['.', '}']).next().filter(|s| !s.is_empty())
}
