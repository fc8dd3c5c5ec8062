//! The `match`es over the kinds: lowering a phase's kind fields and running its kind checks
//! call the function of the kind's own file.

use super::common::Cx;
use super::{
    Agent, PhaseKind, agent, approval, expand, flow, gate, loop_kind, map, parallel, race, reduce,
    script, tournament,
};
use crate::diag::Diagnostic;
use crate::flow::enums::PhaseType;
use crate::flow::ir::Phase;
use crate::flow::lowerer::{Lowerer, PhaseFields};

/// Lower the fields of kind `ty` found in `f`.
pub(crate) fn lower_kind(
    l: &mut Lowerer,
    ty: PhaseType,
    f: &PhaseFields<'_>,
    cx: &mut Cx<'_>,
) -> PhaseKind {
    match ty {
        PhaseType::Agent => PhaseKind::Agent(Agent),
        PhaseType::Parallel => PhaseKind::Parallel(parallel::lower(l, f, cx)),
        PhaseType::Map => PhaseKind::Map(Box::new(map::lower(l, f, cx))),
        PhaseType::Gate => PhaseKind::Gate(Box::new(gate::lower(l, f, cx))),
        PhaseType::Reduce => PhaseKind::Reduce(reduce::lower(l, f, cx)),
        PhaseType::Approval => PhaseKind::Approval(approval::lower(l, f, cx)),
        PhaseType::Flow => PhaseKind::Flow(Box::new(flow::lower(l, f, cx))),
        PhaseType::Loop => PhaseKind::Loop(Box::new(loop_kind::lower(l, f, cx))),
        PhaseType::Tournament => PhaseKind::Tournament(Box::new(tournament::lower(l, f, cx))),
        PhaseType::Script => PhaseKind::Script(Box::new(script::lower(l, f, cx))),
        PhaseType::Race => PhaseKind::Race(race::lower(l, f, cx)),
        PhaseType::Expand => PhaseKind::Expand(Box::new(expand::lower(l, f, cx))),
    }
}

/// The kind-specific checks of a phase (SPEC §7.2).
pub fn check_kind(p: &Phase, out: &mut Vec<Diagnostic>) {
    match &p.kind {
        PhaseKind::Agent(_) => agent::check(p, out),
        PhaseKind::Parallel(k) => parallel::check(p, k, out),
        PhaseKind::Map(_) => map::check(p, out),
        PhaseKind::Gate(k) => gate::check(p, k, out),
        PhaseKind::Reduce(k) => reduce::check(p, k, out),
        PhaseKind::Approval(_) => approval::check(p, out),
        PhaseKind::Flow(_) => flow::check(p, out),
        PhaseKind::Loop(_) => loop_kind::check(p, out),
        PhaseKind::Tournament(k) => tournament::check(p, k, out),
        PhaseKind::Script(k) => script::check(p, k, out),
        PhaseKind::Race(k) => race::check(p, k, out),
        PhaseKind::Expand(_) => expand::check(p, out),
    }
}
