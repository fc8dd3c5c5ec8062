//! Running compiled conditions (SPEC §6) and the three places a flow uses them: `when`,
//! `until` and gate `eval` entries (§3.5).
//!
//! Layout: `machine.rs` runs a [`Condition`](crate::compile::Condition)'s ops (and records
//! what it read), `compare.rs` holds the operand semantics (comparison, `str(x)`, UTF-16
//! order), `outcome.rs` the use sites.

mod compare;
mod machine;
mod outcome;

#[cfg(test)]
mod laws;
#[cfg(test)]
mod tests;

pub(crate) use compare::{Item, compare, numeric};
pub use machine::{Decision, Evaluated, ReadSet};
pub use outcome::{Outcome, eval_gate_entry, eval_until, eval_when};
