//! The run tools (SPEC §13.3): runs are detached `tfc run` / `tfc resume` processes, each in
//! a process group of its own with stdin closed and its output in `<runDir>/output.log`;
//! every status is read back from the run store, so runs outlive the server.
//!
//! The run id is made here and handed to the process (`--run-id`), so `tfc_run` can name
//! the run at once. Until the process has created the run's directory, its output goes to a
//! hidden launch folder beside it (`.<runId>.launch/output.log`), moved into the run's
//! directory as soon as that exists (by whichever server sees it first).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::call::{Args, Call, ToolError, ToolOutput};
use super::flows::{check, check_report, flow_input};
use super::store::{RunEntry, find, find_snapshot, list, lock_pid, phase_prompts, runs_dir};
use crate::run::store::{flow_dir_name, new_run_id};

/// How often a waiting call looks at the store.
const POLL: Duration = Duration::from_millis(100);
/// How long `tfc_run` waits for a started process to create its run directory.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// `tfc_wait`'s default `timeoutMs`.
pub const DEFAULT_WAIT_MS: u64 = 600_000;
/// How long `tfc_cancel` waits for the interrupted run to save its record.
const CANCEL_WAIT: Duration = Duration::from_secs(20);

/// What the run tools share: where the project is, which binary starts runs, and the exit
/// codes of the processes this server started (for a run that ends before it has a record).
#[derive(Clone)]
pub struct Runner {
    /// The project root.
    pub root: PathBuf,
    /// The `tfc` binary.
    pub exe: PathBuf,
    exits: Arc<Mutex<HashMap<String, Option<i32>>>>,
}

impl Runner {
    /// A runner for `root`, starting runs with `exe`.
    pub fn new(root: PathBuf, exe: PathBuf) -> Runner {
        Runner {
            root,
            exe,
            exits: Arc::default(),
        }
    }

    /// `tfc_run`.
    pub fn tool_run(&self, mut args: Args, call: &Call) -> Result<ToolOutput, ToolError> {
        let input = flow_input(&mut args, &self.root)?;
        let flow_args = args.opt_object("args")?;
        let backend = args.opt_str("backend")?;
        let approve = args.opt_strings("approve")?;
        let approve_all = args.opt_bool("approveAll")?.unwrap_or(false);
        let max_usd = args.opt_num("maxUsd", 0.0)?;
        let max_tokens = args.opt_num("maxTokens", 0.0)?;
        let wait = args.opt_bool("wait")?.unwrap_or(false);
        let timeout = args.opt_u64("timeoutMs", 0)?.unwrap_or(DEFAULT_WAIT_MS);
        args.finish(&[
            "path",
            "name",
            "flow",
            "args",
            "backend",
            "approve",
            "approveAll",
            "maxUsd",
            "maxTokens",
            "wait",
            "timeoutMs",
        ])?;
        let checked = check(&input, &self.root, flow_args.as_ref(), None);
        if checked.has_errors() || checked.flow.is_none() {
            let (report, rendered) = check_report(&checked, &input.source);
            return Err(ToolError {
                message: format!("the flow has errors; nothing was started\n{rendered}"),
                detail: Some(report),
            });
        }
        let flow_name = checked.flow.as_ref().map_or("flow", |f| &f.name).to_owned();
        let run_id = new_run_id(&flow_name);
        let launch = self.launch_dir(&flow_name, &run_id);
        std::fs::create_dir_all(&launch)
            .map_err(|e| ToolError::new(format!("cannot create {}: {e}", launch.display())))?;
        let file = match &input.file {
            Some(f) => f.clone(),
            None => {
                let f = launch.join("flow.json");
                std::fs::write(&f, &input.source.text)
                    .map_err(|e| ToolError::new(format!("cannot write {}: {e}", f.display())))?;
                f
            }
        };
        let mut argv: Vec<String> = vec!["run".into(), file.display().to_string()];
        if let Some(a) = &flow_args {
            argv.extend(["--args".into(), Value::Object(a.clone()).to_string()]);
        }
        if let Some(b) = backend {
            argv.extend(["--backend".into(), b]);
        }
        for p in approve {
            argv.extend(["--approve".into(), p]);
        }
        if approve_all {
            argv.push("--approve-all".into());
        }
        caps(&mut argv, max_usd, max_tokens);
        argv.extend(["--run-id".into(), run_id.clone()]);
        self.start(&flow_name, &run_id, &argv, call)?;
        self.answer(&run_id, wait, timeout, call)
    }

    /// `tfc_resume`.
    pub fn tool_resume(&self, mut args: Args, call: &Call) -> Result<ToolOutput, ToolError> {
        let parent = args.str("runId")?;
        let approve = args.opt_strings("approve")?;
        let reject = args.opt_strings("reject")?;
        let reason = args.opt_str("reason")?;
        let max_usd = args.opt_num("maxUsd", 0.0)?;
        let max_tokens = args.opt_num("maxTokens", 0.0)?;
        let wait = args.opt_bool("wait")?.unwrap_or(false);
        let timeout = args.opt_u64("timeoutMs", 0)?.unwrap_or(DEFAULT_WAIT_MS);
        args.finish(&[
            "runId",
            "approve",
            "reject",
            "reason",
            "maxUsd",
            "maxTokens",
            "wait",
            "timeoutMs",
        ])?;
        let entry = find(&self.root, &parent).map_err(|e| ToolError::arg("runId", e))?;
        let flow_name = entry.record["flow"]
            .as_str()
            .unwrap_or(&entry.flow)
            .to_owned();
        let run_id = new_run_id(&flow_name);
        let mut argv: Vec<String> = vec!["resume".into(), entry.run_id.clone()];
        for p in approve {
            argv.extend(["--approve".into(), p]);
        }
        for p in reject {
            argv.extend(["--reject".into(), p]);
        }
        if let Some(r) = reason {
            argv.extend(["--reason".into(), r]);
        }
        caps(&mut argv, max_usd, max_tokens);
        argv.extend(["--run-id".into(), run_id.clone()]);
        std::fs::create_dir_all(self.launch_dir(&flow_name, &run_id))
            .map_err(|e| ToolError::new(format!("cannot create the launch folder: {e}")))?;
        self.start(&flow_name, &run_id, &argv, call)?;
        self.answer(&run_id, wait, timeout, call)
    }

    /// `tfc_status`.
    pub fn tool_status(&self, mut args: Args) -> Result<ToolOutput, ToolError> {
        let id = args.str("runId")?;
        args.finish(&["runId"])?;
        let entry = find(&self.root, &id).map_err(|e| ToolError::arg("runId", e))?;
        adopt_log(&entry);
        Ok(status_output(&entry))
    }

    /// `tfc_wait`.
    pub fn tool_wait(&self, mut args: Args, call: &Call) -> Result<ToolOutput, ToolError> {
        let id = args.str("runId")?;
        let timeout = args.opt_u64("timeoutMs", 0)?.unwrap_or(DEFAULT_WAIT_MS);
        args.finish(&["runId", "timeoutMs"])?;
        let entry = find(&self.root, &id).map_err(|e| ToolError::arg("runId", e))?;
        self.wait(&entry.run_id, Duration::from_millis(timeout), call)
    }

    /// `tfc_cancel`: SIGINT to the run's process, like Ctrl-C; the run ends `paused`.
    pub fn tool_cancel(&self, mut args: Args, call: &Call) -> Result<ToolOutput, ToolError> {
        let id = args.str("runId")?;
        args.finish(&["runId"])?;
        let entry = find(&self.root, &id).map_err(|e| ToolError::arg("runId", e))?;
        if entry.status != "running" {
            return Err(ToolError::arg(
                "runId",
                format!(
                    "run '{}' is {}, not running: there is nothing to cancel",
                    entry.run_id, entry.status
                ),
            ));
        }
        let Some(pid) = lock_pid(&entry.dir) else {
            return Err(ToolError::new(format!(
                "run '{}' has no lock file naming its process",
                entry.run_id
            )));
        };
        use nix::sys::signal::{Signal, kill};
        kill(nix::unistd::Pid::from_raw(pid), Signal::SIGINT).map_err(|e| {
            ToolError::new(format!(
                "cannot interrupt process {pid} of run '{}': {e}",
                entry.run_id
            ))
        })?;
        (call.log)(
            "info",
            &format!("interrupted run {} (pid {pid})", entry.run_id),
        );
        self.wait(&entry.run_id, CANCEL_WAIT, call)
    }

    /// `tfc_runs`.
    pub fn tool_runs(&self, mut args: Args) -> Result<ToolOutput, ToolError> {
        let flow = args.opt_str("flow")?;
        let status = args.opt_str("status")?;
        let limit = args.opt_u64("limit", 1)?.unwrap_or(20);
        args.finish(&["flow", "status", "limit"])?;
        if let Some(s) = &status
            && !crate::run::runs::STATUSES.contains(&s.as_str())
        {
            return Err(ToolError::arg(
                "status",
                format!(
                    "'{s}' is not one of {}",
                    crate::run::runs::STATUSES.join(", ")
                ),
            ));
        }
        let runs: Vec<RunEntry> = list(&self.root, flow.as_deref())
            .into_iter()
            .filter(|e| status.as_ref().is_none_or(|s| *s == e.status))
            .take(usize::try_from(limit).unwrap_or(usize::MAX))
            .collect();
        let mut lines = Vec::new();
        let items: Vec<Value> = runs
            .iter()
            .map(|e| {
                let r = &e.record;
                lines.push(format!(
                    "{}  {}  {}{}",
                    e.run_id,
                    e.status,
                    r["startedAt"].as_str().unwrap_or("-"),
                    r["reason"]
                        .as_str()
                        .map(|x| format!("  [{x}]"))
                        .unwrap_or_default()
                ));
                e.summary.clone()
            })
            .collect();
        let text = if lines.is_empty() {
            "no runs".to_owned()
        } else {
            lines.join("\n")
        };
        Ok(ToolOutput::new(json!({"runs": items}), text))
    }

    /// `tfc_show`: the run record (its `def` left out, `status` as `tfc_runs` reports it),
    /// or one phase with its prompts from the journal; texts cut at `limit` chars.
    pub fn tool_show(&self, mut args: Args) -> Result<ToolOutput, ToolError> {
        let id = args.str("runId")?;
        let phase = args.opt_str("phase")?;
        let limit = args.opt_u64("limit", 1)?.unwrap_or(4000);
        args.finish(&["runId", "phase", "limit"])?;
        let entry = find(&self.root, &id).map_err(|e| ToolError::arg("runId", e))?;
        adopt_log(&entry);
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        let mut record = entry.record.clone();
        let Some(obj) = record.as_object_mut() else {
            return Err(ToolError::new("the run record is not an object"));
        };
        obj.remove("def");
        obj.insert("status".into(), Value::from(entry.status.as_str()));
        let Some(phase) = phase else {
            if let Some(f) = final_output(&entry) {
                obj.insert("finalOutput".into(), Value::from(cut(&f, limit)));
            }
            let mut lines = vec![format!(
                "run {} ({}) {}{}",
                entry.run_id,
                obj.get("flow")
                    .and_then(Value::as_str)
                    .unwrap_or(&entry.flow),
                entry.status,
                obj.get("reason")
                    .and_then(Value::as_str)
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            )];
            if let Some(Value::Object(phases)) = obj.get_mut("phases") {
                for (pid, p) in phases.iter_mut() {
                    cut_outputs(p, limit);
                    lines.push(format!(
                        "  {pid}  {}  attempts {}{}",
                        p["status"].as_str().unwrap_or("?"),
                        p["attempts"],
                        p["error"]
                            .as_str()
                            .or(p["skipReason"].as_str())
                            .map(|x| format!("  {}", first_line(x)))
                            .unwrap_or_default()
                    ));
                }
            }
            return Ok(ToolOutput::new(record, lines.join("\n")));
        };
        let Some(mut p) = obj.get("phases").and_then(|ps| ps.get(&phase)).cloned() else {
            let known: Vec<String> = obj
                .get("phases")
                .and_then(Value::as_object)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            return Err(ToolError::arg(
                "phase",
                format!(
                    "run '{}' has no phase '{phase}' (its phases: {})",
                    entry.run_id,
                    known.join(", ")
                ),
            ));
        };
        cut_outputs(&mut p, limit);
        let mut prompts = phase_prompts(&entry.dir, &phase);
        for p in &mut prompts {
            if let Some(Value::String(text)) = p.get_mut("prompt") {
                *text = cut(text, limit);
            }
        }
        let text = format!(
            "{phase}: {}\n{}",
            p["status"].as_str().unwrap_or("?"),
            p["output"].as_str().unwrap_or("")
        );
        if let Some(o) = p.as_object_mut() {
            o.insert("id".into(), Value::from(phase.as_str()));
            o.insert("runId".into(), Value::from(entry.run_id.as_str()));
            o.insert("prompts".into(), Value::Array(prompts));
        }
        Ok(ToolOutput::new(p, text))
    }

    /// `.tfc/runs/<flow>/.<runId>.launch`: the output log until the run directory exists.
    pub(super) fn launch_dir(&self, flow: &str, run_id: &str) -> PathBuf {
        runs_dir(&self.root)
            .join(flow_dir_name(flow))
            .join(format!(".{run_id}.launch"))
    }

    /// Start `tfc <argv>` detached, and wait until its run directory exists (or it ended
    /// without one: an error carrying its output).
    pub(super) fn start(
        &self,
        flow: &str,
        run_id: &str,
        argv: &[String],
        call: &Call,
    ) -> Result<(), ToolError> {
        use std::os::unix::process::CommandExt;
        let launch = self.launch_dir(flow, run_id);
        let log_path = launch.join("output.log");
        let log = std::fs::File::create(&log_path)
            .map_err(|e| ToolError::new(format!("cannot create {}: {e}", log_path.display())))?;
        let log2 = log
            .try_clone()
            .map_err(|e| ToolError::new(format!("cannot share the output log: {e}")))?;
        let mut child = Command::new(&self.exe)
            .args(argv)
            .current_dir(&self.root)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .process_group(0)
            .spawn()
            .map_err(|e| ToolError::new(format!("cannot start {}: {e}", self.exe.display())))?;
        (call.log)(
            "info",
            &format!(
                "started run {run_id} (pid {}): tfc {}",
                child.id(),
                argv.join(" ")
            ),
        );
        // A reaper, so the finished process leaves no zombie (whose pid would still look
        // alive to the lock check) and a run that ends without a record can be explained.
        self.exits
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(run_id.to_owned(), None);
        let exits = Arc::clone(&self.exits);
        let id = run_id.to_owned();
        std::thread::spawn(move || {
            let code = child.wait().ok().and_then(|s| s.code()).unwrap_or(-1);
            exits
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(id, Some(code));
        });
        let run_dir = launch.parent().map(|p| p.join(run_id)).unwrap_or_default();
        let started = Instant::now();
        loop {
            if run_dir.join("run.json").is_file() {
                move_log(&launch, &run_dir);
                return Ok(());
            }
            let exit = self
                .exits
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(run_id)
                .copied()
                .flatten();
            if let Some(code) = exit {
                if run_dir.join("run.json").is_file() {
                    move_log(&launch, &run_dir);
                    return Ok(());
                }
                let output = std::fs::read_to_string(&log_path).unwrap_or_default();
                let _ = std::fs::remove_dir_all(&launch);
                return Err(ToolError::new(format!(
                    "the run did not start (tfc {} exited with code {code}):\n{}",
                    argv.first().map_or("run", String::as_str),
                    output.trim_end()
                )));
            }
            if started.elapsed() > START_TIMEOUT {
                return Err(ToolError::new(format!(
                    "run {run_id} was started but has not created its record after {} s; \
                     its output is in {}",
                    START_TIMEOUT.as_secs(),
                    log_path.display()
                )));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The answer of `tfc_run` / `tfc_resume`: the new run at once, or after waiting.
    pub(super) fn answer(
        &self,
        run_id: &str,
        wait: bool,
        timeout_ms: u64,
        call: &Call,
    ) -> Result<ToolOutput, ToolError> {
        if wait {
            return self.wait(run_id, Duration::from_millis(timeout_ms), call);
        }
        let entry = find(&self.root, run_id).map_err(ToolError::new)?;
        let record_path = entry.dir.join("run.json");
        let text = format!(
            "started run {} ({}); follow it with tfc_wait or tfc_status",
            entry.run_id, entry.status
        );
        Ok(ToolOutput::new(
            json!({"runId": entry.run_id, "status": entry.status,
                   "recordPath": record_path.display().to_string(),
                   "logPath": entry.dir.join("output.log").display().to_string()}),
            text,
        ))
    }

    /// Follow a run until it is no longer `running`, the time is up or the call is
    /// cancelled; progress notifications as its phases end.
    fn wait(&self, run_id: &str, timeout: Duration, call: &Call) -> Result<ToolOutput, ToolError> {
        let deadline = Instant::now() + timeout;
        let mut journal = JournalTail::default();
        loop {
            let entry = find_snapshot(&self.root, run_id).map_err(ToolError::new)?;
            adopt_log(&entry);
            if let Some(progress) = &call.progress {
                let phases = entry.record["phases"].as_object();
                let total = phases.map_or(0, |p| p.len() as u64);
                for phase in journal.ended(&entry.dir) {
                    if phases.is_some_and(|p| p.contains_key(&phase)) && journal.seen(&phase) {
                        progress(journal.count(), total, &phase);
                    }
                }
            }
            if entry.status != "running"
                || Instant::now() >= deadline
                || call
                    .cancel
                    .sleep(POLL.min(deadline.saturating_duration_since(Instant::now())))
            {
                // Read once more: the run may have ended during the sleep.
                let entry = find(&self.root, run_id).map_err(ToolError::new)?;
                return Ok(status_output(&entry));
            }
        }
    }
}

/// `--max-usd` / `--max-tokens`.
pub(super) fn caps(argv: &mut Vec<String>, max_usd: Option<f64>, max_tokens: Option<f64>) {
    if let Some(n) = max_usd {
        argv.extend(["--max-usd".into(), n.to_string()]);
    }
    if let Some(n) = max_tokens {
        argv.extend(["--max-tokens".into(), n.to_string()]);
    }
}

/// Move a launch folder's output log into the run directory, then drop the folder.
fn move_log(launch: &Path, run_dir: &Path) {
    let from = launch.join("output.log");
    if from.is_file() && std::fs::rename(&from, run_dir.join("output.log")).is_ok() {
        let _ = std::fs::remove_dir_all(launch);
    }
}

/// A run started by a server that stopped before moving its log: move it now.
fn adopt_log(entry: &RunEntry) {
    if let Some(parent) = entry.dir.parent() {
        let launch = parent.join(format!(".{}.launch", entry.run_id));
        if launch.is_dir() {
            move_log(&launch, &entry.dir);
        }
    }
}

/// The phases that ended, read from the journal as it grows.
#[derive(Default)]
struct JournalTail {
    offset: u64,
    ended: std::collections::HashSet<String>,
}

impl JournalTail {
    /// New `phase-end` events since the last call (complete lines only).
    fn ended(&mut self, dir: &Path) -> Vec<String> {
        use std::io::{Read, Seek, SeekFrom};
        let Ok(mut f) = std::fs::File::open(dir.join("journal.jsonl")) else {
            return Vec::new();
        };
        let mut buf = Vec::new();
        if f.seek(SeekFrom::Start(self.offset)).is_err() || f.read_to_end(&mut buf).is_err() {
            return Vec::new();
        }
        let complete = buf.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        self.offset += complete as u64;
        buf[..complete]
            .split(|&b| b == b'\n')
            .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
            .filter(|e| e["type"] == "phase-end")
            .filter_map(|e| e["phase"].as_str().map(str::to_owned))
            .collect()
    }

    /// Record `phase` as ended; `false` if it was already.
    fn seen(&mut self, phase: &str) -> bool {
        self.ended.insert(phase.to_owned())
    }

    fn count(&self) -> u64 {
        self.ended.len() as u64
    }
}

/// The final output, inline or in its file (SPEC §10: large outputs are kept in `outputs/`).
fn final_output(entry: &RunEntry) -> Option<String> {
    if let Some(s) = entry.record["finalOutput"].as_str() {
        return Some(s.to_owned());
    }
    let file = entry.record["finalOutputFile"].as_str()?;
    std::fs::read_to_string(entry.dir.join(file)).ok()
}

/// `tfc_status`'s result for a run.
fn status_output(entry: &RunEntry) -> ToolOutput {
    let r = &entry.record;
    let mut counts: Map<String, Value> = ["pending", "running", "done", "failed", "skipped"]
        .into_iter()
        .map(|k| (k.to_owned(), Value::from(0u64)))
        .collect();
    let mut pending_approvals = Vec::new();
    // Pending approval → its deadline (SPEC §8.8).
    let mut deadlines: Map<String, Value> = Map::new();
    if let Some(phases) = r["phases"].as_object() {
        for (id, p) in phases {
            let mut s = p["status"].as_str().unwrap_or("pending");
            if s == "running" && entry.status == "interrupted" {
                s = "pending";
            }
            if let Some(n) = counts.get_mut(s) {
                *n = Value::from(n.as_u64().unwrap_or(0) + 1);
            }
            if p["approval"]["decision"] == "pending" {
                pending_approvals.push(Value::from(id.as_str()));
                if let Some(at) = p["approval"]["expiresAt"].as_str() {
                    deadlines.insert(id.clone(), Value::from(at));
                }
            }
        }
    }
    let mut out = json!({
        "runId": entry.run_id,
        "flow": r["flow"].as_str().unwrap_or(&entry.flow),
        "status": entry.status,
        "reason": r["reason"],
        "parentRunId": r["parentRunId"],
        "phases": counts,
        "pendingApprovals": pending_approvals,
        "usage": r["usage"],
        "calls": crate::run::summary::record_calls(r),
        "recordPath": entry.dir.join("run.json").display().to_string(),
    });
    if !deadlines.is_empty() {
        out["approvalDeadlines"] = Value::Object(deadlines);
    }
    let ended = entry.status != "running";
    let mut text = format!(
        "run {} {}{}",
        entry.run_id,
        entry.status,
        r["reason"]
            .as_str()
            .map(|x| format!(": {x}"))
            .unwrap_or_default()
    );
    text.push_str(&format!(
        "\nphases: {} done, {} failed, {} skipped, {} running, {} pending",
        out["phases"]["done"],
        out["phases"]["failed"],
        out["phases"]["skipped"],
        out["phases"]["running"],
        out["phases"]["pending"]
    ));
    text.push_str(&format!(
        "\nusage: {}",
        crate::run::summary::calls_text(out["calls"].as_u64().unwrap_or(0))
    ));
    if ended && let Some(f) = final_output(entry) {
        text.push_str(&format!("\nfinal output:\n{}", cut(&f, 4000)));
        out["finalOutput"] = Value::from(f);
    }
    ToolOutput::new(out, text)
}

/// Cut `s` at `limit` chars, saying how much was left out.
fn cut(s: &str, limit: usize) -> String {
    match s.char_indices().nth(limit) {
        None => s.to_owned(),
        Some((at, _)) => {
            let more = s[at..].chars().count();
            format!("{}[… {more} more chars]", &s[..at])
        }
    }
}

fn cut_outputs(phase: &mut Value, limit: usize) {
    if let Some(Value::String(s)) = phase.get_mut("output") {
        *s = cut(s, limit);
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::{RunEntry, cut, status_output};
    use serde_json::json;

    #[test]
    fn the_status_counts_the_calls_of_sub_flows() {
        let record = json!({"runId": "r", "flow": "f", "status": "completed", "reason": null,
            "usage": {"input": 3}, "phases": {
                "a": {"type": "agent", "status": "done", "attempts": 1},
                "sub": {"type": "flow", "status": "done", "attempts": 0, "subRun": {
                    "phases": {"x": {"type": "agent", "status": "done", "attempts": 1},
                               "y": {"type": "agent", "status": "done", "attempts": 1}}}}}});
        let entry = RunEntry {
            run_id: "r".into(),
            flow: "f".into(),
            dir: std::path::PathBuf::from("/nonexistent"),
            status: "completed".into(),
            record,
            summary: json!({}),
        };
        let out = status_output(&entry);
        assert_eq!(out.structured["calls"], 3, "{}", out.structured);
        assert!(out.text.contains("\nusage: 3 calls"), "{}", out.text);
    }

    #[test]
    fn the_status_gives_the_deadlines_of_pending_approvals() {
        let at = "2026-11-30T11:00:00.000Z";
        let record = json!({"runId": "r", "flow": "f", "status": "paused",
            "reason": "awaiting approval: ok, plain", "usage": {}, "phases": {
                "ok": {"type": "approval", "status": "pending",
                       "approval": {"decision": "pending", "expiresAt": at}},
                "plain": {"type": "approval", "status": "pending",
                          "approval": {"decision": "pending"}}}});
        let entry = RunEntry {
            run_id: "r".into(),
            flow: "f".into(),
            dir: std::path::PathBuf::from("/nonexistent"),
            status: "paused".into(),
            record,
            summary: json!({}),
        };
        let out = status_output(&entry);
        assert_eq!(out.structured["pendingApprovals"], json!(["ok", "plain"]));
        assert_eq!(out.structured["approvalDeadlines"], json!({"ok": at}));
    }

    #[test]
    fn cuts_count_chars() {
        assert_eq!(cut("héllo", 10), "héllo");
        assert_eq!(cut("héllo", 2), "hé[… 3 more chars]");
    }
}
