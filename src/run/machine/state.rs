//! The machine's state: the [`Machine`] struct and the records of what it has in flight
//! (operations and their owners, logical calls, running executions with their kind's state,
//! rework jobs). Its behaviour lives beside it: `handle.rs` (inputs), `sched.rs` (the
//! graph), `exec.rs` (executions), `call.rs` (calls), `cache.rs` (reuse).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::super::phases::Kind;
use super::super::record::{PhaseRecord, RunRecord};
use super::config::Config;
use super::io::Command;
use super::kit::{CallResult, CallSpec, Exec, KindEvent, Meter, OpKind, Stop};
use crate::eval::StepState;
use crate::flow::Flow;
use crate::value::Value;

/// Who an operation belongs to.
#[derive(Debug)]
pub(crate) enum Owner {
    /// An attempt of a logical call is in flight.
    Attempt(Box<LogicalCall>),
    /// A logical call waits out its backoff.
    Backoff(Box<LogicalCall>),
    /// Some other operation of an execution (timer, script, directory, …) with its slot.
    Exec(usize, u32, OpKind),
    /// An operation of a sub-flow running inside execution `.0`.
    Child(usize),
    /// A shard of the map running as execution `.0`, promised `.1` calls by the call cap.
    Shard(usize, u64),
}

/// A blocked gate's request to re-run its direct dependencies, one after the other.
#[derive(Debug)]
pub(crate) struct ReworkJob {
    pub(super) gate: usize,
    pub(super) deps: Vec<usize>,
    pub(super) next: usize,
    pub(super) depth: u32,
}

/// The run machine (see the module doc).
pub struct Machine {
    pub(crate) flow: Arc<Flow>,
    pub(crate) cfg: Config,
    pub(crate) args: Arc<Value>,
    /// The time of the input being handled.
    pub(crate) now: u64,
    pub(crate) next_op: u64,
    pub(crate) meter: Meter,
    pub(crate) aborted: bool,
    pub(super) deps: Vec<Vec<usize>>,
    pub(super) dependents: Vec<Vec<usize>>,
    pub(super) refs: Vec<Vec<usize>>,
    pub(super) referenced: Vec<bool>,
    pub(crate) recs: Vec<PhaseRecord>,
    pub(super) steps: Vec<Option<Arc<StepState>>>,
    pub(super) waiting: Vec<usize>,
    pub(super) started: Vec<bool>,
    pub(super) ready: BTreeSet<usize>,
    pub(super) running: usize,
    pub(super) stop: Option<Stop>,
    pub(super) approvals: Vec<usize>,
    pub(super) crash: Option<String>,
    pub(super) reworks: Vec<Option<ReworkJob>>,
    pub(super) versions: Vec<u64>,
    pub(super) record_src: Vec<usize>,
    pub(super) record: RunRecord,
    pub(crate) ops: BTreeMap<u64, Owner>,
    pub(super) execs: Vec<Option<Running>>,
    pub(crate) out: Vec<Command>,
    /// Events for executions, delivered one at a time (an execution never sees an event
    /// while it is handling another).
    pub(super) queue: std::collections::VecDeque<(usize, KindEvent)>,
    pub(super) draining: bool,
    pub(super) begun: bool,
    pub(super) finished: bool,
    /// Shards told that the run is over budget.
    pub(super) capped: BTreeSet<u64>,
    /// Calls started by the inputs handled before this one ([`Machine::calls_made`]).
    pub(super) calls_made: u64,
    /// The meter's call count when the input being handled arrived.
    pub(super) calls_at_input: u64,
    /// Set when this machine runs one shard of a map ([`Machine::shard`]).
    pub(super) shard: Option<Box<super::shard::ShardState>>,
}

/// A call in progress.
#[derive(Debug)]
pub(crate) struct LogicalCall {
    pub exec: usize,
    pub slot: u32,
    pub(super) phase: usize,
    pub(super) spec: CallSpec,
    /// Attempts made.
    pub(super) k: u32,
    pub(super) explicit: u32,
    pub(super) max_attempts: u32,
    pub(super) transient_layer: bool,
    pub(super) base: f64,
    pub(super) factor: f64,
    pub(super) wall: Option<u64>,
    /// Told to stop (a race loser): no further attempt.
    pub cancelled: bool,
    pub(super) result: CallResult,
}

/// A phase being executed and its kind's running state (created when the kind starts, after
/// the pre-read, the cache lookup and the working directory).
#[derive(Debug)]
pub(crate) struct Running {
    pub(super) ex: Box<Exec>,
    pub(super) kind: Option<Box<Kind>>,
}
