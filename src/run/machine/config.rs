//! What a run is told up front ([`Config`]): everything the machine needs that is not an
//! input, including the caller's options it follows as given ([`RunSettings`], which the
//! caller's [`RunOptions`](crate::run::RunOptions) holds too, so each is declared once).

use std::path::PathBuf;
use std::sync::Arc;

use indexmap::IndexMap;

/// The options of a run that the machine follows as given: flags of `tfc run`, or a library
/// caller's choices. [`RunOptions`](crate::run::RunOptions) holds them for the caller and
/// [`Config`] for the machine.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunSettings {
    /// `--concurrency N`: overrides the flow's.
    pub concurrency: Option<usize>,
    /// `--dry-run`: scripts are listed, not run (unless `dry_run_scripts`), approvals approve.
    pub dry_run: bool,
    /// `--dry-run-scripts`: scripts run in a dry run.
    pub dry_run_scripts: bool,
    /// `--approve ID`: approvals decided yes.
    pub approve: Vec<String>,
    /// `--approve-all`.
    pub approve_all: bool,
    /// `--reject ID`: approvals decided no.
    pub reject: Vec<String>,
    /// `--reject-reason`: the rejection's note.
    pub reject_reason: Option<String>,
    /// A note of its own per rejected approval (a test's `{"reject": "note"}`), over
    /// `reject_reason`.
    pub reject_notes: IndexMap<String, String>,
    /// `[defaults] idle_timeout_ms` from the configuration.
    pub default_idle_timeout_ms: Option<u64>,
    /// Where `.tfc/` lives (dedicated directories live under it); `None` = do not persist
    /// the run.
    pub project_root: Option<PathBuf>,
}

/// What a run is told up front: everything the machine needs that is not an input.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// The run id.
    pub run_id: String,
    /// The caller's options that the machine follows as given.
    pub settings: RunSettings,
    /// Undecided approvals are asked ([`Command::AskApproval`](super::Command::AskApproval))
    /// instead of pausing the run.
    pub ask: bool,
    /// The effective cost cap.
    pub max_usd: Option<f64>,
    /// The effective token cap.
    pub max_tokens: Option<f64>,
    /// The effective call cap (`budget.maxCalls`, `--max-calls`).
    pub max_calls: Option<u64>,
    /// `[limits] max_output_bytes`.
    pub max_output: usize,
    /// `[limits] max_prompt_bytes`.
    pub max_prompt: usize,
    /// The run keeps a journal (a store): journal lines are emitted.
    pub journaling: bool,
    /// Without a journal, emit its event lines all the same (`condition`, `phase-start`,
    /// `phase-end`, `race-won`, …; not the inputs, agent calls or cache keys): the machine's
    /// decisions, which `tfc test --coverage` reads. The caller's, never persisted.
    pub decisions: bool,
    /// Progress notes are wanted.
    pub progress: bool,
    /// Agent name → backend name, for the record.
    pub backends: IndexMap<String, String>,
    /// Some backend replays recorded calls.
    pub replay: bool,
    /// The invocation directory.
    pub cwd: PathBuf,
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
    /// The host runs a map of more than this many items in shards of this many
    /// ([`Command::StartShard`](super::Command::StartShard)); `None` (local runs): never.
    pub shard_items: Option<usize>,
    /// The deadlines of the resumed run's pending approvals (SPEC §8.8): node → epoch ms. A
    /// resumed approval keeps its deadline instead of starting the clock again.
    pub approval_deadlines: Arc<IndexMap<String, u64>>,
    /// A fork's phases copied from its parent and phases given an output (SPEC §10.4
    /// "Fork"); `None` for every other run and inside sub-flows.
    pub fork: Option<Arc<ForkNodes>>,
}

/// What a fork takes from its parent without running it: the phases (top-level ids) whose
/// `done` state is copied whatever their inputs' keys, and those whose output `--set` gave.
/// The states themselves stay with the driver ([`Command::CacheLookup`](super::Command)
/// answers them), so a host that persists the config carries only the ids.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ForkNodes {
    /// The parent run's id (`setFrom`).
    pub parent: String,
    /// Phases copied as they are.
    pub copy: std::collections::HashSet<String>,
    /// Phases whose output was set (a map: its items were).
    pub set: std::collections::HashSet<String>,
}
