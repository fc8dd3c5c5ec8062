//! The phase kinds at run time, one module each. A kind is a small state struct the machine
//! drives: it is told events ([`KindEvent`]: start, a call ended, a script ended, a timer
//! fired, a rework ended, …), asks for calls and other operations through [`Cx`], fills its
//! record, and says when it is done ([`Step`]). No kind runs a loop of its own or spawns
//! anything.

mod agent;
mod approval;
mod child;
mod common;
mod expand;
mod fanout;
mod flow;
mod gate;
mod items;
mod r#loop;
mod map;
mod parallel;
mod race;
mod reduce;
mod script;
mod subflow;
mod tournament;

pub(crate) use expand::graft;
pub(crate) use fanout::SET_ITEM;
pub(crate) use reduce::aggregate;

use super::machine::{Cx, Exec, KindEvent, Step};
use crate::flow::{Phase, PhaseKind};

/// The state of one running phase's kind.
#[derive(Debug)]
pub(crate) enum Kind {
    Agent,
    Fanout(items::Fanout),
    Gate(gate::Gate),
    Reduce(reduce::Reduce),
    Approval(approval::Approval),
    Loop(r#loop::Loop),
    Race(race::Race),
    Script(script::Script),
    Subflow(Box<child::Subflow>),
}

impl Kind {
    /// The running state of `phase`'s kind (every kind named: a new one is flagged here).
    pub(crate) fn new(phase: &Phase) -> Kind {
        match &phase.kind {
            PhaseKind::Agent(_) => Kind::Agent,
            PhaseKind::Parallel(_) | PhaseKind::Map(_) | PhaseKind::Tournament(_) => {
                Kind::Fanout(Default::default())
            }
            PhaseKind::Gate(_) => Kind::Gate(gate::Gate::default()),
            PhaseKind::Reduce(_) => Kind::Reduce(reduce::Reduce::default()),
            PhaseKind::Approval(_) => Kind::Approval(approval::Approval::default()),
            PhaseKind::Loop(_) => Kind::Loop(r#loop::Loop::default()),
            PhaseKind::Race(_) => Kind::Race(race::Race::default()),
            PhaseKind::Script(_) => Kind::Script(script::Script::default()),
            PhaseKind::Flow(_) | PhaseKind::Expand(_) => Kind::Subflow(Box::default()),
        }
    }

    /// Tell the running kind `ev`; each kind's logic gets its own fields (the phase's
    /// [`PhaseKind`] variant), never another kind's defaults.
    pub(crate) fn step(&mut self, ex: &mut Exec, cx: &mut Cx<'_>, ev: KindEvent) -> Step {
        let flow = cx.flow();
        let phase = &flow.phases[ex.index];
        match (self, &phase.kind) {
            (Kind::Agent, PhaseKind::Agent(_)) => agent::step(ex, cx, ev),
            (Kind::Fanout(s), PhaseKind::Parallel(k)) => {
                s.step(ex, cx, fanout::Shape::Parallel(k), ev)
            }
            (Kind::Fanout(s), PhaseKind::Map(k)) => s.step(ex, cx, fanout::Shape::Map(k), ev),
            (Kind::Fanout(s), PhaseKind::Tournament(k)) => {
                s.step(ex, cx, fanout::Shape::Tournament(k), ev)
            }
            (Kind::Gate(s), PhaseKind::Gate(k)) => s.step(ex, cx, k, ev),
            (Kind::Reduce(s), PhaseKind::Reduce(k)) => s.step(ex, cx, k, ev),
            (Kind::Approval(s), PhaseKind::Approval(_)) => s.step(ex, cx, ev),
            (Kind::Loop(s), PhaseKind::Loop(k)) => s.step(ex, cx, k, ev),
            (Kind::Race(s), PhaseKind::Race(k)) => s.step(ex, cx, k, ev),
            (Kind::Script(s), PhaseKind::Script(k)) => s.step(ex, cx, k, ev),
            (Kind::Subflow(s), PhaseKind::Flow(_) | PhaseKind::Expand(_)) => s.step(ex, cx, ev),
            // `Kind::new` built the state from this very phase: a mismatch is a bug in tfc.
            (state, _) => ex.crash(format!(
                "phase '{}': its running state ({}) does not match its type '{}'",
                phase.id,
                state.name(),
                phase.ty().as_str()
            )),
        }
    }

    /// The state's name, for the mismatch message.
    fn name(&self) -> &'static str {
        match self {
            Kind::Agent => "agent",
            Kind::Fanout(_) => "fan-out",
            Kind::Gate(_) => "gate",
            Kind::Reduce(_) => "reduce",
            Kind::Approval(_) => "approval",
            Kind::Loop(_) => "loop",
            Kind::Race(_) => "race",
            Kind::Script(_) => "script",
            Kind::Subflow(_) => "sub-flow",
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
        p.kind,
        PhaseKind::Script(_) | PhaseKind::Approval(_) | PhaseKind::Flow(_) | PhaseKind::Expand(_)
    )
}
