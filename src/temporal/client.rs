//! The client side: `tfc worker` (a Temporal worker serving `TfcRun` and its activities),
//! starting a run and following it through its journal, `tfc cancel` and `tfc approve`.

use std::sync::Arc;
use std::time::Duration;

use temporalio_client::errors::{WorkflowGetResultError, WorkflowUpdateError};
use temporalio_client::{
    Client, ClientOptions, Connection, ConnectionOptions, Url, WorkflowCancelOptions,
    WorkflowExecuteUpdateOptions, WorkflowGetResultOptions, WorkflowStartOptions,
};
use temporalio_common::worker::WorkerDeploymentOptions;
use temporalio_sdk::runtime::worker_tuner::{FixedSizeSlotSupplier, TunerHolder, WorkerTuner};
use temporalio_sdk::{Runtime, Worker, WorkerOptions};

use super::activities::TfcActivities;
use super::wire::{ApprovalSignal, RunInput};
use super::workflow::TfcRun;
use crate::agent::{Cancel, Roster};
use crate::flow::Invocation;
use crate::run::machine::{Command, Decision, Input, Machine};
use crate::run::{FlowSource, Interpreter, ProgressSink, RunError, RunRecord};
use crate::value::Value;

/// Where the Temporal service is, and which queue tfc's workers poll.
#[derive(Clone, Debug)]
pub struct Remote {
    /// `HOST:PORT` of the frontend service.
    pub address: String,
    /// The namespace.
    pub namespace: String,
    /// The task queue.
    pub task_queue: String,
    /// A map of more items than this runs its calls in child workflows of this many.
    pub shard_items: usize,
}

fn tokio() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the Temporal client runtime: {e}"))
}

async fn connect(remote: &Remote) -> Result<Client, String> {
    let url = if remote.address.contains("://") {
        remote.address.clone()
    } else {
        format!("http://{}", remote.address)
    };
    let url = Url::parse(&url)
        .map_err(|e| format!("--temporal '{}' is not HOST:PORT: {e}", remote.address))?;
    let conn = Connection::connect(
        ConnectionOptions::new(url)
            .identity(format!("tfc-{}@{}", std::process::id(), host_name()))
            .build(),
    )
    .await
    .map_err(|e| {
        format!(
            "cannot reach the Temporal service at {}: {e} (is the server running? start a \
             dev server with `temporal server start-dev`)",
            remote.address
        )
    })?;
    Client::new(conn, ClientOptions::new(remote.namespace.clone()).build())
        .map_err(|e| format!("cannot use namespace '{}': {e}", remote.namespace))
}

fn host_name() -> String {
    std::env::var("HOSTNAME").unwrap_or_else(|_| "localhost".into())
}

/// Serve workflow `TfcRun` and its activities until the process is stopped; agents resolve
/// through `roster` (this worker's configuration); at most `slots` activities at once.
pub fn worker(remote: &Remote, roster: Arc<dyn Roster>, slots: usize) -> Result<(), String> {
    let rt = tokio()?;
    rt.block_on(async {
        let runtime = Runtime::from_current_tokio(Default::default())
            .map_err(|e| format!("cannot start the Temporal worker runtime: {e}"))?;
        let client = connect(remote).await?;
        let tuner = TunerHolder::builder()
            .workflow_task_slot_supplier(FixedSizeSlotSupplier::new(50))
            .activity_task_slot_supplier(FixedSizeSlotSupplier::new(slots.max(1)))
            .local_activity_task_slot_supplier(FixedSizeSlotSupplier::new(50))
            .nexus_task_slot_supplier(FixedSizeSlotSupplier::new(1))
            .build();
        let options = WorkerOptions::new(remote.task_queue.clone())
            .register_workflow::<TfcRun>()
            .map_err(|e| format!("cannot register workflow TfcRun: {e}"))?
            .register_workflow::<super::shard::TfcShard>()
            .map_err(|e| format!("cannot register workflow TfcShard: {e}"))?
            .register_activities(TfcActivities::new(roster))
            .deployment_options(WorkerDeploymentOptions::from_build_id(
                super::wire::BUILD_ID.to_owned(),
            ))
            .tuner(WorkerTuner::from(tuner))
            // Calls spread over the fleet instead of running where the workflow is.
            .max_eager_activity_reservations_per_workflow_task(0)
            .build();
        let mut worker = Worker::new(&runtime, client, options)
            .map_err(|e| format!("cannot start the worker: {e}"))?;
        worker
            .run()
            .await
            .map_err(|e| format!("the worker stopped: {e}"))
    })
}

/// Told the run id and the node path of an approval the run starts waiting for.
pub type Asked = Arc<dyn Fn(&str, &str) + Send + Sync>;

/// How to follow a started run.
pub struct Follow {
    /// Progress notes, as a local run gives them.
    pub progress: Option<ProgressSink>,
    /// Ctrl-C: stop following (the run goes on).
    pub detach: Cancel,
    /// `run.json` members besides the record (`launch`).
    pub launch: Option<Value>,
    /// Told the run id and the node path of each approval the run starts waiting for.
    pub asked: Option<Asked>,
}

/// How following a run ended.
pub enum Followed {
    /// The run ended: its record.
    Done(Box<RunRecord>),
    /// The caller detached; the run goes on.
    Detached {
        /// The run id.
        run_id: String,
    },
    /// The workflow ended without finishing the run (terminated, or failed by a bug).
    Lost {
        /// The run id.
        run_id: String,
        /// What Temporal says.
        message: String,
    },
}

/// Check, start workflow `TfcRun` (id = run id) and follow it through its journal until
/// it ends: the same progress notes and record as a local run.
pub fn start_run(
    remote: &Remote,
    interp: &Interpreter,
    source: FlowSource,
    invocation: Invocation,
    follow: Follow,
) -> Result<Followed, RunError> {
    let prepared = interp.prepare(source, invocation, true)?;
    let mut config = prepared.config;
    // Approvals without a flag wait for update `decide` (`tfc approve`).
    config.ask = true;
    config.progress = false;
    // A large map's calls go to child workflows, a shard at a time.
    config.shard_items = Some(remote.shard_items.max(1));
    let def = prepared
        .def
        .ok_or_else(|| RunError::Io("the flow's definition could not be read".into()))?;
    let mut meta = crate::run::driver::flow_def_hash(&def);
    if let Some(l) = follow.launch.clone() {
        meta.insert("launch".into(), l);
    }
    if let Some(f) = interp.forked_from() {
        meta.insert("forkedFrom".into(), f.clone());
    }
    // Where the run lives: `tfc runs` shows it running without a local lock.
    let mut engine = crate::value::Map::default();
    engine.insert("kind".into(), Value::from("temporal"));
    engine.insert("address".into(), Value::from(remote.address.as_str()));
    engine.insert("namespace".into(), Value::from(remote.namespace.as_str()));
    engine.insert("taskQueue".into(), Value::from(remote.task_queue.as_str()));
    meta.insert("engine".into(), Value::Object(engine));
    let commit = crate::run::cache::fingerprint::head_commit(&prepared.cwd);
    meta.insert("gitCommit".into(), commit.map_or(Value::Null, Value::from));
    // Traced as a local run would be (its ids go into `run.json`); the worker holding the
    // workflow exports the spans.
    let trace = crate::run::trace::TracePlan::for_run(interp.run_options(), &mut meta);
    let input = RunInput {
        run_id: config.run_id.clone(),
        flow_name: prepared.flow.name.clone(),
        def: def.to_json(),
        args: Value::Object(prepared.args.clone()).to_json(),
        config: config.to_value().to_json(),
        meta: Value::Object(meta).to_json(),
        version: super::wire::BUILD_ID.to_owned(),
        resume: interp.resumes().cloned(),
        trace: trace.map(|t| t.to_json()),
    };
    let setup = super::host::setup(&input)
        .ok_or_else(|| RunError::Io("the run's input could not be built".into()))?;
    let rt = tokio().map_err(RunError::Io)?;
    rt.block_on(async move {
        let client = connect(remote).await.map_err(RunError::Io)?;
        let handle = client
            .start_workflow(
                TfcRun::run,
                input.clone(),
                WorkflowStartOptions::new(remote.task_queue.clone(), input.run_id.clone()).build(),
            )
            .await
            .map_err(|e| RunError::Io(format!("cannot start the run on Temporal: {e}")))?;
        let run_id = input.run_id.clone();
        // The workflow's end; a lost connection (a restarting server) is waited out.
        let ended = tokio::spawn(async move {
            loop {
                match handle.get_result(WorkflowGetResultOptions::default()).await {
                    Ok(status) => return Ok(status),
                    Err(
                        e @ (WorkflowGetResultError::Failed(_)
                        | WorkflowGetResultError::Cancelled { .. }
                        | WorkflowGetResultError::Terminated { .. }
                        | WorkflowGetResultError::TimedOut
                        | WorkflowGetResultError::ContinuedAsNew
                        | WorkflowGetResultError::NotFound(_)),
                    ) => return Err(e.to_string()),
                    Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
                }
            }
        });
        let mut mirror = Mirror::new(setup, follow.progress, follow.asked);
        let mut ended = Some(ended);
        let mut outcome: Option<Result<String, String>> = None;
        loop {
            if let Some(record) = mirror.read() {
                return Ok(Followed::Done(mirror.done(record, &follow.detach).await));
            }
            if let Some(Err(message)) = &outcome {
                // One last read: the journal may have ended meanwhile.
                if let Some(record) = mirror.read() {
                    return Ok(Followed::Done(mirror.done(record, &follow.detach).await));
                }
                return Ok(Followed::Lost {
                    run_id,
                    message: message.clone(),
                });
            }
            if follow.detach.is_cancelled() {
                return Ok(Followed::Detached { run_id });
            }
            if let Some(h) = ended.as_mut()
                && h.is_finished()
            {
                let h = ended.take().expect("checked");
                outcome = Some(h.await.unwrap_or_else(|e| Err(e.to_string())));
                if let Some(Ok(_)) = &outcome {
                    // Ended well: the journal has the end; give the reader a moment.
                    for _ in 0..50 {
                        if let Some(record) = mirror.read() {
                            return Ok(Followed::Done(mirror.done(record, &follow.detach).await));
                        }
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    return Ok(Followed::Lost {
                        run_id,
                        message: "the workflow ended but its journal has no end".into(),
                    });
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
}

/// A machine fed the journal's inputs, as the workflow's was: its progress notes and its
/// final record.
struct Mirror {
    machine: Machine,
    path: std::path::PathBuf,
    pos: u64,
    partial: String,
    progress: Option<ProgressSink>,
    asked: Option<Asked>,
    run_id: String,
    cmds: Vec<Command>,
    /// The journal's `hook` line, when a read of the run's inputs took it in with them.
    hook: Option<serde_json::Value>,
}

impl Mirror {
    /// The run ended: wait for its hook (SPEC §8.10), which the workflow runs after the
    /// record is final, and tell one that did not succeed as a warning, as a local run does
    /// (at most the hook's timeout and a minute and a half; Ctrl-C stops waiting).
    async fn done(&mut self, record: RunRecord, detach: &Cancel) -> Box<RunRecord> {
        let cwd = std::path::Path::new(".");
        let Some(call) = crate::run::hooks::plan(&self.machine.flow, &record, None, cwd) else {
            return Box::new(record);
        };
        let deadline = std::time::Instant::now()
            + Duration::from_millis(call.timeout_ms)
            + Duration::from_secs(90);
        while std::time::Instant::now() < deadline && !detach.is_cancelled() {
            if let Some(line) = self.hook_line() {
                if let (Some(error), Some(sink)) = (line["error"].as_str(), &self.progress) {
                    sink.warn(&format!("hooks.{}", call.event.key()), error);
                }
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Box::new(record)
    }

    /// The journal's `hook` line, once it is there (read on from where the run's end was).
    fn hook_line(&mut self) -> Option<serde_json::Value> {
        if let Some(line) = self.hook.take() {
            return Some(line);
        }
        use std::io::{Read, Seek};
        let mut f = std::fs::File::open(&self.path).ok()?;
        f.seek(std::io::SeekFrom::Start(self.pos)).ok()?;
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).ok()?;
        self.pos += bytes.len() as u64;
        self.partial.push_str(&String::from_utf8_lossy(&bytes));
        let end = self.partial.rfind('\n')?;
        let complete: String = self.partial.drain(..=end).collect();
        complete
            .lines()
            .filter(|l| l.starts_with("{\"type\":\"hook\""))
            .find_map(|l| serde_json::from_str(l).ok())
    }

    fn new(
        setup: super::host::Setup,
        progress: Option<ProgressSink>,
        asked: Option<Asked>,
    ) -> Mirror {
        let mut config = setup.config;
        config.progress = progress.is_some();
        let run_id = config.run_id.clone();
        Mirror {
            run_id,
            machine: Machine::new(setup.flow, setup.args, config),
            path: setup.dir.join("journal.jsonl"),
            pos: 0,
            partial: String::new(),
            progress,
            asked,
            cmds: Vec::new(),
            hook: None,
        }
    }

    /// Read what the journal gained; the record once the run ended.
    fn read(&mut self) -> Option<RunRecord> {
        use std::io::{Read, Seek};
        let mut f = std::fs::File::open(&self.path).ok()?;
        f.seek(std::io::SeekFrom::Start(self.pos)).ok()?;
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).ok()?;
        self.pos += bytes.len() as u64;
        self.partial.push_str(&String::from_utf8_lossy(&bytes));
        let end = self.partial.rfind('\n')?;
        let complete: String = self.partial.drain(..=end).collect();
        // The workflow appends its hook's line right after the run's last input: one read
        // may bring both, and what follows the run's end here is read no more.
        if let Some(hook) = complete
            .lines()
            .filter(|l| l.starts_with("{\"type\":\"hook\""))
            .find_map(|l| serde_json::from_str(l).ok())
        {
            self.hook = Some(hook);
        }
        for line in complete.lines() {
            if !line.starts_with("{\"type\":\"input\"") {
                continue;
            }
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let Some(Ok(input)) = v.get("input").cloned().map(serde_json::from_value::<Input>)
            else {
                continue;
            };
            self.machine.handle_into(input, &mut self.cmds);
            let mut done = None;
            for c in self.cmds.drain(..) {
                match c {
                    Command::Progress(p) => {
                        if let Some(sink) = &self.progress {
                            sink.tell(&p);
                        }
                    }
                    Command::AskApproval { phase, .. } => {
                        if let Some(f) = &self.asked {
                            f(&self.run_id, &phase);
                        }
                    }
                    Command::Finish(r) => done = Some(*r),
                    _ => {}
                }
            }
            if done.is_some() {
                return done;
            }
        }
        None
    }
}

/// `tfc cancel RUN`: cancel the workflow; the run ends `paused` (interrupted).
pub fn cancel(remote: &Remote, run_id: &str) -> Result<(), String> {
    tokio()?.block_on(async {
        let client = connect(remote).await?;
        client
            .get_workflow_handle::<TfcRun>(run_id)
            .cancel(WorkflowCancelOptions::default())
            .await
            .map_err(|e| format!("cannot cancel run '{run_id}' on Temporal: {e}"))
    })
}

/// How long `tfc approve` waits for a worker to take its decision.
const APPROVE_WAIT: Duration = Duration::from_secs(60);

/// `tfc approve RUN PHASE [--reject] [--reason T]`: update `decide`, which the workflow
/// takes, or refuses once the approval's deadline has passed (SPEC §8.8: the error is the
/// refusal, `approval '<id>' expired at <expiresAt>; its onTimeout (<action>) decides`).
pub fn approve(
    remote: &Remote,
    run_id: &str,
    phase: &str,
    decision: Decision,
    note: Option<String>,
) -> Result<(), String> {
    tokio()?.block_on(async {
        let client = connect(remote).await?;
        let handle = client.get_workflow_handle::<TfcRun>(run_id);
        let update = handle.execute_update(
            TfcRun::decide,
            ApprovalSignal {
                phase: phase.to_owned(),
                decision,
                note,
            },
            WorkflowExecuteUpdateOptions::default(),
        );
        match tokio::time::timeout(APPROVE_WAIT, update).await {
            Ok(Ok(())) => Ok(()),
            // The workflow's answer (a late decision): its message as it is.
            Ok(Err(WorkflowUpdateError::Failed(f))) => Err(f.message.clone()),
            Ok(Err(e)) => Err(format!("cannot decide run '{run_id}' on Temporal: {e}")),
            Err(_) => Err(format!(
                "no worker took the decision on run '{run_id}' within {} s: start `tfc worker` \
                 for task queue '{}' (the decision may still be taken once one serves the run)",
                APPROVE_WAIT.as_secs(),
                remote.task_queue
            )),
        }
    })
}
