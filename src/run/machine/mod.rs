//! The run machine: one deterministic state machine that makes every decision of a run
//! (SPEC §8, §14.1) — joins, `when`, cascades, halts, retries and backoff, budgets, fan-out
//! items, loop iterations, gate verdicts and reworks, races, approvals, sub-flows and the
//! final output. [`Machine::handle`] takes one [`Input`] and returns the [`Command`]s it
//! decided: no I/O, no async, no clock (time arrives with each input), no randomness. Phase
//! kinds contribute their logic as small state structs in `run/phases/`, driven from here.

mod cache;
mod call;
mod exec;
pub mod io;
mod persist;
mod sched;

#[cfg(test)]
mod sim;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use indexmap::IndexMap;

pub use cache::{CacheHit, HitRecord};
pub use io::{
    CallDir, CallEnd, CallOutcome, CallRequest, Command, Decision, DirSpec, Event, Facts, Input,
    Line, Progress, ScriptEnd, ScriptOutcome, ScriptRequest, UsageData,
};

use super::record::{PhaseRecord, RunRecord, RunStatus, timestamp};
use crate::eval::StepState;
use crate::flow::Flow;
use crate::value::{Map, Value, format_number};

pub(crate) use call::{CallResult, CallSpec, LogicalCall};
pub(crate) use exec::{Cx, Exec, KindEvent, Step};

/// What a run is told up front: everything the machine needs that is not an input.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// The run id.
    pub run_id: String,
    /// `--concurrency N`: overrides the flow's.
    pub concurrency: Option<usize>,
    /// `--dry-run`.
    pub dry_run: bool,
    /// `--dry-run-scripts`.
    pub dry_run_scripts: bool,
    /// `--approve ID`.
    pub approve: Vec<String>,
    /// `--approve-all`.
    pub approve_all: bool,
    /// `--reject ID`.
    pub reject: Vec<String>,
    /// `--reject-reason`.
    pub reject_reason: Option<String>,
    /// Undecided approvals are asked ([`Command::AskApproval`]) instead of pausing the run.
    pub ask: bool,
    /// The effective cost cap.
    pub max_usd: Option<f64>,
    /// The effective token cap.
    pub max_tokens: Option<f64>,
    /// `[defaults] idle_timeout_ms`.
    pub default_idle_timeout_ms: Option<u64>,
    /// `[limits] max_output_bytes`.
    pub max_output: usize,
    /// `[limits] max_prompt_bytes`.
    pub max_prompt: usize,
    /// The run keeps a journal (a store): journal lines are emitted.
    pub journaling: bool,
    /// Progress notes are wanted.
    pub progress: bool,
    /// Agent name → backend name, for the record.
    pub backends: IndexMap<String, String>,
    /// Some backend replays recorded calls.
    pub replay: bool,
    /// The invocation directory.
    pub cwd: PathBuf,
    /// The project root (dedicated directories live under it).
    pub project_root: Option<PathBuf>,
    /// Node path prefix inside sub-flows.
    pub node_prefix: String,
    /// Prepended to every prompt (a parent flow phase's pre-read).
    pub prompt_prefix: String,
    /// Saved-flow names on the way here.
    pub flow_stack: Vec<String>,
    /// Sub-flow nesting depth.
    pub depth: usize,
    /// Inside a flow generated at run time.
    pub generated: bool,
    /// `--incremental`: the default cache scope is cross-run.
    pub incremental: bool,
    /// `done` states of a resumed run may be reused: phases ask the driver.
    pub lookups: bool,
    /// Per phase: `phasefp:` (sha256 of its definition's canonical JSON, 16 hex digits).
    pub phase_fps: Arc<Vec<String>>,
    /// Agent name → canonical definition (the `agents:` key part).
    pub agent_defs: IndexMap<String, String>,
    /// Agent name → the model it runs on, when known.
    pub models: IndexMap<String, String>,
    /// The run this one resumes.
    pub parent_run_id: Option<String>,
    /// Spend of the runs this one resumes (SPEC §10.4).
    pub spent_before: Option<crate::agent::Usage>,
    /// Non-idempotent phases the resumed run had `done`: they run again, with a warning.
    pub rerun_warn: Vec<String>,
    /// Finished map items of the resumed run: node (`map#3`) → (key, output). An item whose
    /// key is unchanged is not called again.
    pub item_states: Arc<IndexMap<String, (String, String)>>,
}

/// The spend so far and the caps (SPEC §8.7).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Meter {
    tokens: u64,
    cost_micros: u64,
    max_usd: Option<f64>,
    max_tokens: Option<f64>,
}

impl Meter {
    pub(crate) fn new(max_usd: Option<f64>, max_tokens: Option<f64>) -> Meter {
        Meter {
            max_usd,
            max_tokens,
            ..Meter::default()
        }
    }

    pub(crate) fn add(&mut self, u: &crate::agent::Usage) {
        self.tokens += u.billable_tokens();
        if let Some(c) = u.cost_usd {
            self.cost_micros += (c * 1e6).round().max(0.0) as u64;
        }
    }

    pub(crate) fn tokens(&self) -> u64 {
        self.tokens
    }

    pub(crate) fn cost(&self) -> f64 {
        self.cost_micros as f64 / 1e6
    }

    /// `Some(reason)` once a cap is exceeded.
    pub(crate) fn over(&self) -> Option<String> {
        if let Some(max) = self.max_usd {
            let c = self.cost();
            if c > max {
                return Some(format!("cost ${c:.3} exceeded cap ${}", format_number(max)));
            }
        }
        if let Some(max) = self.max_tokens {
            let t = self.tokens();
            if t as f64 > max {
                return Some(format!("tokens {t} exceeded cap {}", format_number(max)));
            }
        }
        None
    }
}

/// What a finished phase asks of the whole run.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Halt {
    None,
    /// A gate blocked or an approval was rejected.
    Block(Option<String>),
    /// An approval awaits a decision.
    AwaitApproval,
    /// A bug: the run fails.
    Crash(String),
}

/// Why the run stopped starting phases.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Stop {
    Block(Option<String>),
    Budget(String),
    Abort,
}

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
}

/// What an execution's operation is (an abort stops scripts; timers and questions stay).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OpKind {
    Script,
    Other,
}

/// Why an execution runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Purpose {
    /// The phase's own run.
    Main,
    /// A re-run for a gate's rework job.
    Rework(usize),
}

/// A blocked gate's request to re-run its direct dependencies, one after the other.
#[derive(Debug)]
pub(crate) struct ReworkJob {
    gate: usize,
    deps: Vec<usize>,
    next: usize,
    depth: u32,
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
    deps: Vec<Vec<usize>>,
    dependents: Vec<Vec<usize>>,
    refs: Vec<Vec<usize>>,
    referenced: Vec<bool>,
    pub(crate) recs: Vec<PhaseRecord>,
    steps: Vec<Option<Arc<StepState>>>,
    waiting: Vec<usize>,
    started: Vec<bool>,
    ready: BTreeSet<usize>,
    running: usize,
    stop: Option<Stop>,
    approvals: Vec<usize>,
    crash: Option<String>,
    reworks: Vec<Option<ReworkJob>>,
    versions: Vec<u64>,
    record_src: Vec<usize>,
    record: RunRecord,
    pub(crate) ops: BTreeMap<u64, Owner>,
    execs: Vec<Option<Box<Exec>>>,
    pub(crate) out: Vec<Command>,
    /// Events for executions, delivered one at a time (an execution never sees an event
    /// while it is handling another).
    queue: std::collections::VecDeque<(usize, KindEvent)>,
    draining: bool,
    begun: bool,
    finished: bool,
}

impl Machine {
    /// A machine for `flow` (checked) with its effective arguments.
    pub fn new(flow: Arc<Flow>, args: Map, cfg: Config) -> Machine {
        let record = RunRecord {
            run_id: cfg.run_id.clone(),
            flow: flow.name.clone(),
            parent_run_id: cfg.parent_run_id.clone(),
            status: RunStatus::Running,
            reason: None,
            final_output: String::new(),
            output_phase: None,
            args: if cfg.journaling {
                args.clone()
            } else {
                Map::default()
            },
            started_at: String::new(),
            ended_at: None,
            usage: crate::agent::Usage::default(),
            spent_before: cfg.spent_before,
            warnings: Vec::new(),
            backends: cfg.backends.clone(),
            phases: IndexMap::new(),
            replay: cfg.replay,
            store_errors: Vec::new(),
        };
        let mut meter = Meter::new(cfg.max_usd, cfg.max_tokens);
        if let Some(before) = &cfg.spent_before {
            meter.add(before);
        }
        let g = sched::Graph::new(&flow);
        let n = flow.phases.len();
        Machine {
            recs: sched::initial_records(&flow),
            args: Arc::new(Value::Object(args)),
            flow,
            cfg,
            now: 0,
            next_op: 1,
            meter,
            aborted: false,
            waiting: g.deps.iter().map(Vec::len).collect(),
            deps: g.deps,
            dependents: g.dependents,
            refs: g.refs,
            referenced: g.referenced,
            steps: vec![None; n],
            started: vec![false; n],
            ready: BTreeSet::new(),
            running: 0,
            stop: None,
            approvals: Vec::new(),
            crash: None,
            reworks: Vec::new(),
            versions: vec![0; n],
            record_src: Vec::new(),
            record,
            ops: BTreeMap::new(),
            execs: Vec::new(),
            out: Vec::new(),
            queue: std::collections::VecDeque::new(),
            draining: false,
            begun: false,
            finished: false,
        }
    }

    /// Handle one input; returns what to do.
    pub fn handle(&mut self, input: Input) -> Vec<Command> {
        self.step(input);
        std::mem::take(&mut self.out)
    }

    /// [`Machine::handle`] appending to `out` (no allocation per input).
    pub fn handle_into(&mut self, input: Input, out: &mut Vec<Command>) {
        self.step(input);
        out.append(&mut self.out);
    }

    /// Whether the run is over ([`Command::Finish`] was emitted).
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    fn step(&mut self, input: Input) {
        if self.finished {
            return;
        }
        self.now = self.now.max(input.at);
        let start = matches!(input.what, Event::Start);
        if start {
            if self.begun {
                return;
            }
            self.begun = true;
            self.record.started_at = self.ts();
            if self.cfg.journaling {
                let mut m = Map::default();
                m.insert("type".into(), Value::from("run-start"));
                m.insert("ts".into(), Value::from(self.ts()));
                m.insert("runId".into(), Value::from(self.record.run_id.as_str()));
                m.insert("flow".into(), Value::from(self.record.flow.as_str()));
                m.insert(
                    "parentRunId".into(),
                    match &self.cfg.parent_run_id {
                        Some(p) => Value::from(p.as_str()),
                        None => Value::Null,
                    },
                );
                m.insert("args".into(), Value::Object(self.record.args.clone()));
                m.insert("config".into(), self.cfg.to_value());
                self.out
                    .push(Command::Journal(Line::Event(Value::Object(m))));
            }
        }
        if self.cfg.journaling {
            self.out
                .push(Command::Journal(Line::Input(Box::new(input.clone()))));
        }
        match input.what {
            Event::Start => {
                for i in 0..self.recs.len() {
                    if self.deps[i].is_empty() {
                        self.ready.insert(i);
                    }
                }
                // A sub-flow started once its parent's spend is over a cap starts nothing.
                if let Some(reason) = self.meter.over() {
                    self.halt(Stop::Budget(reason));
                }
            }
            Event::Interrupt => self.interrupt(),
            what => self.op_event(input.at, what),
        }
        self.pump();
    }

    /// An input that ends one operation: to its owner.
    fn op_event(&mut self, at: u64, what: Event) {
        let op = match &what {
            Event::CallEnded { op, .. }
            | Event::TimerFired { op }
            | Event::ScriptEnded { op, .. }
            | Event::Approval { op, .. }
            | Event::DirReady { op, .. }
            | Event::ContextRead { op, .. }
            | Event::ScorerEnded { op, .. }
            | Event::FlowLoaded { op, .. }
            | Event::CacheChecked { op, .. }
            | Event::AgentsResolved { op, .. } => *op,
            Event::Start | Event::Interrupt => return,
        };
        let Some(owner) = self.ops.remove(&op) else {
            // Late news of something already forgotten (a cancelled timer that fired).
            return;
        };
        match (owner, what) {
            (Owner::Attempt(lc), Event::CallEnded { end, .. }) => self.attempt_ended(lc, end),
            (Owner::Backoff(lc), Event::TimerFired { .. }) => self.attempt(lc),
            (Owner::Child(e), what) => self.deliver(e, KindEvent::Child(Input { at, what })),
            (Owner::Exec(e, slot, _), what) => {
                let ev = match what {
                    Event::TimerFired { .. } => KindEvent::Timer(slot),
                    Event::ScriptEnded { result, .. } => KindEvent::Script(result),
                    Event::Approval { decision, note, .. } => KindEvent::Approval(decision, note),
                    Event::DirReady { path, warning, .. } => KindEvent::Dir(path, warning),
                    Event::ContextRead { text, .. } => KindEvent::Context(text),
                    Event::ScorerEnded { pass, detail, .. } => {
                        KindEvent::Scorer(slot, pass, detail)
                    }
                    Event::FlowLoaded { text, .. } => KindEvent::Loaded(text),
                    Event::CacheChecked {
                        key, hit, warning, ..
                    } => KindEvent::Cached(slot, key, hit, warning),
                    Event::AgentsResolved {
                        run_id,
                        backends,
                        error,
                        ..
                    } => KindEvent::Resolved(run_id, backends, error),
                    _ => return,
                };
                self.deliver(e, ev);
            }
            (owner, _) => {
                // An input that does not fit its operation: keep waiting for the right one.
                self.ops.insert(op, owner);
            }
        }
    }

    /// A fresh operation id.
    pub(crate) fn op(&mut self) -> u64 {
        let op = self.next_op;
        self.next_op += 1;
        op
    }

    /// The current time as a record timestamp.
    pub(crate) fn ts(&self) -> String {
        timestamp(std::time::UNIX_EPOCH + std::time::Duration::from_millis(self.now))
    }

    /// The node path of a local node.
    pub(crate) fn node(&self, local: &str) -> String {
        if self.cfg.node_prefix.is_empty() {
            return local.to_owned();
        }
        format!("{}{local}", self.cfg.node_prefix)
    }

    /// Tell the progress display about a run-time surprise at `local`.
    pub(crate) fn notice(&mut self, local: &str, message: &str) {
        if self.cfg.progress {
            let phase = self.node(local);
            self.out.push(Command::Progress(Progress {
                phase,
                status: "warning",
                detail: Some(message.to_owned()),
                attempts: 0,
                tokens: 0,
                cost_usd: None,
                facts: Facts::default(),
            }));
        }
    }

    /// Emit a journal event line (when journaling).
    pub(crate) fn journal(&mut self, kind: &str, fill: impl FnOnce(&mut Map)) {
        if !self.cfg.journaling {
            return;
        }
        let mut m = Map::default();
        m.insert("type".into(), Value::from(kind));
        m.insert("ts".into(), Value::from(self.ts()));
        fill(&mut m);
        self.out
            .push(Command::Journal(Line::Event(Value::Object(m))));
    }

    /// Emit a ready-made journal line (when journaling).
    pub(crate) fn journal_value(&mut self, v: Value) {
        if self.cfg.journaling {
            self.out.push(Command::Journal(Line::Event(v)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Usage;

    #[test]
    fn meter_caps() {
        let mut m = Meter::new(Some(0.01), Some(100.0));
        assert_eq!(m.over(), None);
        m.add(&Usage {
            input: 60,
            output: 50,
            cache_read: 1000,
            cost_usd: Some(0.004),
            ..Usage::default()
        });
        assert_eq!(m.over().as_deref(), Some("tokens 110 exceeded cap 100"));
        let mut m = Meter::new(Some(0.01), None);
        m.add(&Usage {
            cost_usd: Some(0.0125),
            ..Usage::default()
        });
        assert_eq!(m.over().as_deref(), Some("cost $0.013 exceeded cap $0.01"));
        let zero = Meter::new(None, Some(0.0));
        assert_eq!(zero.over(), None);
    }
}
