//! `tournament` (SPEC §3.10): variants of a task, or branches, compete before a judge.

use super::Branch;
use super::branch::{
    BRANCHES, branch_cwd_literal, branch_cwd_not_allowed, branch_tasks, lower_branches,
    too_few_branches,
};
use super::common::{Cx, has, need};
use crate::diag::Diagnostic;
use crate::flow::enums::TournamentMode;
use crate::flow::fields::FieldDef;
use crate::flow::fields::{FieldType, f};
use crate::flow::ir::{Field, Phase, Text};
use crate::flow::lowerer::{Lowerer, PhaseFields};

/// A tournament phase.
#[derive(Clone, Debug)]
pub struct Tournament {
    /// `branches` (else `variants` copies of the task).
    pub branches: Vec<Branch>,
    /// `variants` (2..20, default 3).
    pub variants: f64,
    /// `mode`.
    pub mode: TournamentMode,
    /// `judge`: the rubric.
    pub judge: Option<Text>,
    /// `judgeAgent`.
    pub judge_agent: Option<Field<String>>,
}

impl Tournament {
    /// The defaults.
    pub const DEFAULT: Tournament = Tournament {
        branches: Vec::new(),
        variants: 3.0,
        mode: TournamentMode::Best,
        judge: None,
        judge_agent: None,
    };
}

/// The fields of a tournament phase.
pub(super) const FIELDS: &[FieldDef] = &[
    BRANCHES,
    f(
        "variants",
        FieldType::Number,
        "tournament: copies of the task (2..20, default 3)",
    ),
    f(
        "mode",
        FieldType::OneOf(TournamentMode::NAMES),
        "tournament: pick or synthesise",
    ),
    f("judge", FieldType::String, "tournament: judging rubric"),
    f(
        "judgeAgent",
        FieldType::String,
        "tournament: agent of the judge",
    ),
];

pub(super) fn lower(l: &mut Lowerer, f: &PhaseFields<'_>, cx: &mut Cx<'_>) -> Tournament {
    let mut k = Tournament::DEFAULT;
    k.branches = lower_branches(l, f, cx);
    if let Some(n) = l.ranged(f, "variants", 2.0, 20.0) {
        k.variants = n;
    }
    k.mode = l.word(f, "mode").unwrap_or_default();
    k.judge = l.text(f, "judge");
    k.judge_agent = l.agent_name(f, "judgeAgent", cx.id);
    k
}

/// E0301, E0304, E0302 (branch cwd), E0410.
pub(super) fn check(p: &Phase, k: &Tournament, out: &mut Vec<Diagnostic>) {
    need(
        p,
        "task' or 'branches",
        has(p, "task") || has(p, "branches"),
        "add \"task\" (run as several variants) or \"branches\" (one task each)",
        out,
    );
    branch_tasks(p, &k.branches, out);
    if p.has("branches") && k.branches.len() < 2 && !p.invalid.contains(&"branches") {
        too_few_branches(
            p,
            &k.branches,
            "add another branch, or drop 'branches' and let 'variants' copies of the task compete",
            out,
        );
    }
    branch_cwd_not_allowed(p, &k.branches, out);
    branch_cwd_literal(p, &k.branches, out);
}
