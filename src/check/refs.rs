//! Placeholder references against the DAG (SPEC §7.2 E02xx, W0201, W0202, W0206): every
//! placeholder of every templated field and condition, at its own span in the file.

use std::collections::HashMap;

use super::graph::{Graph, ancestors};
use crate::diag::{Code, Diagnostic, did_you_mean};
use crate::flow::{EvalKind, Flow, Join, Phase, PhaseType};
use crate::source::Span;
use crate::syntax::RefPath;
use crate::value::Map;

/// One placeholder found in a phase: which field, where in the file, and its path.
pub struct Use<'f> {
    pub phase: usize,
    pub field: String,
    pub span: Span,
    pub path: &'f RefPath,
}

/// Every placeholder of a phase, in field order, with file spans.
pub fn uses(index: usize, p: &Phase) -> Vec<Use<'_>> {
    let mut out = Vec::new();
    for (field, text) in p.texts() {
        for r in text.template.refs() {
            out.push(Use {
                phase: index,
                field: field.clone(),
                span: text.file_span(r.span),
                path: &text.template.paths()[r.path as usize],
            });
        }
    }
    for (field, cond) in p.conditions() {
        if let Ok(c) = &cond.parsed {
            for (span, path) in c.refs() {
                out.push(Use {
                    phase: index,
                    field: field.to_owned(),
                    span: cond.file_span(span),
                    path,
                });
            }
        }
    }
    for entry in &p.eval {
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
    out
}

/// What the checker knows about invocation arguments.
pub struct ArgsKnown<'a> {
    /// The invocation's arguments, when known (`tfc run`, `check --arg/--args`).
    pub provided: Option<&'a Map>,
    /// Object defs are checked without knowing their arguments: no W0202.
    pub suppress: bool,
}

/// `{steps.R…}` references: existence, reachability, self, and the `.output.x` shape.
pub fn steps_refs(flow: &Flow, graph: &Graph, all: &[Use<'_>], out: &mut Vec<Diagnostic>) {
    let mut queries: Vec<(usize, usize)> = Vec::new();
    let mut asked: Vec<usize> = Vec::new();
    for (k, u) in all.iter().enumerate() {
        let p = &flow.phases[u.phase];
        let Some(r) = u.path.step_id() else { continue };
        if u.path.segs.len() > 3 && &*u.path.segs[2].key == "output" {
            let rest: Vec<&str> = u.path.segs[3..].iter().map(|s| &*s.key).collect();
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
        match graph.ids.get(r) {
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
                if let Some(s) = did_you_mean(r, flow.phases.iter().map(|q| q.id.as_str())) {
                    d = d.help(format!("did you mean '{s}'? ({{steps.{s}…}})"));
                }
                out.push(d);
            }
            Some(&ri) if ri == u.phase => {
                if p.ty != PhaseType::Loop {
                    out.push(
                        Diagnostic::new(Code::SelfReference, format!("{}: {} references its own output {{{}}}", p.id, u.field, u.path.text))
                            .at(u.span)
                            .phase(&p.id)
                            .with_label("this phase has no output yet")
                            .help("almost always a bug: reference an upstream phase (only a loop may read its own output)"),
                    );
                }
            }
            Some(&ri) => {
                if p.join != Join::Any {
                    queries.push((ri, u.phase));
                    asked.push(k);
                }
            }
        }
    }
    let answers = ancestors(graph, &queries);
    for (&k, ok) in asked.iter().zip(answers) {
        if ok {
            continue;
        }
        let u = &all[k];
        let p = &flow.phases[u.phase];
        let r = u.path.step_id().unwrap_or_default();
        let mut d = Diagnostic::new(
            Code::UnreachableReference,
            format!("{}: {} references {{steps.{r}.*}} but '{r}' is not reachable via dependsOn (it may not have run yet)", p.id, u.field),
        )
        .at(u.span)
        .phase(&p.id)
        .with_label(format!("'{r}' is not an ancestor of '{}'", p.id));
        let deps_span = p.written.get("dependsOn").copied();
        d = match deps_span {
            Some(s) => d.label(s, format!("add \"{r}\" here")),
            None => d.label(p.id_span, "this phase has no dependsOn"),
        };
        out.push(d.help(format!(
            "add \"dependsOn\": [\"{r}\"] (or depend on a phase downstream of it)"
        )));
    }
}

/// Locals (`item`/`as`, `loop`, `reflexion`) used where they are not bound, and heads that are
/// no placeholder family at all (W0206); `{args.X}` against the declared and provided
/// arguments (W0202).
pub fn scope_refs(flow: &Flow, all: &[Use<'_>], args: &ArgsKnown<'_>, out: &mut Vec<Diagnostic>) {
    let map_locals: HashMap<&str, &str> = flow
        .phases
        .iter()
        .filter(|p| p.ty == PhaseType::Map)
        .map(|p| (p.local_name(), p.id.as_str()))
        .collect();
    let mut warned_args: Vec<&str> = Vec::new();
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
            .with_label("will stay literal at run time")
            .help(help)
        };
        match head {
            "steps" | "previous" => {}
            "args" => {
                if args.suppress {
                    continue;
                }
                let Some(name) = u.path.segs.get(1).map(|s| &*s.key) else {
                    continue;
                };
                let declared = flow.args.get(name);
                let missing = match args.provided {
                    Some(given) => {
                        !given.contains_key(name) && declared.is_none_or(|a| a.default.is_none())
                    }
                    None => declared.is_none(),
                };
                if missing && !warned_args.contains(&name) {
                    warned_args.push(name);
                    let msg = match args.provided {
                        Some(_) => format!(
                            "Taskflow references {{args.{name}}} but the invocation did not provide '{name}' and it has no default"
                        ),
                        None => format!(
                            "Taskflow references {{args.{name}}} but '{name}' is not declared in \"args\" and has no default"
                        ),
                    };
                    out.push(
                        Diagnostic::new(Code::ArgNotProvided, msg)
                            .at(u.span)
                            .phase(&p.id)
                            .with_label("unresolved at run time: stays literal")
                            .help(format!("declare it: \"args\": {{\"{name}\": {{\"type\": \"string\", \"default\": \"…\"}}}}, or pass {name}=…")),
                    );
                }
            }
            "loop" => {
                let in_scope = p.ty == PhaseType::Loop && (u.field == "task" || u.field == "until");
                if !in_scope {
                    out.push(out_of_scope(
                        "but {loop.*} is bound only in a loop's task and until".into(),
                        "use it inside a loop phase".into(),
                    ));
                }
            }
            "reflexion" => {
                let in_scope = p.ty == PhaseType::Loop && p.reflexion && u.field == "task";
                if !in_scope {
                    out.push(out_of_scope(
                        "but {reflexion} is bound only in the task of a loop with \"reflexion\": true".into(),
                        "set \"reflexion\": true on a loop phase and use {reflexion} in its task".into(),
                    ));
                }
            }
            _ => {
                let is_own_local = p.ty == PhaseType::Map && head == p.local_name();
                if is_own_local && u.field == "task" {
                    continue;
                }
                let why = if is_own_local {
                    format!(
                        "but the map binds {{{head}}} only in its task (other fields are rendered once, before the fan-out)"
                    )
                } else if head == "item" && p.ty == PhaseType::Map {
                    format!(
                        "but this map renamed its element with \"as\": \"{}\"",
                        p.local_name()
                    )
                } else if let Some(m) = map_locals.get(head) {
                    format!("but {{{head}}} is bound only inside map '{m}'")
                } else if head == "item" {
                    "but {item} is bound only inside a map phase".to_owned()
                } else if let Some(near) = near_head(head, p) {
                    // A misspelt family or local. Other unknown heads are left alone: brace
                    // text such as `a JSON array of {path} objects` is ordinary prose.
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
                let help = if head == "item" && p.ty == PhaseType::Map {
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

/// The placeholder head that `head` is probably a misspelling of: a family, or a local bound
/// in `p` (its map's `as` name, `loop`).
fn near_head<'p>(head: &str, p: &'p Phase) -> Option<&'p str> {
    let mut names: Vec<&str> = vec!["args", "steps", "previous", "reflexion"];
    match p.ty {
        PhaseType::Map => names.push(p.local_name()),
        PhaseType::Loop => names.push("loop"),
        _ => {}
    }
    crate::diag::did_you_mean(head, names)
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
                .help(effect.to_owned()),
            );
        };
        for (field, cond) in p.conditions() {
            if let Err(e) = &cond.parsed {
                let effect = if field == "when" {
                    "at run time a broken `when` is treated as true (fail-open): the phase always runs"
                } else {
                    "at run time a broken `until` stops the loop after its first iteration (fail-safe)"
                };
                report(field, &cond.src, e, effect);
            }
        }
        for entry in &p.eval {
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

#[cfg(test)]
mod tests {
    use crate::check::testing::spans;

    #[test]
    fn brace_prose_is_not_a_placeholder_problem() {
        // The seed's own release-check flow describes its output as "{path} objects".
        let text = r#"[{"id": "a", "task": "Output ONLY a JSON array of {path} objects."}]"#;
        assert_eq!(spans(text), []);
    }

    #[test]
    fn misspelt_heads_and_locals_are_reported_at_the_placeholder() {
        let text = r#"[
            {"id": "a", "output": "json", "task": "list {arg.dir}"},
            {"id": "m", "type": "map", "dependsOn": ["a"], "over": "{steps.a.json}", "as": "file",
             "task": "audit {fiel.path} and {item}"},
            {"id": "z", "dependsOn": ["m"], "task": "{file.path}"}
        ]"#;
        assert_eq!(
            spans(text),
            [
                ("W0206", "{arg.dir}".to_owned()),
                ("W0206", "{fiel.path}".to_owned()),
                ("W0206", "{item}".to_owned()),
                ("W0206", "{file.path}".to_owned()),
            ]
        );
    }
}
