//! One module per phase kind. Each takes the [`Exec`] of a started phase, fills its record and
//! says what the run must do next ([`Halt`]).

mod approval;
mod fanout;
mod gate;
mod looping;
mod race;
mod reduce;
mod script;
mod subflow;

pub use reduce::aggregate;
pub use subflow::graft;

use super::call::{CallSpec, call};
use super::ctx::Halt;
use super::exec::Exec;
use crate::agent::Purpose;
use crate::flow::{OutputMode, PhaseType};

/// Every kind but the plain agent phase runs in a future of its own on the heap: the state
/// of the largest kind would otherwise be part of every phase's task (and copied when each
/// is spawned), though most phases are single calls.
pub async fn run(ex: &mut Exec<'_>) -> Halt {
    match ex.phase.ty() {
        PhaseType::Agent => {
            agent(ex).await;
            Halt::None
        }
        PhaseType::Parallel => {
            Box::pin(fanout::parallel(ex)).await;
            Halt::None
        }
        PhaseType::Map => {
            Box::pin(fanout::map(ex)).await;
            Halt::None
        }
        PhaseType::Tournament => {
            Box::pin(fanout::tournament(ex)).await;
            Halt::None
        }
        PhaseType::Gate => Box::pin(gate::run(ex)).await,
        PhaseType::Reduce => {
            Box::pin(reduce::run(ex)).await;
            Halt::None
        }
        PhaseType::Approval => Box::pin(approval::run(ex)).await,
        PhaseType::Loop => {
            Box::pin(looping::run(ex)).await;
            Halt::None
        }
        PhaseType::Race => {
            Box::pin(race::run(ex)).await;
            Halt::None
        }
        PhaseType::Script => {
            Box::pin(script::run(ex)).await;
            Halt::None
        }
        PhaseType::Flow | PhaseType::Expand => {
            Box::pin(subflow::run(ex)).await;
            Halt::None
        }
    }
}

/// An agent phase (SPEC §3.2): one call.
async fn agent(ex: &mut Exec<'_>) {
    let scope = ex.scope.clone();
    let task = match &ex.phase.task {
        Some(t) => ex.render("task", t, &scope),
        None => String::new(),
    };
    let prompt = ex.prompt(&task);
    single_call(ex, prompt, Purpose::Task).await;
}

/// One call for the whole phase, settling the record (agent, reduce one-shot).
pub(super) async fn single_call(ex: &mut Exec<'_>, prompt: String, purpose: Purpose) {
    let phase = ex.phase;
    let r = call(
        ex.sh,
        phase,
        CallSpec::new(phase.id.clone(), &phase.agent.value, prompt, purpose)
            .checked(phase)
            .in_dir(&ex.work_dir)
            .refuse(ex.oversize.clone()),
    )
    .await;
    settle(ex, r);
}

/// Fold a call's result into the record.
pub(super) fn settle(ex: &mut Exec<'_>, r: super::call::CallResult) {
    ex.rec.attempts += r.attempts;
    ex.rec.usage.add(&r.usage);
    ex.rec.model = r.model.clone().or(ex.rec.model.take());
    ex.rec.timed_out |= r.timed_out;
    for w in r.warnings {
        ex.rec.warn(w);
    }
    if r.ok {
        if ex.phase.output == OutputMode::Json {
            ex.store_json(&r.output);
        }
        ex.succeed(r.output);
    } else {
        let err = r.error.unwrap_or_else(|| "agent call failed".into());
        ex.fail(r.output, err);
    }
}
