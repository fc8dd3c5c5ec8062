//! reduce (SPEC §3.6): `{previous.output}` aggregates the `from` phases that are done; one call,
//! or a tree of batched calls.

use super::super::call::{CallSpec, call};
use super::super::exec::Exec;
use super::super::scope::PhaseScope;
use super::{settle, single_call};
use crate::agent::Purpose;
use crate::flow::{OutputMode, ReduceStrategy};
use crate::value::Value;

/// `### <id>\n\n<output>` blocks joined by `\n\n---\n\n`; one input is passed raw.
pub fn aggregate(inputs: &[(String, String)]) -> Option<String> {
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

pub async fn run(ex: &mut Exec<'_>) {
    let inputs = ex.scope_inputs();
    let tree = ex.phase.reduce_fields().strategy == ReduceStrategy::Tree && inputs.len() >= 2;
    if !tree {
        let scope = ex.scope.clone();
        let task = match &ex.phase.task {
            Some(t) => ex.render("task", t, &scope),
            None => String::new(),
        };
        let prompt = ex.prompt(&task);
        single_call(ex, prompt, Purpose::Task).await;
        return;
    }
    let batch = ex
        .phase
        .reduce_fields()
        .batch_size
        .as_ref()
        .map_or(2, |b| b.value as usize)
        .max(2);
    let mut list = inputs;
    let mut round = 0;
    while list.len() > 1 {
        round += 1;
        let mut next = Vec::new();
        for (b, chunk) in list.chunks(batch).enumerate() {
            if let Some(reason) = ex.sh.meter.over() {
                ex.rec.budget_truncated = true;
                ex.rec
                    .warn(format!("tree reduce stopped: budget exceeded ({reason})"));
                let remaining: Vec<(String, String)> = next
                    .into_iter()
                    .chain(list.iter().skip(b * batch).cloned())
                    .collect();
                ex.succeed(aggregate(&remaining).unwrap_or_default());
                return;
            }
            let label = format!("round-{round}-batch-{}", b + 1);
            let mut scope: PhaseScope = ex.scope.clone();
            scope.previous = aggregate(chunk).map(Value::String);
            let task = match &ex.phase.task {
                Some(t) => ex.render("task", t, &scope),
                None => String::new(),
            };
            let prompt = ex.prompt(&task);
            let r = call(
                ex.sh,
                ex.phase,
                CallSpec::new(
                    format!("{}#{label}", ex.phase.id),
                    &ex.phase.agent.value,
                    prompt,
                    Purpose::Task,
                )
                .checked(ex.phase)
                .in_dir(&ex.work_dir)
                .refuse(ex.oversize.clone()),
            )
            .await;
            if !r.ok {
                settle(ex, r);
                return;
            }
            ex.rec.attempts += r.attempts;
            ex.rec.usage.add(&r.usage);
            next.push((label, r.output));
        }
        list = next;
    }
    let out = list.pop().map(|(_, o)| o).unwrap_or_default();
    if ex.phase.output == OutputMode::Json {
        ex.store_json(&out);
    }
    ex.succeed(out);
}

impl Exec<'_> {
    /// The `from` phases that are done, with their outputs, in `from` order.
    fn scope_inputs(&self) -> Vec<(String, String)> {
        use crate::eval::Scope;
        self.phase
            .from
            .iter()
            .filter_map(|f| {
                let step = self.scope.steps.iter().find(|(k, _)| *k == f.value)?;
                (step.1.status == crate::eval::StepStatus::Done)
                    .then(|| {
                        self.scope
                            .step_output(&f.value)
                            .and_then(Value::as_str)
                            .map(|o| (f.value.clone(), o.to_owned()))
                    })
                    .flatten()
            })
            .collect()
    }
}
