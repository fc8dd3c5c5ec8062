//! `agent` (SPEC §3.2): one agent call. It has no fields of its own.

use super::common::{TASK_HELP, has, need};
use crate::diag::Diagnostic;
use crate::flow::fields::FieldDef;
use crate::flow::ir::Phase;

/// An agent phase: everything it needs is in the common fields.
#[derive(Clone, Copy, Debug, Default)]
pub struct Agent;

/// An agent has no fields of its own.
pub(super) const FIELDS: &[FieldDef] = &[];

/// E0301: an agent needs a task.
pub(super) fn check(p: &Phase, out: &mut Vec<Diagnostic>) {
    need(p, "task", has(p, "task"), TASK_HELP, out);
}
