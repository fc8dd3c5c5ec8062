//! `approval` (SPEC §3.7, §8.8): a person approves or rejects. The optional `task` is the
//! question shown; `timeout` (the common field, which on an approval is a deadline and may be
//! written as a duration string) and `onTimeout` say what happens when nobody decides in time.

use super::common::Cx;
use crate::diag::{Code, Diagnostic};
use crate::flow::enums::OnTimeout;
use crate::flow::fields::{FieldDef, FieldType, f};
use crate::flow::ir::Phase;
use crate::flow::lowerer::{Lowerer, PhaseFields};

/// An approval phase.
#[derive(Clone, Copy, Debug, Default)]
pub struct Approval {
    /// `onTimeout`: what the deadline (`timeout`) decides (default `reject`).
    pub on_timeout: OnTimeout,
}

/// The fields of an approval phase.
pub(super) const FIELDS: &[FieldDef] = &[f(
    "onTimeout",
    FieldType::OneOf(OnTimeout::NAMES),
    "approval: what its deadline ('timeout') decides (default reject)",
)];

pub(super) fn lower(l: &mut Lowerer, f: &PhaseFields<'_>, cx: &mut Cx<'_>) -> Approval {
    let on_timeout = l.word(f, "onTimeout");
    Approval {
        on_timeout: cx
            .invalid_if_none(f, "onTimeout", on_timeout)
            .unwrap_or_default(),
    }
}

/// E0301: `onTimeout` without the `timeout` it acts on.
pub(super) fn check(p: &Phase, out: &mut Vec<Diagnostic>) {
    let Some(at) = p.written.get("onTimeout") else {
        return;
    };
    if p.timeout.is_some() || p.invalid.contains(&"timeout") {
        return;
    }
    out.push(
        Diagnostic::new(
            Code::MissingField,
            format!("approval '{}' has 'onTimeout' but no 'timeout'", p.id),
        )
        .at(*at)
        .phase(&p.id)
        .with_label("acts on a deadline the approval does not have")
        .help("add \"timeout\": the deadline, in ms or as a duration such as \"30m\", \"4h\" or \"2d\" (or remove 'onTimeout')"),
    );
}
