//! Placeholder references against the DAG (SPEC §7.2 E02xx, W0201, W0202, W0206): every
//! placeholder of every templated field and condition, at its own span in the file.

use std::collections::HashMap;

use super::graph::{Graph, IdSuggester, ancestors};
use crate::diag::{Code, Diagnostic, did_you_mean};
use crate::flow::{EvalEntry, EvalKind, Flow, Join, Phase, PhaseKind, PhaseType};
use crate::source::Span;
use crate::syntax::RefPath;
use crate::value::Map;

mod unknown;
pub use unknown::unknown_placeholders;

/// One placeholder found in a phase: which field, where in the file, and its path.
pub struct Use<'f> {
    /// The phase's index.
    pub phase: usize,
    /// The field name used in messages (`task`, `branches[0].task`, …).
    pub field: std::borrow::Cow<'static, str>,
    /// The placeholder in the file.
    pub span: Span,
    /// Its path.
    pub path: &'f RefPath,
}

/// Every placeholder of a phase, in field order, with file spans.
pub fn uses(index: usize, p: &Phase) -> Vec<Use<'_>> {
    let mut out = Vec::new();
    uses_into(index, p, &mut out);
    out
}

/// [`uses`], appended to `out`.
pub fn uses_into<'f>(index: usize, p: &'f Phase, out: &mut Vec<Use<'f>>) {
    p.each_text(|field, text| {
        if !p.reads_field(&field) {
            return;
        }
        for r in text.template.refs() {
            out.push(Use {
                phase: index,
                field: field.clone(),
                span: text.file_span(r.span),
                path: &text.template.paths()[r.path as usize],
            });
        }
    });
    for (field, cond) in p.conditions() {
        if !p.reads_field(field) {
            continue;
        }
        if let Ok(c) = &cond.parsed {
            for (span, path) in c.refs() {
                out.push(Use {
                    phase: index,
                    field: std::borrow::Cow::Borrowed(field),
                    span: cond.file_span(span),
                    path,
                });
            }
        }
    }
    for entry in gate_eval(p).iter().filter(|_| p.reads_field("eval")) {
        match &entry.kind {
            EvalKind::Contains { lhs, lhs_start } => {
                for r in lhs.refs() {
                    out.push(Use {
                        phase: index,
                        field: "eval".into(),
                        span: entry.src.file_span(
                            r.span.start as usize + lhs_start..r.span.end as usize + lhs_start,
                        ),
                        path: &lhs.paths()[r.path as usize],
                    });
                }
            }
            EvalKind::Condition(Ok(c)) => {
                for (span, path) in c.refs() {
                    out.push(Use {
                        phase: index,
                        field: "eval".into(),
                        span: entry.src.file_span(span.range()),
                        path,
                    });
                }
            }
            _ => {}
        }
    }
}

/// What the checker knows about invocation arguments.
pub struct ArgsKnown<'a> {
    /// The invocation's arguments, when known (`tfc run`, `check --arg/--args`).
    pub provided: Option<&'a Map>,
    /// Object defs are checked without knowing their arguments: no W0202.
    pub suppress: bool,
    /// The invocation's arguments had errors (E0502/E0503/E0504): W0202 would only repeat them.
    pub invalid: bool,
}

/// `{steps.R…}` references: existence, reachability, self, and the `.output.x` shape.
pub fn steps_refs(flow: &Flow, graph: &Graph, all: &[Use<'_>], out: &mut Vec<Diagnostic>) {
    let mut names = IdSuggester::new(flow);
    let mut queries: Vec<(usize, usize)> = Vec::new();
    let mut asked: Vec<usize> = Vec::new();
    for (k, u) in all.iter().enumerate() {
        let p = &flow.phases[u.phase];
        let Some(r) = u.path.step_id() else { continue };
        // Keys are read in place (no owned segments): most paths are `steps.ID.output`.
        let mut after_id = u.path.keys().skip(2);
        if after_id.next() == Some("output") && after_id.clone().next().is_some() {
            let rest: Vec<&str> = after_id.collect();
            out.push(
                Diagnostic::new(
                    Code::OutputSubpath,
                    format!(
                        "{}: {} references {{{}}}, but a step's output is text and has no fields",
                        p.id, u.field, u.path.text
                    ),
                )
                .at(u.span)
                .phase(&p.id)
                .with_label("output is a string")
                .help(format!(
                    "use {{steps.{r}.json.{}}} to read a field of its parsed JSON",
                    rest.join(".")
                )),
            );
            continue;
        }
        match flow.index_of(r) {
            None => {
                let mut d = Diagnostic::new(
                    Code::UnknownReference,
                    format!(
                        "{}: {} references {{steps.{r}.*}} but there is no phase '{r}'",
                        p.id, u.field
                    ),
                )
                .at(u.span)
                .phase(&p.id)
                .with_label("unknown phase");
                d = d.help(
                    match names.suggest(r, not_self(p)) {
                        Some(s) => format!(
                            "did you mean {{{}}}?",
                            u.path.text.replacen(&format!("steps.{r}"), &format!("steps.{s}"), 1)
                        ),
                        None => {
                            let ids: Vec<&str> = flow
                                .phases
                                .iter()
                                .map(|q| q.id.as_str())
                                .filter(|id| *id != p.id)
                                .take(9)
                                .collect();
                            let more = if ids.len() > 8 { ", …" } else { "" };
                            if flow.inline {
                                "an inline def is a flow of its own and cannot read the outer flow's phases: pass values in (\"with\" and {args.X}, or interpolate a string def)".to_owned()
                            } else if ids.is_empty() {
                                "this flow has no other phase to reference: remove the placeholder, or add the phase it names".to_owned()
                            } else {
                                format!(
                                    "reference an existing phase: {}{more}",
                                    ids[..ids.len().min(8)].join(", ")
                                )
                            }
                        }
                    },
                );
                out.push(d);
            }
            Some(ri) if ri == u.phase => {
                if p.ty() != PhaseType::Loop {
                    out.push(
                        Diagnostic::new(Code::SelfReference, format!("{}: {} references its own output {{{}}}", p.id, u.field, u.path.text))
                            .at(u.span)
                            .phase(&p.id)
                            .with_label("this phase has no output yet")
                            .help("almost always a bug: reference an upstream phase (only a loop may read its own output)"),
                    );
                }
            }
            Some(ri) => {
                if p.join != Join::Any {
                    queries.push((ri, u.phase));
                    asked.push(k);
                }
            }
        }
    }
    let answers = ancestors(graph, &queries);
    let failed: Vec<usize> = asked
        .iter()
        .zip(answers)
        .filter(|(_, ok)| !ok)
        .map(|(&k, _)| k)
        .collect();
    // Is the referenced phase downstream of the referring one? Then adding the edge would
    // close a cycle, and the advice differs.
    let reverse: Vec<(usize, usize)> = failed
        .iter()
        .map(|&k| {
            let u = &all[k];
            let r = u.path.step_id().and_then(|r| flow.index_of(r));
            (u.phase, r.unwrap_or(u.phase))
        })
        .collect();
    let downstream = ancestors(graph, &reverse);
    for (&k, later) in failed.iter().zip(downstream) {
        let u = &all[k];
        let p = &flow.phases[u.phase];
        let r = u.path.step_id().unwrap_or_default();
        let mut d = Diagnostic::new(
            Code::UnreachableReference,
            format!("{}: {} references {{steps.{r}.*}} but '{r}' is not reachable via dependsOn (it may not have run yet)", p.id, u.field),
        )
        .at(u.span)
        .phase(&p.id);
        if later {
            out.push(
                d.with_label(format!("'{r}' runs after '{}' (it depends on it)", p.id))
                    .help(format!(
                        "a phase can only read phases that finish before it: move this reference into '{r}' or a phase after it, or drop it"
                    )),
            );
            continue;
        }
        d = d.with_label(format!("'{r}' is not an ancestor of '{}'", p.id));
        d = match p.written.get("dependsOn").copied() {
            Some(s) => d.label(s, format!("add \"{r}\" here")),
            None => d.label(p.id_span, "this phase has no dependsOn"),
        };
        let mut deps: Vec<&str> = p.depends_on.iter().map(|d| d.value.as_str()).collect();
        deps.push(r);
        let list = deps
            .iter()
            .map(|d| format!("\"{d}\""))
            .collect::<Vec<_>>()
            .join(", ");
        out.push(d.help(format!(
            "write \"dependsOn\": [{list}] (or depend on a phase downstream of '{r}')"
        )));
    }
}

/// Locals (`item`/`as`, `loop`, `reflexion`) used where they are not bound, and misspelt
/// families in conditions (W0206); `{args.X}` against the declared and provided
/// arguments (W0202).
pub fn scope_refs(flow: &Flow, all: &[Use<'_>], args: &ArgsKnown<'_>, out: &mut Vec<Diagnostic>) {
    let map_locals: HashMap<&str, &str> = flow
        .phases
        .iter()
        .filter(|p| p.ty() == PhaseType::Map)
        .map(|p| (p.local_name(), p.id.as_str()))
        .collect();
    let mut warned_args: Vec<&str> = Vec::new();
    // Uses in a row mostly name the same argument: its declaration is looked up once.
    let mut last_arg = None;
    for u in all {
        let p = &flow.phases[u.phase];
        let head = u.path.head();
        let out_of_scope = |why: String, help: String| {
            Diagnostic::new(
                Code::LocalOutOfScope,
                format!("{}: {} uses {{{}}}, {why}", p.id, u.field, u.path.text),
            )
            .at(u.span)
            .phase(&p.id)
            .with_label(unresolved(&u.field))
            .help(help)
        };
        // A map's own element in its task, whatever its name (`"as": "loop"` is allowed).
        if p.ty() == PhaseType::Map && head == p.local_name() && u.field == "task" {
            continue;
        }
        match head {
            "previous" => {}
            "steps" => {
                if let Some(d) = step_field(&p.id, u) {
                    out.push(d);
                }
            }
            "args" => {
                if args.suppress || args.invalid {
                    continue;
                }
                let Some(name) = u.path.keys().nth(1) else {
                    continue;
                };
                if warned_args.contains(&name) {
                    continue;
                }
                let declared = match last_arg {
                    Some((last, declared)) if last == name => declared,
                    _ => last_arg.insert((name, flow.args.get(name))).1,
                };
                let declared_names = || flow.args.keys().map(String::as_str);
                let d = match args.provided {
                    // SPEC §7.2: with known arguments, every reference must resolve.
                    Some(given) => {
                        if given.contains_key(name) || declared.is_some_and(|a| a.default.is_some())
                        {
                            continue;
                        }
                        Diagnostic::new(
                            Code::ArgNotProvided,
                            format!("Taskflow references {{args.{name}}} but the invocation did not provide '{name}' and it has no default"),
                        )
                        .with_label(unresolved(&u.field))
                        .help(match declared {
                            Some(_) => format!("pass it ({name}=…), or give it a \"default\""),
                            None => format!("pass it ({name}=…), or declare it with a default: \"args\": {{\"{name}\": {{\"type\": \"string\", \"default\": \"…\"}}}}"),
                        })
                    }
                    // Unknown arguments: undeclared ones may still be passed through, so only
                    // a near miss of a declared one is worth a warning.
                    None => {
                        if declared.is_some() {
                            continue;
                        }
                        let Some(near) = did_you_mean(name, declared_names()) else {
                            continue;
                        };
                        Diagnostic::new(
                            Code::ArgNotProvided,
                            format!("Taskflow references {{args.{name}}}, but '{name}' is not declared in \"args\" (it declares '{near}')"),
                        )
                        .with_label(format!("{} unless '{name}' is passed", unresolved(&u.field)))
                        .help(format!("did you mean {{{}}}?", u.path.text.replacen(name, near, 1)))
                    }
                };
                warned_args.push(name);
                out.push(d.at(u.span).phase(&p.id));
            }
            "loop" => {
                let in_scope =
                    p.ty() == PhaseType::Loop && (u.field == "task" || u.field == "until");
                if !in_scope {
                    out.push(out_of_scope(
                        "but {loop.*} is bound only in a loop's task and until".into(),
                        "use it inside a loop phase".into(),
                    ));
                }
            }
            "reflexion" => {
                let in_scope =
                    matches!(&p.kind, PhaseKind::Loop(l) if l.reflexion) && u.field == "task";
                if !in_scope {
                    out.push(out_of_scope(
                        "but {reflexion} is bound only in the task of a loop with \"reflexion\": true".into(),
                        "set \"reflexion\": true on a loop phase and use {reflexion} in its task".into(),
                    ));
                }
            }
            _ => {
                let is_own_local = p.ty() == PhaseType::Map && head == p.local_name();
                if is_own_local && u.field == "task" {
                    continue;
                }
                let why = if is_own_local {
                    format!(
                        "but the map binds {{{head}}} only in its task (other fields are rendered once, before the fan-out)"
                    )
                } else if head == "item" && p.ty() == PhaseType::Map {
                    format!(
                        "but this map renamed its element with \"as\": \"{}\"",
                        p.local_name()
                    )
                } else if let Some(m) = map_locals.get(head) {
                    format!("but {{{head}}} is bound only inside map '{m}'")
                } else if head == "item" {
                    "but {item} is bound only inside a map phase".to_owned()
                } else if let Some(near) = near_head(head, p)
                    && matches!(&*u.field, "when" | "until" | "eval")
                {
                    // A misspelt family or local in a condition (in a text field, where the
                    // run warns about it, W0207 reports it).
                    let fixed = u.path.text.replacen(head, near, 1);
                    out.push(out_of_scope(
                        format!(
                            "but '{head}' is not a placeholder family or a local of this phase"
                        ),
                        format!("did you mean {{{fixed}}}?"),
                    ));
                    continue;
                } else {
                    continue;
                };
                let help = if head == "item" && p.ty() == PhaseType::Map {
                    format!(
                        "write {{{}}}",
                        u.path.text.replacen("item", p.local_name(), 1)
                    )
                } else if let Some(m) = map_locals.get(head) {
                    format!(
                        "reference the map's merged output instead, e.g. {{steps.{m}.output}}, or move this text into the task of '{m}'"
                    )
                } else {
                    "use it in the task of a map phase, where each element is bound".to_owned()
                };
                out.push(out_of_scope(why, help));
            }
        }
    }
}

/// E0208: a step offers exactly two fields (SPEC §4.3): `output` (its text) and `json` (its
/// parsed JSON, with a path into it). Anything else — a typo such as `outptu` or `jsn`, a field
/// of the eval context such as `status`, or no field at all (`{steps.a}`) — never resolves, in
/// a text as in a condition. `{steps}` alone is left to prose ("the {steps} below").
fn step_field(phase: &str, u: &Use<'_>) -> Option<Diagnostic> {
    const FIELDS: [&str; 2] = ["output", "json"];
    // Read in place: every step reference passes here, and nearly all are fine.
    let mut keys = u.path.keys();
    keys.next();
    let id = keys.next()?;
    let field = keys.next();
    if field.is_some_and(|f| FIELDS.contains(&f)) {
        return None;
    }
    let offers = format!(
        "a step offers {{steps.{id}.output}} (its text) and {{steps.{id}.json.<path>}} (its parsed JSON)"
    );
    let (message, help) = match field {
        None => (
            format!(
                "{phase}: {} references {{{}}}, which names no field of the step",
                u.field, u.path.text
            ),
            format!("write {{{}.output}} for its text; {offers}", u.path.text),
        ),
        Some(f) => {
            let message = format!(
                "{phase}: {} references {{{}}}, but a step has no field '{f}'",
                u.field, u.path.text
            );
            let help = match did_you_mean(f, FIELDS) {
                Some(near) => {
                    let mut fixed: Vec<&str> = u.path.keys().collect();
                    fixed[2] = near;
                    format!("did you mean {{{}}}?", fixed.join("."))
                }
                None => offers,
            };
            (message, help)
        }
    };
    Some(
        Diagnostic::new(Code::UnknownStepField, message)
            .at(u.span)
            .with_label(match field {
                Some(f) => format!("no field '{f}': {}", unresolved(&u.field)),
                None => format!("no field: {}", unresolved(&u.field)),
            })
            .phase(phase)
            .help(help),
    )
}

/// The id a did-you-mean must not offer to a reference in `p`: `p` itself, which would be a
/// self-reference (E0203) — except in a loop, which may read its own output.
fn not_self(p: &Phase) -> &str {
    match p.ty() {
        PhaseType::Loop => "",
        _ => &p.id,
    }
}

/// What an unresolved placeholder becomes in `field`: text stays literal, a condition
/// operand is undefined.
fn unresolved(field: &str) -> &'static str {
    match field {
        "when" | "until" | "eval" => "undefined at run time",
        _ => "stays literal at run time",
    }
}

/// The placeholder head that `head` is probably a misspelling of: a family, or a local bound
/// in `p` (its map's `as` name, `loop`).
fn near_head<'p>(head: &str, p: &'p Phase) -> Option<&'p str> {
    let mut names: Vec<&str> = vec!["args", "steps", "previous", "reflexion"];
    match p.ty() {
        PhaseType::Map => names.push(p.local_name()),
        PhaseType::Loop => names.push("loop"),
        _ => {}
    }
    crate::diag::did_you_mean(head, names)
}

/// How to fix the usual condition syntax errors.
fn syntax_hint(message: &str) -> Option<&'static str> {
    Some(match message {
        "unexpected char '='" => "compare with '==' (a single '=' is not an operator)",
        "unexpected char '&'" => "write '&&' for \"and\"",
        "unexpected char '|'" => "write '||' for \"or\"",
        "unterminated string" => "close the string with the quote it was opened with",
        "unterminated placeholder" => "close the placeholder with '}'",
        "missing )" => "close every '(' with a ')'",
        "trailing tokens" => {
            "quote values that contain dots or spaces, and join comparisons with && or ||"
        }
        "unexpected end" => "complete the expression after the last operator",
        m if m
            .strip_prefix("unexpected char '")
            .and_then(|rest| rest.strip_suffix('\''))
            .is_some_and(|c| {
                c.chars().count() == 1 && c.starts_with(crate::value::is_js_whitespace)
            }) =>
        {
            "only space, tab and line breaks separate tokens: replace this invisible character \
             (a no-break, zero-width or other Unicode space) with a space"
        }
        _ => return None,
    })
}

/// Conditions that do not parse (W0201): the error and what happens at run time.
pub fn condition_errors(flow: &Flow, out: &mut Vec<Diagnostic>) {
    for p in &flow.phases {
        let mut report = |field: &str,
                          src: &crate::json::Str,
                          err: &crate::syntax::condition::ConditionError,
                          effect: &str| {
            out.push(
                Diagnostic::new(
                    Code::ConditionParseError,
                    format!("{}: {field} does not parse: {}", p.id, err.message),
                )
                .at(src.file_span(err.span.range()))
                .phase(&p.id)
                .with_label(err.message.clone())
                .help(match syntax_hint(&err.message) {
                    Some(hint) => format!("{hint}; {effect}"),
                    None => format!("fix the expression; {effect}"),
                }),
            );
        };
        for (field, cond) in p.conditions() {
            if !p.reads_field(field) {
                continue;
            }
            if let Err(e) = &cond.parsed {
                let effect = if field == "when" {
                    "at run time a broken `when` is treated as true (fail-open): the phase always runs"
                } else {
                    "at run time a broken `until` stops the loop after its first iteration (fail-safe)"
                };
                report(field, &cond.src, e, effect);
            }
        }
        for entry in gate_eval(p).iter().filter(|_| p.reads_field("eval")) {
            if let EvalKind::Condition(Err(e)) = &entry.kind {
                report(
                    "eval",
                    &entry.src,
                    e,
                    "at run time this check fails, so the gate blocks or falls through to its LLM",
                );
            }
        }
    }
}

/// A gate's `eval` entries (none for another kind).
fn gate_eval(p: &Phase) -> &[EvalEntry] {
    match &p.kind {
        PhaseKind::Gate(g) => &g.eval,
        _ => &[],
    }
}

#[cfg(test)]
mod tests;
