//! The run store as the MCP tools see it: `crate::run::runs` (lookup, listing, the effective
//! status of runs, SPEC §10.1, §11.4) with records as protocol values. Everything comes from
//! the files (`run.json`, the lock), never from server memory, so a restarted server sees
//! what the last one left.

use std::path::Path;

use serde_json::Value;

use super::flows::to_wire;
use crate::run::runs;

pub use crate::run::runs::runs_dir;

/// One run found in the store.
pub struct RunEntry {
    /// The run id.
    pub run_id: String,
    /// The flow's directory name under `.tfc/runs`.
    pub flow: String,
    /// The run's directory.
    pub dir: std::path::PathBuf,
    /// As `tfc runs` reports it (`running` with a dead lock pid is `interrupted`).
    pub status: String,
    /// `run.json` (from [`find`]: whole; from [`list`]: the store's summary).
    pub record: Value,
    /// The run as one element of `tfc runs --format json`.
    pub summary: Value,
}

impl From<runs::RunEntry> for RunEntry {
    fn from(e: runs::RunEntry) -> RunEntry {
        RunEntry {
            record: to_wire(&e.record),
            summary: to_wire(&e.summary_json()),
            run_id: e.run_id,
            flow: e.flow,
            dir: e.dir,
            status: e.status,
        }
    }
}

/// Every readable run (of `flow` when given), newest first.
pub fn list(root: &Path, flow: Option<&str>) -> Vec<RunEntry> {
    runs::list(root, flow).into_iter().map(Into::into).collect()
}

/// The run `query` names: an id, a unique prefix of one, or `last`; the message says what
/// is wrong otherwise (not found, ambiguous, corrupt).
/// A live run's record is brought up to date from its journal first (as `tfc show` does).
pub fn find(root: &Path, query: &str) -> Result<RunEntry, String> {
    let mut e =
        runs::find(root, query, None).map_err(|e| format!("{e}; list runs with tfc_runs"))?;
    runs::overlay_journal(&e.dir, &mut e.record);
    e.status = runs::effective_status(&e.dir, &e.record);
    Ok(e.into())
}

/// [`find`] without the journal overlay: the record as last written (cheap enough to poll;
/// `run.json` is rewritten at every end of a run, and a dead run shows in its lock).
pub fn find_snapshot(root: &Path, query: &str) -> Result<RunEntry, String> {
    runs::find(root, query, None)
        .map(Into::into)
        .map_err(|e| format!("{e}; list runs with tfc_runs"))
}

/// The agent calls a phase made, from the journal: `{node, attempt, agent, model, ok,
/// durationMs, prompt}` each.
pub fn phase_prompts(dir: &Path, phase: &str) -> Vec<Value> {
    runs::phase_prompts(dir, phase)
        .iter()
        .map(to_wire)
        .collect()
}

/// The pid in a run's lock file.
pub fn lock_pid(dir: &Path) -> Option<i32> {
    std::fs::read_to_string(dir.join("lock"))
        .ok()?
        .trim()
        .parse()
        .ok()
}
