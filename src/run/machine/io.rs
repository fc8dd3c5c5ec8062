//! What goes into the run machine ([`Input`]) and what comes out of it ([`Command`]). Every
//! input is a plain, serde-derived value: the journal keeps one line per input, and replaying
//! those lines into a fresh machine reproduces the run's state (SPEC §14.1).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::agent::{Purpose, StopReason, Usage};
use crate::value::Value;

use super::super::record::RunRecord;

/// One input of the machine: what happened, and when (milliseconds since the Unix epoch).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Input {
    /// The time of the input; the only clock the machine knows.
    pub at: u64,
    /// What happened.
    pub what: Event,
}

/// What happened outside the machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Event {
    /// The run starts.
    Start,
    /// One attempt of an agent call ended.
    CallEnded {
        /// The operation the call was started as.
        op: u64,
        /// The node path of the call.
        node: String,
        /// The 1-based attempt.
        attempt: u32,
        /// How it ended.
        end: CallEnd,
    },
    /// A script process ended.
    ScriptEnded {
        /// The operation the script was started as.
        op: u64,
        /// Its result.
        result: ScriptOutcome,
    },
    /// A timer expired.
    TimerFired {
        /// The timer's operation.
        op: u64,
    },
    /// A decision on an approval the machine asked for.
    Approval {
        /// The operation of the question.
        op: u64,
        /// The approval's node path.
        phase: String,
        /// `approve`, `edit` or `reject`.
        decision: Decision,
        /// The edit note or the rejection reason.
        note: Option<String>,
        /// The decision came as a Temporal signal (`tfc approve`), not from the terminal.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        by_signal: bool,
    },
    /// The run was interrupted (Ctrl-C, or the caller's cancel).
    Interrupt,
    /// Told to a shard machine: the run it belongs to spent past a cap; it starts no more
    /// calls (those running finish).
    Capped,
    /// A shard of a map's calls ended ([`Command::StartShard`]).
    ShardEnded {
        /// The shard's operation.
        op: u64,
        /// What it gives back.
        result: Box<ShardResult>,
    },
    /// A phase's working directory was prepared.
    DirReady {
        /// The operation that asked for it.
        op: u64,
        /// The directory, or why the phase cannot run.
        path: Result<PathBuf, String>,
        /// A fallback warning.
        warning: Option<String>,
    },
    /// A phase's context files were read.
    ContextRead {
        /// The operation that asked for them.
        op: u64,
        /// The pre-read prompt prefix.
        text: String,
    },
    /// A `code-compiles` scorer finished.
    ScorerEnded {
        /// The operation that asked for it.
        op: u64,
        /// Whether the code compiled.
        pass: bool,
        /// The first line of the complaint.
        detail: Option<String>,
    },
    /// A saved flow was read (`None`: not found).
    FlowLoaded {
        /// The operation that asked for it.
        op: u64,
        /// The flow's source text.
        text: Option<String>,
    },
    /// A cache lookup ended ([`Command::CacheLookup`]).
    CacheChecked {
        /// The operation that asked.
        op: u64,
        /// The phase's key (with its fingerprint digest, when it has fingerprints).
        key: String,
        /// The reusable `done` state found, if any.
        hit: Option<Box<super::hit::CacheHit>>,
        /// A cache entry that could not be used (a miss all the same).
        warning: Option<String>,
    },
    /// The agents of a sub-flow were resolved.
    AgentsResolved {
        /// The operation that asked for them.
        op: u64,
        /// The sub-run's id.
        run_id: String,
        /// Agent name → backend name, for the sub-run's record.
        backends: Vec<(String, String)>,
        /// Why an agent cannot be used.
        error: Option<String>,
    },
}

/// An approval decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    /// Go on.
    Approve,
    /// Go on, with a note that becomes the output.
    Edit,
    /// Stop the run.
    Reject,
}

/// How one attempt of a call ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum CallEnd {
    /// The backend answered (or failed).
    Outcome(Box<CallOutcome>),
    /// No backend serves the agent; nothing was called.
    NoBackend {
        /// What to say.
        message: String,
    },
    /// The call could not be placed (its branch directory is unusable).
    Refused {
        /// What to say.
        message: String,
    },
    /// The backend panicked (a bug).
    Panicked {
        /// The panic message.
        message: String,
    },
}

/// A backend's answer, as plain data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallOutcome {
    /// The answer (or partial output).
    pub output: String,
    /// Tokens and cost.
    pub usage: UsageData,
    /// The model that answered (else the one requested).
    pub model: Option<String>,
    /// Why the call stopped (`StopReason::as_str`).
    pub stop: String,
    /// Why it failed.
    pub error: Option<String>,
    /// The end of the process's stderr.
    pub stderr: String,
    /// Non-fatal notes.
    pub warnings: Vec<String>,
    /// The configured backend name.
    pub backend: String,
    /// How long the attempt took.
    pub elapsed_ms: u64,
    /// The process's exit code (process backends): a failed call's trace class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
}

impl CallOutcome {
    /// The stop reason.
    pub fn stop(&self) -> StopReason {
        StopReason::parse(&self.stop).unwrap_or(StopReason::Failed)
    }

    /// Completed without an error.
    pub fn is_ok(&self) -> bool {
        self.stop() == StopReason::Completed && self.error.is_none()
    }
}

/// [`Usage`] as plain data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UsageData {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Cache reads.
    pub cache_read: u64,
    /// Cache writes.
    pub cache_write: u64,
    /// Cost in dollars, when known.
    pub cost_usd: Option<f64>,
    /// Turns.
    pub turns: u32,
}

impl From<Usage> for UsageData {
    fn from(u: Usage) -> UsageData {
        UsageData {
            input: u.input,
            output: u.output,
            cache_read: u.cache_read,
            cache_write: u.cache_write,
            cost_usd: u.cost_usd,
            turns: u.turns,
        }
    }
}

impl From<UsageData> for Usage {
    fn from(u: UsageData) -> Usage {
        Usage {
            input: u.input,
            output: u.output,
            cache_read: u.cache_read,
            cache_write: u.cache_write,
            cost_usd: u.cost_usd,
            turns: u.turns,
            calls: 0,
        }
    }
}

/// How a script process ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScriptOutcome {
    /// It could not be started: why.
    pub spawn_error: Option<String>,
    /// `exited`, `timeout` or `cancelled`.
    pub end: ScriptEnd,
    /// The exit code.
    pub code: i32,
    /// Stdout (its first MiB).
    pub stdout: String,
    /// Whether stdout was cut.
    pub stdout_truncated: bool,
    /// The head of stderr.
    pub stderr: String,
    /// How long it ran.
    pub elapsed_ms: u64,
}

impl ScriptOutcome {
    /// A script that could not be started, and why.
    pub fn not_started(why: String) -> ScriptOutcome {
        ScriptOutcome {
            spawn_error: Some(why),
            end: ScriptEnd::Exited,
            code: -1,
            stdout: String::new(),
            stdout_truncated: false,
            stderr: String::new(),
            elapsed_ms: 0,
        }
    }
}

/// How a script stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScriptEnd {
    /// It exited on its own.
    Exited,
    /// Its timeout stopped it.
    Timeout,
    /// The run's abort stopped it.
    Cancelled,
}

/// What the machine asks its driver to do.
#[derive(Debug)]
pub enum Command {
    /// Start one attempt of an agent call; its end comes back as [`Event::CallEnded`].
    StartCall {
        /// The operation id.
        op: u64,
        /// What to ask.
        request: Box<CallRequest>,
    },
    /// Run a batch of a map's item calls apart (on Temporal: a child workflow hosting
    /// [`Machine::shard`](super::Machine::shard)); its end comes back as
    /// [`Event::ShardEnded`]. Only a run whose configuration sets `shard_items` asks this.
    StartShard {
        /// The operation id.
        op: u64,
        /// The batch.
        shard: Box<ShardRequest>,
    },
    /// The run's spend passed a cap while shard `op` is out: tell it ([`Event::Capped`]).
    CapShard {
        /// The shard's operation.
        op: u64,
    },
    /// A shard machine is over: its result goes back to the run that asked for it.
    EndShard(Box<ShardResult>),
    /// Stop a call, script or shard; its end still comes back.
    Cancel {
        /// The operation to stop.
        op: u64,
    },
    /// Run a script; its end comes back as [`Event::ScriptEnded`].
    StartScript {
        /// The operation id.
        op: u64,
        /// What to run.
        script: Box<ScriptRequest>,
    },
    /// Fire [`Event::TimerFired`] after `ms`.
    StartTimer {
        /// The operation id.
        op: u64,
        /// The delay.
        ms: u64,
    },
    /// Forget a timer (nothing comes back).
    CancelTimer {
        /// The timer.
        op: u64,
    },
    /// Ask a person (on the terminal) to decide an approval.
    AskApproval {
        /// The operation id.
        op: u64,
        /// The approval's node path.
        phase: String,
        /// The question.
        message: String,
        /// The upstream output shown with it.
        upstream: String,
        /// The approval's deadline (epoch ms) and what decides at it (SPEC §8.8): the
        /// machine's own timer fires then; a driver that takes decisions from outside (the
        /// Temporal workflow) refuses those that come after it.
        deadline: Option<(u64, crate::flow::OnTimeout)>,
    },
    /// Prepare a phase's working directory ([`Event::DirReady`]).
    PrepareDir {
        /// The operation id.
        op: u64,
        /// The phase id (dedicated directories and worktrees are named after it).
        phase: String,
        /// What directory.
        dir: DirSpec,
        /// The invocation directory (relative paths resolve against it).
        base: PathBuf,
        /// The run id (dedicated directories and worktrees are named after it).
        run_id: String,
    },
    /// The phase prepared by operation `op` ended: a temporary directory goes.
    ReleaseDir {
        /// The operation of the [`Command::PrepareDir`].
        op: u64,
    },
    /// Read context files into the pre-read prefix ([`Event::ContextRead`]).
    ReadContext {
        /// The operation id.
        op: u64,
        /// The paths, relative to the invocation directory.
        paths: Vec<String>,
        /// `contextLimit`: characters per file.
        limit: usize,
        /// The invocation directory they are relative to.
        base: PathBuf,
        /// The node of the phase that reads them (its trace span).
        node: String,
    },
    /// Compile a candidate ([`Event::ScorerEnded`]).
    RunScorer {
        /// The operation id.
        op: u64,
        /// `javascript` or `typescript`.
        language: String,
        /// The code.
        code: String,
    },
    /// Read a saved flow ([`Event::FlowLoaded`]).
    LoadFlow {
        /// The operation id.
        op: u64,
        /// Its name.
        name: String,
        /// Where saved flows are looked up.
        cwd: PathBuf,
    },
    /// Resolve a sub-flow's agents ([`Event::AgentsResolved`]).
    ResolveAgents {
        /// The operation id.
        op: u64,
        /// The agent names.
        names: Vec<String>,
        /// The sub-flow's name (its run id is made from it).
        flow: String,
    },
    /// Look for a reusable `done` state of a phase ([`Event::CacheChecked`]): the driver
    /// completes the key (the fingerprint digest), then checks the resumed run's states
    /// (`run_only`) and the cross-run store (`cross_run`).
    CacheLookup {
        /// The operation id.
        op: u64,
        /// The phase's node path.
        node: String,
        /// The key's parts without the fingerprint part.
        parts: Vec<String>,
        /// `cache.fingerprint` (cross-run only).
        fingerprints: Vec<String>,
        /// Look at the resumed run's states.
        run_only: bool,
        /// Look in `.tfc/cache/`.
        cross_run: bool,
        /// `cache.ttl` in ms.
        ttl_ms: Option<u64>,
        /// Where fingerprints resolve.
        cwd: PathBuf,
    },
    /// Keep a `done` phase state in the cross-run cache.
    CacheStore {
        /// The key.
        key: String,
        /// The phase record (SPEC §11.1 form).
        record: Value,
    },
    /// A progress note (boxed: a large one, and commands are moved often).
    Progress(Box<Progress>),
    /// A journal line.
    Journal(Line),
    /// The record changed: rewrite `run.json` when the throttle allows.
    Save,
    /// The run is over.
    Finish(Box<RunRecord>),
}

/// A journal line: an event the run reports, or one of the machine's inputs.
#[derive(Debug)]
pub enum Line {
    /// An event line (`run-start`, `phase-start`, `agent-call`, …).
    Event(Value),
    /// An input line (`{"type":"input", …}`).
    Input(Box<Input>),
    /// A ready-made line, compact JSON (a shard's `agent-call` lines).
    Raw(String),
}

/// A progress note, owned.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// Node path.
    pub phase: String,
    /// `running`, `done`, `failed`, `skipped`, `pending` or `warning`.
    pub status: &'static str,
    /// The phase's kind (`None` for a warning).
    pub kind: Option<crate::flow::PhaseType>,
    /// Error, skip reason, short note or warning text.
    pub detail: Option<String>,
    /// Agent calls so far, as [`crate::run::summary`] counts them (a script's run is none).
    pub attempts: u32,
    /// Billable tokens so far.
    pub tokens: u64,
    /// Cost so far.
    pub cost_usd: Option<f64>,
    /// What a live view shows besides the status: items, iterations, verdicts, reuse.
    pub facts: Facts,
}

/// The state of a phase a progress display shows besides its status (display only: nothing
/// reads it back).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Facts {
    /// An approval waiting for its decision (a terminal prompt may be asking).
    pub approval: bool,
    /// Fan-out items (`map`, `parallel`, `tournament`, `race`): (ended, total).
    pub items: Option<(usize, usize)>,
    /// How the items ended, once the phase's record lists them (an ended phase's line tells
    /// `2/3 items, 1 aborted`, never an aborted item as one of the items).
    pub tally: Option<crate::run::summary::ItemTally>,
    /// A loop: (iteration running or last made, `maxIterations`).
    pub iteration: Option<(u32, u32)>,
    /// A loop that ended: why (`until`, `converged`, `max`, `budget`, `failed`).
    pub stop: Option<&'static str>,
    /// A gate's latest verdict: `pass` or `block`.
    pub verdict: Option<&'static str>,
    /// Why the gate blocked.
    pub reason: Option<String>,
    /// A gate with `onBlock: "retry"`: (rework round, `retry.max`); while a rework runs,
    /// the round in progress.
    pub rework: Option<(u32, u32)>,
    /// `run-only` or `cross-run` when the phase's state was reused instead of run.
    pub cache_hit: Option<&'static str>,
    /// The record's `attempts` (SPEC §11.1: a script's run counts 1, a flow phase 0), as
    /// the phase's trace span tells it — [`Progress::attempts`] counts agent calls instead.
    pub record_attempts: u32,
}

impl Facts {
    /// The facts of `phase` from its record; `live`: what the running kind adds (a loop's
    /// iteration, a gate's rework round in progress).
    pub(crate) fn of(
        phase: &crate::flow::Phase,
        rec: &super::super::record::PhaseRecord,
        live: Option<u32>,
    ) -> Facts {
        use crate::flow::{OnBlock, PhaseKind};
        let mut f = Facts {
            approval: matches!(phase.kind, PhaseKind::Approval(_)),
            cache_hit: rec.cache_hit,
            record_attempts: rec.attempts,
            ..Facts::default()
        };
        if let Some(items) = &rec.items {
            let ended = items.iter().filter(|i| i.status.ended()).count();
            f.items = Some((ended, items.len()));
            f.tally = Some(crate::run::summary::ItemTally::count(
                items
                    .iter()
                    .map(|i| (i.status.as_str(), i.error.as_deref())),
            ));
        }
        match &phase.kind {
            PhaseKind::Loop(k) => {
                let max = k.max_iterations.floor().clamp(1.0, 100.0) as u32;
                match &rec.loop_info {
                    Some(l) => {
                        f.iteration = Some((l.iterations, max));
                        f.stop = Some(l.stop);
                    }
                    None => f.iteration = live.map(|i| (i, max)),
                }
            }
            PhaseKind::Gate(k) => {
                if let Some(g) = &rec.gate {
                    f.verdict = Some(g.verdict);
                    f.reason = g.reason.clone();
                }
                if k.on_block == OnBlock::Retry {
                    let max = phase
                        .retry
                        .as_ref()
                        .map_or(1, |r| r.value.max.floor().max(0.0) as u32);
                    let round = live.or(rec.gate.as_ref().and_then(|g| g.rounds));
                    f.rework = round.filter(|&r| r > 0).map(|r| (r, max));
                }
            }
            _ => {}
        }
        f
    }
}

/// A working directory to prepare (SPEC §3.1 `cwd`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum DirSpec {
    /// A directory the flow names: it must exist.
    Existing {
        /// Relative to the invocation directory.
        path: String,
        /// How the flow wrote it, for the message.
        shown: String,
    },
    /// A fresh temporary directory, removed when the phase ends.
    Temp,
    /// `.tfc/work/<runId>/<phaseId>/`, kept.
    Dedicated,
    /// A detached git worktree in `.tfc/worktrees/<runId>/<phaseId>/`, kept.
    Worktree,
}

/// Where a call runs.
#[derive(Clone, Debug, PartialEq)]
pub enum CallDir {
    /// This directory.
    At(std::sync::Arc<std::path::Path>),
    /// A parallel branch's literal `cwd`, to check before calling.
    Branch {
        /// The branch index.
        index: usize,
        /// The path as written.
        path: String,
        /// The phase id, for the message.
        phase: String,
        /// The invocation directory it is relative to.
        base: PathBuf,
    },
}

/// One attempt of an agent call, as the machine decided it.
#[derive(Clone, Debug)]
pub struct CallRequest {
    /// The run id.
    pub run_id: String,
    /// The phase id.
    pub phase_id: String,
    /// The full node path.
    pub node: String,
    /// 1-based attempt.
    pub attempt: u32,
    /// The agent name.
    pub agent: String,
    /// The full prompt.
    pub prompt: String,
    /// The phase's `model` (a role is mapped by the driver).
    pub model: Option<String>,
    /// The phase's `thinking`.
    pub thinking: Option<String>,
    /// The phase's tools (empty: the agent's).
    pub tools: Vec<String>,
    /// Where it runs.
    pub cwd: CallDir,
    /// Idle timeout, `None` = none.
    pub idle_timeout_ms: Option<u64>,
    /// Wall timeout.
    pub wall_timeout_ms: Option<u64>,
    /// Why it is made.
    pub purpose: Purpose,
    /// Loop iteration.
    pub iteration: Option<u32>,
    /// Fan-out index.
    pub item_index: Option<usize>,
    /// The dry-run JSON stub.
    pub json_stub: Option<Value>,
}

/// A script to run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ScriptRequest {
    /// Program and arguments.
    pub argv: Vec<String>,
    /// Stdin.
    pub input: Option<String>,
    /// Where.
    pub cwd: PathBuf,
    /// Wall timeout.
    pub timeout_ms: u64,
    /// `TFC_RUN_ID`.
    pub run_id: String,
    /// `TFC_PHASE_ID`.
    pub phase_id: String,
    /// The phase's node path (`id`, `flowPhase/id` in a sub-flow), for its trace span.
    #[serde(default)]
    pub node: String,
    /// `TRACEPARENT` for the script, when the run is traced (set by the driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
}

/// A batch of one map's item calls, for a child to run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardRequest {
    /// The map phase's index in the flow.
    pub phase: usize,
    /// The map's width: calls at once.
    pub width: usize,
    /// The calls, in item order.
    pub calls: Vec<ShardCall>,
    /// The run's spend when the batch was handed over: tokens.
    pub spent_tokens: u64,
    /// … and cost, in micro-dollars.
    pub spent_cost_micros: u64,
    /// The calls (attempts) the shard may start, promised to it by the run's call cap
    /// (SPEC §8.7); `None` without a cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_calls: Option<u64>,
}

/// One item's call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardCall {
    /// The item index.
    pub slot: u32,
    /// The node path without a sub-flow prefix (`map#3`).
    pub node: String,
    /// The agent.
    pub agent: String,
    /// The whole prompt.
    pub prompt: String,
    /// The phase's output contract applies.
    pub contract: bool,
    /// Where the call runs.
    pub cwd: PathBuf,
}

/// What a shard gives back: each item's end in the order they ended, the journal lines of
/// its calls, and what they spent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ShardResult {
    /// The items, in the order they ended.
    pub items: Vec<ShardItem>,
    /// The `agent-call` journal lines of the shard's attempts, as compact JSON.
    pub lines: Vec<String>,
    /// Tokens the shard spent (as the budget counts them).
    pub tokens: u64,
    /// Cost the shard spent, in micro-dollars.
    pub cost_micros: u64,
    /// The calls (attempts) the shard started.
    #[serde(default)]
    pub calls: u64,
    /// The shard refused a call at the calls promised to it: the run reached its call cap.
    #[serde(default)]
    pub refused: bool,
}

/// How one item of a shard ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardItem {
    /// The item index.
    pub slot: u32,
    /// How.
    pub end: ShardEnd,
}

/// How one item of a shard ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "end", rename_all = "kebab-case")]
pub enum ShardEnd {
    /// Its call ran (every attempt of it).
    Called {
        /// It succeeded.
        ok: bool,
        /// The answer, or the last attempt's partial output.
        output: String,
        /// Why it failed.
        error: Option<String>,
        /// Attempts made.
        attempts: u32,
        /// Their usage.
        usage: UsageData,
        /// The wall timeout stopped it.
        timed_out: bool,
        /// The abort stopped it.
        aborted: bool,
        /// The model that answered.
        model: Option<String>,
        /// Warnings of its attempts.
        warnings: Vec<String>,
    },
    /// The budget was exceeded before it started.
    OverBudget,
    /// The run was aborted before it started.
    Aborted,
}

impl ShardEnd {
    /// The end of every call (by slot) of a shard that could not run at all.
    pub fn all_failed(slots: impl IntoIterator<Item = u32>, error: &str) -> ShardResult {
        ShardResult {
            items: slots
                .into_iter()
                .map(|slot| ShardItem {
                    slot,
                    end: ShardEnd::Called {
                        ok: false,
                        output: String::new(),
                        error: Some(error.to_owned()),
                        attempts: 0,
                        usage: UsageData::default(),
                        timed_out: false,
                        aborted: false,
                        model: None,
                        warnings: Vec::new(),
                    },
                })
                .collect(),
            ..ShardResult::default()
        }
    }
}
