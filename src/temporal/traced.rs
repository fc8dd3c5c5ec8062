//! The trace of a run on Temporal, exported by the worker holding its workflow: the same
//! spans as a local run's, made from the workflow's own machine inputs and commands at
//! workflow time. The process that started the run decided it is traced and chose its ids
//! (the run's input carries the plan); a worker without export settings exports nothing.
//!
//! A worker that takes a workflow over (the one before it was lost, or the workflow left its
//! cache) replays its history: the trace is told the replayed steps quietly, since the
//! worker before exported their spans, and goes live with the first new one. Span ids are a
//! function of the plan and the steps, so the spans it ends carry the ids the first worker
//! gave their children. Spans a lost worker ended but had not sent yet are lost with it.

use std::sync::{Arc, OnceLock};

use crate::run::machine::{Command, Config, Event};
use crate::run::record::RunRecord;
use crate::run::trace::{RunIdentity, RunTrace, TracePlan};
use crate::telemetry::Telemetry;

/// Where this worker exports the traces of the runs it holds.
static EXPORT: OnceLock<Arc<Telemetry>> = OnceLock::new();

/// Export the traces of the traced runs this worker holds with `tel` (`tfc worker`, once).
pub fn export_traces(tel: Arc<Telemetry>) {
    let _ = EXPORT.set(tel);
}

/// Milliseconds of workflow time as nanoseconds.
fn ns(at_ms: u64) -> u64 {
    at_ms.saturating_mul(1_000_000)
}

/// A traced run's trace on the worker holding its workflow.
pub(super) struct WorkflowTrace {
    trace: RunTrace,
    /// Spans are exported (the workflow is past the history it replayed).
    live: bool,
}

impl WorkflowTrace {
    /// The trace of the run of flow `flow` as `config` and the trace plan `plan` (the run's
    /// input) describe, when this worker exports traces; quiet while `replaying`.
    pub fn start(
        plan: Option<&str>,
        config: &Config,
        flow: &str,
        replaying: bool,
    ) -> Option<WorkflowTrace> {
        let plan = TracePlan::from_json(plan?)?;
        let tel = EXPORT.get()?.clone();
        let who = RunIdentity::of(config, flow);
        Some(WorkflowTrace {
            trace: RunTrace::start(tel, who, &plan, replaying),
            live: !replaying,
        })
    }

    /// Before the workflow's next step, at `at` (ms): once the history is replayed, spans
    /// are exported.
    pub fn step(&mut self, replaying: bool, at: u64) {
        if !self.live && !replaying {
            self.live = true;
            self.trace.live(ns(at));
        }
    }

    /// A machine input, before the machine has it.
    pub fn input(&mut self, what: &Event, at: u64) {
        self.trace.input(what, ns(at));
    }

    /// A machine command, before it is carried out.
    pub fn command(&mut self, c: &Command, at: u64) {
        self.trace.command(c, ns(at));
    }

    /// The workflow waits: what its steps ended goes to the exporter now (the worker may
    /// not live to the run's end).
    pub fn flush(&mut self, at: u64) {
        if self.live {
            self.trace.flush(ns(at));
        }
    }

    /// The run ended.
    pub fn finish(self, record: &RunRecord, at: u64) {
        self.trace.finish(record, ns(at));
    }
}
