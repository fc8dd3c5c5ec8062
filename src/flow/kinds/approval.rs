//! `approval` (SPEC §3.7): a person approves or rejects. It has no fields of its own and no
//! requirement: the optional `task` is the question shown.

use crate::flow::fields::FieldDef;

/// An approval phase: everything it needs is in the common fields.
#[derive(Clone, Copy, Debug, Default)]
pub struct Approval;

/// An approval has no fields of its own.
pub(super) const FIELDS: &[FieldDef] = &[];
