//! What several kinds share: the phase's one call (agent, reduce one-shot) and folding a
//! call's result into the record.

use super::super::machine::{CallResult, Cx, Exec, Halt, Step};
use crate::agent::Purpose;
use crate::flow::{OutputMode, Phase};

/// Start the phase's one call (agent, reduce one-shot) as slot 0.
pub(crate) fn single_call(ex: &mut Exec, cx: &mut Cx<'_>, phase: &Phase, text: String) {
    let prompt = ex.prompt(cx, &text);
    let spec = ex
        .spec(phase.id.clone(), &phase.agent.value, prompt, Purpose::Task)
        .checked(phase);
    cx.call(ex, 0, spec);
}

/// The phase's one call ended: settle the record.
pub(crate) fn settle_call(ex: &mut Exec, cx: &mut Cx<'_>, r: CallResult) -> Step {
    if let Some(msg) = r.crashed {
        return ex.crash(msg);
    }
    let json = cx.flow().phases[ex.index].output == OutputMode::Json;
    settle(ex, json, r);
    Step::Done(Halt::None)
}

/// Fold a call's result into the record; a call refused at the call cap skips the phase
/// (SPEC §8.7).
pub(crate) fn settle(ex: &mut Exec, json: bool, r: CallResult) {
    ex.account(&r);
    if r.capped {
        ex.skip(r.error.unwrap_or_default());
        return;
    }
    ex.rec.model = r.model.clone().or(ex.rec.model.take());
    if r.ok {
        if json {
            ex.store_json(&r.output);
        }
        ex.succeed(r.output);
    } else {
        let err = r.error.unwrap_or_else(|| "agent call failed".into());
        ex.fail(r.output, err);
    }
}
