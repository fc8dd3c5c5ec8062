//! The type rules of SPEC §7.5: paths that never resolve (E0209) or leave their contract
//! (W0106), map `over` values that are no array (E0211, W0107), and comparisons whose outcome
//! the type fixes (E0212) or that compare as text (W0108).

use std::collections::HashMap;

use super::infer::{Dug, Env, Root, Typed, element_of};
use super::lattice::{Stuck, Ty, lits_text};
use crate::check::refs::Use;
use crate::diag::{Code, Diagnostic, did_you_mean};
use crate::eval::coerce::WRAPPER_KEYS;
use crate::eval::condition::{Item, compare, numeric};
use crate::flow::{EvalKind, PhaseKind};
use crate::json::Str;
use crate::source::Span;
use crate::syntax::condition::{CmpOp, Expr, Node, Operand, parse_cond};
use crate::syntax::{RefPath, Target};
use crate::value::Value;

/// E0209 and W0106 at every placeholder whose path goes beyond its root.
/// The same path read again in one phase is the same mistake: reported once, at its first
/// read, with a label on each repeat.
pub fn paths(env: &mut Env<'_>, all: &[Use<'_>], out: &mut Vec<Diagnostic>) {
    let mut reported: HashMap<(usize, &str), usize> = HashMap::new();
    for u in all {
        // Most placeholders stop at their root (`{steps.X.output}`, `{args.topic}`): their
        // type is not needed for a path check.
        if !digs(u.path) {
            continue;
        }
        // (Most flows report nothing: no key is hashed then.)
        if !reported.is_empty()
            && let Some(&at) = reported.get(&(u.phase, &*u.path.text))
        {
            let d: &mut Diagnostic = &mut out[at];
            d.labels.push(crate::diag::Label {
                span: u.span,
                message: format!("the same read ({})", u.field),
                file: None,
            });
            continue;
        }
        let Some((root, dug)) = env.dig(u.phase, &u.field, u.path) else {
            continue;
        };
        let found = unresolvable(env, u, &root, &dug).or_else(|| undeclared(env, u, &root, &dug));
        if let Some(d) = found {
            reported.insert((u.phase, &u.path.text), out.len());
            out.push(d);
        }
    }
}

/// Does the path have segments past the shortest root it could have? (Decided from the
/// path's classification and its dig keys, without splitting the text for the common shapes.)
fn digs(path: &RefPath) -> bool {
    match path.target {
        Target::StepOutput | Target::Previous | Target::Reflexion | Target::Never => false,
        Target::StepJson | Target::Local => !path.dig_keys().is_done(),
        Target::Args => path.dig_keys().nth(1).is_some(),
    }
}

/// The file span of segment `i` of a placeholder's path (the whole placeholder when the
/// string spells it with escapes).
fn segment_span(u: &Use<'_>, i: usize) -> Span {
    let text = &u.path.text;
    if u.span.len() as usize != text.len() + 2 {
        return u.span;
    }
    let mut start = 0;
    for (k, key) in u.path.keys().enumerate() {
        if k == i {
            let s = u.span.start + 1 + start as u32;
            return Span::new(s, s + key.len() as u32);
        }
        start += key.len() + 1;
    }
    u.span
}

/// The path up to (not including) segment `i`, as written.
fn prefix(path: &RefPath, i: usize) -> String {
    path.keys().take(i).collect::<Vec<_>>().join(".")
}

/// The path with segment `i` replaced (or dropped, for `None`) and more segments inserted.
fn rewrite(path: &RefPath, i: usize, with: &[&str]) -> String {
    let mut keys: Vec<&str> = path.keys().collect();
    keys.splice(i..=i.min(keys.len() - 1), with.iter().copied());
    keys.join(".")
}

/// What a value reached at segment `i` is called in messages: `'severity'`, `argument 'depth'`.
fn subject(root: &Root, path: &RefPath, i: usize) -> String {
    if i <= root.from {
        if root.owner.starts_with('\'') {
            format!("the output of {}", root.owner)
        } else {
            root.owner.clone()
        }
    } else {
        let seg: Vec<&str> = path.keys().skip(root.from).take(i - root.from).collect();
        format!("'{}'", seg.join("."))
    }
}

/// E0209: a segment that no value of the type reached can resolve.
fn unresolvable(env: &Env<'_>, u: &Use<'_>, root: &Root, dug: &Dug) -> Option<Diagnostic> {
    let (i, why, at) = dug.stuck.as_ref()?;
    let p = &env.flow().phases[u.phase];
    let seg: Vec<&str> = u.path.keys().collect();
    let key = seg[*i];
    let what = subject(root, u.path, *i);
    let (reached, problem, help) = match why {
        Stuck::Scalar(t) => {
            // A union reports itself whole (`string | number`), a single type as it is.
            let shown = match at.ty.present() {
                u @ Ty::Union(_) => u,
                _ => t.present(),
            };
            let problem = if key == "length" && matches!(shown, Ty::String) {
                format!("{what} is a string, and a placeholder cannot read a string's 'length'")
            } else {
                format!("{what} is {}, which has no '{key}'", shown.describe())
            };
            let help = format!(
                "drop '.{}': {{{}}}",
                seg[*i..].join("."),
                prefix(u.path, *i)
            );
            (shown, problem, help)
        }
        Stuck::ArrayKey(t) => {
            let shown = t.present();
            let problem = format!(
                "{what} is an array ({shown}), which has only indices and 'length', not '{key}'"
            );
            let elem_has = element_of(t).is_some_and(|e| {
                e.ty.members().iter().any(|m| match m {
                    Ty::Object(o) => o.props.contains_key(key) || o.props.is_empty(),
                    Ty::Any => true,
                    _ => false,
                })
            });
            let help = if elem_has {
                format!(
                    "read one element first: {{{}}}",
                    rewrite(u.path, *i, &["0", key])
                )
            } else {
                format!(
                    "index it: {{{}}}, or count it: {{{}}}",
                    rewrite(u.path, *i, &["0"]),
                    rewrite(u.path, *i, &["length"])
                )
            };
            (shown, problem, help)
        }
        Stuck::Closed(t) => {
            let shown = t.present();
            let problem = format!(
                "{what} is a closed object ({shown}): its contract sets \"additionalProperties\": false and does not declare '{key}'"
            );
            let known = t.properties();
            // The span is the segment: the suggestion is the key alone (an editor's quick fix
            // replaces the segment with it).
            let help = match did_you_mean(key, known.iter().map(|(k, _)| *k)) {
                Some(near) => format!(
                    "did you mean '{near}'? {{{}}}",
                    rewrite(u.path, *i, &[near])
                ),
                None => format!(
                    "add \"{key}\" under \"properties\" of that contract, or drop \"additionalProperties\": false"
                ),
            };
            (shown, problem, help)
        }
    };
    let mut d = Diagnostic::new(
        Code::UnresolvablePath,
        format!(
            "{}: {} reads {{{}}}, which never resolves: {problem}",
            p.id, u.field, u.path.text
        ),
    )
    .at(segment_span(u, *i))
    .phase(&p.id)
    .with_label(format!("nothing to read here: {reached}"))
    .help(help);
    if let Some(decl) = at.decl {
        let name = if *i <= root.from {
            root.owner.clone()
        } else {
            format!("'{}'", seg[*i - 1])
        };
        let text = match (&root.item_from, *i <= root.from) {
            (Some(src), true) => format!(
                "the contract of {src} declares the item here as {}",
                reached.describe()
            ),
            _ => format!("{name} is declared here as {}", reached.describe()),
        };
        d = d.label(decl, text);
    }
    Some(d)
}

/// W0106: a property the object's contract does not declare.
fn undeclared(env: &Env<'_>, u: &Use<'_>, root: &Root, dug: &Dug) -> Option<Diagnostic> {
    let (i, obj) = dug.undeclared.as_ref()?;
    let p = &env.flow().phases[u.phase];
    let Ty::Object(o) = obj
        .ty
        .members()
        .iter()
        .find(|m| matches!(m, Ty::Object(_)))?
    else {
        return None;
    };
    let key = u.path.keys().nth(*i)?;
    let known: Vec<&str> = o.props.keys().map(|k| &**k).collect();
    // A map's element is typed by the contract of what `over` reads: that contract is named
    // (with the item type), not the map.
    let (whole, contract, owner) = match &root.item_from {
        Some(src) => (
            format!("the item ({})", obj.ty.present()),
            format!("the contract of {src}"),
            src.as_str(),
        ),
        None => (
            "the output".to_owned(),
            "the contract".to_owned(),
            root.owner.as_str(),
        ),
    };
    let of = if *i <= root.from {
        String::new()
    } else {
        format!(" of {}", subject(root, u.path, *i))
    };
    let problem = match u.path.segs()[*i].index {
        Some(_) => format!(
            "indexes {} with {key}, but {contract} types it as an object, not an array",
            if of.is_empty() {
                whole
            } else {
                of[4..].to_owned()
            }
        ),
        None if of.is_empty() && root.item_from.is_some() => format!(
            "reads property '{key}' of {whole}, which {contract} does not declare (it has: {})",
            known.join(", ")
        ),
        None => format!(
            "reads property '{key}', which {contract}{of} does not declare (it has: {})",
            known.join(", ")
        ),
    };
    // An index into an object is a wrong path, not a key the contract forgot.
    let indexed = u.path.segs()[*i].index.is_some();
    let add = format!("add \"{key}\" under \"properties\" of the contract of {owner}");
    let help = match did_you_mean(key, known.iter().copied()) {
        Some(near) => format!(
            "did you mean {{{}}}? If '{key}' is meant, {add}",
            rewrite(u.path, *i, &[near])
        ),
        None if indexed => format!(
            "fix the path: read one of its properties ({}), or type it as an array in the contract of {owner}",
            known.join(", ")
        ),
        None => format!("{add}, or fix the path"),
    };
    let outcome = if indexed {
        format!(", so {}", unresolved_effect(&u.field))
    } else {
        format!(
            ": it resolves only if the agent happens to emit '{key}', else {}",
            unresolved_effect(&u.field)
        )
    };
    let mut d = Diagnostic::new(
        Code::ContractMissingProperty,
        format!("{}: {{{}}} {problem}{outcome}", p.id, u.path.text),
    )
    .at(u.span)
    .phase(&p.id)
    .with_label("contradicts the contract")
    .help(help);
    if let Some(decl) = obj.decl {
        let text = match &root.item_from {
            Some(src) if indexed => format!("the contract of {src} declares the item here"),
            Some(src) => format!("the contract of {src} declares the item here, without '{key}'"),
            None => format!(
                "{} promises this shape, which does not declare '{key}'",
                root.owner
            ),
        };
        d = d.label(decl, text);
    }
    Some(d)
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
            "the placeholder stays verbatim in the prompt at run time".to_owned()
        }
        f if f.starts_with("branches[") => {
            "the placeholder stays verbatim in the prompt at run time".to_owned()
        }
        f => format!("the placeholder stays verbatim in '{f}' at run time"),
    }
}

/// E0211 and W0107: a map whose `over` can never be an array, or is an object coerceArray
/// finds no declared list in.
pub fn map_over(env: &mut Env<'_>, all: &[Use<'_>], out: &mut Vec<Diagnostic>) {
    for u in all.iter().filter(|u| u.field == "over") {
        let p = &env.flow().phases[u.phase];
        if !matches!(p.kind, PhaseKind::Map(_)) {
            continue;
        }
        let Some(over) = env.over_type(u.phase) else {
            continue;
        };
        let present = over.ty.present();
        if present.is_any() || matches!(present, Ty::Missing) || element_of(&over.ty).is_some() {
            continue;
        }
        let id = p.id.clone();
        let objects = present.members().iter().all(|m| matches!(m, Ty::Object(_)));
        let mut d = if objects {
            Diagnostic::new(
                Code::OverUnwrappedObject,
                format!(
                    "{id}: 'over' is {{{}}}, an object ({present}) with no array property named {}, so the map finds no array in it unless the output holds one anyway",
                    u.path.text,
                    wrapper_names()
                ),
            )
            .with_label("an object, not an array")
            .help(match array_props(&over.ty) {
                Some(k) => format!("point 'over' at the array itself: {{{}.{k}}}", u.path.text),
                None => "declare the list as a property of the contract, e.g. \"properties\": {\"items\": {\"type\": \"array\"}}, or point 'over' at an array".to_owned(),
            })
        } else {
            let sibling = sibling_array(env, u);
            Diagnostic::new(
                Code::OverNotArray,
                format!(
                    "{id}: 'over' is {{{}}}, which is {} and never an array: the map fails at run time",
                    u.path.text,
                    present.describe()
                ),
            )
            .with_label(format!("{present}, not an array"))
            .help(match sibling {
                Some(s) => format!("did you mean {{{s}}}? it is declared as an array"),
                None => "fan out over an array: emit one upstream (\"expect\": {\"type\": \"array\"}) and reference it".to_owned(),
            })
        };
        d = d.at(u.span).phase(&id);
        if let Some(decl) = over.decl {
            d = d.label(decl, format!("declared here as {}", present.describe()));
        }
        out.push(d);
    }
}

/// coerceArray's wrapper keys as a sentence: `items, results, list, data or findings`.
fn wrapper_names() -> String {
    match WRAPPER_KEYS.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The first array-typed property of an object type.
fn array_props(t: &Ty) -> Option<String> {
    t.members().iter().find_map(|m| match m {
        Ty::Object(o) => o.props.iter().find_map(|(k, p)| {
            p.ty.members()
                .iter()
                .any(|t| matches!(t, Ty::Array(_)))
                .then(|| k.to_string())
        }),
        _ => None,
    })
}

/// An array-typed property beside the one `over` reads (`{steps.t.json.count}` when the
/// contract also declares `files` as an array): the path to it.
fn sibling_array(env: &mut Env<'_>, u: &Use<'_>) -> Option<String> {
    let keys: Vec<&str> = u.path.keys().collect();
    let parent_len = keys.len().checked_sub(1)?;
    let parent = RefPath::parse(&keys[..parent_len].join("."));
    let (_, dug) = env.dig(u.phase, "over", &parent)?;
    array_props(&dug.typed.ty).map(|k| format!("{}.{k}", parent.text))
}

/// E0212 and W0108 in every condition of the flow (`when`, `until`, gate `eval`).
pub fn comparisons(env: &mut Env<'_>, out: &mut Vec<Diagnostic>) {
    let flow = env.flow();
    for (i, p) in flow.phases.iter().enumerate() {
        for (field, cond) in p.conditions() {
            if p.reads_field(field)
                && let Ok(c) = &cond.parsed
                && compares_a_ref(c)
            {
                condition(env, i, field, &cond.src, out);
            }
        }
        if let PhaseKind::Gate(g) = &p.kind
            && p.reads_field("eval")
        {
            for entry in &g.eval {
                if let EvalKind::Condition(Ok(c)) = &entry.kind
                    && compares_a_ref(c)
                {
                    condition(env, i, "eval", &entry.src, out);
                }
            }
        }
    }
}

/// Does the compiled condition compare anything with a placeholder? (Only those are parsed
/// again into a tree.)
fn compares_a_ref(c: &crate::compile::Condition) -> bool {
    let prog = c.program();
    !prog.refs.is_empty()
        && prog
            .ops
            .iter()
            .any(|op| matches!(op, crate::compile::condition::Op::Compare(_)))
}

/// The comparisons of one condition.
fn condition(env: &mut Env<'_>, phase: usize, field: &str, src: &Str, out: &mut Vec<Diagnostic>) {
    let Ok(tree) = parse_cond(&src.value) else {
        return;
    };
    let mut work: Vec<&Node> = tree.expr.iter().collect();
    while let Some(node) = work.pop() {
        match &node.node {
            Expr::Or(items) | Expr::And(items) => work.extend(items.iter()),
            Expr::Not(inner) | Expr::Paren(inner) => work.push(inner),
            Expr::Compare(a, op, b) => {
                let (a, b) = (unparen(a), unparen(b));
                if let Some(d) = compare_pair(env, phase, field, src, a, op.node, b)
                    .or_else(|| compare_pair(env, phase, field, src, b, op.node.flip(), a))
                {
                    out.push(d);
                }
                work.extend([a, b]);
            }
            Expr::Operand(_) => {}
        }
    }
}

/// The operand inside any number of parentheses.
fn unparen(mut n: &Node) -> &Node {
    while let Expr::Paren(inner) = &n.node {
        n = inner;
    }
    n
}

/// `{ref} OP literal`: E0212 or W0108 when the ref's type decides it.
fn compare_pair(
    env: &mut Env<'_>,
    phase: usize,
    field: &str,
    src: &Str,
    r: &Node,
    op: CmpOp,
    lit: &Node,
) -> Option<Diagnostic> {
    let Expr::Operand(Operand::Ref(path)) = &r.node else {
        return None;
    };
    let Expr::Operand(literal) = &lit.node else {
        return None;
    };
    let value = match literal {
        Operand::Ref(_) => return None,
        Operand::Str(s) | Operand::Bareword(s) => Value::String(s.clone()),
        Operand::Number { value, .. } => Value::Number(*value),
        Operand::Bool(b) => Value::Bool(*b),
        Operand::Null => Value::Null,
    };
    let (_, dug) = env.dig(phase, field, path)?;
    if dug.stuck.is_some() {
        return None;
    }
    let Typed { ty, decl } = dug.typed;
    let p = &env.flow().phases[phase];
    let lit_text = literal.to_string();
    let at = src.file_span(lit.span.range());
    match op {
        CmpOp::Eq | CmpOp::Ne => {
            let members = ty.literal_values()?;
            // Undefined (a phase that failed or was skipped, an argument not given) is
            // always possible, and compares as "".
            let can_equal = std::iter::once(Item::Undefined)
                .chain(members.iter().map(Item::Value))
                .any(|m| compare(CmpOp::Eq, m, Item::Value(&value)));
            if can_equal {
                return None;
            }
            let outcome = if op == CmpOp::Eq {
                "always false"
            } else {
                "always true"
            };
            let set = lits_text(&ty.present());
            let texts: Vec<String> = members
                .iter()
                .map(|m| match m {
                    Value::String(s) => s.clone(),
                    other => other.to_json(),
                })
                .collect();
            let near = match &value {
                Value::String(s) => did_you_mean(s, texts.iter().map(String::as_str)),
                _ => None,
            };
            let mut d = Diagnostic::new(
                Code::ComparisonOutsideType,
                format!(
                    "{}: {field} compares {{{}}} with {lit_text}, which is not one of its values ({set}): `{}` is {outcome}",
                    p.id,
                    path.text,
                    op.as_str()
                ),
            )
            .at(at)
            .phase(&p.id)
            .with_label(format!("not one of {set}"))
            .help(match near {
                Some(n) => format!("did you mean {n}?"),
                None => format!("compare with one of its values: {}", texts.join(", ")),
            });
            if let Some(decl) = decl {
                let name = path.keys().last().unwrap_or_default();
                d = d.label(decl, format!("'{name}' is declared here as one of {set}"));
            }
            Some(d)
        }
        CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge => {
            let lit_numeric = numeric(Item::Value(&value)).is_some();
            let why = if ty.is_number() && !lit_numeric {
                format!("{{{}}} is a number and {lit_text} is not", path.text)
            } else if matches!(literal, Operand::Number { .. })
                && let Some(members) = ty.literal_values()
                && !members.is_empty()
                && members.iter().all(|m| numeric(Item::Value(m)).is_none())
            {
                format!(
                    "{{{}}} is one of {}, none of them a number",
                    path.text,
                    lits_text(&ty.present())
                )
            } else {
                return None;
            };
            let mut d = Diagnostic::new(
                Code::ComparesAsText,
                format!(
                    "{}: {field} orders {{{}}} against {lit_text}, but {why}: both compare as text, where \"9\" > \"10\" is false",
                    p.id, path.text
                ),
            )
            .at(at)
            .phase(&p.id)
            .with_label("compared as text")
            .help("compare a number with a number, or use == / != for words");
            if let Some(decl) = decl {
                d = d.label(
                    decl,
                    format!("declared here as {}", ty.present().describe()),
                );
            }
            Some(d)
        }
    }
}
