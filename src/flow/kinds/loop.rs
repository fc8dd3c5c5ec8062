//! `loop` (SPEC §3.9): the task again and again until a condition holds.

use super::common::{Cx, TASK_HELP, has, need};
use crate::diag::Diagnostic;
use crate::flow::fields::FieldDef;
use crate::flow::fields::{FieldType, f};
use crate::flow::ir::{Cond, Phase};
use crate::flow::lowerer::{Lowerer, PhaseFields};

/// A loop phase.
#[derive(Clone, Debug)]
pub struct Loop {
    /// `until`: the stop condition.
    pub until: Option<Cond>,
    /// `maxIterations` (1..100, default 10).
    pub max_iterations: f64,
    /// `convergence` (default true): stop when the output repeats.
    pub convergence: bool,
    /// `reflexion`: feed a summary of the last iteration back.
    pub reflexion: bool,
}

impl Loop {
    /// The defaults.
    pub const DEFAULT: Loop = Loop {
        until: None,
        max_iterations: 10.0,
        convergence: true,
        reflexion: false,
    };
}

/// The fields of a loop phase.
pub(super) const FIELDS: &[FieldDef] = &[
    f("until", FieldType::String, "loop: stop condition"),
    f(
        "maxIterations",
        FieldType::Number,
        "loop: 1..100 (default 10)",
    ),
    f(
        "convergence",
        FieldType::Bool,
        "loop: stop when the output repeats (default true)",
    ),
    f(
        "reflexion",
        FieldType::Bool,
        "loop: feed a summary of the last iteration back",
    ),
];

pub(super) fn lower(l: &mut Lowerer, f: &PhaseFields<'_>, cx: &mut Cx<'_>) -> Loop {
    let mut k = Loop::DEFAULT;
    let until = l.str_node(f, "until");
    k.until = cx
        .invalid_if_none(f, "until", until)
        .map(|(_, s)| Cond::new(s.clone()));
    if let Some(n) = l.ranged(f, "maxIterations", 1.0, 100.0) {
        k.max_iterations = n;
    }
    k.convergence = l.boolean(f, "convergence").unwrap_or(true);
    k.reflexion = l.boolean(f, "reflexion").unwrap_or(false);
    k
}

/// E0301: a loop needs a task and `until`.
pub(super) fn check(p: &Phase, out: &mut Vec<Diagnostic>) {
    need(p, "task", has(p, "task"), TASK_HELP, out);
    need(
        p,
        "until",
        has(p, "until"),
        "add \"until\": the condition that ends the loop, e.g. \"{loop.iteration} >= 3\"",
        out,
    );
}
