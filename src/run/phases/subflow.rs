//! flow (SPEC §3.8) and expand (§3.13): run a child flow — a saved flow (`use`) or an inline
//! definition (`def`, an object or a JSON string) — inside this phase, and take its final output.

use std::sync::Arc;

use super::super::exec::Exec;
use super::super::record::RunStatus;
use super::super::{Parent, agent_names, run_flow};
use crate::check::{CheckOptions, check_flow};
use crate::flow::{Def, Flow, LowerOptions, PhaseType, WithValue, effective_args, lower};
use crate::value::{Map, Value};

/// The deepest nesting of sub-flows.
const MAX_NESTING: usize = 5;

pub async fn run(ex: &mut Exec<'_>) {
    let phase = ex.phase;
    let scope = ex.scope.clone();
    let generated =
        ex.sh.generated || matches!(phase.def().map(|d| &d.value), Some(Def::Template(_)));
    let (child, name) = match (&phase.flow_fields().use_flow, phase.def().map(|d| &d.value)) {
        (Some(name), _) if phase.ty() == PhaseType::Flow => {
            let target = name.value.clone();
            if ex.sh.flow_stack.contains(&target) || ex.sh.flow.name == target {
                let mut chain = ex.sh.flow_stack.clone();
                chain.push(ex.sh.flow.name.clone());
                chain.push(target.clone());
                ex.fail(
                    String::new(),
                    format!(
                        "flow phase '{}': recursive sub-flow {}",
                        phase.id,
                        chain.join(" -> ")
                    ),
                );
                return;
            }
            let saved = crate::project::SavedFlows::new(&ex.sh.cwd);
            match crate::check::FlowLoader::load(&saved, &target) {
                Err(_) => {
                    ex.fail(
                        String::new(),
                        format!(
                            "flow phase '{}': saved flow not found: '{target}'",
                            phase.id
                        ),
                    );
                    return;
                }
                Ok((_, text)) => match crate::check::check_source(
                    &text,
                    &LowerOptions {
                        default_name: Some(target.clone()),
                    },
                    &CheckOptions::default(),
                ) {
                    c if c.has_errors() || c.flow.is_none() => {
                        let first = c
                            .diagnostics
                            .iter()
                            .find(|d| d.is_error())
                            .map(|d| d.message.clone())
                            .unwrap_or_default();
                        ex.fail(
                            String::new(),
                            format!(
                                "flow phase '{}': saved flow '{target}' has errors: {first}",
                                phase.id
                            ),
                        );
                        return;
                    }
                    c => (c.flow.expect("checked"), target),
                },
            }
        }
        (_, Some(Def::Inline(flow))) => ((**flow).clone(), flow.name.clone()),
        (_, Some(Def::Template(text))) => {
            let rendered = ex.render("def", text, &scope);
            match parse_def(&rendered, &phase.id, ex.sh.depth + 1) {
                Ok(flow) => {
                    let name = flow.name.clone();
                    (flow, name)
                }
                Err(e) => {
                    ex.rec.def_error = Some(e);
                    ex.succeed(String::new());
                    return;
                }
            }
        }
        _ => {
            ex.rec.def_error =
                Some("inline def is not a Taskflow, phases array, or {phases:[...]}".into());
            ex.succeed(String::new());
            return;
        }
    };
    if ex.sh.depth + 1 > MAX_NESTING {
        ex.rec.def_error = Some(format!(
            "inline sub-flow nesting exceeded MAX_DYNAMIC_NESTING (5): depth {}",
            ex.sh.depth + 1
        ));
        ex.succeed(String::new());
        return;
    }
    if child.phases.is_empty() {
        ex.succeed(String::new());
        return;
    }
    if child.phases.len() as f64 > phase.expand_fields().max_nodes
        && phase.ty() == PhaseType::Expand
    {
        ex.rec.def_error = Some(format!(
            "expand fragment has {} phases (maxNodes={})",
            child.phases.len(),
            phase.expand_fields().max_nodes
        ));
        ex.succeed(String::new());
        return;
    }
    // Arguments: `with` values (value mode) for flow phases; the child's defaults for expand.
    let mut given = Map::default();
    if phase.ty() == PhaseType::Flow {
        for (k, v) in &phase.flow_fields().with {
            let value = match &v.value {
                WithValue::Template(t) => ex.render_value(&format!("with.{k}"), t, &scope),
                WithValue::Literal(v) => v.clone(),
            };
            given.insert(k.clone(), value);
        }
    }
    let args = effective_args(&child, given);
    let mut agents = std::collections::HashMap::new();
    for a in agent_names(&child) {
        match ex
            .sh
            .agents
            .get(&a)
            .cloned()
            .map(Ok)
            .unwrap_or_else(|| ex.sh.roster.resolve(&a))
        {
            Ok(r) => {
                agents.insert(a, r);
            }
            Err(e) => {
                ex.fail(String::new(), format!("sub-flow '{name}': {e}"));
                return;
            }
        }
    }
    let mut stack = ex.sh.flow_stack.clone();
    stack.push(ex.sh.flow.name.clone());
    let parent = Parent {
        run_id: super::super::store::new_run_id(&child.name),
        meter: ex.sh.meter.clone(),
        cancel: ex.sh.cancel.clone(),
        // Grafted fragments' calls are named like the phases they become: `<expandId>-<childId>`.
        node_prefix: if graft(phase) {
            format!("{}{}-", ex.sh.node_prefix, phase.id)
        } else {
            format!("{}{}/", ex.sh.node_prefix, phase.id)
        },
        flow_stack: stack,
        depth: ex.sh.depth + 1,
        generated,
        prompt_prefix: format!("{}{}", ex.sh.prompt_prefix, ex.pre_read),
        executor: ex.sh.executor.clone(),
    };
    let sub = run_flow(
        Arc::new(child),
        agents,
        args,
        &ex.sh.opts,
        ex.sh.roster.clone(),
        parent,
        // The phase's working directory is the sub-flow's invocation directory.
        ex.work_dir.clone(),
        None,
    )
    .await;
    ex.rec.usage.add(&sub.usage);
    let status = sub.status;
    let output = sub.final_output.clone();
    let detail = sub.reason.clone().or_else(|| {
        sub.phases
            .values()
            .find(|p| p.error.is_some())
            .and_then(|p| p.error.clone())
    });
    ex.rec.sub_run = Some(Box::new(sub));
    if status == RunStatus::Completed {
        ex.succeed(output);
    } else {
        let mut err = format!("sub-flow '{name}' {}", status.as_str());
        if let Some(d) = detail {
            err.push_str(": ");
            err.push_str(&d);
        }
        ex.fail(String::new(), err);
    }
}

/// A generated definition: JSON text of a flow, a phases array, or `{phases}`; checked with
/// the same rules (fail-open: the message becomes the phase's `defError`).
fn parse_def(text: &str, phase_id: &str, depth: usize) -> Result<Flow, String> {
    let Some(value) = crate::eval::safe_parse::safe_parse(text).value else {
        return Err("inline def string did not parse as JSON".into());
    };
    if !matches!(value, Value::Object(_) | Value::Array(_)) {
        return Err("inline def is not a Taskflow, phases array, or {phases:[...]}".into());
    }
    let json = value.to_json();
    let parsed = crate::json::parse(&json);
    let Some(root) = parsed.root else {
        return Err("inline def string did not parse as JSON".into());
    };
    let lowered = lower(
        &root,
        &LowerOptions {
            default_name: Some(format!("{phase_id}-inline")),
        },
    );
    if let Some(d) = lowered.diagnostics.iter().find(|d| d.is_error()) {
        return Err(format!("inline def failed validation: {}", d.message));
    }
    let Some(flow) = lowered.flow else {
        return Err("inline def is not a Taskflow, phases array, or {phases:[...]}".into());
    };
    if let Some(d) = crate::check::dynamic_limits(&flow, depth).first() {
        return Err(format!(
            "inline def failed validation: [{}] {}",
            d.code.as_str(),
            d.message
        ));
    }
    if let Some(d) = check_flow(&flow, &CheckOptions::default())
        .iter()
        .find(|d| d.is_error())
    {
        return Err(format!("inline def failed verification: {}", d.message));
    }
    Ok(flow)
}

/// An expand phase whose fragment becomes phases of the parent run (SPEC §3.13).
pub fn graft(phase: &crate::flow::Phase) -> bool {
    phase.ty() == PhaseType::Expand && phase.expand_fields().mode == crate::flow::ExpandMode::Graft
}
