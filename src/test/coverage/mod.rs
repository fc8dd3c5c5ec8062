//! `tfc test --coverage` (SPEC §17 "Coverage"): which of a flow's outcomes its tests reached.
//!
//! The outcomes are enumerated from the flow alone ([`outcomes`]): each `when` true and false,
//! each gate PASS and BLOCK and each `onBlock` round, each loop ending by `until` and by
//! `maxIterations`, each declared retry used, each `join:"any"` phase reached by each of its
//! dependencies, each race won by each branch, each approval approved, rejected and pending,
//! each optional phase failing. What a test reached is recorded from the run machine's own
//! decisions — its journal lines and its final record ([`Recorder`]) — as a short list of
//! [`Hit`]s on the test's report; nothing is evaluated again. `tally.rs` merges the hits of
//! every test of a flow into the report (a table, JSON, a diagnostic per unreached outcome).
//!
//! The phases of inline object `def`s count as the flow's own (`sub/inner.when.true`): their
//! machine passes its decision lines up, named by node path. Left out: the phases of saved
//! flows (`use`) and of string `def`s, and those an `expand` generates — what they are is
//! known only at run time (their `flow` phase's own outcomes, its `when` or `optional`, count).

mod outcome;
mod record;
mod tally;

pub use outcome::{Decision, Hit, Kind, LoopEnd, Point, outcomes};
pub(crate) use record::Recorder;
pub use tally::{Coverage, Row, Tested, json_lines, tally, text};

#[cfg(test)]
mod tests;
