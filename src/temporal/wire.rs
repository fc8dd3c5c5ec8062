//! What crosses Temporal: the workflow's input, an approval decision (update `decide`,
//! signal `approval`), and the machine's requests and results as plain serde data.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::agent::Purpose;
use crate::run::machine::{CallDir, CallRequest, Decision};

/// The default task queue.
pub const DEFAULT_TASK_QUEUE: &str = "tfc";

/// Items per shard of a large map, unless `[engine] shard_items` says otherwise.
pub const DEFAULT_SHARD_ITEMS: usize = 500;

/// The build id of workers and the version runs are pinned to.
pub const BUILD_ID: &str = env!("CARGO_PKG_VERSION");

/// The input of workflow `TfcRun`: everything the machine is built from.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunInput {
    /// The run id (also the workflow id).
    pub run_id: String,
    /// The flow's name (the default name when the definition has none).
    pub flow_name: String,
    /// The flow's definition, as JSON text.
    pub def: String,
    /// The effective arguments, a JSON object.
    pub args: String,
    /// The machine's configuration (its journal form), JSON.
    pub config: String,
    /// `run.json` members besides the record (`flowDefHash`, `gitCommit`, `launch`), JSON.
    pub meta: String,
    /// The tfc version that started the run.
    pub version: String,
    /// The run resumes another: how its reusable states are planned (workers plan them
    /// again from the parent's directory).
    #[serde(default)]
    pub resume: Option<crate::run::resume::Origin>,
    /// The run is traced: its trace's plan (ids, caller, link, content), JSON; the worker
    /// holding the workflow exports its spans.
    #[serde(default)]
    pub trace: Option<String>,
}

/// The input of child workflow `TfcShard`: the run it belongs to, and its batch of calls.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShardInput {
    /// The run's own input (the shard's machine is built from the same flow and
    /// configuration).
    pub run: RunInput,
    /// The calls.
    pub shard: crate::run::machine::ShardRequest,
}

/// Signal `approval`: a decision on an approval phase the run waits for.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ApprovalSignal {
    /// The approval's node path.
    pub phase: String,
    /// `approve`, `edit` or `reject`.
    pub decision: Decision,
    /// The note (edit) or the reason (reject).
    pub note: Option<String>,
}

/// SPEC §8.8's refusal of a decision on approval `phase` (node path) after its deadline
/// `expires_at` (RFC 3339), which `on_timeout` decided.
pub fn expired_refusal(phase: &str, expires_at: &str, on_timeout: &str) -> String {
    format!("approval '{phase}' expired at {expires_at}; its onTimeout ({on_timeout}) decides")
}

/// One agent call attempt, as data.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CallWire {
    pub run_id: String,
    pub phase_id: String,
    pub node: String,
    pub attempt: u32,
    pub agent: String,
    pub prompt: String,
    pub model: Option<String>,
    pub thinking: Option<String>,
    pub tools: Vec<String>,
    pub cwd: Option<PathBuf>,
    pub branch: Option<(usize, String, String, PathBuf)>,
    pub idle_timeout_ms: Option<u64>,
    pub wall_timeout_ms: Option<u64>,
    pub purpose: u8,
    pub iteration: Option<u32>,
    pub item_index: Option<usize>,
    pub json_stub: Option<String>,
    /// `TRACEPARENT` for the agent when the run is traced (naming the span recorded for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
}

impl CallWire {
    pub fn from_request(r: CallRequest) -> CallWire {
        let (cwd, branch) = match r.cwd {
            CallDir::At(p) => (Some(p.to_path_buf()), None),
            CallDir::Branch {
                index,
                path,
                phase,
                base,
            } => (None, Some((index, path, phase, base))),
        };
        CallWire {
            run_id: r.run_id,
            phase_id: r.phase_id,
            node: r.node,
            attempt: r.attempt,
            agent: r.agent,
            prompt: r.prompt,
            model: r.model,
            thinking: r.thinking,
            tools: r.tools,
            cwd,
            branch,
            idle_timeout_ms: r.idle_timeout_ms,
            wall_timeout_ms: r.wall_timeout_ms,
            purpose: match r.purpose {
                Purpose::Task => 0,
                Purpose::Gate => 1,
                Purpose::Judge => 2,
            },
            iteration: r.iteration,
            item_index: r.item_index,
            json_stub: r.json_stub.map(|v| v.to_json()),
            traceparent: None,
        }
    }

    pub fn into_request(self) -> CallRequest {
        let cwd = match (self.cwd, self.branch) {
            (_, Some((index, path, phase, base))) => CallDir::Branch {
                index,
                path,
                phase,
                base,
            },
            (Some(p), None) => CallDir::At(std::sync::Arc::from(p.as_path())),
            (None, None) => CallDir::At(std::sync::Arc::from(std::path::Path::new("."))),
        };
        CallRequest {
            run_id: self.run_id,
            phase_id: self.phase_id,
            node: self.node,
            attempt: self.attempt,
            agent: self.agent,
            prompt: self.prompt,
            model: self.model,
            thinking: self.thinking,
            tools: self.tools,
            cwd,
            idle_timeout_ms: self.idle_timeout_ms,
            wall_timeout_ms: self.wall_timeout_ms,
            purpose: match self.purpose {
                1 => Purpose::Gate,
                2 => Purpose::Judge,
                _ => Purpose::Task,
            },
            iteration: self.iteration,
            item_index: self.item_index,
            json_stub: self
                .json_stub
                .and_then(|t| crate::json::parse(&t).root.map(|r| r.to_value())),
        }
    }
}

/// A directory to prepare.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DirWire {
    pub dir: crate::run::machine::DirSpec,
    pub base: PathBuf,
    pub phase: String,
    pub run_id: String,
    pub project_root: Option<PathBuf>,
}

/// A prepared directory: its path (or why the phase cannot run), a warning, and whether it
/// is temporary (removed when the phase ends).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DirReady {
    pub path: Result<PathBuf, String>,
    pub warning: Option<String>,
    pub temp: bool,
}

/// A cache lookup (with fingerprints).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LookupWire {
    pub op: u64,
    pub node: String,
    pub parts: Vec<String>,
    pub fingerprints: Vec<String>,
    pub cross_run: bool,
    pub ttl_ms: Option<u64>,
    pub cwd: PathBuf,
    pub project_root: Option<PathBuf>,
    pub now: u64,
    /// A run-only lookup of a resumed run: how its parent's states are planned.
    #[serde(default)]
    pub resume: Option<crate::run::resume::Origin>,
}

/// A batch of store writes: journal lines appended at `offset`, and `run.json` rewritten.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StoreBatch {
    pub dir: PathBuf,
    pub offset: u64,
    pub lines: String,
    pub record: Option<String>,
    /// Outputs too large for `run.json`: path relative to `dir` → content, written first.
    #[serde(default)]
    pub files: Vec<(String, String)>,
}

/// A flow's hook, run by activity `hook` when the run has ended (SPEC §8.10): what
/// [`crate::run::hooks::plan`] decided, and where `run.json` is (the activity gives the hook
/// the record from it: a record can outgrow a Temporal payload).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HookWire {
    /// `onComplete`, `onFail`, `onPause`, `onBlock`.
    pub event: String,
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    pub timeout_ms: u64,
    /// The run's `run.json`.
    pub run_json: PathBuf,
}

/// How a hook went: its `hook` journal line (compact JSON, no newline).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HookDone {
    pub line: String,
}
