//! Scheduling: the dependency graph, joins, `when`, cascades, halts, the budget stop, gate
//! reworks, and the end of the run with its status and final output (SPEC §8.1–§8.9).

use std::sync::Arc;

use super::super::phases::{aggregate, graft, runs_agent};
use super::super::record::{PhaseRecord, PhaseStatus, RunStatus};
use super::super::scope::PhaseScope;
use super::{Command, Halt, Machine, Progress, Purpose, ReworkJob, Stop};
use crate::eval::{StepState, StepStatus, eval_when};
use crate::flow::{EvalKind, Flow, Join, Phase, PhaseKind, PhaseType};
use crate::syntax::condition::refs_before_error;
use crate::value::{Map, Value};

/// The dependency graph of a flow, as indices.
pub(super) struct Graph {
    pub deps: Vec<Vec<usize>>,
    pub dependents: Vec<Vec<usize>>,
    /// Step ids each phase references (its scope holds only these).
    pub refs: Vec<Vec<usize>>,
    /// Whether some phase references this one.
    pub referenced: Vec<bool>,
}

impl Graph {
    pub fn new(flow: &Flow) -> Graph {
        let n = flow.phases.len();
        let (deps, dependents) = flow.edges();
        let refs: Vec<Vec<usize>> = flow.phases.iter().map(|p| referenced(p, flow)).collect();
        let mut is_referenced = vec![false; n];
        for &j in refs.iter().flatten() {
            is_referenced[j] = true;
        }
        Graph {
            deps,
            dependents,
            refs,
            referenced: is_referenced,
        }
    }
}

/// Every phase's record before the run.
pub(super) fn initial_records(flow: &Flow) -> Vec<PhaseRecord> {
    flow.phases
        .iter()
        .map(|p| {
            let mut r = PhaseRecord::new(p.ty());
            r.agent = runs_agent(p).then(|| p.agent.value.clone());
            r.optional = p.optional;
            r
        })
        .collect()
}

impl Machine {
    /// Start what can start; end the run when nothing runs and nothing can start.
    pub(super) fn pump(&mut self) {
        if !self.begun || self.finished {
            return;
        }
        self.start_ready();
        if self.running == 0 && self.ready.is_empty() {
            self.finish();
        }
    }

    fn limit(&self) -> usize {
        self.cfg
            .settings
            .concurrency
            .unwrap_or_else(|| {
                self.flow
                    .concurrency
                    .as_ref()
                    .map_or(8, |c| c.value.floor().max(1.0) as usize)
            })
            .max(1)
    }

    /// Start ready phases in definition order while slots are free.
    fn start_ready(&mut self) {
        let limit = self.limit();
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
        // A call was refused at the call cap: the run stops starting phases now, as it
        // would once the phase that needed the call ended (SPEC §8.7).
        if self.stop.is_none()
            && self.meter.refused
            && let Some(reason) = self.meter.over()
        {
            self.halt(Stop::Budget(reason));
        }
        if let Some(stop) = &self.stop {
            let reason = stop_reason(stop);
            self.mark_skipped(i, &reason);
            self.propagate(i);
            return;
        }
        let flow = self.flow.clone();
        let phase = &flow.phases[i];
        let scope = self.scope(i);
        if let Some(when) = &phase.when {
            let o = eval_when(when.as_str(), &scope);
            if let Some(e) = &o.error {
                let w = format!(
                    "when condition could not be parsed (treated as true): {}",
                    e.message
                );
                self.notice(&phase.id, &w);
                self.recs[i].warn(w);
            }
            self.journal("condition", |m| {
                super::kit::condition_event(m, &phase.id, "when", when.as_str(), &o)
            });
            for id in &o.read_phases {
                self.recs[i].read(id);
            }
            if !o.value {
                let reason = format!("Condition not met: {}", when.as_str());
                self.mark_skipped(i, &reason);
                self.propagate(i);
                return;
            }
        }
        self.recs[i].status = PhaseStatus::Running;
        self.recs[i].started_at = Some(self.ts());
        self.progress(i);
        self.journal("phase-start", |m| {
            m.insert("phase".into(), Value::from(phase.id.as_str()));
        });
        self.out.push(Command::Save);
        self.running += 1;
        let rec = self.recs[i].clone();
        self.launch(i, scope, rec, 0, Purpose::Main);
    }

    /// What phase `i` can see now.
    pub(crate) fn scope(&self, i: usize) -> PhaseScope {
        let flow = &self.flow;
        let steps = self.refs[i]
            .iter()
            .filter_map(|&j| {
                self.steps[j]
                    .as_ref()
                    .map(|s| (flow.phases[j].id.clone(), s.clone()))
            })
            .collect();
        let mut scope = PhaseScope {
            args: self.args.clone(),
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

    /// A phase's execution ended: record it, update its dependents, apply halts and the
    /// budget.
    pub(crate) fn end(&mut self, i: usize, record: PhaseRecord, halt: Halt) {
        self.running -= 1;
        self.recs[i] = record;
        self.versions[i] += 1;
        self.progress(i);
        if self.recs[i].status == PhaseStatus::Pending {
            // An approval waiting for a decision: its descendants wait with it. Its slot is
            // free again, so the budget is checked as for any phase that ends.
            self.approvals.push(i);
            if self.stop.is_none()
                && let Some(reason) = self.meter.over()
            {
                self.halt(Stop::Budget(reason));
            }
            self.out.push(Command::Save);
            return;
        }
        let r = &self.recs[i];
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
        if self.cfg.journaling || self.cfg.decisions {
            let flow = self.flow.clone();
            let id = flow.phases[i].id.as_str();
            let (status_text, error) = (r.status.as_str(), r.error.clone());
            let skipped = r.skip_reason.clone();
            let (hit, hash) = (r.cache_hit, r.input_hash.clone());
            let warnings = r.warnings.clone();
            self.journal("phase-end", |m| {
                m.insert("phase".into(), Value::from(id));
                m.insert("status".into(), Value::from(status_text));
                if let Some(e) = &error {
                    m.insert("error".into(), Value::from(e.as_str()));
                }
                // A phase whose call the call cap refused (SPEC §8.7).
                if let Some(r) = &skipped {
                    m.insert("skipReason".into(), Value::from(r.as_str()));
                }
                if let Some(h) = hit {
                    m.insert("cacheHit".into(), Value::from(h));
                }
                if let Some(h) = &hash {
                    m.insert("inputHash".into(), Value::from(h.as_str()));
                }
            });
            for w in warnings {
                self.journal("warning", |m| {
                    m.insert("phase".into(), Value::from(id));
                    m.insert("message".into(), Value::from(w.as_str()));
                });
            }
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
            && let Some(reason) = self.meter.over()
        {
            self.halt(Stop::Budget(reason));
        }
        self.propagate(i);
        self.out.push(Command::Save);
    }

    /// Tell the progress display about phase `i`'s current state.
    fn progress(&mut self, i: usize) {
        if self.cfg.progress {
            let r = &self.recs[i];
            let note = Progress {
                phase: self.node(&self.flow.phases[i].id),
                status: r.status.as_str(),
                kind: Some(r.ty),
                detail: r
                    .error
                    .clone()
                    .or(r.skip_reason.clone())
                    .or(r.cache_hit.map(|h| format!("reused ({h})"))),
                attempts: r.agent_calls(),
                tokens: r.usage.billable_tokens(),
                cost_usd: r.usage.cost_usd,
                facts: super::Facts::of(&self.flow.phases[i], r, None),
            };
            self.out.push(Command::Progress(Box::new(note)));
        }
    }

    /// Tell the dependents of an ended phase (cascading skips iteratively).
    fn propagate(&mut self, first: usize) {
        let mut work = vec![first];
        while let Some(i) = work.pop() {
            let satisfied = self.is_satisfied(i);
            for k in 0..self.dependents[i].len() {
                let d = self.dependents[i][k];
                self.waiting[d] -= 1;
                if self.started[d] {
                    continue;
                }
                let any = self.flow.phases[d].join == Join::Any;
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
            PhaseStatus::Failed => self.flow.phases[j].optional,
            _ => false,
        }
    }

    fn mark_skipped(&mut self, i: usize, reason: &str) {
        self.started[i] = true;
        self.recs[i].status = PhaseStatus::Skipped;
        self.recs[i].skip_reason = Some(reason.to_owned());
        self.progress(i);
        let flow = self.flow.clone();
        self.journal("phase-end", |m| {
            m.insert("phase".into(), Value::from(flow.phases[i].id.as_str()));
            m.insert("status".into(), Value::from("skipped"));
            m.insert("skipReason".into(), Value::from(reason));
        });
    }

    /// Stop starting phases: every phase not yet started is skipped with the reason.
    pub(crate) fn halt(&mut self, stop: Stop) {
        let reason = stop_reason(&stop);
        self.stop = Some(stop);
        self.ready.clear();
        for i in 0..self.recs.len() {
            if !self.started[i] && self.recs[i].status == PhaseStatus::Pending {
                self.mark_skipped(i, &reason);
            }
        }
    }

    /// Ctrl-C: stop starting phases, stop every call and script in flight.
    pub(super) fn interrupt(&mut self) {
        if self.aborted {
            return;
        }
        self.aborted = true;
        self.halt(Stop::Abort);
        self.abort_ops();
    }

    /// A blocked gate (execution `gate`) asks for its direct dependencies to be re-run.
    /// Only dependencies that have ended are re-run (a `join: any` gate may block while
    /// another of its dependencies still runs); with none, the rework cannot happen.
    pub(crate) fn rework(&mut self, gate: usize, mut deps: Vec<usize>, depth: u32) {
        deps.retain(|&d| self.recs[d].status.ended());
        if deps.is_empty() {
            self.deliver(gate, super::KindEvent::Reworked(None));
            return;
        }
        self.reworks.push(Some(ReworkJob {
            gate,
            deps,
            next: 0,
            depth,
        }));
        self.rework_next(self.reworks.len() - 1);
    }

    /// Start the next dependency of rework `job`.
    fn rework_next(&mut self, job: usize) {
        let Some(j) = self.reworks[job].as_ref() else {
            return;
        };
        let d = j.deps[j.next];
        let depth = j.depth + 1;
        if self.cfg.progress {
            let note = Progress {
                phase: self.node(&self.flow.phases[d].id),
                status: "running",
                kind: Some(self.recs[d].ty),
                detail: Some("re-run by a gate's rework".to_owned()),
                attempts: self.recs[d].agent_calls(),
                tokens: self.recs[d].usage.billable_tokens(),
                cost_usd: self.recs[d].usage.cost_usd,
                facts: super::Facts::default(),
            };
            self.out.push(Command::Progress(Box::new(note)));
        }
        let scope = self.scope(d);
        let mut fresh = PhaseRecord::new(self.flow.phases[d].ty());
        fresh.agent = self.recs[d].agent.clone();
        fresh.optional = self.recs[d].optional;
        fresh.status = PhaseStatus::Running;
        self.launch(d, scope, fresh, depth, Purpose::Rework(job));
    }

    /// A re-run dependency finished: its record replaces the old one (usage and attempts
    /// accumulate); a failure ends the rework, else the next dependency runs or the gate gets
    /// its fresh view.
    pub(crate) fn reworked(&mut self, job: usize, mut rec: PhaseRecord) {
        let Some(j) = self.reworks[job].as_mut() else {
            return;
        };
        let d = j.deps[j.next];
        j.next += 1;
        let more = j.next < j.deps.len();
        if rec.status == PhaseStatus::Skipped {
            // Its call was refused at the call cap (SPEC §8.7): the dependency keeps its
            // last state, and the rework ends.
            if let Some(j) = self.reworks[job].take() {
                self.deliver(j.gate, super::KindEvent::Reworked(None));
            }
            return;
        }
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
        self.progress(d);
        if good && more && !self.aborted && self.meter.over().is_none() {
            self.rework_next(job);
            return;
        }
        if let Some(j) = self.reworks[job].take() {
            let gate_phase = self.exec_phase(j.gate);
            let scope = gate_phase.filter(|_| good).map(|g| self.scope(g));
            self.deliver(j.gate, super::KindEvent::Reworked(scope));
        }
    }

    /// `expires <expiresAt>, then <onTimeout>` of pending approval `i` with a deadline.
    fn deadline_note(&self, flow: &crate::flow::Flow, i: usize) -> Option<String> {
        let at = self.recs[i].approval.as_ref()?.expires_at.as_ref()?;
        let then = match &flow.phases[i].kind {
            crate::flow::PhaseKind::Approval(k) => k.on_timeout.as_str(),
            _ => return None,
        };
        Some(format!("expires {at}, then {then}"))
    }

    /// End the run: status, reason, final output (SPEC §8.9).
    fn finish(&mut self) {
        self.finished = true;
        let flow = self.flow.clone();
        let ids: Vec<&str> = flow.phases.iter().map(|p| p.id.as_str()).collect();
        let pending: Vec<String> = self.approvals.iter().map(|&i| self.node(ids[i])).collect();
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
                (s, gate.map(|g| ids[g].to_owned()))
            }
            (Some(Stop::Budget(r)), _) => {
                let mut s = format!("Budget exceeded — run halted.\nReason: {r}");
                if let Some(c) = chosen {
                    s.push_str(&format!("\n\n{}", self.recs[c].output));
                }
                (s, chosen.map(|c| ids[c].to_owned()))
            }
            (None, RunStatus::Paused) if !pending.is_empty() => {
                // Each id with a deadline says when and what then (SPEC §8.8).
                let list = self
                    .approvals
                    .iter()
                    .zip(&pending)
                    .map(|(&i, id)| match self.deadline_note(&flow, i) {
                        Some(note) => format!("{id} ({note})"),
                        None => id.clone(),
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
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
            _ => match chosen {
                Some(c) => (self.recs[c].output.clone(), Some(ids[c].to_owned())),
                None => ("(no output)".to_owned(), None),
            },
        };
        // A skipped final phase, when nothing else explains the output (a block, a budget
        // halt, an abort and an awaited approval say so themselves).
        let final_skip = fin
            .filter(|_| self.stop.is_none() && pending.is_empty() && self.crash.is_none())
            .and_then(|f| self.final_skip(f, output_phase.as_deref()));
        self.record.status = status;
        self.record.reason = reason.clone();
        self.record.final_output = final_output;
        self.record.output_phase = output_phase;
        self.record.ended_at = Some(self.ts());
        self.journal("run-end", |m| {
            m.insert("status".into(), Value::from(status.as_str()));
            if let Some(r) = &reason {
                m.insert("reason".into(), Value::from(r.as_str()));
            }
        });
        if self.record.args.is_empty() {
            self.record.args = self.take_args();
        }
        self.fill(true);
        if let Some(skip) = final_skip {
            self.record.warnings.push(skip.warning());
        }
        let record = std::mem::replace(&mut self.record, empty_record());
        self.out.push(Command::Finish(Box::new(record)));
    }

    /// The invocation arguments for the final record: moved out when nothing else holds
    /// them any more, else copied.
    fn take_args(&mut self) -> Map {
        let args = std::mem::replace(&mut self.args, Arc::new(Value::Null));
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

    /// The record as it stands (for `run.json`), with the result version of each entry's
    /// source phase (a large output is written to its file once per version).
    pub fn snapshot(&mut self) -> (&crate::run::RunRecord, Vec<u64>) {
        self.fill(false);
        let versions = self.record_src.iter().map(|&i| self.versions[i]).collect();
        (&self.record, versions)
    }

    /// [`Machine::snapshot`], mutable (the driver adds its store problems).
    pub(crate) fn snapshot_mut(&mut self) -> (&mut crate::run::RunRecord, Vec<u64>) {
        self.fill(false);
        let versions = self.record_src.iter().map(|&i| self.versions[i]).collect();
        (&mut self.record, versions)
    }

    /// The result versions of the final record's entries (see [`Machine::snapshot`]).
    pub fn versions(&self) -> Vec<u64> {
        self.record_src.iter().map(|&i| self.versions[i]).collect()
    }

    /// Rebuild `record.phases` from the phase records; `last`: the run is over, so the
    /// records are moved into it instead of copied.
    fn fill(&mut self, last: bool) {
        let flow = self.flow.clone();
        let mut usage = crate::agent::Usage {
            calls: self.calls_made(),
            ..crate::agent::Usage::default()
        };
        self.record.warnings.clear();
        self.record.phases.clear();
        self.record_src.clear();
        for (i, p) in flow.phases.iter().enumerate() {
            let r = &self.recs[i];
            usage.add(&r.usage);
            for w in &r.warnings {
                self.record.warnings.push(format!("{}: {w}", p.id));
            }
            let r = if last && !graft(p) {
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
    /// named `<expandId>-<childId>`.
    fn graft(&mut self, i: usize) {
        let flow = self.flow.clone();
        let p = &flow.phases[i];
        if !graft(p) || self.recs[i].status != PhaseStatus::Done {
            return;
        }
        let Some(sub) = self.recs[i].sub_run.clone() else {
            return;
        };
        for (cid, crec) in &sub.phases {
            let id = format!("{}-{cid}", p.id);
            let taken =
                self.record.phases.contains_key(&id) || flow.phases.iter().any(|q| q.id == id);
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
}

fn empty_record() -> crate::run::RunRecord {
    crate::run::RunRecord {
        run_id: String::new(),
        flow: String::new(),
        parent_run_id: None,
        status: RunStatus::Running,
        reason: None,
        final_output: String::new(),
        output_phase: None,
        args: Map::default(),
        started_at: String::new(),
        ended_at: None,
        usage: crate::agent::Usage::default(),
        spent_before: None,
        warnings: Vec::new(),
        backends: indexmap::IndexMap::new(),
        phases: indexmap::IndexMap::new(),
        replay: false,
        store_errors: Vec::new(),
    }
}

pub(crate) fn stop_reason(stop: &Stop) -> String {
    match stop {
        Stop::Block(Some(r)) => format!("Gate blocked: {r}"),
        Stop::Block(None) => "Gate blocked".to_owned(),
        Stop::Budget(r) => super::kit::budget_reason(r),
        Stop::Abort => "Aborted before execution".to_owned(),
    }
}

/// The phases a phase's templates and conditions reference, plus its `from` inputs.
fn referenced(p: &Phase, flow: &Flow) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    let mut add = |id: Option<&str>| {
        if let Some(j) = id.and_then(|id| flow.index_of(id))
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
    // A gate's `eval` entries and score target read steps too.
    let gate = match &p.kind {
        PhaseKind::Gate(g) => Some(&**g),
        _ => None,
    };
    for e in gate.iter().flat_map(|g| &g.eval) {
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
    if let Some(score) = gate.and_then(|g| g.score.as_ref())
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
