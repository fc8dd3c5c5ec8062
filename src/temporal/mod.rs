//! Runs on Temporal (SPEC §14.3), behind the cargo feature `temporal`: workflow `TfcRun`
//! hosts the run machine, fed by Temporal events; its commands become activities (agent
//! calls, scripts, pre-reads, fingerprints and the other I/O the local driver does), durable
//! timers and signal waits. `tfc worker` serves both; `tfc run --engine temporal` starts a
//! run and follows it through its journal. Tokio lives only in this module.
//!
//! Workers share the project's filesystem in this version: the journal and `run.json` are
//! written by a local activity of the worker holding the workflow, idempotently (a batch of
//! journal lines carries the journal's length before it, so a replayed or retried append
//! writes nothing twice), and the run leaves the same `.tfc/runs/<flow>/<runId>/` as a local
//! run.

mod activities;
mod client;
mod host;
mod shard;
mod traced;
mod wire;
mod workflow;

pub use client::{Follow, Followed, Remote, approve, cancel, start_run, worker};
pub use traced::export_traces;
pub use wire::{
    ApprovalSignal, BUILD_ID, DEFAULT_SHARD_ITEMS, DEFAULT_TASK_QUEUE, RunInput, expired_refusal,
};
