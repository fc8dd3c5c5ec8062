//! `race` (SPEC §3.12): the first branch to finish wins.

use super::Branch;
use super::branch::{
    BRANCHES, branch_cwd_literal, branch_cwd_not_allowed, branch_tasks, lower_branches,
    too_few_branches,
};
use super::common::{Cx, need};
use crate::diag::Diagnostic;
use crate::flow::fields::FieldDef;
use crate::flow::fields::{FieldType, f};
use crate::flow::ir::Phase;
use crate::flow::lowerer::{Lowerer, PhaseFields};

/// A race phase.
#[derive(Clone, Debug)]
pub struct Race {
    /// `branches`.
    pub branches: Vec<Branch>,
    /// `cancelLosers` (default true).
    pub cancel_losers: bool,
}

impl Race {
    /// The defaults.
    pub const DEFAULT: Race = Race {
        branches: Vec::new(),
        cancel_losers: true,
    };
}

/// The fields of a race phase.
pub(super) const FIELDS: &[FieldDef] = &[
    BRANCHES,
    f(
        "cancelLosers",
        FieldType::Bool,
        "race: cancel the other branches (default true)",
    ),
];

pub(super) fn lower(l: &mut Lowerer, f: &PhaseFields<'_>, cx: &mut Cx<'_>) -> Race {
    Race {
        branches: lower_branches(l, f, cx),
        cancel_losers: l.boolean(f, "cancelLosers").unwrap_or(true),
    }
}

/// E0301, E0304, E0302 (branch cwd), E0410.
pub(super) fn check(p: &Phase, k: &Race, out: &mut Vec<Diagnostic>) {
    need(
        p,
        "branches",
        !k.branches.is_empty() || p.invalid.contains(&"branches"),
        "add \"branches\": [{\"task\": \"…\"}, {\"task\": \"…\"}]",
        out,
    );
    branch_tasks(p, &k.branches, out);
    if !k.branches.is_empty() && k.branches.len() < 2 {
        too_few_branches(
            p,
            &k.branches,
            "add another branch to race against, or use an agent phase for a single task",
            out,
        );
    }
    branch_cwd_not_allowed(p, &k.branches, out);
    branch_cwd_literal(p, &k.branches, out);
}
