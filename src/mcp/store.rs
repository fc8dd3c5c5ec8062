//! The run store as the MCP tools see it: lookup, listing and the effective status of runs
//! (SPEC §10.1, §11.4). Everything comes from the files (`run.json`, the lock), never from
//! server memory, so a restarted server sees what the last one left.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// One run found in the store.
pub struct RunEntry {
    /// The run id.
    pub run_id: String,
    /// The flow's directory name under `.tfc/runs`.
    pub flow: String,
    /// The run's directory.
    pub dir: PathBuf,
    /// As `tfc runs` reports it (`running` with a dead lock pid is `interrupted`).
    pub status: String,
    /// `run.json`, parsed.
    pub record: Value,
}

/// `<root>/.tfc/runs`.
pub fn runs_dir(root: &Path) -> PathBuf {
    root.join(".tfc").join("runs")
}

/// Every run (of `flow`'s directory when given), newest first; unreadable ones are skipped.
pub fn list(root: &Path, flow: Option<&str>) -> Vec<RunEntry> {
    let base = runs_dir(root);
    let flow_dirs: Vec<PathBuf> = match flow {
        Some(f) => vec![base.join(crate::run::store::flow_dir_name(f))],
        None => visible_dirs(&base),
    };
    let mut out: Vec<RunEntry> = flow_dirs
        .iter()
        .flat_map(|d| visible_dirs(d))
        .filter_map(|dir| load(&dir).ok())
        .collect();
    out.sort_by(|a, b| {
        let started = |e: &RunEntry| e.record["startedAt"].as_str().unwrap_or("").to_owned();
        started(b)
            .cmp(&started(a))
            .then_with(|| b.run_id.cmp(&a.run_id))
    });
    out
}

/// The run `query` names: an id, a unique prefix of one, or `last` (the newest).
pub fn find(root: &Path, query: &str) -> Result<RunEntry, String> {
    let hint = "list runs with tfc_runs";
    if query == "last" {
        return list(root, None)
            .into_iter()
            .next()
            .ok_or_else(|| format!("no runs yet under {}", runs_dir(root).display()));
    }
    if !super::flows::valid_flow_name(query) || query.len() > 160 {
        return Err(format!(
            "'{query}' is not a run id (letters, digits, '.', '_', '-'); {hint}"
        ));
    }
    let mut matches: Vec<PathBuf> = visible_dirs(&runs_dir(root))
        .iter()
        .flat_map(|d| visible_dirs(d))
        .filter(|d| {
            d.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(query))
        })
        .collect();
    if let Some(exact) = matches
        .iter()
        .find(|d| d.file_name().is_some_and(|n| n == query))
    {
        matches = vec![exact.clone()];
    }
    match matches.as_slice() {
        [] => Err(format!(
            "no run '{query}' under {}; {hint}",
            runs_dir(root).display()
        )),
        [one] => load(one),
        many => {
            let ids: Vec<String> = many
                .iter()
                .filter_map(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect();
            Err(format!(
                "'{query}' matches several runs: {}; pass more of the id",
                ids.join(", ")
            ))
        }
    }
}

fn load(dir: &Path) -> Result<RunEntry, String> {
    let file = dir.join("run.json");
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("the run record {} cannot be read: {e}", file.display()))?;
    let record: Value = serde_json::from_str(&text)
        .map_err(|e| format!("the run record {} is corrupt: {e}", file.display()))?;
    if !record.is_object() {
        return Err(format!(
            "the run record {} is corrupt: not an object",
            file.display()
        ));
    }
    let name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    Ok(RunEntry {
        run_id: name(dir),
        flow: dir.parent().map(name).unwrap_or_default(),
        dir: dir.to_path_buf(),
        status: effective_status(dir, &record),
        record,
    })
}

/// `running` with a lock whose pid is dead (or no lock) is `interrupted` (SPEC §11.4).
pub fn effective_status(dir: &Path, record: &Value) -> String {
    let status = record["status"].as_str().unwrap_or("unknown");
    if status != "running" {
        return status.to_owned();
    }
    match lock_pid(dir) {
        Some(pid) if pid_alive(pid) => status.to_owned(),
        _ => "interrupted".to_owned(),
    }
}

/// The pid in a run's lock file.
pub fn lock_pid(dir: &Path) -> Option<i32> {
    std::fs::read_to_string(dir.join("lock"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether a process with this pid exists.
fn pid_alive(pid: i32) -> bool {
    use nix::errno::Errno;
    use nix::sys::signal::kill;
    use nix::unistd::Pid;
    pid > 0 && !matches!(kill(Pid::from_raw(pid), None), Err(Errno::ESRCH))
}

/// Sub-directories not starting with `.` (staging and launch folders are hidden).
fn visible_dirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}
