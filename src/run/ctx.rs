//! What every phase worker shares: the flow, the backends, the options, the spend meter, the
//! abort signal, and the channel back to the coordinator.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::agent::{Cancel, ResolvedAgent};
use crate::flow::Flow;
use crate::value::Value;

use super::meter::Meter;
use super::record::PhaseRecord;
use super::scope::PhaseScope;

/// How a run behaves (flags of `tfc run`, or the library caller's choices).
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// `--concurrency N`: overrides the flow's.
    pub concurrency: Option<usize>,
    /// `--dry-run`: scripts are listed, not run (unless `dry_run_scripts`), approvals approve.
    pub dry_run: bool,
    pub dry_run_scripts: bool,
    pub approve: Vec<String>,
    pub approve_all: bool,
    pub reject: Vec<String>,
    pub reject_reason: Option<String>,
    /// Ask on the terminal for undecided approvals.
    pub interactive: bool,
    pub max_usd: Option<f64>,
    pub max_tokens: Option<f64>,
    /// Where `.tfc/` lives; `None` = do not persist the run.
    pub project_root: Option<PathBuf>,
    /// The invocation directory (relative `cwd`s and context paths resolve against it).
    pub cwd: Option<PathBuf>,
    /// `[defaults] idle_timeout_ms` from the configuration.
    pub default_idle_timeout_ms: Option<u64>,
    /// Run id to use (tests); generated when `None`.
    pub run_id: Option<String>,
    /// Told about every phase transition (the CLI's progress lines).
    pub progress: Option<ProgressSink>,
    /// `[limits] max_output_bytes`: a call that returns more fails (default 16 MiB; process
    /// backends stop reading and kill the process once over it).
    pub max_output_bytes: Option<usize>,
    /// `[limits] max_prompt_bytes`: a prompt that would weigh more fails its phase without a
    /// call (default 16 MiB).
    pub max_prompt_bytes: Option<usize>,
}

impl RunOptions {
    pub fn max_output(&self) -> usize {
        self.max_output_bytes
            .unwrap_or(crate::process::DEFAULT_MAX_OUTPUT)
    }

    pub fn max_prompt(&self) -> usize {
        self.max_prompt_bytes.unwrap_or(super::DEFAULT_MAX_PROMPT)
    }
}

/// Run a future, turning a panic inside it (a bug in tfc or in an in-process backend) into an
/// error message instead of taking the whole run down.
pub async fn caught<T>(fut: impl std::future::Future<Output = T>) -> Result<T, String> {
    futures_lite::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(fut))
        .await
        .map_err(|payload| {
            payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a phase worker panicked".to_owned())
        })
}

/// One phase transition, for progress displays.
#[derive(Clone, Debug)]
pub struct ProgressNote<'a> {
    /// Node path of the phase (`id`, or `flowPhase/id` in a sub-flow).
    pub phase: &'a str,
    /// `running`, `done`, `failed`, `skipped`, `pending`; or `warning`: a run-time surprise
    /// told as it happens (an unresolved placeholder left intact, a `when` that did not
    /// parse, a violated output contract), its full text in `detail`. The phase's record
    /// keeps its own warning as well.
    pub status: &'a str,
    /// The error, skip reason, a short note, or the warning.
    pub detail: Option<&'a str>,
    pub attempts: u32,
    pub tokens: u64,
    pub cost_usd: Option<f64>,
}

/// A callback for progress notes.
#[derive(Clone)]
pub struct ProgressSink(pub Arc<dyn Fn(&ProgressNote<'_>) + Send + Sync>);

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressSink")
    }
}

/// A message from a worker to the coordinator.
pub enum Event {
    /// A journal record (agent-call, script, condition, approval, warning).
    Journal(Value),
    /// A gate asks for its direct dependencies to be re-run (onBlock: retry).
    Rework {
        gate: usize,
        deps: Vec<usize>,
        /// The gate's own rework depth; its dependencies re-run one deeper.
        depth: u32,
        reply: async_channel::Sender<Option<PhaseScope>>,
    },
    /// One re-run dependency of a rework finished.
    Reworked {
        job: usize,
        record: Box<PhaseRecord>,
    },
    /// A phase worker finished.
    Finished {
        phase: usize,
        record: Box<PhaseRecord>,
        halt: Halt,
    },
}

/// What a finished phase asks of the whole run.
#[derive(Clone, Debug, PartialEq)]
pub enum Halt {
    None,
    /// A gate blocked or an approval was rejected: `Gate blocked[: reason]`.
    Block(Option<String>),
    /// An approval awaits a decision.
    AwaitApproval,
    /// The phase worker crashed (a bug in tfc): the run fails.
    Crash(String),
}

/// Shared, read-only run context (plus the meter).
pub struct Shared {
    pub flow: Arc<Flow>,
    pub agents: HashMap<String, ResolvedAgent>,
    pub run_id: String,
    pub opts: RunOptions,
    pub meter: Arc<Meter>,
    pub cancel: Cancel,
    pub events: async_channel::Sender<Event>,
    /// The invocation directory.
    pub cwd: PathBuf,
    /// Effective arguments (provided + defaults).
    pub args: Arc<Value>,
    /// Node path prefix inside sub-flows (`<flowPhaseId>/`).
    pub node_prefix: String,
    /// Saved-flow names on the way here (recursion detection).
    pub flow_stack: Vec<String>,
    /// Nesting depth of sub-flows.
    pub depth: usize,
    /// Inside a flow generated at run time: fan-outs are capped.
    pub generated: bool,
    /// Prepended to every prompt: a parent flow phase's pre-read, inside a sub-flow.
    pub prompt_prefix: String,
    /// Where workers run: one executor per top-level run, driven by the run itself.
    pub executor: Arc<smol::Executor<'static>>,
    /// Whether journal records are kept (a run with a store); building them costs a hash.
    pub journaling: bool,
    /// The roster, for sub-flows whose agents were not resolved up front.
    pub roster: Arc<dyn crate::agent::Roster>,
}

impl Shared {
    /// Send a journal record (the coordinator appends it).
    pub fn journal(&self, record: Value) {
        let _ = self.events.try_send(Event::Journal(record));
    }

    pub fn node(&self, local: &str) -> String {
        format!("{}{local}", self.node_prefix)
    }

    /// Tell the progress display about a run-time surprise at node `local` as it happens.
    pub fn notice(&self, local: &str, message: &str) {
        if let Some(sink) = &self.opts.progress {
            let node = self.node(local);
            (sink.0)(&ProgressNote {
                phase: &node,
                status: "warning",
                detail: Some(message),
                attempts: 0,
                tokens: 0,
                cost_usd: None,
            });
        }
    }
}
