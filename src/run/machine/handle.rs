//! How the machine handles one input ([`Machine::handle`]) and what it offers the kinds
//! ([`Host`]) and a parent flow ([`Child`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use indexmap::IndexMap;

use super::super::record::{RunRecord, RunStatus, timestamp};
use super::config::Config;
use super::io::{Command, Event, Facts, Input, Line, Progress};
use super::kit::{CallSpec, Child, Host, KindEvent, Meter, OpKind, Stop};
use super::sched::{Graph, initial_records};
use super::state::{Machine, Owner};
use crate::flow::Flow;
use crate::value::{Map, Value};

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
        let mut meter = Meter::new(cfg.max_usd, cfg.max_tokens).with_max_calls(cfg.max_calls);
        if let Some(before) = &cfg.spent_before {
            meter.add(before);
        }
        let g = Graph::new(&flow);
        let n = flow.phases.len();
        Machine {
            recs: initial_records(&flow),
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
            capped: BTreeSet::new(),
            calls_made: 0,
            calls_at_input: 0,
            shard: None,
        }
    }

    /// Handle one input; returns what to do.
    pub fn handle(&mut self, input: Input) -> Vec<Command> {
        self.counted_step(input);
        std::mem::take(&mut self.out)
    }

    /// [`Machine::handle`] appending to `out` (no allocation per input).
    pub fn handle_into(&mut self, input: Input, out: &mut Vec<Command>) {
        self.counted_step(input);
        out.append(&mut self.out);
    }

    /// One input, counting the calls it started: while a machine handles an input, every
    /// call the (shared) meter counts is this run's or its sub-flows'.
    fn counted_step(&mut self, input: Input) {
        self.calls_at_input = self.meter.calls;
        self.step(input);
        self.calls_made += self.meter.calls.saturating_sub(self.calls_at_input);
        self.calls_at_input = self.meter.calls;
    }

    /// The agent calls this run has started so far (its sub-flows' included; those of the
    /// runs it resumes and cache hits not), for `usage.calls` (SPEC §8.7).
    pub(crate) fn calls_made(&self) -> u64 {
        self.calls_made + self.meter.calls.saturating_sub(self.calls_at_input)
    }

    /// What the machine was told up front.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// The flow's name.
    pub fn flow_name(&self) -> &str {
        &self.record.flow
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
        if self.shard.is_some() {
            return self.shard_step(input);
        }
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
        self.cap_shards();
    }

    /// An input that ends one operation: to its owner.
    pub(super) fn op_event(&mut self, at: u64, what: Event) {
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
            | Event::AgentsResolved { op, .. }
            | Event::ShardEnded { op, .. } => *op,
            Event::Start | Event::Interrupt | Event::Capped => return,
        };
        let Some(owner) = self.ops.remove(&op) else {
            // Late news of something already forgotten (a cancelled timer that fired).
            return;
        };
        match (owner, what) {
            (Owner::Attempt(lc), Event::CallEnded { end, .. }) => self.attempt_ended(lc, end),
            (Owner::Backoff(lc), Event::TimerFired { .. }) => self.attempt(lc),
            (Owner::Child(e), what) => self.deliver(e, KindEvent::Child(Input { at, what })),
            (Owner::Shard(e, promised), Event::ShardEnded { result, .. }) => {
                self.shard_ended(e, promised, *result)
            }
            (Owner::Exec(e, slot, _), what) => {
                let ev = match what {
                    Event::TimerFired { .. } => KindEvent::Timer(slot),
                    Event::ScriptEnded { result, .. } => KindEvent::Script(result),
                    Event::Approval {
                        decision,
                        note,
                        by_signal,
                        ..
                    } => KindEvent::Approval(decision, note, by_signal),
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
            self.out.push(Command::Progress(Box::new(Progress {
                phase,
                status: "warning",
                kind: None,
                detail: Some(message.to_owned()),
                attempts: 0,
                tokens: 0,
                cost_usd: None,
                facts: Facts::default(),
            })));
        }
    }

    /// Emit a journal event line (when journaling, or asked for the decisions).
    pub(crate) fn journal(&mut self, kind: &str, fill: impl FnOnce(&mut Map)) {
        if !(self.cfg.journaling || self.cfg.decisions) {
            return;
        }
        let mut m = Map::default();
        m.insert("type".into(), Value::from(kind));
        m.insert("ts".into(), Value::from(self.ts()));
        fill(&mut m);
        self.emit(Value::Object(m));
    }

    /// Emit a ready-made journal line (when journaling, or asked for the decisions).
    pub(crate) fn journal_value(&mut self, v: Value) {
        if self.cfg.journaling || self.cfg.decisions {
            self.emit(v);
        }
    }

    /// Push an event line. A sub-flow's decision lines (it keeps no journal of its own) name
    /// their phase by its node path (`sub/inner`): its parent passes them on as they are.
    fn emit(&mut self, mut v: Value) {
        if !self.cfg.journaling
            && !self.cfg.node_prefix.is_empty()
            && let Value::Object(m) = &mut v
            && let Some(Value::String(p)) = m.get_mut("phase")
        {
            p.insert_str(0, &self.cfg.node_prefix);
        }
        self.out.push(Command::Journal(Line::Event(v)));
    }
}

impl Host for Machine {
    fn flow(&self) -> &Arc<Flow> {
        &self.flow
    }
    fn cfg(&self) -> &Config {
        &self.cfg
    }
    fn args(&self) -> &Arc<Value> {
        &self.args
    }
    fn aborted(&self) -> bool {
        self.aborted
    }
    fn stop(&self) -> Option<&Stop> {
        self.stop.as_ref()
    }
    fn meter(&self) -> &Meter {
        &self.meter
    }
    fn meter_mut(&mut self) -> &mut Meter {
        &mut self.meter
    }
    fn now(&self) -> u64 {
        self.now
    }
    fn ts(&self) -> String {
        Machine::ts(self)
    }
    fn node(&self, local: &str) -> String {
        Machine::node(self, local)
    }
    fn notice(&mut self, local: &str, msg: &str) {
        Machine::notice(self, local, msg);
    }
    fn push(&mut self, cmd: Command) {
        self.out.push(cmd);
    }
    fn journal_value(&mut self, v: Value) {
        Machine::journal_value(self, v);
    }
    fn own_op(&mut self, exec: usize, slot: u32, kind: OpKind) -> u64 {
        let op = self.op();
        self.ops.insert(op, Owner::Exec(exec, slot, kind));
        op
    }
    fn own_child_op(&mut self, op: u64, exec: usize) {
        self.ops.insert(op, Owner::Child(exec));
    }
    fn forget_op(&mut self, op: u64) -> bool {
        self.ops.remove(&op).is_some()
    }
    fn start_call(&mut self, exec: usize, slot: u32, phase: usize, spec: CallSpec) {
        Machine::start_call(self, exec, slot, phase, spec);
    }
    fn start_shard(&mut self, exec: usize, mut shard: super::io::ShardRequest) {
        let op = self.op();
        shard.spent_tokens = self.meter.tokens;
        shard.spent_cost_micros = self.meter.cost_micros;
        // The call cap holds across shards: each is promised the calls it may start (no
        // more than its calls can take, every attempt of every item), and they are kept from
        // the run's other calls until it reports how many it made.
        let promised = self.meter.calls_left().map(|left| {
            let attempts = super::call::max_attempts(&self.flow.phases[shard.phase]);
            left.min(shard.calls.len() as u64 * u64::from(attempts))
        });
        shard.max_calls = promised;
        self.meter.reserved += promised.unwrap_or(0);
        self.ops
            .insert(op, Owner::Shard(exec, promised.unwrap_or(0)));
        self.out.push(Command::StartShard {
            op,
            shard: Box::new(shard),
        });
    }
    fn cancel_call(&mut self, exec: usize, slot: u32) {
        Machine::cancel_call(self, exec, slot);
    }
    fn rework(&mut self, exec: usize, deps: Vec<usize>, depth: u32) {
        Machine::rework(self, exec, deps, depth);
    }
    fn child(&self, flow: Arc<Flow>, args: Map, cfg: Config) -> Box<dyn Child> {
        Box::new(Machine::new(flow, args, cfg))
    }
    fn drive(&mut self, child: &mut dyn Child, input: Input) -> Vec<Command> {
        child.handle_shared(input, &mut self.next_op, &mut self.meter)
    }
}

impl Child for Machine {
    fn handle_shared(
        &mut self,
        input: Input,
        next_op: &mut u64,
        meter: &mut Meter,
    ) -> Vec<Command> {
        self.next_op = *next_op;
        self.meter = *meter;
        let cmds = self.handle(input);
        *next_op = self.next_op;
        *meter = self.meter;
        cmds
    }
}
