//! The activities of `TfcRun`, executed with this worker's configuration: agent calls and
//! scripts (heartbeating while they run, stopped when the workflow cancels them), working
//! directories, pre-reads, fingerprints and the cache, saved flows, sub-flow agents, the
//! `code-compiles` scorer, and the run store.

use std::collections::HashMap;
use std::io::{Seek, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use temporalio_macros::activities;
use temporalio_sdk::activities::{ActivityContext, ActivityError};

use super::wire::{CallWire, DirReady, DirWire, HookDone, HookWire, LookupWire, StoreBatch};
use crate::agent::{CancelSource, ResolvedAgent, Roster};
use crate::run::driver;
use crate::run::machine::{CallEnd, Event, ScriptOutcome, ScriptRequest};

/// How often a running call or script heartbeats (the workflow's heartbeat timeout is 30 s).
const HEARTBEAT: Duration = Duration::from_secs(2);

/// The activities, with this worker's agents.
pub struct TfcActivities {
    roster: Arc<dyn Roster>,
    agents: Mutex<HashMap<String, ResolvedAgent>>,
}

impl TfcActivities {
    /// Activities resolving agents through `roster` (this worker's configuration).
    pub fn new(roster: Arc<dyn Roster>) -> TfcActivities {
        TfcActivities {
            roster,
            agents: Mutex::new(HashMap::new()),
        }
    }

    fn resolve(&self, agent: &str) -> Result<ResolvedAgent, String> {
        let mut agents = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        driver::resolve_agent(&mut agents, self.roster.as_ref(), agent).cloned()
    }
}

/// Await `work` while heartbeating; the workflow's cancellation fires `stop`, and the work
/// still ends (with its cancelled outcome).
async fn supervised<T>(
    ctx: &ActivityContext,
    stop: Arc<CancelSource>,
    work: impl std::future::Future<Output = T>,
) -> T {
    tokio::pin!(work);
    let mut cancelled = false;
    loop {
        tokio::select! {
            out = &mut work => return out,
            _ = tokio::time::sleep(HEARTBEAT) => {
                let _ = ctx.record_heartbeat(()).await;
            }
            _ = ctx.cancelled(), if !cancelled => {
                cancelled = true;
                stop.cancel();
            }
        }
    }
}

/// Run a call's or a script's process supervision (smol-based I/O) on a blocking-pool thread
/// of its own, so no call ever holds one of the runtime's few threads, which also poll the
/// worker's workflow and activity tasks.
async fn off_runtime<T: Send + 'static>(
    work: impl std::future::Future<Output = T> + Send + 'static,
) -> Result<T, ActivityError> {
    tokio::task::spawn_blocking(move || smol::block_on(work))
        .await
        .map_err(ActivityError::from)
}

#[activities]
impl TfcActivities {
    /// One attempt of an agent call.
    #[activity(name = "agent-call")]
    pub async fn agent_call(
        self: Arc<Self>,
        ctx: ActivityContext,
        call: CallWire,
    ) -> Result<CallEnd, ActivityError> {
        let traceparent = call.traceparent.clone();
        let req = call.into_request();
        let resolved = self.resolve(&req.agent).ok();
        let mut prepared = match driver::prepare_call(resolved.as_ref(), self.roster.as_ref(), req)
        {
            Ok(p) => p,
            Err(end) => return Ok(end),
        };
        prepared.request.traceparent = traceparent;
        let stop = Arc::new(CancelSource::new());
        supervised(
            &ctx,
            stop.clone(),
            off_runtime(driver::perform_call(prepared, stop)),
        )
        .await
    }

    /// A script phase's process.
    #[activity(name = "script")]
    pub async fn script(
        ctx: ActivityContext,
        script: ScriptRequest,
    ) -> Result<ScriptOutcome, ActivityError> {
        let stop = Arc::new(CancelSource::new());
        let token = stop.token();
        supervised(&ctx, stop, off_runtime(driver::run_script(script, token))).await
    }

    /// The flow's hook of the run's ending (SPEC §8.10), after `run.json` is final: the
    /// record on stdin (read from `run.json`), heartbeating while it runs. A hook that fails
    /// is a result, not an activity failure (only a lost worker makes Temporal run it again,
    /// with the same `TFC_HOOK_ID`).
    #[activity(name = "hook")]
    pub async fn hook(ctx: ActivityContext, h: HookWire) -> Result<HookDone, ActivityError> {
        let Some(event) = crate::flow::HookEvent::parse(&h.event) else {
            return Err(ActivityError::from(std::io::Error::other(format!(
                "unknown hook event '{}'",
                h.event
            ))));
        };
        let stdin = std::fs::read_to_string(&h.run_json)
            .ok()
            .and_then(|t| crate::run::hooks::record_from_run_json(&t))
            .unwrap_or_default();
        let call = crate::run::hooks::HookCall {
            event,
            argv: h.argv,
            stdin,
            env: crate::run::hooks::env_names(h.env),
            cwd: h.cwd,
            timeout_ms: h.timeout_ms,
        };
        let stop = Arc::new(CancelSource::new());
        let token = stop.token();
        let ran = supervised(
            &ctx,
            stop,
            off_runtime(async move { crate::run::hooks::run(&call, token).await }),
        )
        .await?;
        Ok(HookDone {
            line: ran.journal_value().to_json(),
        })
    }

    /// A phase's working directory.
    #[activity(name = "prepare-dir")]
    pub async fn prepare_dir(_ctx: ActivityContext, d: DirWire) -> Result<DirReady, ActivityError> {
        let r = crate::run::workdir::prepare(
            &d.dir,
            &d.base,
            &d.phase,
            &d.run_id,
            d.project_root.as_deref(),
        )
        .await;
        Ok(match r {
            Ok((dir, warning)) => {
                let (path, temp) = dir.keep();
                DirReady {
                    path: Ok(path),
                    warning,
                    temp,
                }
            }
            Err(e) => DirReady {
                path: Err(e),
                warning: None,
                temp: false,
            },
        })
    }

    /// A temporary working directory goes when its phase ends.
    #[activity(name = "release-dir")]
    pub async fn release_dir(
        _ctx: ActivityContext,
        path: std::path::PathBuf,
    ) -> Result<(), ActivityError> {
        let _ = std::fs::remove_dir_all(path);
        Ok(())
    }

    /// A phase's context files (SPEC §3.16).
    #[activity(name = "pre-read")]
    pub async fn pre_read(
        _ctx: ActivityContext,
        req: (Vec<String>, usize, std::path::PathBuf),
    ) -> Result<String, ActivityError> {
        let (paths, limit, base) = req;
        Ok(crate::run::workdir::read_context(&base, &paths, limit))
    }

    /// A cache lookup: the key's fingerprints resolved, then the cross-run store.
    #[activity(name = "fingerprint")]
    pub async fn fingerprint(_ctx: ActivityContext, l: LookupWire) -> Result<Event, ActivityError> {
        let resumed = match &l.resume {
            Some(origin) => {
                Some(carried(origin).map_err(|e| ActivityError::from(std::io::Error::other(e)))?)
            }
            None => None,
        };
        Ok(crate::run::resume::look_up(crate::run::resume::Lookup {
            op: l.op,
            node: &l.node,
            parts: l.parts,
            fingerprints: &l.fingerprints,
            resumed: resumed.as_deref(),
            store: l.project_root.as_deref().filter(|_| l.cross_run),
            ttl_ms: l.ttl_ms,
            cwd: &l.cwd,
            now: l.now,
        }))
    }

    /// Keep a `done` phase in the cross-run cache.
    #[activity(name = "cache-store")]
    pub async fn cache_store(
        _ctx: ActivityContext,
        req: (std::path::PathBuf, String, String, u64),
    ) -> Result<(), ActivityError> {
        let (root, key, record, now) = req;
        let Some(value) = crate::json::parse(&record).root.map(|r| r.to_value()) else {
            return Ok(());
        };
        crate::run::cache::store::store(&root, &key, &value, now).map_err(ActivityError::from)
    }

    /// A saved flow's text.
    #[activity(name = "load-flow")]
    pub async fn load_flow(
        _ctx: ActivityContext,
        req: (String, std::path::PathBuf),
    ) -> Result<Option<String>, ActivityError> {
        let (name, cwd) = req;
        Ok(driver::load_saved_flow(&name, &cwd))
    }

    /// A sub-flow's agents: their backend names on this worker, and the sub-run's id.
    #[activity(name = "resolve-agents")]
    pub async fn resolve_agents(
        self: Arc<Self>,
        _ctx: ActivityContext,
        req: (Vec<String>, String),
    ) -> Result<(String, Vec<(String, String)>, Option<String>), ActivityError> {
        let (names, flow) = req;
        let mut agents = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        let (backends, error) = driver::resolve_agents(names, &mut agents, self.roster.as_ref());
        Ok((crate::run::store::new_run_id(&flow), backends, error))
    }

    /// A `code-compiles` scorer.
    #[activity(name = "run-scorer")]
    pub async fn run_scorer(
        _ctx: ActivityContext,
        req: (String, String),
    ) -> Result<(bool, Option<String>), ActivityError> {
        Ok(driver::code_compiles(&req.0, &req.1).await)
    }

    /// Journal lines and `run.json` (a local activity of the worker holding the workflow).
    #[activity(name = "store")]
    pub async fn store(_ctx: ActivityContext, b: StoreBatch) -> Result<(), ActivityError> {
        write_batch(&b).map_err(ActivityError::from)
    }
}

/// What a resumed run may reuse, planned once per parent on this worker (every lookup of
/// the run asks for the same).
fn carried(
    origin: &crate::run::resume::Origin,
) -> Result<std::sync::Arc<crate::run::resume::Carried>, String> {
    use std::sync::{Arc, Mutex};
    type Planned = Vec<(crate::run::resume::Origin, Arc<crate::run::resume::Carried>)>;
    static PLANNED: Mutex<Planned> = Mutex::new(Vec::new());
    let mut planned = PLANNED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, c)) = planned.iter().find(|(o, _)| o == origin) {
        return Ok(c.clone());
    }
    let c = Arc::new(crate::run::fork::replan(origin).map_err(|e| {
        format!(
            "the run this one resumes ({}) could not be read on this worker: {e}",
            origin.dir.display()
        )
    })?);
    // A worker serves few resumed runs at once: keep the last few.
    if planned.len() >= 8 {
        planned.remove(0);
    }
    planned.push((origin.clone(), c.clone()));
    Ok(c)
}

/// Rewrite `run.json` (temp file, fsync, rename), then append the batch's journal lines
/// unless they are there already (the journal's length before them is `offset`: a replayed
/// batch finds the file longer and writes nothing, a torn one is cut back to `offset` first).
pub(crate) fn write_batch(b: &StoreBatch) -> std::io::Result<()> {
    std::fs::create_dir_all(&b.dir)?;
    // The large outputs `run.json` points at, before it.
    crate::run::store::write_outputs(&b.dir, &b.files)?;
    // `run.json` first: a follower that sees the journal's end finds the final record.
    if let Some(record) = &b.record {
        write_atomic(&b.dir.join("run.json"), record)?;
    }
    if !b.lines.is_empty() {
        let path = b.dir.join("journal.jsonl");
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)?;
        let len = f.metadata()?.len();
        let end = b.offset + b.lines.len() as u64;
        if len < b.offset {
            return Err(std::io::Error::other(format!(
                "{} is shorter ({len} bytes) than the run has written ({} bytes)",
                path.display(),
                b.offset
            )));
        }
        if len < end {
            f.set_len(b.offset)?;
            f.seek(std::io::SeekFrom::Start(b.offset))?;
            f.write_all(b.lines.as_bytes())?;
            f.flush()?;
        }
    }
    Ok(())
}

fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("json.tmp-{}", std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(dir: &Path, offset: u64, lines: &str, record: Option<&str>) -> StoreBatch {
        StoreBatch {
            dir: dir.to_path_buf(),
            offset,
            lines: lines.to_owned(),
            record: record.map(str::to_owned),
            files: Vec::new(),
        }
    }

    #[test]
    fn a_replayed_or_torn_batch_writes_each_journal_line_once() {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path().join("run");
        let journal = || std::fs::read_to_string(dir.join("journal.jsonl")).expect("journal");
        write_batch(&batch(&dir, 0, "a\nb\n", Some("{}"))).expect("first");
        write_batch(&batch(&dir, 4, "c\n", None)).expect("second");
        // The first batch again (a replay): nothing changes.
        write_batch(&batch(&dir, 0, "a\nb\n", Some("{}"))).expect("replay");
        assert_eq!(journal(), "a\nb\nc\n");
        // A torn append is cut back and written whole.
        std::fs::write(dir.join("journal.jsonl"), "a\nb\nc\nd").expect("torn");
        write_batch(&batch(&dir, 6, "d\ne\n", Some("{\"n\": 2}"))).expect("after a tear");
        assert_eq!(journal(), "a\nb\nc\nd\ne\n");
        assert_eq!(
            std::fs::read_to_string(dir.join("run.json")).expect("record"),
            "{\"n\": 2}"
        );
        // Lines missing before the batch: an error, nothing written.
        let e = write_batch(&batch(&dir, 99, "z\n", None)).expect_err("a gap");
        assert!(e.to_string().contains("shorter"), "{e}");
        assert_eq!(journal(), "a\nb\nc\nd\ne\n");
    }
}
