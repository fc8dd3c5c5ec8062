//! The sub-flow engine of flow (SPEC §3.8) and expand (§3.13): run a child flow — a saved
//! flow (`use`, see `flow.rs`) or an inline definition (`def`, an object or a JSON string) —
//! inside this phase, and take its final output. The child is a machine of its own, held
//! here and fed the inputs of its operations.

use std::sync::Arc;

use super::super::machine::{
    Command, Config, Cx, Event, Exec, Halt, Input, KindEvent, Line, OpKind, Step,
};
use super::super::record::{RunRecord, RunStatus};
use super::child::Subflow;
use crate::check::{CheckOptions, check_flow};
use crate::flow::{Def, Flow, LowerOptions, Phase, PhaseKind, effective_args, lower};
use crate::value::{Map, Value};

/// The deepest nesting of sub-flows.
const MAX_NESTING: usize = 5;

impl Subflow {
    pub(crate) fn step(&mut self, ex: &mut Exec, cx: &mut Cx<'_>, ev: KindEvent) -> Step {
        let flow = cx.flow();
        let phase = &flow.phases[ex.index];
        match ev {
            KindEvent::Start => self.start(ex, cx, phase),
            KindEvent::Loaded(text) => super::flow::loaded(self, ex, cx, phase, text),
            KindEvent::Resolved(run_id, backends, error) => {
                let name = self.name.clone();
                if let Some(e) = error {
                    ex.fail(String::new(), format!("sub-flow '{name}': {e}"));
                    return Step::Done(Halt::None);
                }
                self.begin(ex, cx, phase, run_id, backends)
            }
            KindEvent::Child(input) => self.drive(ex, cx, input),
            KindEvent::Interrupt => {
                let at = cx.now();
                self.drive(
                    ex,
                    cx,
                    Input {
                        at,
                        what: Event::Interrupt,
                    },
                )
            }
            _ => Step::Wait,
        }
    }

    fn start(&mut self, ex: &mut Exec, cx: &mut Cx<'_>, phase: &Phase) -> Step {
        let scope = ex.scope.clone();
        self.generated =
            cx.cfg().generated || matches!(phase.def().map(|d| &d.value), Some(Def::Template(_)));
        // A saved flow by name (`use`) is a flow phase's; an expand has only `def`.
        let use_flow = match &phase.kind {
            PhaseKind::Flow(k) => k.use_flow.as_ref(),
            _ => None,
        };
        match (use_flow, phase.def().map(|d| &d.value)) {
            (Some(name), _) => super::flow::load_saved(self, ex, cx, phase, name.value.clone()),
            (_, Some(Def::Inline(flow))) => {
                let name = flow.name.clone();
                self.proceed(ex, cx, phase, (**flow).clone(), name)
            }
            (_, Some(Def::Template(text))) => {
                let rendered = ex.render(cx, "def", text, &scope);
                match parse_def(&rendered, &phase.id, cx.cfg().depth + 1) {
                    Ok(flow) => {
                        let name = flow.name.clone();
                        self.proceed(ex, cx, phase, flow, name)
                    }
                    Err(e) => {
                        ex.rec.def_error = Some(e);
                        ex.succeed(String::new());
                        Step::Done(Halt::None)
                    }
                }
            }
            _ => {
                ex.rec.def_error =
                    Some("inline def is not a Taskflow, phases array, or {phases:[...]}".into());
                ex.succeed(String::new());
                Step::Done(Halt::None)
            }
        }
    }

    /// The child flow is known: apply the limits, take its arguments, resolve its agents.
    pub(super) fn proceed(
        &mut self,
        ex: &mut Exec,
        cx: &mut Cx<'_>,
        phase: &Phase,
        child: Flow,
        name: String,
    ) -> Step {
        let depth = cx.cfg().depth + 1;
        if depth > MAX_NESTING {
            ex.rec.def_error = Some(format!(
                "inline sub-flow nesting exceeded MAX_DYNAMIC_NESTING (5): depth {depth}"
            ));
            ex.succeed(String::new());
            return Step::Done(Halt::None);
        }
        if child.phases.is_empty() {
            ex.succeed(String::new());
            return Step::Done(Halt::None);
        }
        // Arguments: `with` values for flow phases, through resolveArgs (a value that does
        // not fit fails the phase: the child never starts); the child's defaults for expand
        // (once its size is within `maxNodes`).
        self.args = match &phase.kind {
            PhaseKind::Flow(k) => {
                let given = super::flow::given(ex, cx, k);
                match super::flow::resolve(&child, given) {
                    Ok(args) => args,
                    Err(why) => {
                        ex.fail(String::new(), format!("sub-flow '{name}': {why}"));
                        return Step::Done(Halt::None);
                    }
                }
            }
            PhaseKind::Expand(k) => {
                if super::expand::too_large(ex, k, &child) {
                    return Step::Done(Halt::None);
                }
                effective_args(&child, Map::default())
            }
            _ => effective_args(&child, Map::default()),
        };
        let names = super::super::agent_names(&child);
        let flow_name = child.name.clone();
        self.flow = Some(child);
        self.name = name;
        cx.io(0, OpKind::Other, |op| Command::ResolveAgents {
            op,
            names,
            flow: flow_name,
        });
        Step::Wait
    }

    /// Start the child machine.
    fn begin(
        &mut self,
        ex: &mut Exec,
        cx: &mut Cx<'_>,
        phase: &Phase,
        run_id: String,
        backends: Vec<(String, String)>,
    ) -> Step {
        let Some(child) = self.flow.take() else {
            return Step::Wait;
        };
        let parent = cx.cfg();
        let mut flow_stack = parent.flow_stack.clone();
        flow_stack.push(cx.flow().name.clone());
        let cfg = Config {
            run_id,
            journaling: false,
            // Its decision lines go up with the parent's (`tfc test --coverage`).
            decisions: parent.decisions,
            replay: backends.iter().any(|(_, b)| b.starts_with("replay")),
            backends: backends.into_iter().collect(),
            cwd: ex.work_dir.to_path_buf(),
            // Grafted fragments' calls are named like the phases they become.
            node_prefix: if super::expand::graft(phase) {
                format!("{}{}-", parent.node_prefix, phase.id)
            } else {
                format!("{}{}/", parent.node_prefix, phase.id)
            },
            prompt_prefix: format!("{}{}", parent.prompt_prefix, ex.pre_read),
            flow_stack,
            depth: parent.depth + 1,
            generated: self.generated,
            // The child's phases are not the parent's: no per-index fingerprints, no
            // resumed states of its own, and the spend is the parent's meter.
            phase_fps: Arc::new(Vec::new()),
            lookups: false,
            parent_run_id: None,
            spent_before: None,
            rerun_warn: Vec::new(),
            item_states: Arc::new(indexmap::IndexMap::new()),
            fork: None,
            ..parent.clone()
        };
        let args = std::mem::take(&mut self.args);
        self.machine = Some(cx.m.child(Arc::new(child), args, cfg));
        let at = cx.now();
        let step = self.drive(
            ex,
            cx,
            Input {
                at,
                what: Event::Start,
            },
        );
        if cx.aborted() && matches!(step, Step::Wait) {
            return self.drive(
                ex,
                cx,
                Input {
                    at,
                    what: Event::Interrupt,
                },
            );
        }
        step
    }

    /// Feed the child one input and pass its commands on.
    fn drive(&mut self, ex: &mut Exec, cx: &mut Cx<'_>, input: Input) -> Step {
        let Some(m) = self.machine.as_mut() else {
            return Step::Wait;
        };
        let cmds = cx.m.drive(m.as_mut(), input);
        let mut finished = None;
        for c in cmds {
            match c {
                Command::StartCall { op, .. }
                | Command::StartScript { op, .. }
                | Command::StartTimer { op, .. }
                | Command::AskApproval { op, .. }
                | Command::PrepareDir { op, .. }
                | Command::ReadContext { op, .. }
                | Command::RunScorer { op, .. }
                | Command::LoadFlow { op, .. }
                | Command::CacheLookup { op, .. }
                | Command::ResolveAgents { op, .. }
                | Command::StartShard { op, .. } => {
                    cx.m.own_child_op(op, cx.exec);
                    cx.push(c);
                }
                Command::CancelTimer { op } => {
                    cx.m.forget_op(op);
                    cx.push(c);
                }
                Command::Cancel { .. }
                | Command::CapShard { .. }
                | Command::ReleaseDir { .. }
                | Command::Progress(_)
                | Command::CacheStore { .. } => cx.push(c),
                // Decision lines (the child keeps no journal): named by node path already.
                Command::Journal(Line::Event(_)) if cx.cfg().decisions => cx.push(c),
                Command::Journal(_) | Command::Save | Command::EndShard(_) => {}
                Command::Finish(record) => finished = Some(record),
            }
        }
        match finished {
            Some(record) => {
                self.machine = None;
                let name = std::mem::take(&mut self.name);
                done(ex, *record, &name)
            }
            None => Step::Wait,
        }
    }
}

/// The child run ended: its final output becomes the phase's.
fn done(ex: &mut Exec, sub: RunRecord, name: &str) -> Step {
    // The sub-run's calls are the parent run's too (its `usage.calls` counts them): a
    // phase's usage carries no call count.
    ex.rec.usage.add(&crate::agent::Usage {
        calls: 0,
        ..sub.usage
    });
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
    Step::Done(Halt::None)
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
