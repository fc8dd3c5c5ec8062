//! The run store as a whole (SPEC §10.1, §10.2, §11.4): every run under `.tfc/runs/<flow>/<runId>/`,
//! found by id, unique prefix or `last`; listed newest first; reported with the status `tfc runs`
//! shows (`interrupted` for a `running` record whose lock's pid is dead); pruned by retention.
//!
//! Order: a run id carries its start time (`<name>-<epoch ms base36>-<hex>`, §10.2), so runs are
//! ordered — and `last`, prefix lookup and retention decide — from directory names alone; only
//! the runs a command shows are read. A listing reads each `run.json` with a scanner that copies
//! the small top-level fields and skips phase outputs and `def` without building them, so
//! listing stays linear in the runs and cheap in the size of their records.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::value::{Map, Value, parse_json};

/// Retention keeps at least this many runs (SPEC §10.1)…
pub const KEEP_NEWEST: usize = 100;
/// …and every run younger than this.
pub const KEEP_FOR: Duration = Duration::from_secs(30 * 24 * 3600);

/// One run of the store.
#[derive(Clone, Debug)]
pub struct RunEntry {
    /// The run id (its directory's name).
    pub run_id: String,
    /// The flow's directory name under `.tfc/runs/`.
    pub flow: String,
    /// The run's directory.
    pub dir: PathBuf,
    /// The status as `tfc runs` reports it: `completed`, `failed`, `blocked`, `paused`,
    /// `running` or `interrupted`.
    pub status: String,
    /// `run.json` parsed. From [`find`]: the whole record. From [`list`]: a summary — every
    /// top-level field except `def`, `finalOutput` and `warnings`, and `phases` reduced to
    /// `{status, type, attempts, cacheHit?, approval?, subRun?}` per phase, a sub-run to its phases so
    /// reduced (read the whole record with [`read_record`]).
    pub record: Value,
}

/// Every status `tfc runs` reports (and `--status` accepts).
pub const STATUSES: [&str; 6] = [
    "completed",
    "failed",
    "blocked",
    "paused",
    "running",
    "interrupted",
];

impl RunEntry {
    /// The run as one element of `tfc runs --format json` (SPEC §11.4): `{runId, flow, status,
    /// reason, parentRunId, startedAt, endedAt, usage}`, `status` as reported.
    pub fn summary_json(&self) -> Value {
        let record = self.record.as_object();
        let field = |k: &str| record.and_then(|r| r.get(k)).cloned();
        let mut o = Map::default();
        o.insert("runId".into(), Value::from(self.run_id.as_str()));
        let flow = field("flow").unwrap_or_else(|| Value::from(self.flow.as_str()));
        o.insert("flow".into(), flow);
        o.insert("status".into(), Value::from(self.status.as_str()));
        for k in ["reason", "parentRunId", "startedAt", "endedAt", "usage"] {
            o.insert(k.into(), field(k).unwrap_or_default());
        }
        if let Some(f) = field("forkedFrom") {
            o.insert("forkedFrom".into(), f);
        }
        if let Some((phase, at)) = self.next_deadline() {
            let mut d = Map::default();
            d.insert("phase".into(), Value::from(phase));
            d.insert("expiresAt".into(), Value::from(at));
            o.insert("nextDeadline".into(), Value::Object(d));
        }
        Value::Object(o)
    }

    /// Where the run comes from, as `tfc show`, `tfc runs` and the report say it:
    /// [`lineage`] of its record.
    pub fn lineage(&self) -> Option<String> {
        lineage(&self.record)
    }

    /// The nearest deadline of the run's pending approvals (SPEC §8.8): (phase, expiresAt).
    pub fn next_deadline(&self) -> Option<(&str, &str)> {
        let phases = self.record.as_object()?.get("phases")?.as_object()?;
        phases
            .iter()
            .filter_map(|(id, p)| {
                let a = p.as_object()?.get("approval")?.as_object()?;
                if a.get("decision").and_then(Value::as_str) != Some("pending") {
                    return None;
                }
                Some((id.as_str(), a.get("expiresAt")?.as_str()?))
            })
            .min_by_key(|(_, at)| parse_timestamp(at).unwrap_or(u64::MAX))
    }
}

/// Why a run could not be found or read. `Display` is the message for the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LookupError {
    /// No run has this id or prefix (the query; `last` when the store is empty).
    NotFound(String),
    /// No run has this id or prefix, but one id is a small edit away (query, that id).
    NotFoundNear(String, String),
    /// More than one run id starts with the query (the matching ids, newest first).
    Ambiguous(Vec<String>),
    /// The run exists but its record cannot be read (what is wrong, with the path).
    Corrupt(String),
}

/// How many matching ids an ambiguity message lists.
const AMBIGUOUS_SHOWN: usize = 10;

impl std::fmt::Display for LookupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LookupError::NotFound(q) if q == "last" => {
                write!(
                    f,
                    "no run found: this project has no runs yet (start one with `tfc run FLOW`)"
                )
            }
            LookupError::NotFound(q) => write!(
                f,
                "no run found with id or id prefix '{q}'; `tfc runs` lists this project's runs"
            ),
            LookupError::NotFoundNear(q, near) => write!(
                f,
                "no run found with id or id prefix '{q}'; did you mean '{near}'? (`tfc runs` lists this project's runs)"
            ),
            LookupError::Ambiguous(ids) => {
                write!(
                    f,
                    "ambiguous run id prefix: it matches {} runs: ",
                    ids.len()
                )?;
                let shown: Vec<&str> = ids
                    .iter()
                    .take(AMBIGUOUS_SHOWN)
                    .map(String::as_str)
                    .collect();
                write!(f, "{}", shown.join(", "))?;
                if ids.len() > AMBIGUOUS_SHOWN {
                    write!(f, ", … ({} more)", ids.len() - AMBIGUOUS_SHOWN)?;
                }
                write!(f, "; give more characters of the id")
            }
            LookupError::Corrupt(what) => write!(
                f,
                "corrupt run record: {what}; the run cannot be shown or resumed (remove its directory to drop it)"
            ),
        }
    }
}

impl std::error::Error for LookupError {}

/// `<root>/.tfc/runs`.
pub fn runs_dir(root: &Path) -> PathBuf {
    root.join(".tfc").join("runs")
}

/// A run directory found in the store, not read yet.
#[derive(Clone, Debug)]
pub(crate) struct RunDir {
    run_id: String,
    flow: String,
    dir: PathBuf,
    /// Start time (epoch ms): from the id, else the directory's modification time.
    started_ms: u64,
}

/// Is `name` a possible run id (SPEC §10.2: `[A-Za-z0-9._-]+`, ≤160 chars, no `..`)?
fn valid_id(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 160
        && !name.contains("..")
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// The epoch ms of a run id `<name>-<ms base36>-<hex>`.
fn id_millis(id: &str) -> Option<u64> {
    let mut parts = id.rsplitn(3, '-');
    let hex = parts.next()?;
    let b36 = parts.next()?;
    parts.next()?;
    if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    // Epoch ms in base 36 has 8 digits from 1973 to 2058, 9 after.
    if !(7..=10).contains(&b36.len()) {
        return None;
    }
    let mut ms: u64 = 0;
    for c in b36.bytes() {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'z' => c - b'a' + 10,
            _ => return None,
        };
        ms = ms.checked_mul(36)?.checked_add(u64::from(d))?;
    }
    Some(ms)
}

fn mtime_ms(path: &Path) -> u64 {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as u64)
}

/// The flow directories to look in: one (`flow`, by its name or directory name) or all.
fn flow_dirs(root: &Path, flow: Option<&str>) -> Vec<(String, PathBuf)> {
    let base = runs_dir(root);
    if let Some(f) = flow {
        let name = super::store::flow_dir_name(f);
        let dir = base.join(&name);
        return if dir.is_dir() {
            vec![(name, dir)]
        } else {
            Vec::new()
        };
    }
    let Ok(rd) = std::fs::read_dir(&base) else {
        return Vec::new();
    };
    rd.filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            (!name.starts_with('.')).then(|| (name, e.path()))
        })
        .collect()
}

/// Every run directory (of `flow`, or all), newest first; nothing is read but directory names
/// (and a modification time for ids that carry no time).
pub(crate) fn run_dirs(root: &Path, flow: Option<&str>) -> Vec<RunDir> {
    let mut out = Vec::new();
    for (flow_name, fdir) in flow_dirs(root, flow) {
        let Ok(rd) = std::fs::read_dir(&fdir) else {
            continue;
        };
        for e in rd.filter_map(Result::ok) {
            let Ok(run_id) = e.file_name().into_string() else {
                continue;
            };
            // Hidden entries are runs still being created (`.<id>.creating`).
            if !valid_id(&run_id) || !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let dir = e.path();
            let started_ms = id_millis(&run_id).unwrap_or_else(|| mtime_ms(&dir));
            out.push(RunDir {
                run_id,
                flow: flow_name.clone(),
                dir,
                started_ms,
            });
        }
    }
    out.sort_by(|a, b| {
        b.started_ms
            .cmp(&a.started_ms)
            .then_with(|| b.run_id.cmp(&a.run_id))
    });
    out
}

/// Find a run by id, unique id prefix, or `last` (the newest run; of `flow` when given). The
/// record is read whole.
pub fn find(root: &Path, query: &str, flow: Option<&str>) -> Result<RunEntry, LookupError> {
    let dirs = run_dirs(root, flow);
    let hit = if query == "last" {
        dirs.into_iter()
            .next()
            .ok_or_else(|| LookupError::NotFound(query.to_owned()))?
    } else {
        if !valid_id(query) {
            return Err(LookupError::NotFound(query.to_owned()));
        }
        if !dirs.iter().any(|d| d.run_id.starts_with(query)) {
            let near = crate::diag::did_you_mean(query, dirs.iter().map(|d| d.run_id.as_str()));
            return Err(match near {
                Some(n) => LookupError::NotFoundNear(query.to_owned(), n.to_owned()),
                None => LookupError::NotFound(query.to_owned()),
            });
        }
        if let Some(exact) = dirs.iter().find(|d| d.run_id == query) {
            exact.clone()
        } else {
            let mut matches: Vec<RunDir> = dirs
                .into_iter()
                .filter(|d| d.run_id.starts_with(query))
                .collect();
            match matches.len() {
                0 => return Err(LookupError::NotFound(query.to_owned())),
                1 => matches.remove(0),
                _ => {
                    return Err(LookupError::Ambiguous(
                        matches.into_iter().map(|d| d.run_id).collect(),
                    ));
                }
            }
        }
    };
    let record = read_record(&hit.dir)?;
    Ok(entry(hit, record))
}

fn entry(d: RunDir, record: Value) -> RunEntry {
    let status = effective_status(&d.dir, &record);
    RunEntry {
        run_id: d.run_id,
        flow: d.flow,
        dir: d.dir,
        status,
        record,
    }
}

/// Every readable run (of `flow`, or all), newest first; corrupt runs are skipped (see
/// [`list_checked`] to have them reported). Records are summaries (see [`RunEntry::record`]).
pub fn list(root: &Path, flow: Option<&str>) -> Vec<RunEntry> {
    list_checked(root, flow).0
}

/// [`list`], plus a [`LookupError::Corrupt`] for each run whose record cannot be read.
pub fn list_checked(root: &Path, flow: Option<&str>) -> (Vec<RunEntry>, Vec<LookupError>) {
    list_where(root, flow, None, |_| true)
}

/// The newest runs (of `flow`, or all) that `keep` accepts, at most `limit` of them, and the
/// corrupt records met on the way. Records are read newest first and only until `limit` runs
/// are kept.
pub fn list_where(
    root: &Path,
    flow: Option<&str>,
    limit: Option<usize>,
    keep: impl Fn(&RunEntry) -> bool,
) -> (Vec<RunEntry>, Vec<LookupError>) {
    let mut runs = Vec::new();
    let mut corrupt = Vec::new();
    for d in run_dirs(root, flow) {
        if limit.is_some_and(|n| runs.len() >= n) {
            break;
        }
        match read_summary(&d.dir) {
            Ok(record) => {
                let e = entry(d, record);
                if keep(&e) {
                    runs.push(e);
                }
            }
            Err(e) => corrupt.push(e),
        }
    }
    (runs, corrupt)
}

// ---------------------------------------------------------------------------------------------
// The journal, for what a live run's snapshot lacks.

/// The events of a run's `journal.jsonl` other than machine inputs, in order. A torn last line
/// (a run killed mid-write) is left out; so is any other line that is not a JSON object, each
/// counted in the second value.
pub fn journal_events(dir: &Path) -> (Vec<Value>, usize) {
    let Ok(text) = std::fs::read_to_string(dir.join("journal.jsonl")) else {
        return (Vec::new(), 0);
    };
    let mut events = Vec::new();
    let mut bad = 0;
    let complete = text.ends_with('\n');
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with("{\"type\":\"input\"") || line.trim().is_empty() {
            continue;
        }
        match parse_json(line) {
            Ok(v @ Value::Object(_)) => events.push(v),
            _ if i + 1 == lines.len() && !complete => {}
            _ => bad += 1,
        }
    }
    (events, bad)
}

fn get<'v>(v: &'v Value, key: &str) -> Option<&'v Value> {
    v.as_object().and_then(|o| o.get(key))
}

fn get_str<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    get(v, key).and_then(Value::as_str)
}

/// Bring a `running` record up to date from the journal (SPEC §10.2: `run.json` is rewritten
/// at most every so often, the journal at once): phases started or ended after the last
/// snapshot get their status, times, error, skip reason and cache hit, and a `run-end` the
/// snapshot missed ends the run. Records of finished runs are left as they are. Returns how
/// many unreadable journal lines were skipped.
pub fn overlay_journal(dir: &Path, record: &mut Value) -> usize {
    if get_str(record, "status") != Some("running") {
        return 0;
    }
    let (events, bad) = journal_events(dir);
    let Value::Object(rec) = record else {
        return bad;
    };
    for ev in &events {
        let ts = get_str(ev, "ts").map(Value::from).unwrap_or_default();
        match get_str(ev, "type") {
            Some("phase-start") => {
                if let Some(p) = get_str(ev, "phase").and_then(|id| phase_mut(rec, id))
                    && p.get("status").and_then(Value::as_str) == Some("pending")
                {
                    p.insert("status".into(), Value::from("running"));
                    if p.get("startedAt").is_none_or(|v| matches!(v, Value::Null)) {
                        p.insert("startedAt".into(), ts);
                    }
                }
            }
            Some("phase-end") => {
                if let Some(p) = get_str(ev, "phase").and_then(|id| phase_mut(rec, id))
                    && matches!(
                        p.get("status").and_then(Value::as_str),
                        Some("pending" | "running")
                    )
                {
                    for k in ["status", "error", "skipReason", "cacheHit"] {
                        if let Some(v) = get(ev, k) {
                            p.insert(k.into(), v.clone());
                        }
                    }
                    p.insert("endedAt".into(), ts);
                }
            }
            Some("run-end") => {
                if let Some(st) = get(ev, "status") {
                    rec.insert("status".into(), st.clone());
                    rec.insert(
                        "reason".into(),
                        get(ev, "reason").cloned().unwrap_or_default(),
                    );
                    rec.insert("endedAt".into(), ts);
                }
            }
            _ => {}
        }
    }
    bad
}

fn phase_mut<'r>(rec: &'r mut Map, id: &str) -> Option<&'r mut Map> {
    match rec.get_mut("phases")? {
        Value::Object(phases) => match phases.get_mut(id)? {
            Value::Object(p) => Some(p),
            _ => None,
        },
        _ => None,
    }
}

/// Is `node` (a node path, SPEC §9.3) one of phase `phase`'s: the phase itself, an item,
/// iteration, judge or round of it (`#`, `@`), or a node of its sub-flow (`/`)?
pub fn node_of_phase(node: &str, phase: &str) -> bool {
    node.strip_prefix(phase)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['#', '@', '/']))
}

/// The agent calls phase `phase` made, from the journal, in order: `{node, attempt, agent,
/// model, ok, durationMs, prompt}` each.
pub fn phase_prompts(dir: &Path, phase: &str) -> Vec<Value> {
    let (events, _) = journal_events(dir);
    events
        .into_iter()
        .filter(|ev| {
            get_str(ev, "type") == Some("agent-call")
                && get_str(ev, "node").is_some_and(|n| node_of_phase(n, phase))
        })
        .map(|ev| {
            let mut o = Map::default();
            for k in [
                "node",
                "attempt",
                "agent",
                "model",
                "ok",
                "durationMs",
                "prompt",
            ] {
                o.insert(k.into(), get(&ev, k).cloned().unwrap_or_default());
            }
            Value::Object(o)
        })
        .collect()
}

fn read_run_json(dir: &Path) -> Result<String, LookupError> {
    let path = dir.join("run.json");
    std::fs::read(&path)
        .map_err(|e| {
            let what = if e.kind() == std::io::ErrorKind::NotFound {
                "has no run.json".to_owned()
            } else {
                format!("run.json cannot be read ({e})")
            };
            LookupError::Corrupt(format!("{} {what}", dir.display()))
        })
        .and_then(|bytes| {
            String::from_utf8(bytes)
                .map_err(|_| LookupError::Corrupt(format!("{} is not UTF-8 text", path.display())))
        })
}

fn corrupt(path: &Path, what: impl std::fmt::Display) -> LookupError {
    LookupError::Corrupt(format!("{} {what}", path.join("run.json").display()))
}

/// A run's whole `run.json`.
pub fn read_record(dir: &Path) -> Result<Value, LookupError> {
    let text = read_run_json(dir)?;
    match parse_json(&text) {
        Ok(v @ Value::Object(_)) => check_record(dir, v),
        Ok(other) => Err(corrupt(
            dir,
            format_args!("holds {} instead of a run record", other.type_name()),
        )),
        Err(e) => Err(corrupt(dir, format_args!("is not valid JSON ({e})"))),
    }
}

/// A run's `run.json` without its bulk (see [`RunEntry::record`]).
pub fn read_summary(dir: &Path) -> Result<Value, LookupError> {
    let text = read_run_json(dir)?;
    let v = summarize(&text).map_err(|e| corrupt(dir, format_args!("is not valid JSON ({e})")))?;
    check_record(dir, v)
}

/// A record needs a string `runId` and `status` to be listed or looked at.
fn check_record(dir: &Path, v: Value) -> Result<Value, LookupError> {
    let ok = |k: &str| {
        v.as_object()
            .and_then(|o| o.get(k))
            .and_then(Value::as_str)
            .is_some()
    };
    if ok("runId") && ok("status") {
        Ok(v)
    } else {
        Err(corrupt(dir, "is not a run record (no runId or status)"))
    }
}

/// The status of a run as `tfc runs` reports it: the record's `status`, except that a
/// `running` record whose run is gone (the lock's pid is dead, or the lock is missing or
/// unreadable) is `interrupted` — unless it runs on Temporal (`engine` set), which keeps it.
pub fn effective_status(dir: &Path, record: &Value) -> String {
    let status = record
        .as_object()
        .and_then(|o| o.get("status"))
        .and_then(Value::as_str)
        .unwrap_or("failed");
    // A run on Temporal has no local lock: Temporal keeps it alive (`engine` in `run.json`).
    let remote = record
        .as_object()
        .and_then(|o| o.get("engine"))
        .is_some_and(|e| !matches!(e, Value::Null));
    if status == "running" && !remote && !lock_alive(dir) {
        return "interrupted".into();
    }
    status.to_owned()
}

/// Whether the run's lock names a live process (SPEC §10.1: a lock is stale when its pid is
/// dead). A zombie (killed, not yet reaped) counts as dead, and so does a process that started
/// after the lock was written: the pid was reused (after a reboot, say) by another program.
pub(crate) fn lock_alive(dir: &Path) -> bool {
    let lock = dir.join("lock");
    let Ok(text) = std::fs::read_to_string(&lock) else {
        return false;
    };
    let Ok(pid) = text.trim().parse::<i32>() else {
        return false;
    };
    if !pid_alive(pid) {
        return false;
    }
    let written = std::fs::metadata(&lock)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as u64);
    match (process_start_ms(pid), written) {
        // Generous slack: for clock ticks, file-time granularity and the wall clock being
        // adjusted while the run went on; a pid reused after a crash and reboot starts later.
        (Some(started), Some(written)) => started <= written + 30_000,
        _ => true,
    }
}

/// When process `pid` started (epoch ms), from `/proc` (Linux; `None` elsewhere). The start
/// is in clock ticks since boot, which user space sees at 100 Hz.
fn process_start_ms(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Field 22; the fields after the command name (which may hold spaces and parentheses)
    // start at field 3.
    let rest = &stat[stat.rfind(')')? + 1..];
    let ticks: u64 = rest.split_whitespace().nth(19)?.parse().ok()?;
    let boot: u64 = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    Some(boot * 1000 + ticks * 10)
}

fn pid_alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    use nix::errno::Errno;
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
        Ok(()) | Err(Errno::EPERM) => {}
        Err(_) => return false,
    }
    // On Linux, a zombie still answers signal 0.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next())
            .is_none_or(|state| state != "Z" && state != "X"),
        Err(_) => true,
    }
}

/// Retention (SPEC §10.1): delete the runs that are terminal (`completed`, `failed`,
/// `blocked`), beyond the project's newest [`KEEP_NEWEST`], and ended more than [`KEEP_FOR`]
/// before `now`. Running, paused and interrupted runs and unreadable records are never
/// touched. Returns how many runs were deleted.
pub fn prune(root: &Path, now: SystemTime) -> usize {
    let now_ms = now
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let cutoff = now_ms.saturating_sub(KEEP_FOR.as_millis() as u64);
    let mut removed = 0;
    for d in run_dirs(root, None).into_iter().skip(KEEP_NEWEST) {
        // A run ends after it starts: one started within the window ended within it.
        if d.started_ms >= cutoff {
            continue;
        }
        let Ok(record) = read_summary(&d.dir) else {
            continue;
        };
        if !matches!(
            effective_status(&d.dir, &record).as_str(),
            "completed" | "failed" | "blocked"
        ) {
            continue;
        }
        let field = |k: &str| {
            record
                .as_object()
                .and_then(|o| o.get(k))
                .and_then(Value::as_str)
                .and_then(parse_timestamp)
        };
        let ended = field("endedAt")
            .or_else(|| field("startedAt"))
            .unwrap_or(d.started_ms);
        if ended >= cutoff {
            continue;
        }
        if std::fs::remove_dir_all(&d.dir).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Epoch ms of an RFC 3339 UTC timestamp as the record writes them
/// (`2026-11-30T10:00:00.000Z`; fraction optional).
pub fn parse_timestamp(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let rest = &s[19..];
    let (frac, tail) = match rest.strip_prefix('.') {
        Some(r) => {
            let n = r.bytes().take_while(u8::is_ascii_digit).count();
            (&r[..n], &r[n..])
        }
        None => ("", rest),
    };
    if tail != "Z" {
        return None;
    }
    let ms = frac
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(3)
        .fold(0i64, |acc, c| acc * 10 + i64::from(c - b'0'));
    // Days from civil (proleptic Gregorian).
    let yy = if mo <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let total = ((days * 86_400 + h * 3600 + mi * 60 + se) * 1000) + ms;
    u64::try_from(total).ok()
}

// ---------------------------------------------------------------------------------------------
// The summary scanner: a run.json's top level, with the bulky members skipped, not built.

/// Top-level members a summary leaves out.
const SKIPPED: &[&str] = &["def", "finalOutput", "warnings"];
/// Per-phase members a summary keeps (and `subRun`, reduced to its `phases`, see
/// [`SUB_RUN`]).
/// (`approval` is small and gives a paused run's deadlines, SPEC §8.8.)
const PHASE_KEPT: &[&str] = &["status", "type", "attempts", "cacheHit", "approval"];
/// A phase's sub-run (a sub-flow's child run): a summary keeps only its `phases`, each
/// reduced the same way, so that the calls made inside sub-flows are counted
/// ([`super::summary::record_calls`]); nested deeper than [`super::record::MAX_SUB_RUN_DEPTH`]
/// it is left out (the record reader drops it too).
const SUB_RUN: &str = "subRun";

/// The summary of a run record's text (see [`RunEntry::record`]). The skipped members are
/// checked for balanced brackets and terminated strings, not parsed.
pub(crate) fn summarize(text: &str) -> Result<Value, String> {
    let mut s = Scanner { text, pos: 0 };
    let mut out = Map::default();
    s.members(|s, key| {
        if key == "phases" {
            let v = s.phases(0)?;
            out.insert(key, v);
        } else if SKIPPED.contains(&key.as_str()) {
            s.skip_value()?;
        } else {
            let v = s.value()?;
            out.insert(key, v);
        }
        Ok(())
    })?;
    s.ws();
    if s.pos != text.len() {
        return Err(format!(
            "unexpected text after the record at byte {}",
            s.pos
        ));
    }
    Ok(Value::Object(out))
}

struct Scanner<'a> {
    text: &'a str,
    pos: usize,
}

impl Scanner<'_> {
    fn ws(&mut self) {
        let b = self.text.as_bytes();
        while self.pos < b.len() && matches!(b[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
    }

    fn err<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{what} at byte {}", self.pos))
    }

    fn eat(&mut self, c: u8) -> Result<(), String> {
        self.ws();
        if self.text.as_bytes().get(self.pos) == Some(&c) {
            self.pos += 1;
            Ok(())
        } else if self.pos >= self.text.len() {
            self.err("unexpected end of input")
        } else {
            self.err(&format!("expected '{}'", c as char))
        }
    }

    /// Call `f` with each member's key, positioned at its value (which `f` must consume).
    fn members(
        &mut self,
        mut f: impl FnMut(&mut Self, String) -> Result<(), String>,
    ) -> Result<(), String> {
        self.eat(b'{')?;
        self.ws();
        if self.text.as_bytes().get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.ws();
            let start = self.pos;
            self.skip_string()?;
            let raw = &self.text[start..self.pos];
            let key = if raw.contains('\\') {
                match parse_json(raw) {
                    Ok(v) => match v.as_str() {
                        Some(k) => k.to_owned(),
                        None => return self.err("invalid key"),
                    },
                    Err(_) => return self.err("invalid key"),
                }
            } else {
                raw[1..raw.len() - 1].to_owned()
            };
            self.eat(b':')?;
            self.ws();
            f(self, key)?;
            self.ws();
            match self.text.as_bytes().get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                None => return self.err("unexpected end of input"),
                _ => return self.err("expected ',' or '}'"),
            }
        }
    }

    /// Parse the value here.
    fn value(&mut self) -> Result<Value, String> {
        let start = self.pos;
        self.skip_value()?;
        let raw = &self.text[start..self.pos];
        // Plain strings (most kept members) need no parser.
        if raw.len() >= 2 && raw.starts_with('"') && !raw.bytes().any(|b| b == b'\\' || b < 0x20) {
            return Ok(Value::from(&raw[1..raw.len() - 1]));
        }
        parse_json(raw).map_err(|e| format!("{} at byte {}", e.message, start + e.offset))
    }

    /// `phases` of a run nested `depth` sub-runs deep: each phase reduced to [`PHASE_KEPT`]
    /// and its [`SUB_RUN`].
    fn phases(&mut self, depth: usize) -> Result<Value, String> {
        self.ws();
        if self.text.as_bytes().get(self.pos) != Some(&b'{') {
            return self.value();
        }
        let mut out = Map::default();
        self.members(|s, id| {
            s.ws();
            if s.text.as_bytes().get(s.pos) != Some(&b'{') {
                let v = s.value()?;
                out.insert(id, v);
                return Ok(());
            }
            let mut phase = Map::default();
            s.members(|s, key| {
                if PHASE_KEPT.contains(&key.as_str()) {
                    let v = s.value()?;
                    phase.insert(key, v);
                } else if key == SUB_RUN && depth < super::record::MAX_SUB_RUN_DEPTH {
                    let v = s.sub_run(depth + 1)?;
                    phase.insert(key, v);
                } else {
                    s.skip_value()?;
                }
                Ok(())
            })?;
            out.insert(id, Value::Object(phase));
            Ok(())
        })?;
        Ok(Value::Object(out))
    }

    /// A phase's sub-run, `depth` sub-runs deep: only its `phases` (reduced as a run's are).
    fn sub_run(&mut self, depth: usize) -> Result<Value, String> {
        self.ws();
        if self.text.as_bytes().get(self.pos) != Some(&b'{') {
            return self.value();
        }
        let mut run = Map::default();
        self.members(|s, key| {
            if key == "phases" {
                let v = s.phases(depth)?;
                run.insert(key, v);
            } else {
                s.skip_value()?;
            }
            Ok(())
        })?;
        Ok(Value::Object(run))
    }

    fn skip_string(&mut self) -> Result<(), String> {
        let b = self.text.as_bytes();
        if b.get(self.pos) != Some(&b'"') {
            return self.err("expected a string");
        }
        let mut i = self.pos + 1;
        loop {
            match memchr::memchr2(b'"', b'\\', &b[i..]) {
                Some(n) if b[i + n] == b'"' => {
                    self.pos = i + n + 1;
                    return Ok(());
                }
                Some(n) => i += n + 2,
                None => {
                    self.pos = b.len();
                    return self.err("unterminated string");
                }
            }
            if i > b.len() {
                self.pos = b.len();
                return self.err("unterminated string");
            }
        }
    }

    /// Step over one value: strings and brackets are matched, scalars taken as they come
    /// (checked by the parser when a value is kept).
    fn skip_value(&mut self) -> Result<(), String> {
        self.ws();
        let b = self.text.as_bytes();
        let mut stack: Vec<u8> = Vec::new();
        loop {
            self.ws();
            let Some(&c) = b.get(self.pos) else {
                return self.err("unexpected end of input");
            };
            match c {
                b'"' => self.skip_string()?,
                b'{' | b'[' => {
                    stack.push(if c == b'{' { b'}' } else { b']' });
                    self.pos += 1;
                    continue;
                }
                b'}' | b']' => {
                    if stack.pop() != Some(c) {
                        return self.err("mismatched bracket");
                    }
                    self.pos += 1;
                }
                b',' | b':' if !stack.is_empty() => {
                    self.pos += 1;
                    continue;
                }
                _ => {
                    let n = b[self.pos..]
                        .iter()
                        .take_while(|c| {
                            !matches!(
                                c,
                                b',' | b'}'
                                    | b']'
                                    | b':'
                                    | b' '
                                    | b'\t'
                                    | b'\n'
                                    | b'\r'
                                    | b'"'
                                    | b'{'
                                    | b'['
                            )
                        })
                        .count();
                    if n == 0 {
                        return self.err("unexpected character");
                    }
                    self.pos += n;
                }
            }
            if stack.is_empty() {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
#[path = "runs_tests.rs"]
mod tests;

/// Where a run comes from, from its record (SPEC §10.4): `forked from R (--from a; --set b)`
/// for a fork, `resumed from R` for a resumed run, `None` for a run started afresh (a
/// sub-flow's child record names its parent run as `sub-run of R`).
pub fn lineage(record: &Value) -> Option<String> {
    let r = record.as_object()?;
    let parent = r.get("parentRunId")?.as_str()?;
    if let Some(Value::Object(f)) = r.get("forkedFrom") {
        let list = |k: &str| -> Vec<&str> {
            match f.get(k) {
                Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            }
        };
        let mut how = Vec::new();
        for (flag, k) in [("--from", "from"), ("--set", "set")] {
            let ids = list(k);
            if !ids.is_empty() {
                how.push(format!("{flag} {}", ids.join(", ")));
            }
        }
        let from = f.get("runId").and_then(Value::as_str).unwrap_or(parent);
        return Some(if how.is_empty() {
            format!("forked from {from}")
        } else {
            format!("forked from {from} ({})", how.join("; "))
        });
    }
    Some(format!("resumed from {parent}"))
}
