//! The run machine: one deterministic state machine that makes every decision of a run
//! (SPEC §8, §14.1) — joins, `when`, cascades, halts, retries and backoff, budgets, fan-out
//! items, loop iterations, gate verdicts and reworks, races, approvals, sub-flows and the
//! final output. [`Machine::handle`] takes one [`Input`] and returns the [`Command`]s it
//! decided: no I/O, no async, no clock (time arrives with each input), no randomness. Phase
//! kinds contribute their logic as small state structs in `run/phases/`, driven from here.

mod cache;
mod call;
mod config;
mod exec;
mod final_skip;
mod handle;
mod hit;
pub mod io;
mod kit;
mod persist;
mod sched;
mod shard;
mod state;

#[cfg(test)]
mod calls_tests;
#[cfg(test)]
mod deadline_tests;
#[cfg(test)]
mod race_tests;
#[cfg(test)]
mod sim;
#[cfg(test)]
mod test_replies;

pub use config::{Config, ForkNodes, RunSettings};
pub use hit::{CacheHit, HitRecord};
pub use io::{
    CallDir, CallEnd, CallOutcome, CallRequest, Command, Decision, DirSpec, Event, Facts, Input,
    Line, Progress, ScriptEnd, ScriptOutcome, ScriptRequest, ShardCall, ShardEnd, ShardItem,
    ShardRequest, ShardResult, UsageData,
};

pub use state::Machine;

pub(crate) use kit::{
    CallResult, CallSpec, Child, Cx, Exec, Halt, KindEvent, Meter, OpKind, Purpose, Reuse, Step,
    Stop,
};
pub(crate) use state::{LogicalCall, Owner, ReworkJob, Running};
