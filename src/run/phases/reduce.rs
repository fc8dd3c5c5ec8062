//! reduce (SPEC §3.6): `{previous.output}` aggregates the `from` phases that are done; one
//! call, or a tree of batched calls, one after the other.

use super::super::machine::{CallResult, Cx, Exec, Halt, KindEvent, Step};
use super::super::scope::PhaseScope;
use crate::agent::Purpose;
use crate::flow::{OutputMode, Phase, ReduceStrategy, kinds};
use crate::value::Value;

/// `### <id>\n\n<output>` blocks joined by `\n\n---\n\n`; one input is passed raw.
pub(crate) fn aggregate(inputs: &[(String, String)]) -> Option<String> {
    match inputs {
        [] => None,
        [(_, only)] => Some(only.clone()),
        _ => Some(
            inputs
                .iter()
                .map(|(id, out)| format!("### {id}\n\n{out}"))
                .collect::<Vec<_>>()
                .join("\n\n---\n\n"),
        ),
    }
}

/// A reduce in progress.
#[derive(Debug, Default)]
pub(crate) struct Reduce {
    tree: bool,
    batch: usize,
    /// This round's inputs.
    list: Vec<(String, String)>,
    /// The next round's inputs so far.
    next: Vec<(String, String)>,
    round: u32,
    /// The batch of this round in flight (0-based).
    b: usize,
    label: String,
}

impl Reduce {
    pub(crate) fn step(
        &mut self,
        ex: &mut Exec,
        cx: &mut Cx<'_>,
        k: &kinds::Reduce,
        ev: KindEvent,
    ) -> Step {
        let flow = cx.flow();
        let phase = &flow.phases[ex.index];
        match ev {
            KindEvent::Start => {
                let inputs = inputs(ex, phase);
                self.tree = k.strategy == ReduceStrategy::Tree && inputs.len() >= 2;
                if !self.tree {
                    let scope = ex.scope.clone();
                    let task = match &phase.task {
                        Some(t) => ex.render(cx, "task", t, &scope),
                        None => String::new(),
                    };
                    super::common::single_call(ex, cx, phase, task);
                    return Step::Wait;
                }
                self.batch = k.batch_size.as_ref().map_or(2, |b| b.value as usize).max(2);
                self.list = inputs;
                self.round = 1;
                self.b = 0;
                self.batch_call(ex, cx, phase)
            }
            KindEvent::Call(_, r) if !self.tree => super::common::settle_call(ex, cx, r),
            KindEvent::Call(_, r) => self.batch_done(ex, cx, phase, r),
            _ => Step::Wait,
        }
    }

    /// Start batch `b` of this round, or end the round / the tree.
    fn batch_call(&mut self, ex: &mut Exec, cx: &mut Cx<'_>, phase: &Phase) -> Step {
        loop {
            if self.b * self.batch >= self.list.len() {
                self.list = std::mem::take(&mut self.next);
                if self.list.len() <= 1 {
                    let out = self.list.pop().map(|(_, o)| o).unwrap_or_default();
                    if phase.output == OutputMode::Json {
                        ex.store_json(&out);
                    }
                    ex.succeed(out);
                    return Step::Done(Halt::None);
                }
                self.round += 1;
                self.b = 0;
                continue;
            }
            break;
        }
        if let Some(reason) = cx.refuse_call() {
            ex.rec.budget_truncated = true;
            ex.rec
                .warn(format!("tree reduce stopped: budget exceeded ({reason})"));
            let remaining: Vec<(String, String)> = std::mem::take(&mut self.next)
                .into_iter()
                .chain(self.list.iter().skip(self.b * self.batch).cloned())
                .collect();
            ex.succeed(aggregate(&remaining).unwrap_or_default());
            return Step::Done(Halt::None);
        }
        let start = self.b * self.batch;
        let end = (start + self.batch).min(self.list.len());
        self.label = format!("round-{}-batch-{}", self.round, self.b + 1);
        let mut scope: PhaseScope = ex.scope.clone();
        scope.previous = aggregate(&self.list[start..end]).map(Value::String);
        let task = match &phase.task {
            Some(t) => ex.render(cx, "task", t, &scope),
            None => String::new(),
        };
        let prompt = ex.prompt(cx, &task);
        let spec = ex
            .spec(
                format!("{}#{}", phase.id, self.label),
                &phase.agent.value,
                prompt,
                Purpose::Task,
            )
            .checked(phase);
        cx.call(ex, 0, spec);
        Step::Wait
    }

    fn batch_done(&mut self, ex: &mut Exec, cx: &mut Cx<'_>, phase: &Phase, r: CallResult) -> Step {
        if let Some(msg) = r.crashed {
            return ex.crash(msg);
        }
        if !r.ok {
            super::common::settle(ex, phase.output == OutputMode::Json, r);
            return Step::Done(Halt::None);
        }
        ex.rec.attempts += r.attempts;
        ex.rec.usage.add(&r.usage);
        self.next.push((std::mem::take(&mut self.label), r.output));
        self.b += 1;
        self.batch_call(ex, cx, phase)
    }
}

/// The `from` phases that are done, with their outputs, in `from` order.
fn inputs(ex: &Exec, phase: &Phase) -> Vec<(String, String)> {
    use crate::eval::Scope;
    phase
        .from
        .iter()
        .filter_map(|f| {
            let step = ex.scope.steps.iter().find(|(k, _)| *k == f.value)?;
            (step.1.status == crate::eval::StepStatus::Done)
                .then(|| {
                    ex.scope
                        .step_output(&f.value)
                        .and_then(Value::as_str)
                        .map(|o| (f.value.clone(), o.to_owned()))
                })
                .flatten()
        })
        .collect()
}
