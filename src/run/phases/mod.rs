//! The phase kinds at run time, one module each. A kind is a small state struct the machine
//! drives: it is told events ([`KindEvent`]: start, a call ended, a script ended, a timer
//! fired, a rework ended, …), asks for calls and other operations through [`Cx`], fills its
//! record, and says when it is done ([`Step`]). No kind runs a loop of its own or spawns
//! anything.

mod agent;
mod approval;
mod expand;
mod fanout;
mod flow;
mod gate;
mod r#loop;
mod map;
mod parallel;
mod race;
mod reduce;
mod script;
mod subflow;
mod tournament;

pub(crate) use expand::graft;
pub(crate) use reduce::aggregate;

use super::machine::{CallResult, Cx, Exec, Halt, KindEvent, Step};
use crate::agent::Purpose;
use crate::flow::{OutputMode, Phase, PhaseType};

/// The state of one running phase's kind.
#[derive(Debug)]
pub(crate) enum Kind {
    Agent,
    Fanout(fanout::Fanout),
    Gate(gate::Gate),
    Reduce(reduce::Reduce),
    Approval,
    Loop(r#loop::Loop),
    Race(race::Race),
    Script(script::Script),
    Subflow(Box<subflow::Subflow>),
}

impl Kind {
    pub(crate) fn new(phase: &Phase) -> Kind {
        match phase.ty() {
            PhaseType::Agent => Kind::Agent,
            PhaseType::Parallel | PhaseType::Map | PhaseType::Tournament => {
                Kind::Fanout(fanout::Fanout::default())
            }
            PhaseType::Gate => Kind::Gate(gate::Gate::default()),
            PhaseType::Reduce => Kind::Reduce(reduce::Reduce::default()),
            PhaseType::Approval => Kind::Approval,
            PhaseType::Loop => Kind::Loop(r#loop::Loop::default()),
            PhaseType::Race => Kind::Race(race::Race::default()),
            PhaseType::Script => Kind::Script(script::Script::default()),
            PhaseType::Flow | PhaseType::Expand => Kind::Subflow(Box::default()),
        }
    }

    pub(crate) fn step(&mut self, ex: &mut Exec, cx: &mut Cx<'_>, ev: KindEvent) -> Step {
        match self {
            Kind::Agent => agent::step(ex, cx, ev),
            Kind::Fanout(s) => s.step(ex, cx, ev),
            Kind::Gate(s) => s.step(ex, cx, ev),
            Kind::Reduce(s) => s.step(ex, cx, ev),
            Kind::Approval => approval::step(ex, cx, ev),
            Kind::Loop(s) => s.step(ex, cx, ev),
            Kind::Race(s) => s.step(ex, cx, ev),
            Kind::Script(s) => s.step(ex, cx, ev),
            Kind::Subflow(s) => s.step(ex, cx, ev),
        }
    }
}

impl Kind {
    /// What a progress display shows of the running kind beyond its record: a loop's
    /// iteration, a gate's rework round.
    pub(crate) fn live(&self) -> Option<u32> {
        match self {
            Kind::Loop(s) => Some(s.iteration()).filter(|&i| i > 0),
            Kind::Gate(s) => Some(s.live_round()),
            _ => None,
        }
    }
}

/// Whether a phase of this kind calls its own `agent`.
pub(crate) fn runs_agent(p: &Phase) -> bool {
    !matches!(
        p.ty(),
        PhaseType::Script | PhaseType::Approval | PhaseType::Flow | PhaseType::Expand
    )
}

/// Start the phase's one call (agent, reduce one-shot) as slot 0.
pub(super) fn single_call(ex: &mut Exec, cx: &mut Cx<'_>, phase: &Phase, text: String) {
    let prompt = ex.prompt(cx, &text);
    let spec = ex
        .spec(phase.id.clone(), &phase.agent.value, prompt, Purpose::Task)
        .checked(phase);
    cx.call(ex, 0, spec);
}

/// The phase's one call ended: settle the record.
pub(super) fn settle_call(ex: &mut Exec, cx: &mut Cx<'_>, r: CallResult) -> Step {
    if let Some(msg) = r.crashed {
        return ex.crash(msg);
    }
    let json = cx.flow().phases[ex.index].output == OutputMode::Json;
    settle(ex, json, r);
    Step::Done(Halt::None)
}

/// Fold a call's result into the record.
pub(super) fn settle(ex: &mut Exec, json: bool, r: CallResult) {
    ex.account(&r);
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
