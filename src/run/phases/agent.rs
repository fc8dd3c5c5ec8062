//! agent (SPEC §3.2): the task rendered, one call, its answer the phase's output.

use super::super::machine::{Cx, Exec, KindEvent, Step};

/// An agent phase (SPEC §3.2): one call.
pub(super) fn step(ex: &mut Exec, cx: &mut Cx<'_>, ev: KindEvent) -> Step {
    match ev {
        KindEvent::Start => {
            let flow = cx.flow();
            let phase = &flow.phases[ex.index];
            let scope = ex.scope.clone();
            let task = match &phase.task {
                Some(t) => ex.render(cx, "task", t, &scope),
                None => String::new(),
            };
            super::common::single_call(ex, cx, phase, task);
            Step::Wait
        }
        KindEvent::Call(_, r) => super::common::settle_call(ex, cx, r),
        _ => Step::Wait,
    }
}
