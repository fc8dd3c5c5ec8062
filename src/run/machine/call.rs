//! One logical agent call with both retry layers (SPEC §8.4): each attempt is a
//! [`Command::StartCall`], each backoff a timer; the output contract (§3.15), the output cap,
//! usage accounting and the journal's `agent-call` line are decided here.

use super::super::contract::{check_output, violation_error};
use super::super::verdict::is_transient;
use super::{
    CallEnd, CallOutcome, CallRequest, CallResult, CallSpec, Command, KindEvent, LogicalCall,
    Machine, Owner,
};
use crate::agent::{AgentCallRecord, StopReason, Usage, prompt_sha256};
use crate::flow::OutputMode;

/// `E = 1 + floor(retry.max ?? 0)` (SPEC §8.4).
fn explicit_attempts(p: &crate::flow::Phase) -> u32 {
    1 + p.retry.as_ref().map_or(0, |r| r.value.max.floor() as u32)
}

/// The most attempts one call of phase `p` may make: `max(E, 4)` with the transient layer
/// on (`idempotent`), else `E`.
pub(super) fn max_attempts(p: &crate::flow::Phase) -> u32 {
    let explicit = explicit_attempts(p);
    if p.idempotent {
        explicit.max(4)
    } else {
        explicit
    }
}

impl Machine {
    /// Start logical call `slot` of execution `exec` (phase `phase`).
    pub(crate) fn start_call(&mut self, exec: usize, slot: u32, phase: usize, spec: CallSpec) {
        let flow = self.flow.clone();
        let p = &flow.phases[phase];
        let explicit = explicit_attempts(p);
        let transient_layer = p.idempotent;
        let max_attempts = max_attempts(p);
        let (base, factor) = p
            .retry
            .as_ref()
            .and_then(|r| {
                r.value
                    .backoff_ms
                    .map(|b| (b, r.value.factor.unwrap_or(1.0)))
            })
            .unwrap_or((2000.0, 2.0));
        let mut lc = Box::new(LogicalCall {
            exec,
            slot,
            phase,
            k: 0,
            explicit,
            max_attempts,
            transient_layer,
            base,
            factor,
            wall: p.timeout.as_ref().map(|t| t.value as u64),
            cancelled: false,
            result: CallResult::default(),
            spec,
        });
        if let Some(why) = lc.spec.refused.take() {
            lc.result.error = Some(why);
            return self.call_done(lc);
        }
        let max_prompt = self.cfg.max_prompt;
        if lc.spec.prompt.len() > max_prompt {
            lc.result.error = Some(format!(
                "the prompt weighs {} bytes, over the limit of {max_prompt} bytes; pass less text into it, or raise `max_prompt_bytes` under `[limits]` in .tfc/config.toml",
                lc.spec.prompt.len()
            ));
            return self.call_done(lc);
        }
        self.attempt(lc);
    }

    /// Make the next attempt of a call (or end it when the run was aborted).
    pub(super) fn attempt(&mut self, mut lc: Box<LogicalCall>) {
        if self.aborted || lc.cancelled {
            lc.result.aborted = true;
            lc.result.error = Some("Aborted".into());
            return self.call_done(lc);
        }
        // The call cap is taken before each attempt (SPEC §8.7): a refused first attempt is
        // a call never made; a refused retry leaves the call with its last failure.
        if let Err(reason) = self.meter.take_call() {
            if lc.k == 0 {
                lc.result.capped = true;
                lc.result.error = Some(super::kit::budget_reason(&reason));
            }
            return self.call_done(lc);
        }
        let flow = self.flow.clone();
        let p = &flow.phases[lc.phase];
        let last = lc.k + 1 == lc.max_attempts;
        let idle = p
            .idle_timeout
            .as_deref()
            .or(flow.idle_timeout.as_ref())
            .map(|f| f.value as u64)
            .or(self.cfg.settings.default_idle_timeout_ms)
            .unwrap_or(300_000);
        let json_stub = (p.output == OutputMode::Json && self.cfg.settings.dry_run).then(|| {
            super::super::contract::stub(if lc.spec.contract {
                p.expect.as_deref()
            } else {
                None
            })
        });
        let request = CallRequest {
            run_id: self.cfg.run_id.clone(),
            phase_id: p.id.clone(),
            node: self.node(&lc.spec.node),
            attempt: lc.k + 1,
            agent: lc.spec.agent.clone(),
            // The last attempt takes the prompt instead of copying it (unless the journal
            // still needs it).
            prompt: if last && !self.cfg.journaling {
                std::mem::take(&mut lc.spec.prompt)
            } else {
                lc.spec.prompt.clone()
            },
            model: p.model.as_ref().map(|m| m.value.clone()),
            thinking: p.thinking.as_ref().map(|t| t.value.clone()),
            tools: p.tools.iter().map(|t| t.value.clone()).collect(),
            cwd: lc.spec.cwd.clone(),
            idle_timeout_ms: (idle > 0).then_some(idle),
            wall_timeout_ms: lc.wall,
            purpose: lc.spec.purpose,
            iteration: lc.spec.iteration,
            item_index: lc.spec.item_index,
            json_stub,
        };
        let op = self.op();
        self.ops.insert(op, Owner::Attempt(lc));
        self.out.push(Command::StartCall {
            op,
            request: Box::new(request),
        });
    }

    /// One attempt ended (the operation id names it; the input's node and attempt are for
    /// the journal's reader).
    pub(super) fn attempt_ended(&mut self, mut lc: Box<LogicalCall>, end: CallEnd) {
        let o = match end {
            CallEnd::NoBackend { message } | CallEnd::Refused { message } => {
                lc.result.error = Some(message);
                return self.call_done(lc);
            }
            CallEnd::Panicked { message } => {
                lc.result.attempts += 1;
                lc.result.error = Some(format!("internal error: {message}"));
                if !lc.spec.caught {
                    lc.result.crashed = Some(message);
                }
                return self.call_done(lc);
            }
            CallEnd::Outcome(o) => *o,
        };
        self.outcome(lc, o);
    }

    fn outcome(&mut self, mut lc: Box<LogicalCall>, mut o: CallOutcome) {
        let k = lc.k;
        lc.k += 1;
        lc.result.attempts += 1;
        let max_output = self.cfg.max_output;
        let over_cap = o.output.len() > max_output
            || o.error
                .as_deref()
                .is_some_and(|e| e.starts_with(crate::process::OUTPUT_CAP_ERROR_START));
        if over_cap {
            o.output = String::new();
            o.stop = StopReason::Failed.as_str().to_owned();
            o.error = Some(crate::process::output_cap_error(max_output));
        }
        let usage: Usage = o.usage.into();
        lc.result.usage.add(&usage);
        self.meter.add(&usage);
        lc.result.model = o.model.clone();
        for w in o.warnings.drain(..) {
            if !lc.result.warnings.contains(&w) {
                lc.result.warnings.push(w);
            }
        }
        // Told to stop (a race's loser once the race is decided): whatever ends the attempt
        // afterwards — the cancellation, or an answer or failure that crossed it (a durable
        // engine may deliver an activity's completion after the cancel request, in any order
        // with the other results) — ends the call as cancelled, as a stopped process does in
        // the local driver. Its usage still counts.
        let cancelled = lc.cancelled;
        let mut contract_failed = false;
        if o.is_ok() && lc.spec.contract && !cancelled {
            let flow = self.flow.clone();
            if let Some(c) = flow.phases[lc.phase].expect.as_ref()
                && let Err(v) = check_output(c, &o.output)
            {
                let error = violation_error(&v);
                self.notice(&lc.spec.node, &format!("attempt {}: {error}", k + 1));
                o.error = Some(error);
                o.stop = StopReason::Failed.as_str().to_owned();
                contract_failed = true;
            }
        }
        let stop = o.stop();
        if self.cfg.journaling {
            let rec = AgentCallRecord {
                ts: self.ts(),
                node: self.node(&lc.spec.node),
                agent: lc.spec.agent.clone(),
                prompt_sha256: prompt_sha256(&lc.spec.prompt),
                attempt: k + 1,
                backend: o.backend.clone(),
                model: o.model.clone(),
                ok: o.is_ok(),
                output: o.output.clone(),
                error: o.error.clone(),
                usage,
                stop_reason: stop,
                duration_ms: o.elapsed_ms,
                prompt: Some(lc.spec.prompt.clone()),
            };
            self.journal_value(rec.to_value());
        }
        let ok = o.is_ok();
        lc.result.output = o.output;
        if cancelled {
            lc.result.ok = false;
            lc.result.aborted = true;
            lc.result.error = Some("Aborted".into());
            return self.call_done(lc);
        }
        if ok {
            lc.result.ok = true;
            lc.result.error = None;
            return self.call_done(lc);
        }
        lc.result.error = o
            .error
            .clone()
            .or_else(|| Some(format!("agent call ended: {}", stop.as_str())));
        if over_cap {
            // The same question would get the same oversized answer.
            return self.call_done(lc);
        }
        match stop {
            StopReason::WallTimeout => {
                lc.result.timed_out = true;
                lc.result.error = Some(format!(
                    "Phase timed out after {}ms (subagent aborted)",
                    lc.wall.unwrap_or(0)
                ));
                return self.call_done(lc);
            }
            StopReason::Cancelled => {
                lc.result.aborted = true;
                return self.call_done(lc);
            }
            _ => {}
        }
        let replay_miss = stop == StopReason::Failed
            && o.error
                .as_deref()
                .is_some_and(|e| e.starts_with(crate::agent::replay::REPLAY_MISS_PREFIX));
        if replay_miss || self.meter.over().is_some() || self.shard_capped() {
            return self.call_done(lc);
        }
        let transient = !contract_failed
            && stop != StopReason::IdleTimeout
            && is_transient(&format!(
                "{} {} {}",
                lc.result.error.as_deref().unwrap_or(""),
                o.stderr,
                lc.result.output
            ));
        let again = k + 1 < lc.explicit || (lc.transient_layer && transient && k < 3);
        if !again || k + 1 >= lc.max_attempts {
            return self.call_done(lc);
        }
        if self.meter.refuse().is_some() {
            // The retry would pass the call cap: no backoff for a refused attempt.
            return self.call_done(lc);
        }
        let delay = (lc.base * lc.factor.powi(k as i32)).round().min(60_000.0);
        if delay > 0.0 && !self.cfg.settings.dry_run {
            let op = self.op();
            self.ops.insert(op, Owner::Backoff(lc));
            self.out.push(Command::StartTimer {
                op,
                ms: delay as u64,
            });
        } else {
            self.attempt(lc);
        }
    }

    /// The call is over: its result goes to its execution.
    fn call_done(&mut self, lc: Box<LogicalCall>) {
        let lc = *lc;
        if lc.exec == super::shard::SHARD_EXEC {
            return self.shard_call_done(lc.slot, lc.result);
        }
        self.deliver(lc.exec, KindEvent::Call(lc.slot, lc.result));
    }

    /// Stop call `slot` of execution `exec` (a race loser): an attempt in flight is told to
    /// stop, a backoff ends at once.
    pub(crate) fn cancel_call(&mut self, exec: usize, slot: u32) {
        let found = self.ops.iter_mut().find_map(|(&op, o)| match o {
            Owner::Attempt(lc) | Owner::Backoff(lc) if lc.exec == exec && lc.slot == slot => {
                lc.cancelled = true;
                Some(op)
            }
            _ => None,
        });
        let Some(op) = found else {
            return;
        };
        if let Some(Owner::Backoff(lc)) = self.ops.get(&op) {
            let _ = lc;
            if let Some(Owner::Backoff(lc)) = self.ops.remove(&op) {
                self.out.push(Command::CancelTimer { op });
                self.attempt(lc);
            }
        } else {
            self.out.push(Command::Cancel { op });
        }
    }

    /// Abort: every attempt in flight is told to stop, every backoff ends, every script is
    /// stopped; sub-flows are interrupted too.
    pub(super) fn abort_ops(&mut self) {
        let ops: Vec<u64> = self.ops.keys().copied().collect();
        let mut children = Vec::new();
        for op in ops {
            match self.ops.get(&op) {
                Some(Owner::Attempt(_)) => self.out.push(Command::Cancel { op }),
                Some(Owner::Backoff(_)) => {
                    if let Some(Owner::Backoff(lc)) = self.ops.remove(&op) {
                        self.out.push(Command::CancelTimer { op });
                        self.attempt(lc);
                    }
                }
                Some(Owner::Exec(_, _, super::OpKind::Script) | Owner::Shard(..)) => {
                    self.out.push(Command::Cancel { op })
                }
                Some(Owner::Child(e)) if !children.contains(e) => children.push(*e),
                _ => {}
            }
        }
        for e in children {
            self.deliver(e, KindEvent::Interrupt);
        }
    }
}
