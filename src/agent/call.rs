//! The call contract between the run engine and a backend: a [`Request`] in, an [`Outcome`]
//! out (never an error), [`Usage`] and [`StopReason`] on the way, and the [`Agent`] trait.

use crate::process::Cancel;

/// The default cap on a rendered prompt (`[limits] max_prompt_bytes`).
pub const DEFAULT_MAX_PROMPT: usize = 16 * 1024 * 1024;

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;

/// A boxed, sendable future (the trait is object-safe).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why a call asked the model (prompt suffixes and dry-run stubs differ).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// A phase's task.
    Task,
    /// A gate's verdict.
    Gate,
    /// A judge or scorer.
    Judge,
}

/// Which tools the agent may use.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum ToolPolicy {
    /// The backend's own default.
    #[default]
    Default,
    /// Only these tools, none of which writes.
    ReadOnly(Vec<String>),
    /// These tools, some of which write, edit or run commands.
    Mutating(Vec<String>),
}

impl ToolPolicy {
    /// Classify a tool list: write/edit/bash-like tools make it mutating.
    pub fn from_tools(tools: &[String]) -> ToolPolicy {
        if tools.is_empty() {
            return ToolPolicy::Default;
        }
        let mutating = tools.iter().any(|t| {
            let t = t.to_ascii_lowercase();
            [
                "write",
                "edit",
                "bash",
                "shell",
                "exec",
                "patch",
                "multiedit",
            ]
            .iter()
            .any(|m| t.contains(m))
        });
        if mutating {
            ToolPolicy::Mutating(tools.to_vec())
        } else {
            ToolPolicy::ReadOnly(tools.to_vec())
        }
    }
}

/// One call to a model.
#[derive(Clone, Debug)]
pub struct Request {
    /// The run's id (`TFC_RUN_ID`).
    pub run_id: String,
    /// The phase's id (`TFC_PHASE_ID`).
    pub phase_id: String,
    /// `<id>`, `<id>#<i>`, `<id>@<n>`, `<id>#judge`, `<id>#round-R-batch-B`, `<flow>/<node>`.
    pub node: String,
    /// 1-based attempt of this call.
    pub attempt: u32,
    /// The agent the flow named.
    pub agent: String,
    /// The agent definition's body (empty without one).
    pub system_prompt: String,
    /// The rendered task.
    pub prompt: String,
    /// The model to ask for (`None`: the backend's default).
    pub model: Option<String>,
    /// The thinking level, for backends that have one.
    pub thinking: Option<String>,
    /// Which tools the agent may use.
    pub tools: ToolPolicy,
    /// The working directory of the call.
    pub cwd: PathBuf,
    /// `None` = no idle watchdog.
    pub idle_timeout: Option<Duration>,
    /// `None` = no wall clock limit.
    pub wall_timeout: Option<Duration>,
    /// Why the model is asked.
    pub purpose: Purpose,
    /// Loop iteration (1-based), for `TFC_ITERATION`.
    pub iteration: Option<u32>,
    /// Fan-out index (0-based), for `TFC_ITEM_INDEX`.
    pub item_index: Option<usize>,
    /// For `output: "json"` phases: a minimal value satisfying the phase's `expect` contract,
    /// which the dry-run backend answers with (SPEC §9.9).
    pub json_stub: Option<crate::value::Value>,
    /// W3C `traceparent` of the call's span when the run is traced: command agents receive
    /// it as `TRACEPARENT`, so their own spans join the run's trace.
    pub traceparent: Option<String>,
}

impl Request {
    /// A first attempt of a plain task call with no limits, model or tools; the phase id is the
    /// node's own part (`review#1` → `review`, `sub/check@2` → `check`). Callers set the rest
    /// with struct-update syntax.
    pub fn new(run_id: &str, node: &str, agent: &str, prompt: &str) -> Request {
        let own = node.rsplit('/').next().unwrap_or(node);
        Request {
            run_id: run_id.into(),
            phase_id: own.split(['#', '@']).next().unwrap_or(own).into(),
            node: node.into(),
            attempt: 1,
            agent: agent.into(),
            system_prompt: String::new(),
            prompt: prompt.into(),
            model: None,
            thinking: None,
            tools: ToolPolicy::Default,
            cwd: PathBuf::from("."),
            idle_timeout: None,
            wall_timeout: None,
            purpose: Purpose::Task,
            iteration: None,
            item_index: None,
            json_stub: None,
            traceparent: None,
        }
    }
}

/// Tokens and money one call used (SPEC §9.3). Serialized as the record form
/// `{input, output, cacheRead, cacheWrite, costUSD, turns}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Input (prompt) tokens, cache reads excluded.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from the provider's cache.
    pub cache_read: u64,
    /// Input tokens written to the provider's cache.
    pub cache_write: u64,
    /// `None` when the backend does not report cost (never a fake 0); written as `null`.
    #[serde(rename = "costUSD")]
    pub cost_usd: Option<f64>,
    /// Model turns (tool-use round trips) the call took.
    pub turns: u32,
    /// **tfc:** agent calls, counted against `budget.maxCalls` (SPEC §8.7): set on a run's
    /// `usage` and `spentBefore` only; written only when not 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub calls: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// Sum two usages; cost stays unknown only if both are unknown.
    pub fn add(&mut self, other: &Usage) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.turns += other.turns;
        self.calls += other.calls;
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
    }

    /// The record form: `{input, output, cacheRead, cacheWrite, costUSD, turns}`, with a null
    /// cost when unknown (never a fake 0).
    pub fn to_value(&self) -> crate::value::Value {
        super::wire::to_value(self)
    }

    /// Tokens that count against `maxTokens` (cache tokens excluded).
    pub fn billable_tokens(&self) -> u64 {
        self.input + self.output
    }
}

/// How a call ended. Serialized as [`StopReason::as_str`] spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// The call answered.
    Completed,
    /// The call failed (the error says why).
    Failed,
    /// No output for the idle timeout.
    IdleTimeout,
    /// The wall clock limit passed.
    WallTimeout,
    /// The run was cancelled.
    Cancelled,
    /// The backend's answer could not be understood.
    ProtocolError,
    /// The backend refused (a permission or tool denial).
    PermissionDenied,
    /// The backend's program is not installed.
    BackendMissing,
}

impl StopReason {
    /// The record spelling (`idle-timeout`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Completed => "completed",
            StopReason::Failed => "failed",
            StopReason::IdleTimeout => "idle-timeout",
            StopReason::WallTimeout => "wall-timeout",
            StopReason::Cancelled => "cancelled",
            StopReason::ProtocolError => "protocol-error",
            StopReason::PermissionDenied => "permission-denied",
            StopReason::BackendMissing => "backend-missing",
        }
    }

    /// Every reason.
    pub const ALL: [StopReason; 8] = [
        StopReason::Completed,
        StopReason::Failed,
        StopReason::IdleTimeout,
        StopReason::WallTimeout,
        StopReason::Cancelled,
        StopReason::ProtocolError,
        StopReason::PermissionDenied,
        StopReason::BackendMissing,
    ];

    /// The reason spelled `s`, if any.
    pub fn parse(s: &str) -> Option<StopReason> {
        StopReason::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

/// The result of one call.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The answer (on failure: whatever partial output there was).
    pub output: String,
    /// Tokens and cost.
    pub usage: Usage,
    /// The model that answered, when the backend says.
    pub model: Option<String>,
    /// How the call ended.
    pub stop: StopReason,
    /// Why it failed (`None` on success).
    pub error: Option<String>,
    /// The process's exit code (process backends).
    pub exit_code: Option<i32>,
    /// The end of the process's stderr (≤ 64 KiB).
    pub stderr: String,
    /// Non-fatal notes for the phase record (e.g. `output truncated (finish_reason=length)`).
    pub warnings: Vec<String>,
}

impl Outcome {
    /// A completed call answering `output`.
    pub fn ok(output: impl Into<String>) -> Outcome {
        Outcome {
            output: output.into(),
            usage: Usage::default(),
            model: None,
            stop: StopReason::Completed,
            error: None,
            exit_code: None,
            stderr: String::new(),
            warnings: Vec::new(),
        }
    }

    /// A call that ended with `stop` and `error`.
    pub fn failed(stop: StopReason, error: impl Into<String>) -> Outcome {
        Outcome {
            stop,
            error: Some(error.into()),
            ..Outcome::ok("")
        }
    }

    /// Completed with no error.
    pub fn is_ok(&self) -> bool {
        self.stop == StopReason::Completed && self.error.is_none()
    }
}

/// The error of a call its idle watchdog stopped after `ms` without output (SPEC §8.6).
pub(crate) fn idle_timeout_error(ms: u128) -> String {
    format!("Subagent produced no output for {ms}ms (idle timeout)")
}

/// A model backend. Object-safe; cancellable through [`Cancel`].
pub trait Agent: Send + Sync {
    /// The backend's name as shown in run records (`claude`, `replay`, `command`, …).
    fn name(&self) -> &str;
    /// Make one call. Must return promptly (with [`StopReason::Cancelled`]) once `cancel` fires.
    fn call<'a>(&'a self, request: Request, cancel: Cancel) -> BoxFuture<'a, Outcome>;
    /// Does this backend report token counts? (SPEC §7.4 E0702)
    fn reports_tokens(&self) -> bool {
        false
    }
    /// Does this backend report cost in USD?
    fn reports_cost(&self) -> bool {
        false
    }
    /// Can this backend run here at all (its program found)? Checked before a run starts, so
    /// a missing CLI is a preflight error (E0701), not a failed phase. No process is spawned.
    fn available(&self) -> Result<(), String> {
        Ok(())
    }
    /// Does it confine writes (a sandbox), so mutating tools need no opt-in? (E0703)
    fn sandboxed(&self) -> bool {
        false
    }
    /// Can it honour a tool list? HTTP backends cannot (W0702).
    fn supports_tools(&self) -> bool {
        true
    }
    /// Does an agent's system prompt reach a model? Not through replay or dry-run, so a
    /// missing definition file does not matter there (W0701).
    fn uses_system_prompt(&self) -> bool {
        true
    }
}
