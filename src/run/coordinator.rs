//! The coordinator: the only owner of run state. It starts phases as soon as their join is
//! satisfied (no layer barriers), up to the flow's concurrency; evaluates `when`; applies
//! cascades and halts; persists every transition; and ends the run with its status and final
//! output (SPEC §8). Phase workers run on the executor and report back over a channel.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use futures_lite::future;

use super::ctx::{Event, Halt, Shared};
use super::exec::execute;
use super::phases::aggregate;
use super::record::{PhaseRecord, PhaseStatus, RunRecord, RunStatus, now};
use super::scope::PhaseScope;
use super::store::RunStore;
use crate::eval::{StepState, StepStatus, eval_when};
use crate::flow::{EvalKind, Join, Phase, PhaseType};
use crate::syntax::condition::refs_before_error;
use crate::value::{Map, Value};

/// A blocked gate's request to re-run its direct dependencies, one after the other.
struct ReworkJob {
    gate: usize,
    deps: Vec<usize>,
    next: usize,
    depth: u32,
    reply: async_channel::Sender<Option<PhaseScope>>,
}

/// Why the run stopped starting phases.
#[derive(Clone, Debug, PartialEq)]
enum Stop {
    Block(Option<String>),
    Budget(String),
    Abort,
}

pub struct Coordinator {
    sh: Arc<Shared>,
    events: async_channel::Receiver<Event>,
    deps: Vec<Vec<usize>>,
    dependents: Vec<Vec<usize>>,
    /// Step ids each phase references (its scope holds only these).
    refs: Vec<Vec<usize>>,
    /// Whether some phase references this one (only then its state goes into `steps`).
    referenced: Vec<bool>,
    recs: Vec<PhaseRecord>,
    steps: Vec<Option<Arc<StepState>>>,
    /// Dependencies not yet ended.
    waiting: Vec<usize>,
    started: Vec<bool>,
    ready: BTreeSet<usize>,
    running: usize,
    stop: Option<Stop>,
    approvals: Vec<usize>,
    store: Option<RunStore>,
    record: RunRecord,
    /// The first internal crash of a phase worker.
    crash: Option<String>,
    /// Gates' reworks in progress (a slot is emptied when its gate got its answer).
    reworks: Vec<Option<ReworkJob>>,
    def: Option<Value>,
    /// Per phase: bumped whenever its record is replaced by a new result (so a large output
    /// is written to its file once per result, not once per rewrite of `run.json`).
    versions: Vec<u64>,
    /// Per entry of `record.phases` (after `fill_record`): the phase it comes from.
    record_src: Vec<usize>,
}

/// What woke the coordinator.
enum Next {
    Event(Event),
    Cancelled,
    /// The throttled `run.json` rewrite is due.
    Flush,
}

impl Coordinator {
    pub fn new(
        sh: Arc<Shared>,
        events: async_channel::Receiver<Event>,
        record: RunRecord,
        def: Option<Value>,
    ) -> Coordinator {
        let flow = &sh.flow;
        let n = flow.phases.len();
        let ids: HashMap<&str, usize> = flow
            .phases
            .iter()
            .enumerate()
            .map(|(i, p)| (p.id.as_str(), i))
            .collect();
        let mut deps = Vec::with_capacity(n);
        let mut dependents = vec![Vec::new(); n];
        for (i, p) in flow.phases.iter().enumerate() {
            let d: Vec<usize> = p
                .dep_names()
                .into_iter()
                .filter_map(|id| ids.get(id).copied())
                .filter(|&j| j != i)
                .collect();
            for &j in &d {
                dependents[j].push(i);
            }
            deps.push(d);
        }
        let refs: Vec<Vec<usize>> = flow.phases.iter().map(|p| referenced(p, &ids)).collect();
        let mut is_referenced = vec![false; n];
        for &j in refs.iter().flatten() {
            is_referenced[j] = true;
        }
        let recs = flow
            .phases
            .iter()
            .map(|p| {
                let mut r = PhaseRecord::new(p.ty());
                r.agent = runs_agent(p).then(|| p.agent.value.clone());
                r.optional = p.optional;
                r
            })
            .collect();
        let waiting = deps.iter().map(Vec::len).collect();
        Coordinator {
            sh,
            events,
            deps,
            dependents,
            refs,
            referenced: is_referenced,
            recs,
            steps: vec![None; n],
            waiting,
            started: vec![false; n],
            ready: BTreeSet::new(),
            running: 0,
            stop: None,
            approvals: Vec::new(),
            store: None,
            record,
            def,
            crash: None,
            reworks: Vec::new(),
            versions: vec![0; n],
            record_src: Vec::new(),
        }
    }

    /// Create the run directory under `root` with the first `run.json` and the `run-start`
    /// event, before anything runs.
    pub fn open_store(&mut self, root: &std::path::Path) -> std::io::Result<()> {
        let mut m = Map::default();
        m.insert("type".into(), Value::from("run-start"));
        m.insert("ts".into(), Value::from(now()));
        m.insert("runId".into(), Value::from(self.record.run_id.as_str()));
        m.insert("flow".into(), Value::from(self.record.flow.as_str()));
        m.insert("parentRunId".into(), Value::Null);
        m.insert("args".into(), Value::Object(self.record.args.clone()));
        self.fill_record();
        let first = self.stored_value();
        self.store = Some(RunStore::create(
            root,
            &self.record.flow,
            &self.record.run_id,
            &first,
            &Value::Object(m),
        )?);
        Ok(())
    }

    pub async fn run(mut self) -> RunRecord {
        for i in 0..self.recs.len() {
            if self.deps[i].is_empty() {
                self.ready.insert(i);
            }
        }
        loop {
            self.start_ready();
            if self.running == 0 && self.ready.is_empty() {
                break;
            }
            let cancel = self.sh.cancel.clone();
            let aborted = self.stop == Some(Stop::Abort);
            let flush = self
                .store
                .as_ref()
                .filter(|s| s.is_dirty())
                .map(RunStore::wait);
            let events = async {
                match self.events.recv().await {
                    Ok(e) => Next::Event(e),
                    Err(_) => Next::Cancelled,
                }
            };
            let cancelled = async {
                if aborted {
                    future::pending::<()>().await;
                }
                cancel.cancelled().await;
                Next::Cancelled
            };
            let timer = async {
                match flush {
                    Some(d) => {
                        smol::Timer::after(d).await;
                        Next::Flush
                    }
                    None => future::pending().await,
                }
            };
            match future::or(events, future::or(cancelled, timer)).await {
                Next::Event(event) => self.handle(event).await,
                Next::Cancelled if !aborted => self.halt(Stop::Abort),
                Next::Cancelled => {}
                Next::Flush => self.save(true),
            }
        }
        self.finish()
    }

    async fn handle(&mut self, event: Event) {
        match event {
            Event::Journal(v) => self.append(&v),
            Event::Finished {
                phase,
                record,
                halt,
            } => {
                self.running -= 1;
                self.end(phase, *record, halt);
            }
            Event::Rework {
                gate,
                deps,
                depth,
                reply,
            } => {
                self.reworks.push(Some(ReworkJob {
                    gate,
                    deps,
                    next: 0,
                    depth,
                    reply,
                }));
                self.rework_next(self.reworks.len() - 1);
            }
            Event::Reworked { job, record } => self.reworked(job, *record).await,
        }
    }

    /// Start ready phases in definition order while slots are free.
    fn start_ready(&mut self) {
        let limit = self
            .sh
            .opts
            .concurrency
            .unwrap_or_else(|| {
                self.sh
                    .flow
                    .concurrency
                    .as_ref()
                    .map_or(8, |c| c.value.floor().max(1.0) as usize)
            })
            .max(1);
        while self.running < limit {
            let Some(i) = self.ready.pop_first() else {
                break;
            };
            self.start(i);
        }
    }

    fn start(&mut self, i: usize) {
        if self.started[i] {
            return;
        }
        self.started[i] = true;
        if let Some(stop) = &self.stop {
            let reason = stop_reason(stop);
            self.skip(i, reason);
            return;
        }
        let sh = self.sh.clone();
        let phase = &sh.flow.phases[i];
        let scope = self.scope(i);
        if let Some(when) = &phase.when {
            let o = eval_when(when.as_str(), &scope);
            let mut m = Map::default();
            m.insert("phase".into(), Value::from(phase.id.as_str()));
            m.insert("field".into(), Value::from("when"));
            m.insert("expr".into(), Value::from(when.as_str()));
            m.insert("value".into(), Value::Bool(o.value));
            if let Some(e) = &o.error {
                m.insert("error".into(), Value::from(e.message.as_str()));
                let w = format!(
                    "when condition could not be parsed (treated as true): {}",
                    e.message
                );
                self.sh.notice(&phase.id, &w);
                self.recs[i].warn(w);
            }
            self.journal_event("condition", |mm, _| mm.extend(m));
            for id in &o.read_phases {
                self.recs[i].read(id);
            }
            if !o.value {
                let reason = format!("Condition not met: {}", when.as_str());
                self.skip(i, reason);
                return;
            }
        }
        self.recs[i].status = PhaseStatus::Running;
        self.recs[i].started_at = Some(now());
        self.progress(i);
        self.journal_event("phase-start", |m, c| {
            m.insert("phase".into(), Value::from(c.sh.flow.phases[i].id.as_str()));
        });
        self.save(false);
        self.running += 1;
        let sh = self.sh.clone();
        let rec = self.recs[i].clone();
        sh.executor
            .clone()
            .spawn(async move {
                let tx = sh.events.clone();
                let mut crashed = rec.clone();
                // A panic in a phase is an internal crash: the run fails and its record is
                // still saved, instead of the process going down with it.
                // Boxed: the phase's state is moved once, not with every move of this task.
                let event = match super::ctx::caught(Box::pin(execute(sh, i, scope, rec, 0))).await
                {
                    Ok((record, halt)) => Event::Finished {
                        phase: i,
                        record: Box::new(record),
                        halt,
                    },
                    Err(msg) => {
                        crashed.status = PhaseStatus::Failed;
                        crashed.error = Some(format!("internal error: {msg}"));
                        crashed.ended_at = Some(now());
                        Event::Finished {
                            phase: i,
                            record: Box::new(crashed),
                            halt: Halt::Crash(msg),
                        }
                    }
                };
                let _ = tx.send(event).await;
            })
            .detach();
    }

    /// What phase `i` can see now.
    fn scope(&self, i: usize) -> PhaseScope {
        let flow = &self.sh.flow;
        let steps = self.refs[i]
            .iter()
            .filter_map(|&j| {
                self.steps[j]
                    .as_ref()
                    .map(|s| (flow.phases[j].id.clone(), s.clone()))
            })
            .collect();
        let mut scope = PhaseScope {
            args: self.sh.args.clone(),
            steps,
            previous: None,
            previous_phases: Vec::new(),
        };
        let phase = &flow.phases[i];
        let done = |j: usize| self.recs[j].status == PhaseStatus::Done;
        if phase.ty() == PhaseType::Reduce {
            let inputs: Vec<(String, String)> = phase
                .from
                .iter()
                .filter_map(|f| flow.phases.iter().position(|p| p.id == f.value))
                .filter(|&j| done(j))
                .map(|j| (flow.phases[j].id.clone(), self.recs[j].output.clone()))
                .collect();
            scope.previous_phases = inputs.iter().map(|(id, _)| id.clone()).collect();
            scope.previous = aggregate(&inputs).map(Value::String);
        } else if let Some(&j) = self.deps[i].iter().rev().find(|&&j| done(j)) {
            scope.previous = Some(Value::from(self.recs[j].output.as_str()));
            scope.previous_phases = vec![flow.phases[j].id.clone()];
        }
        scope
    }

    fn skip(&mut self, i: usize, reason: String) {
        self.started[i] = true;
        let r = &mut self.recs[i];
        r.status = PhaseStatus::Skipped;
        r.skip_reason = Some(reason.clone());
        self.progress(i);
        self.journal_event("phase-end", |m, c| {
            m.insert("phase".into(), Value::from(c.sh.flow.phases[i].id.as_str()));
            m.insert("status".into(), Value::from("skipped"));
            m.insert("skipReason".into(), Value::from(reason.as_str()));
        });
        self.propagate(i);
    }

    /// A phase ended: record it, update its dependents, apply halts and the budget.
    fn end(&mut self, i: usize, record: PhaseRecord, halt: Halt) {
        self.recs[i] = record;
        self.versions[i] += 1;
        self.progress(i);
        let r = &self.recs[i];
        if r.status == PhaseStatus::Pending {
            // An approval waiting for a decision: its descendants wait with it.
            self.approvals.push(i);
            self.save(false);
            return;
        }
        let status = match r.status {
            PhaseStatus::Done => Some(StepStatus::Done),
            PhaseStatus::Failed => Some(StepStatus::Failed),
            _ => None,
        };
        if let Some(s) = status
            && self.referenced[i]
        {
            self.steps[i] = Some(Arc::new(StepState::new(
                s,
                r.output.clone(),
                r.json.clone(),
            )));
        }
        let (status_text, error) = (r.status.as_str(), r.error.clone());
        self.journal_event("phase-end", |m, c| {
            m.insert("phase".into(), Value::from(c.sh.flow.phases[i].id.as_str()));
            m.insert("status".into(), Value::from(status_text));
            if let Some(e) = &error {
                m.insert("error".into(), Value::from(e.as_str()));
            }
        });
        for w in self.recs[i].warnings.clone() {
            self.journal_event("warning", |m, c| {
                m.insert("phase".into(), Value::from(c.sh.flow.phases[i].id.as_str()));
                m.insert("message".into(), Value::from(w.as_str()));
            });
        }
        if let Halt::Crash(msg) = &halt {
            self.crash.get_or_insert_with(|| msg.clone());
        }
        if let Halt::Block(reason) = halt
            && !matches!(self.stop, Some(Stop::Block(_)))
        {
            self.halt(Stop::Block(reason));
        }
        if self.stop.is_none()
            && let Some(reason) = self.sh.meter.over()
        {
            self.halt(Stop::Budget(reason));
        }
        self.propagate(i);
        self.save(false);
    }

    /// Tell the progress display about phase `i`'s current state.
    fn progress(&self, i: usize) {
        if let Some(sink) = &self.sh.opts.progress {
            let r = &self.recs[i];
            let node = self.sh.node(&self.sh.flow.phases[i].id);
            (sink.0)(&super::ctx::ProgressNote {
                phase: &node,
                status: r.status.as_str(),
                detail: r.error.as_deref().or(r.skip_reason.as_deref()),
                attempts: r.attempts,
                tokens: r.usage.billable_tokens(),
                cost_usd: r.usage.cost_usd,
            });
        }
    }

    /// Tell the dependents of an ended phase (cascading skips iteratively).
    fn propagate(&mut self, first: usize) {
        let mut work = vec![first];
        while let Some(i) = work.pop() {
            let satisfied = match self.recs[i].status {
                PhaseStatus::Done => true,
                PhaseStatus::Failed => self.sh.flow.phases[i].optional,
                _ => false,
            };
            for k in 0..self.dependents[i].len() {
                let d = self.dependents[i][k];
                self.waiting[d] -= 1;
                if self.started[d] {
                    continue;
                }
                let any = self.sh.flow.phases[d].join == Join::Any;
                if any {
                    if satisfied {
                        self.ready.insert(d);
                    } else if self.waiting[d] == 0
                        && !self.deps[d].iter().any(|&j| self.is_satisfied(j))
                    {
                        self.mark_skipped(d, "All dependencies failed or were skipped");
                        work.push(d);
                    }
                } else if !satisfied {
                    self.ready.remove(&d);
                    self.mark_skipped(d, "Upstream dependency not satisfied");
                    work.push(d);
                } else if self.waiting[d] == 0 {
                    self.ready.insert(d);
                }
            }
        }
    }

    fn is_satisfied(&self, j: usize) -> bool {
        match self.recs[j].status {
            PhaseStatus::Done => true,
            PhaseStatus::Failed => self.sh.flow.phases[j].optional,
            _ => false,
        }
    }

    fn mark_skipped(&mut self, i: usize, reason: &str) {
        self.started[i] = true;
        self.recs[i].status = PhaseStatus::Skipped;
        self.recs[i].skip_reason = Some(reason.to_owned());
        self.progress(i);
        let reason = reason.to_owned();
        self.journal_event("phase-end", |m, c| {
            m.insert("phase".into(), Value::from(c.sh.flow.phases[i].id.as_str()));
            m.insert("status".into(), Value::from("skipped"));
            m.insert("skipReason".into(), Value::from(reason.as_str()));
        });
    }

    /// Stop starting phases: every phase not yet started is skipped with the reason.
    fn halt(&mut self, stop: Stop) {
        let reason = stop_reason(&stop);
        self.stop = Some(stop);
        self.ready.clear();
        for i in 0..self.recs.len() {
            if !self.started[i] && self.recs[i].status == PhaseStatus::Pending {
                self.mark_skipped(i, &reason);
            }
        }
    }

    /// Re-run a blocked gate's direct dependencies, in order, then hand the gate a fresh view.
    /// Start the next dependency of rework `job`, in order, in a task of its own (so the
    /// coordinator keeps serving events, a nested rework included).
    fn rework_next(&mut self, job: usize) {
        let Some(j) = self.reworks[job].as_ref() else {
            return;
        };
        let d = j.deps[j.next];
        let depth = j.depth + 1;
        let scope = self.scope(d);
        let mut fresh = PhaseRecord::new(self.sh.flow.phases[d].ty());
        fresh.agent = self.recs[d].agent.clone();
        fresh.optional = self.recs[d].optional;
        fresh.status = PhaseStatus::Running;
        let sh = self.sh.clone();
        self.sh
            .executor
            .clone()
            .spawn(async move {
                let tx = sh.events.clone();
                let record =
                    match super::ctx::caught(Box::pin(execute(sh, d, scope, fresh.clone(), depth)))
                        .await
                    {
                        Ok((record, _)) => record,
                        Err(msg) => {
                            fresh.status = PhaseStatus::Failed;
                            fresh.error = Some(format!("internal error: {msg}"));
                            fresh
                        }
                    };
                let _ = tx
                    .send(Event::Reworked {
                        job,
                        record: Box::new(record),
                    })
                    .await;
            })
            .detach();
    }

    /// A re-run dependency finished: its record replaces the old one (usage and attempts
    /// accumulate); a failure ends the rework, else the next dependency runs or the gate gets
    /// its fresh view.
    async fn reworked(&mut self, job: usize, mut rec: PhaseRecord) {
        let Some(j) = self.reworks[job].as_mut() else {
            return;
        };
        let d = j.deps[j.next];
        j.next += 1;
        rec.attempts += self.recs[d].attempts;
        let mut usage = self.recs[d].usage;
        usage.add(&rec.usage);
        rec.usage = usage;
        let good = rec.status == PhaseStatus::Done;
        let status = if good {
            StepStatus::Done
        } else {
            StepStatus::Failed
        };
        self.steps[d] = Some(Arc::new(StepState::new(
            status,
            rec.output.clone(),
            rec.json.clone(),
        )));
        self.recs[d] = rec;
        self.versions[d] += 1;
        let more = j.next < j.deps.len();
        if good && more {
            self.rework_next(job);
            return;
        }
        if let Some(j) = self.reworks[job].take() {
            let _ = j.reply.send(good.then(|| self.scope(j.gate))).await;
        }
    }

    fn finish(mut self) -> RunRecord {
        let flow = self.sh.flow.clone();
        let ids: Vec<String> = flow.phases.iter().map(|p| p.id.clone()).collect();
        let pending: Vec<String> = self
            .approvals
            .iter()
            .map(|&i| self.sh.node(&ids[i]))
            .collect();
        let failed = flow
            .phases
            .iter()
            .enumerate()
            .any(|(i, p)| self.recs[i].status == PhaseStatus::Failed && !p.optional);
        let (status, reason) = match &self.stop {
            _ if self.crash.is_some() => (
                RunStatus::Failed,
                Some(format!(
                    "Taskflow '{}' crashed: {}",
                    flow.name,
                    self.crash.as_deref().unwrap_or("")
                )),
            ),
            Some(Stop::Abort) => (RunStatus::Paused, Some("interrupted".to_owned())),
            Some(Stop::Block(r)) => (
                RunStatus::Blocked,
                Some(stop_reason(&Stop::Block(r.clone()))),
            ),
            Some(Stop::Budget(r)) => (RunStatus::Paused, Some(format!("budget exceeded: {r}"))),
            None if failed => (RunStatus::Failed, None),
            None if !pending.is_empty() => (
                RunStatus::Paused,
                Some(format!("awaiting approval: {}", pending.join(", "))),
            ),
            None => (RunStatus::Completed, None),
        };
        // Final output (SPEC §8.9).
        let fin = flow.final_phase();
        let last_done = (0..ids.len())
            .rev()
            .find(|&i| self.recs[i].status == PhaseStatus::Done);
        let chosen = fin
            .filter(|&f| self.recs[f].status == PhaseStatus::Done)
            .or(last_done);
        let (final_output, output_phase) = match (&self.stop, status) {
            (Some(Stop::Block(r)), _) => {
                let gate = (0..ids.len()).find(|&i| {
                    self.recs[i]
                        .gate
                        .as_ref()
                        .is_some_and(|g| g.verdict == "block")
                });
                let mut s = "Gate blocked the workflow.".to_owned();
                if let Some(r) = r {
                    s.push_str(&format!("\nReason: {r}"));
                }
                if let Some(g) = gate {
                    s.push_str(&format!("\n\n{}", self.recs[g].output));
                }
                (s, gate.map(|g| ids[g].clone()))
            }
            (Some(Stop::Budget(r)), _) => {
                let mut s = format!("Budget exceeded — run halted.\nReason: {r}");
                if let Some(c) = chosen {
                    s.push_str(&format!("\n\n{}", self.recs[c].output));
                }
                (s, chosen.map(|c| ids[c].clone()))
            }
            (None, RunStatus::Paused) if !pending.is_empty() => {
                let list = pending.join(", ");
                let approve: Vec<String> =
                    pending.iter().map(|p| format!("--approve {p}")).collect();
                let reject: Vec<String> = pending.iter().map(|p| format!("--reject {p}")).collect();
                (
                    format!(
                        "Run paused — awaiting approval: {list}.\nResume with: tfc resume {} {} (or {})",
                        self.record.run_id,
                        approve.join(" "),
                        reject.join(" ")
                    ),
                    None,
                )
            }
            // `outputPhase` names the phase whose output this is: the final phase itself
            // when it is done, else the fallback.
            _ => match chosen {
                Some(c) => (self.recs[c].output.clone(), Some(ids[c].clone())),
                None => ("(no output)".to_owned(), None),
            },
        };
        self.record.status = status;
        self.record.reason = reason.clone();
        self.record.final_output = final_output;
        self.record.output_phase = output_phase;
        self.record.ended_at = Some(now());
        self.journal_event("run-end", |m, _| {
            m.insert("status".into(), Value::from(status.as_str()));
            if let Some(r) = &reason {
                m.insert("reason".into(), Value::from(r.as_str()));
            }
        });
        if self.record.args.is_empty() {
            self.record.args = self.take_args();
        }
        self.fill(true);
        if self.store.is_some() {
            // Store problems so far go into the final record's warnings.
            let errors = self.record.store_errors.clone();
            self.record
                .warnings
                .extend(errors.iter().map(|e| format!("run record: {e}")));
            let value = self.stored_value();
            if let Some(mut store) = self.store.take() {
                let since = std::time::Instant::now();
                let saved = store.save(&value, since).and_then(|()| store.close());
                if let Err(e) = saved {
                    // Too late for run.json; the returned record still says so.
                    self.store_error(e);
                    let late = &self.record.store_errors[errors.len()..];
                    let late: Vec<String> =
                        late.iter().map(|e| format!("run record: {e}")).collect();
                    self.record.warnings.extend(late);
                }
            }
        }
        self.record
    }

    /// The invocation arguments for the final record: moved out of the shared state when
    /// nothing else holds it any more (the run is over), else copied.
    fn take_args(&mut self) -> Map {
        let args = match Arc::get_mut(&mut self.sh) {
            Some(sh) => std::mem::replace(&mut sh.args, Arc::new(Value::Null)),
            None => self.sh.args.clone(),
        };
        match Arc::try_unwrap(args) {
            Ok(mut v) => match &mut v {
                Value::Object(m) => std::mem::take(m),
                _ => Map::default(),
            },
            Err(shared) => match &*shared {
                Value::Object(m) => m.clone(),
                _ => Map::default(),
            },
        }
    }

    fn fill_record(&mut self) {
        self.fill(false);
    }

    /// Rebuild `record.phases` from the phase records; `last`: the run is over, so the
    /// records are moved into it instead of copied.
    fn fill(&mut self, last: bool) {
        let sh = self.sh.clone();
        let flow = &sh.flow;
        let mut usage = crate::agent::Usage::default();
        self.record.warnings.clear();
        self.record.phases.clear();
        self.record_src.clear();
        for (i, p) in flow.phases.iter().enumerate() {
            let r = &self.recs[i];
            usage.add(&r.usage);
            for w in &r.warnings {
                self.record.warnings.push(format!("{}: {w}", p.id));
            }
            let r = if last && !super::phases::graft(p) {
                std::mem::replace(&mut self.recs[i], PhaseRecord::new(p.ty()))
            } else {
                r.clone()
            };
            self.record.phases.insert(p.id.clone(), r);
            self.record_src.push(i);
            self.graft(i);
        }
        self.record.usage = usage;
    }

    /// A successful graft expand: the fragment's phase records become phases of this run,
    /// named `<expandId>-<childId>` (ids taken already are skipped with a warning); the phase
    /// keeps no separate sub-run.
    fn graft(&mut self, i: usize) {
        let p = &self.sh.flow.phases[i];
        if !super::phases::graft(p) || self.recs[i].status != PhaseStatus::Done {
            return;
        }
        let Some(sub) = self.recs[i].sub_run.clone() else {
            return;
        };
        for (cid, crec) in &sub.phases {
            let id = format!("{}-{cid}", p.id);
            let taken = self.record.phases.contains_key(&id)
                || self.sh.flow.phases.iter().any(|q| q.id == id);
            if taken {
                let w = format!(
                    "graft: phase id '{id}' is taken; the fragment's phase '{cid}' was not grafted"
                );
                self.recs[i].warn(w.clone());
                self.record.warnings.push(format!("{}: {w}", p.id));
            } else {
                self.record.phases.insert(id, crec.clone());
                self.record_src.push(i);
            }
        }
        if let Some(r) = self.record.phases.get_mut(&p.id) {
            r.sub_run = None;
            r.warnings = self.recs[i].warnings.clone();
        }
    }

    /// `run.json`: the record plus `def`, `cwd`, `tfcVersion`; outputs over
    /// [`INLINE_OUTPUT_MAX`](super::store::INLINE_OUTPUT_MAX) are kept in files of their own,
    /// each written once per result.
    fn stored_value(&mut self) -> Value {
        let limit = super::store::INLINE_OUTPUT_MAX;
        let mut errors = Vec::new();
        let (store, versions, src) = (&mut self.store, &self.versions, &self.record_src);
        let mut k = 0;
        let mut v = self.record.to_value_with(|key, p| {
            let version = src.get(k).map_or(0, |&i| versions[i]);
            k += 1;
            match store.as_mut() {
                Some(store) if p.output.len() > limit => {
                    match store.externalize(key, version, &p.output, p.json.as_ref()) {
                        Ok(files) => p.to_value_stored(Some(&files)),
                        Err(e) => {
                            errors.push(e);
                            p.to_value()
                        }
                    }
                }
                _ => p.to_value(),
            }
        });
        if let Value::Object(m) = &mut v {
            if self.record.final_output.len() > limit
                && let Some(store) = self.store.as_mut()
            {
                match store.final_output(&self.record.final_output) {
                    Ok(file) => {
                        m.insert("finalOutput".into(), Value::Null);
                        m.insert("finalOutputFile".into(), Value::from(file));
                    }
                    Err(e) => errors.push(e),
                }
            }
            if let Some(def) = &self.def {
                m.insert("def".into(), def.clone());
                m.insert("cwd".into(), Value::from(self.sh.cwd.display().to_string()));
                m.insert("tfcVersion".into(), Value::from(env!("CARGO_PKG_VERSION")));
            }
        }
        for e in errors {
            self.store_error(e);
        }
        v
    }

    /// Rewrite `run.json`: now when `force`, else when the throttle allows (a skipped
    /// rewrite costs nothing and happens when next due).
    fn save(&mut self, force: bool) {
        let Some(store) = self.store.as_mut() else {
            return;
        };
        if !force && !store.due() {
            store.mark_dirty();
            return;
        }
        let since = std::time::Instant::now();
        self.fill_record();
        let value = self.stored_value();
        if let Some(Err(e)) = self.store.as_mut().map(|s| s.save(&value, since)) {
            self.store_error(e);
        }
    }

    fn append(&mut self, v: &Value) {
        if let Some(Err(e)) = self.store.as_mut().map(|s| s.append(v)) {
            self.store_error(e);
        }
    }

    /// A failed write: reported once per distinct message (on stderr by the CLI, and in the
    /// final record's warnings); the run goes on.
    fn store_error(&mut self, e: std::io::Error) {
        let msg = e.to_string();
        if !self.record.store_errors.contains(&msg) && self.record.store_errors.len() < 20 {
            self.record.store_errors.push(msg);
        }
    }

    fn journal_event(&mut self, kind: &str, fill: impl FnOnce(&mut Map, &Coordinator)) {
        if self.store.is_none() {
            return;
        }
        let mut m = Map::default();
        m.insert("type".into(), Value::from(kind));
        m.insert("ts".into(), Value::from(now()));
        fill(&mut m, self);
        self.append(&Value::Object(m));
    }
}

fn stop_reason(stop: &Stop) -> String {
    match stop {
        Stop::Block(Some(r)) => format!("Gate blocked: {r}"),
        Stop::Block(None) => "Gate blocked".to_owned(),
        Stop::Budget(r) => format!("Budget exceeded: {r}"),
        Stop::Abort => "Aborted before execution".to_owned(),
    }
}

fn runs_agent(p: &Phase) -> bool {
    !matches!(
        p.ty(),
        PhaseType::Script | PhaseType::Approval | PhaseType::Flow | PhaseType::Expand
    )
}

/// The phases a phase's templates and conditions reference, plus its `from` inputs.
fn referenced(p: &Phase, ids: &HashMap<&str, usize>) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    let mut add = |id: Option<&str>| {
        if let Some(&j) = id.and_then(|id| ids.get(id))
            && !out.contains(&j)
        {
            out.push(j);
        }
    };
    for (_, t) in p.texts() {
        for path in t.template.paths() {
            add(path.step_id());
        }
    }
    // A condition that does not parse still reads the placeholders before its error.
    for (_, c) in p.conditions() {
        match &c.parsed {
            Ok(c) => c.refs().for_each(|(_, path)| add(path.step_id())),
            Err(e) => refs_before_error(c.as_str(), e)
                .iter()
                .for_each(|path| add(path.step_id())),
        }
    }
    for e in &p.gate_fields().eval {
        match &e.kind {
            EvalKind::Contains { lhs, .. } => {
                lhs.paths().iter().for_each(|path| add(path.step_id()))
            }
            EvalKind::Condition(Ok(c)) => c.refs().for_each(|(_, path)| add(path.step_id())),
            EvalKind::Condition(Err(err)) => refs_before_error(e.src.value.as_str(), err)
                .iter()
                .for_each(|path| add(path.step_id())),
            EvalKind::Empty => {}
        }
    }
    if let Some(score) = &p.gate_fields().score
        && let Some(t) = &score.target
    {
        t.template
            .paths()
            .iter()
            .for_each(|path| add(path.step_id()));
    }
    for f in &p.from {
        add(Some(f.value.as_str()));
    }
    out
}
