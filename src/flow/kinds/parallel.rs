//! `parallel` (SPEC §3.3): every branch at once.

use super::Branch;
use super::branch::{BRANCHES, branch_cwd_literal, branch_tasks, lower_branches};
use super::common::{Cx, need};
use crate::diag::Diagnostic;
use crate::flow::fields::FieldDef;
use crate::flow::ir::Phase;
use crate::flow::lowerer::{Lowerer, PhaseFields};

/// A parallel phase.
#[derive(Clone, Debug)]
pub struct Parallel {
    /// `branches`.
    pub branches: Vec<Branch>,
}

impl Parallel {
    /// The defaults.
    pub const DEFAULT: Parallel = Parallel {
        branches: Vec::new(),
    };
}

/// The fields of a parallel phase.
pub(super) const FIELDS: &[FieldDef] = &[BRANCHES];

pub(super) fn lower(l: &mut Lowerer, f: &PhaseFields<'_>, cx: &mut Cx<'_>) -> Parallel {
    Parallel {
        branches: lower_branches(l, f, cx),
    }
}

/// E0301 (branches, and a task in each), E0410 (branch directories).
pub(super) fn check(p: &Phase, k: &Parallel, out: &mut Vec<Diagnostic>) {
    need(
        p,
        "branches",
        !k.branches.is_empty() || p.invalid.contains(&"branches"),
        "add \"branches\": [{\"task\": \"…\"}, {\"task\": \"…\"}]",
        out,
    );
    branch_tasks(p, &k.branches, out);
    branch_cwd_literal(p, &k.branches, out);
}
