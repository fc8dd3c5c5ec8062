//! The vocabulary the machine and the phase kinds share: what an execution is told
//! ([`KindEvent`]) and says back ([`Step`], [`Halt`]), the execution a kind fills ([`Exec`]),
//! what a kind may ask of the machine ([`Cx`], over the [`Host`] the machine implements),
//! calls ([`CallSpec`], [`CallResult`]) and the spend ([`Meter`]). It imports nothing else
//! of the machine but its I/O types and configuration, so kinds depend on it and the
//! machine drives the kinds, one way.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::super::record::PhaseRecord;
use super::super::scope::PhaseScope;
use super::config::Config;
use super::hit::CacheHit;
use super::io::{
    CallDir, Command, Decision, Facts, Input, ScriptOutcome, ShardEnd, ShardItem, ShardRequest,
};
use crate::agent::{Purpose as CallPurpose, Usage};
use crate::flow::{Flow, OutputMode};
use crate::value::{Map, Value, format_number};

/// What an execution is told.
#[derive(Debug)]
pub(crate) enum KindEvent {
    Start,
    /// Logical call `slot` ended.
    Call(u32, CallResult),
    Script(ScriptOutcome),
    /// Timer `slot` fired.
    Timer(u32),
    /// A decision, its note, and whether it came as a signal (else from the terminal).
    Approval(Decision, Option<String>, bool),
    Dir(Result<PathBuf, String>, Option<String>),
    Context(String),
    /// Scorer `slot` ended: pass, detail.
    Scorer(u32, bool, Option<String>),
    Loaded(Option<String>),
    /// Run id, backends, error.
    Resolved(String, Vec<(String, String)>, Option<String>),
    /// The cache lookup ended: the key, a reusable state, a warning.
    /// Slot, key, a reusable state, a warning.
    Cached(u32, String, Option<Box<CacheHit>>, Option<String>),
    /// A rework ended: the gate's fresh view, or `None` when it could not happen.
    Reworked(Option<PhaseScope>),
    /// An input for the sub-flow running inside.
    Child(Input),
    /// A shard of a map's items ended: each item's end, in the order they ended.
    Shard(Vec<ShardItem>),
    Interrupt,
}

/// What a kind says after an event.
#[derive(Debug)]
pub(crate) enum Step {
    /// Still running.
    Wait,
    /// Ended (the record is settled), asking this of the run.
    Done(Halt),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Stage {
    New,
    Context,
    Cache,
    Dir,
    Kind,
}

/// A phase being executed: its view of the run, and the record it fills.
#[derive(Debug)]
pub(crate) struct Exec {
    /// The phase index.
    pub index: usize,
    pub scope: PhaseScope,
    pub rec: PhaseRecord,
    /// The pre-read context files, prefixed to every prompt of the phase.
    pub pre_read: String,
    /// 0 normally; deeper when re-run by a gate's rework.
    pub rework_depth: u32,
    /// Where the phase's agents and scripts run.
    pub work_dir: Arc<Path>,
    /// Set when a prompt of this phase passed `max_prompt_bytes`: the error its calls fail
    /// with.
    pub oversize: Option<String>,
    pub(super) purpose: Purpose,
    /// The phase's key and whether it stores its result across runs.
    pub(crate) reuse: Reuse,
    pub(super) dir_op: Option<u64>,
    pub(super) stage: Stage,
    /// What the progress display was last told of the running kind.
    pub(super) shown: Option<Facts>,
}

/// What a phase kind asks to call.
#[derive(Clone, Debug)]
pub(crate) struct CallSpec {
    /// Node path without the sub-flow prefix (`id`, `id#3`, `id@2`, `id#judge`, …).
    pub node: String,
    pub agent: String,
    pub prompt: String,
    pub purpose: CallPurpose,
    pub iteration: Option<u32>,
    pub item_index: Option<usize>,
    /// The phase's contract applies (it stores JSON output and has `expect`).
    pub contract: bool,
    pub cwd: CallDir,
    /// Why this call must not be made (its phase's prompt passed the cap).
    pub refused: Option<String>,
    /// A panicking backend fails this call only (fan-out items, race branches) instead of
    /// crashing the run.
    pub caught: bool,
}

impl CallSpec {
    /// A plain call in `cwd`.
    pub(crate) fn new(
        node: String,
        agent: &str,
        prompt: String,
        purpose: CallPurpose,
        cwd: &std::sync::Arc<std::path::Path>,
    ) -> CallSpec {
        CallSpec {
            node,
            agent: agent.to_owned(),
            prompt,
            purpose,
            iteration: None,
            item_index: None,
            contract: false,
            cwd: CallDir::At(cwd.clone()),
            refused: None,
            caught: false,
        }
    }

    /// The phase's contract applies when it stores JSON output.
    pub(crate) fn checked(mut self, phase: &crate::flow::Phase) -> CallSpec {
        self.contract = phase.output == OutputMode::Json && phase.expect.is_some();
        self
    }

    /// Refuse the call when the phase's prompt passed the cap.
    pub(crate) fn refuse(mut self, why: Option<String>) -> CallSpec {
        self.refused = why;
        self
    }
}

/// The result of a call over all its attempts.
#[derive(Debug, Clone, Default)]
pub(crate) struct CallResult {
    pub ok: bool,
    /// The answer, or the last attempt's partial output.
    pub output: String,
    pub error: Option<String>,
    pub attempts: u32,
    pub usage: Usage,
    pub timed_out: bool,
    pub aborted: bool,
    pub model: Option<String>,
    pub warnings: Vec<String>,
    /// The backend panicked (uncaught calls): the run crashes with this message.
    pub crashed: Option<String>,
    /// The call was never made: the call cap was reached (`error` says so, SPEC §8.7).
    pub capped: bool,
}

impl CallResult {
    /// How a shard's call ended, for the run it came from.
    pub(crate) fn into_shard_end(self) -> ShardEnd {
        ShardEnd::Called {
            ok: self.ok,
            output: self.output,
            error: self.error,
            attempts: self.attempts,
            usage: self.usage.into(),
            timed_out: self.timed_out,
            aborted: self.aborted,
            model: self.model,
            warnings: self.warnings,
        }
    }

    /// The call result of a shard's item (`None` when the item never started).
    pub(crate) fn from_shard_end(end: ShardEnd) -> Option<CallResult> {
        match end {
            ShardEnd::Called {
                ok,
                output,
                error,
                attempts,
                usage,
                timed_out,
                aborted,
                model,
                warnings,
            } => Some(CallResult {
                ok,
                output,
                error,
                attempts,
                usage: usage.into(),
                timed_out,
                aborted,
                model,
                warnings,
                crashed: None,
                capped: false,
            }),
            ShardEnd::OverBudget | ShardEnd::Aborted => None,
        }
    }
}

/// What the machine knows of a phase's reuse while it runs.
#[derive(Clone, Debug, Default)]
pub(crate) struct Reuse {
    /// The key, once computed.
    pub key: Option<String>,
    /// The phase stores its `done` state in the cross-run cache.
    pub cross_run: bool,
}

/// The spend so far and the caps (SPEC §8.7).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Meter {
    pub(super) tokens: u64,
    pub(super) cost_micros: u64,
    pub(super) max_usd: Option<f64>,
    pub(super) max_tokens: Option<f64>,
    /// Agent calls started (those of the runs resumed included).
    pub(super) calls: u64,
    /// Calls promised to shards out (on Temporal), not started yet or not reported.
    pub(super) reserved: u64,
    pub(super) max_calls: Option<u64>,
    /// A call was refused at the call cap: the run is over its budget.
    pub(super) refused: bool,
}

impl Meter {
    pub(crate) fn new(max_usd: Option<f64>, max_tokens: Option<f64>) -> Meter {
        Meter {
            max_usd,
            max_tokens,
            ..Meter::default()
        }
    }

    /// The same meter with the call cap `max`.
    pub(crate) fn with_max_calls(mut self, max: Option<u64>) -> Meter {
        self.max_calls = max;
        self
    }

    pub(crate) fn add(&mut self, u: &crate::agent::Usage) {
        self.tokens += u.billable_tokens();
        self.calls += u.calls;
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

    /// Agent calls started so far (those promised to shards not included).
    pub(crate) fn calls(&self) -> u64 {
        self.calls
    }

    /// `Some(reason)` once a cap is exceeded (the call cap: once a call was refused).
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
        if self.refused {
            return Some(self.calls_reason());
        }
        None
    }

    /// `calls <n> reached cap <max>`.
    fn calls_reason(&self) -> String {
        format!(
            "calls {} reached cap {}",
            self.calls + self.reserved,
            self.max_calls.unwrap_or(0)
        )
    }

    /// Calls that may still start: `None` without a call cap.
    pub(crate) fn calls_left(&self) -> Option<u64> {
        self.max_calls
            .map(|max| max.saturating_sub(self.calls + self.reserved))
    }

    /// Whether the call cap is reached (the next call would be refused).
    pub(crate) fn calls_full(&self) -> bool {
        self.refused || self.calls_left() == Some(0)
    }

    /// Before a call that is about to start: `Some(reason)` when it must not (a cap is
    /// exceeded, or the call cap is reached — the call is then refused, and the run is over
    /// its budget from now on).
    pub(crate) fn refuse(&mut self) -> Option<String> {
        if self.calls_full() {
            self.refused = true;
        }
        self.over()
    }

    /// Take one call against the cap (SPEC §8.7: a call starts only if `calls < maxCalls`);
    /// `Err(reason)` when refused.
    pub(crate) fn take_call(&mut self) -> Result<(), String> {
        if self.calls_full() {
            self.refused = true;
            return Err(self.calls_reason());
        }
        self.calls += 1;
        Ok(())
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

/// `Budget exceeded: <reason>`: why a phase the budget stopped is skipped.
pub(crate) fn budget_reason(reason: &str) -> String {
    format!("Budget exceeded: {reason}")
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

/// What the machine offers a kind while it handles an event (the machine implements it;
/// kinds see only this).
pub(crate) trait Host {
    fn flow(&self) -> &Arc<Flow>;
    fn cfg(&self) -> &Config;
    fn args(&self) -> &Arc<Value>;
    fn aborted(&self) -> bool;
    /// Why the run stopped starting phases, once it did.
    fn stop(&self) -> Option<&Stop>;
    fn meter(&self) -> &Meter;
    fn meter_mut(&mut self) -> &mut Meter;
    /// The time of the input being handled.
    fn now(&self) -> u64;
    /// The current time as a record timestamp.
    fn ts(&self) -> String;
    fn node(&self, local: &str) -> String;
    fn notice(&mut self, local: &str, msg: &str);
    fn push(&mut self, cmd: Command);
    fn journal_value(&mut self, v: Value);
    /// A fresh operation id owned by execution `exec`'s `slot`.
    fn own_op(&mut self, exec: usize, slot: u32, kind: OpKind) -> u64;
    /// Operation `op` belongs to the sub-flow running inside execution `exec`.
    fn own_child_op(&mut self, op: u64, exec: usize);
    /// Forget operation `op`; whether it was known.
    fn forget_op(&mut self, op: u64) -> bool;
    fn start_call(&mut self, exec: usize, slot: u32, phase: usize, spec: CallSpec);
    fn cancel_call(&mut self, exec: usize, slot: u32);
    /// Hand a batch of execution `exec`'s item calls to a shard (the spend is filled in).
    fn start_shard(&mut self, exec: usize, shard: ShardRequest);
    fn rework(&mut self, exec: usize, deps: Vec<usize>, depth: u32);
    /// A machine for a sub-flow.
    fn child(&self, flow: Arc<Flow>, args: Map, cfg: Config) -> Box<dyn Child>;
    /// Feed a sub-flow's machine one input; it shares this machine's operation ids and
    /// spend.
    fn drive(&mut self, child: &mut dyn Child, input: Input) -> Vec<Command>;
}

/// A sub-flow's machine, as the phase running it holds it.
pub(crate) trait Child: Send {
    /// Handle one input with the parent's next operation id and spend (both updated).
    fn handle_shared(&mut self, input: Input, next_op: &mut u64, meter: &mut Meter)
    -> Vec<Command>;
}

/// What a kind can ask of the machine while it handles an event.
pub(crate) struct Cx<'a> {
    pub m: &'a mut dyn Host,
    pub exec: usize,
}

impl Cx<'_> {
    pub fn flow(&self) -> Arc<Flow> {
        self.m.flow().clone()
    }
    pub fn cfg(&self) -> &Config {
        self.m.cfg()
    }
    pub fn aborted(&self) -> bool {
        self.m.aborted()
    }
    /// `Some(reason)` once the budget is exceeded.
    pub fn over(&self) -> Option<String> {
        self.m.meter().over()
    }
    /// Before starting a call: `Some(reason)` when it must not start (the budget is
    /// exceeded, or the call cap is reached: the call is refused and the run is over its
    /// budget from now on, SPEC §8.7).
    pub fn refuse_call(&mut self) -> Option<String> {
        self.m.meter_mut().refuse()
    }
    /// The current time as a record timestamp.
    pub fn ts(&self) -> String {
        self.m.ts()
    }
    /// The time of the input being handled.
    pub fn now(&self) -> u64 {
        self.m.now()
    }
    /// Start logical call `slot` for phase `phase`.
    pub fn call(&mut self, ex: &Exec, slot: u32, spec: CallSpec) {
        self.m.start_call(self.exec, slot, ex.index, spec);
    }
    /// Hand a batch of this execution's item calls to a shard.
    pub fn shard(&mut self, shard: ShardRequest) {
        self.m.start_shard(self.exec, shard);
    }
    pub fn cancel_call(&mut self, slot: u32) {
        self.m.cancel_call(self.exec, slot);
    }
    /// Register an operation of this execution and emit its command.
    pub fn io(&mut self, slot: u32, kind: OpKind, cmd: impl FnOnce(u64) -> Command) -> u64 {
        let op = self.m.own_op(self.exec, slot, kind);
        self.m.push(cmd(op));
        op
    }
    pub fn timer(&mut self, slot: u32, ms: u64) -> u64 {
        self.io(slot, OpKind::Other, |op| Command::StartTimer { op, ms })
    }
    pub fn cancel_timer(&mut self, op: u64) {
        if self.m.forget_op(op) {
            self.m.push(Command::CancelTimer { op });
        }
    }
    pub fn notice(&mut self, local: &str, msg: &str) {
        self.m.notice(local, msg);
    }
    pub fn node(&self, local: &str) -> String {
        self.m.node(local)
    }
    pub fn push(&mut self, cmd: Command) {
        self.m.push(cmd);
    }
    /// Re-run phases `deps` for this (gate) execution; [`KindEvent::Reworked`] follows.
    pub fn rework(&mut self, deps: Vec<usize>, depth: u32) {
        self.m.rework(self.exec, deps, depth);
    }
    /// Emit a journal event line (when journaling, or asked for the decisions).
    pub fn journal(&mut self, kind: &str, fill: impl FnOnce(&mut Map)) {
        if !(self.m.cfg().journaling || self.m.cfg().decisions) {
            return;
        }
        let mut m = Map::default();
        m.insert("type".into(), Value::from(kind));
        m.insert("ts".into(), Value::from(self.m.ts()));
        fill(&mut m);
        self.m.journal_value(Value::Object(m));
    }
    /// Emit a ready-made journal line (when journaling).
    pub fn journal_value(&mut self, v: Value) {
        self.m.journal_value(v);
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
