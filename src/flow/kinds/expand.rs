//! `expand` (SPEC §3.13): phases produced at run time, run nested or grafted.

use super::Def;
use super::common::{Cx, has, need};
use super::flow::{DEF, lower_def};
use crate::diag::Diagnostic;
use crate::flow::enums::ExpandMode;
use crate::flow::fields::FieldDef;
use crate::flow::fields::{FieldType, f};
use crate::flow::ir::{Field, Phase};
use crate::flow::lowerer::{Lowerer, PhaseFields};

/// An expand phase.
#[derive(Clone, Debug)]
pub struct Expand {
    /// `def`: the fragment, inline or as a template string.
    pub def: Option<Field<Def>>,
    /// `expandMode`.
    pub mode: ExpandMode,
    /// `maxNodes` (1..100, default 50).
    pub max_nodes: f64,
}

impl Expand {
    /// The defaults.
    pub const DEFAULT: Expand = Expand {
        def: None,
        mode: ExpandMode::Nested,
        max_nodes: 50.0,
    };
}

/// The fields of an expand phase.
pub(super) const FIELDS: &[FieldDef] = &[
    DEF,
    f(
        "expandMode",
        FieldType::OneOf(ExpandMode::NAMES),
        "expand: run nested or graft the phases",
    ),
    f(
        "maxNodes",
        FieldType::Number,
        "expand: max phases of the fragment (1..100, default 50)",
    ),
];

pub(super) fn lower(l: &mut Lowerer, f: &PhaseFields<'_>, cx: &mut Cx<'_>) -> Expand {
    let mut k = Expand::DEFAULT;
    k.def = lower_def(l, f, cx);
    k.mode = l.word(f, "expandMode").unwrap_or_default();
    if let Some(n) = l.ranged(f, "maxNodes", 1.0, 100.0) {
        k.max_nodes = n;
    }
    k
}

/// E0301: an expand needs a `def`.
pub(super) fn check(p: &Phase, out: &mut Vec<Diagnostic>) {
    need(
        p,
        "def",
        has(p, "def"),
        "add \"def\": the phases to expand, inline or as a template string",
        out,
    );
}
