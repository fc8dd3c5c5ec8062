//! The shorthand forms (SPEC §2.3): `chain`, `tasks` and `task` documents desugar to phases.

use super::enums::PhaseType;
use super::fields::ObjectKind;
use super::ir::{Field, Phase, Shorthand, Text};
use super::kinds::{Branch, Parallel, PhaseKind};
use super::lowerer::{Fields, Lowerer};
use super::read::{invalid_agent, valid_agent_name};
use crate::diag::{Code, Diagnostic};
use crate::json::Str;
use crate::json::{Kind, Member, Node};
use crate::source::Span;

/// Which shorthand a document without a `phases` array uses (chain > tasks > task).
pub(super) fn detect(members: &[Member]) -> Option<Shorthand> {
    let get = |k: &str| {
        members
            .iter()
            .find(|m| m.key.value == k)
            .map(|m| &m.value.kind)
    };
    let non_empty = |k: &str| matches!(get(k), Some(Kind::Array(a)) if !a.is_empty());
    if non_empty("chain") {
        Some(Shorthand::Chain)
    } else if non_empty("tasks") {
        Some(Shorthand::Tasks)
    } else if matches!(get("task"), Some(Kind::String(_))) {
        Some(Shorthand::Task)
    } else {
        None
    }
}

/// The flow name a shorthand form falls back to.
pub(super) fn name(kind: Shorthand) -> &'static str {
    match kind {
        Shorthand::Chain => "chain",
        Shorthand::Tasks => "parallel",
        Shorthand::Task => "task",
    }
}

/// One step of `chain`/`tasks`: a string, or `{task, agent?, context?, contextLimit?, cwd?}`.
struct Step<'a> {
    task: Option<Text>,
    agent: Option<Field<String>>,
    context: Vec<Text>,
    context_limit: Option<f64>,
    cwd: Option<(&'a Member, &'a Str)>,
    span: Span,
}

/// The phases of a shorthand document, and whether some step could not be read (the ids of
/// the others then differ from what the author counted).
pub(super) fn desugar(l: &mut Lowerer, kind: Shorthand, f: &Fields<'_>) -> (bool, Vec<Phase>) {
    let written = |key: &str| match f.get(key).map(|m| &m.value.kind) {
        Some(Kind::Array(items)) => items.len(),
        _ => 0,
    };
    let top_agent = agent(l, f, "");
    let top_context = context(f);
    let top_limit = l.number(f, "contextLimit").map(|n| n.value);
    let top_cwd = cwd_member(l, f);
    match kind {
        Shorthand::Chain => {
            if let Some(m) = f.get("context") {
                l.diags.push(
                    Diagnostic::new(
                        Code::FieldIgnored,
                        "a top-level 'context' has no effect on a 'chain'",
                    )
                    .at(m.key.span)
                    .with_label("ignored by chain")
                    .help("give each chain step its own \"context\""),
                );
            }
            let steps = steps(l, f, "chain");
            let n = steps.len();
            let dropped = n < written("chain");
            let mut phases = Vec::with_capacity(n);
            for (i, step) in steps.into_iter().enumerate() {
                let id = format!("step{}", i + 1);
                let mut p = Phase::new(id.clone(), step.span, step.span, PhaseType::Agent);
                p.task = step.task;
                if let Some(a) = step.agent.or_else(|| top_agent.clone()) {
                    p.agent = a;
                }
                p.context = step.context;
                if let Some(lim) = step.context_limit.or(top_limit) {
                    p.context_limit = lim;
                }
                set_cwd(l, &mut p, step.cwd.or(top_cwd));
                if i > 0 {
                    p.depends_on
                        .push(Field::new(format!("step{i}"), step.span, step.span));
                    p.written.insert("dependsOn", step.span);
                }
                if i + 1 == n {
                    p.is_final = true;
                }
                p.written.insert("task", step.span);
                phases.push(p);
            }
            (dropped, phases)
        }
        Shorthand::Tasks => {
            let span = f.get("tasks").map_or_else(Span::default, |m| m.value.span);
            let mut p = Phase::new("parallel".into(), span, span, PhaseType::Parallel);
            let mut branches = Vec::new();
            p.context = top_context;
            let mut limit = top_limit;
            let steps = steps(l, f, "tasks");
            let dropped = steps.len() < written("tasks");
            for step in steps {
                p.context.extend(step.context);
                limit = match (limit, step.context_limit) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                };
                branches.push(Branch {
                    task: step.task,
                    agent: step.agent.or_else(|| top_agent.clone()),
                    cwd: step
                        .cwd
                        .map(|(m, s)| Field::new(s.value.clone(), m.key.span, m.value.span)),
                    span: step.span,
                });
            }
            p.kind = PhaseKind::Parallel(Parallel { branches });
            if let Some(lim) = limit {
                p.context_limit = lim;
            }
            set_cwd(l, &mut p, top_cwd);
            p.is_final = true;
            p.written.insert("branches", span);
            (dropped, vec![p])
        }
        Shorthand::Task => {
            let (span, task) = match f.get("task") {
                Some(m) => (m.value.span, m.value.as_str().map(|s| Text::new(s.clone()))),
                None => (Span::default(), None),
            };
            let mut p = Phase::new("main".into(), span, span, PhaseType::Agent);
            p.task = task;
            if let Some(a) = top_agent {
                p.agent = a;
            }
            p.context = top_context;
            if let Some(lim) = top_limit {
                p.context_limit = lim;
            }
            set_cwd(l, &mut p, top_cwd);
            p.is_final = true;
            p.written.insert("task", span);
            (false, vec![p])
        }
    }
}

fn agent(l: &mut Lowerer, f: &Fields<'_>, phase: &str) -> Option<Field<String>> {
    let a = l.string(f, "agent")?;
    if valid_agent_name(&a.value) {
        Some(a)
    } else {
        l.diags.push(invalid_agent(&a, "agent", phase));
        None
    }
}

/// Context entries; those that are not non-empty strings are dropped (SPEC §2.3).
fn context(f: &Fields<'_>) -> Vec<Text> {
    match f.get("context").map(|m| &m.value.kind) {
        Some(Kind::Array(items)) => items
            .iter()
            .filter_map(Node::as_str)
            .filter(|s| !s.value.is_empty())
            .map(|s| Text::new(s.clone()))
            .collect(),
        _ => Vec::new(),
    }
}

fn cwd_member<'a>(l: &mut Lowerer, f: &Fields<'a>) -> Option<(&'a Member, &'a Str)> {
    l.str_node(f, "cwd")
}

fn set_cwd(l: &mut Lowerer, p: &mut Phase, cwd: Option<(&Member, &Str)>) {
    if let Some((m, s)) = cwd {
        p.cwd_text = Some(Box::new(Text::new(s.clone())));
        p.cwd = l.cwd_of(m, s).map(Box::new);
        p.written.insert("cwd", m.key.span);
    }
}

fn steps<'a>(l: &mut Lowerer, f: &Fields<'a>, key: &str) -> Vec<Step<'a>> {
    let Some(Kind::Array(items)) = f.get(key).map(|m| &m.value.kind) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match &item.kind {
            Kind::String(s) => out.push(Step {
                task: Some(Text::new(s.clone())),
                agent: None,
                context: Vec::new(),
                context_limit: None,
                cwd: None,
                span: item.span,
            }),
            Kind::Object(members) => {
                let sf = l.fields(members, ObjectKind::Step, |_| false);
                let id = match key {
                    "chain" => format!("step{}", i + 1),
                    _ => "parallel".to_owned(),
                };
                out.push(Step {
                    task: l.text(&sf, "task"),
                    agent: agent(l, &sf, &id),
                    context: context(&sf),
                    context_limit: l.number(&sf, "contextLimit").map(|n| n.value),
                    cwd: cwd_member(l, &sf),
                    span: item.span,
                });
            }
            _ => l.diags.push(
                Diagnostic::new(
                    Code::WrongType,
                    format!(
                        "a '{key}' step must be a string or an object {{\"task\": …}}, found {}",
                        item.type_name()
                    ),
                )
                .at(item.span)
                .with_label("expected a string or a step object")
                .help("write the task as a string, or {\"task\": \"…\", \"agent\": \"…\"}"),
            ),
        }
    }
    out
}
