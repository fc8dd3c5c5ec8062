//! Runs on Temporal (SPEC §14.3): `tfc worker`, `tfc cancel RUN`, `tfc approve RUN PHASE`,
//! and the Temporal side of `tfc run --engine temporal`. A build without the cargo feature
//! `temporal` says how to get one that has it (exit 2).

use std::process::ExitCode;

use clap::Args;

/// What a build without Temporal support says.
#[cfg_attr(feature = "temporal", allow(dead_code))]
pub(super) const NO_TEMPORAL: &str = "this tfc was built without Temporal support; build one \
     with it: `cargo install --locked --path . --features temporal` (needs `protoc`, Debian package \
     protobuf-compiler with libprotobuf-dev)";

/// Where the Temporal service is (shared by the commands that talk to it).
#[derive(Args, Debug, Default, Clone)]
pub struct TemporalArgs {
    /// The Temporal frontend service, HOST:PORT.
    #[arg(long = "temporal", value_name = "HOST:PORT")]
    pub(super) address: Option<String>,
    /// The Temporal namespace (default: `[engine] namespace`, else `default`).
    #[arg(long)]
    pub(super) namespace: Option<String>,
    /// The task queue tfc's workers poll (default: `[engine] task_queue`, else `tfc`).
    #[arg(long = "task-queue", value_name = "Q")]
    pub(super) task_queue: Option<String>,
}

/// `[engine]` of the project's configuration; empty when there is none or it cannot be read
/// (the run's own configuration check reports a broken file).
pub(super) fn engine_settings(cwd: &std::path::Path) -> tfc::agent::config::EngineSettings {
    use tfc::agent::config::{Config, ConfigEnv};
    let root = tfc::project::project_root(cwd);
    Config::load(&root, &ConfigEnv::from_process())
        .map(|c| c.engine)
        .unwrap_or_default()
}

#[derive(Args, Debug)]
pub struct WorkerArgs {
    #[command(flatten)]
    pub(super) remote: TemporalArgs,
    /// At most this many agent calls and scripts at once on this worker.
    #[arg(long = "max-concurrent-calls", value_name = "N", default_value_t = 8)]
    pub(super) max_concurrent_calls: usize,
    /// The old spelling of --max-concurrent-calls (deprecated: `--max-calls` now caps a run's
    /// agent calls on `tfc run`); accepted for one release, with a warning.
    #[arg(
        long = "max-calls",
        value_name = "N",
        hide = true,
        conflicts_with = "max_concurrent_calls"
    )]
    pub(super) max_calls_deprecated: Option<usize>,
    /// Serve every agent with this backend (a configured name).
    #[arg(long)]
    pub(super) backend: Option<String>,
    /// Serve every agent with this command (prompt on stdin, answer on stdout).
    #[arg(long = "agent-cmd", value_name = "CMD")]
    pub(super) agent_cmd: Option<String>,
    /// Let agents use write/edit/bash tools on unsandboxed backends.
    #[arg(long)]
    pub(super) allow_writes: bool,
}

impl WorkerArgs {
    /// The activity slots, from either spelling (the old one with a deprecation warning).
    fn slots(&self) -> usize {
        match self.max_calls_deprecated {
            Some(n) => {
                sayln!(
                    "warning: `tfc worker --max-calls` is deprecated and will be removed in the next release; use --max-concurrent-calls {n} (`--max-calls` caps a run's agent calls on `tfc run`)"
                );
                n
            }
            None => self.max_concurrent_calls,
        }
    }
}

#[derive(Args, Debug)]
pub struct CancelArgs {
    /// The run: its id, a unique id prefix, or `last`.
    pub(super) run: String,
    #[command(flatten)]
    pub(super) remote: TemporalArgs,
}

#[derive(Args, Debug)]
pub struct ApproveArgs {
    /// The run: its id, a unique id prefix, or `last`.
    pub(super) run: String,
    /// The approval phase (its node path inside sub-flows).
    pub(super) phase: String,
    /// Reject instead of approving.
    #[arg(long)]
    pub(super) reject: bool,
    /// The note recorded with the decision.
    #[arg(long)]
    pub(super) reason: Option<String>,
    #[command(flatten)]
    pub(super) remote: TemporalArgs,
}

/// The service, namespace and queue: the flags, else `TFC_TEMPORAL` (address only), else
/// `[engine]` of the configuration; or the usage error.
#[cfg(feature = "temporal")]
pub(super) fn remote(a: &TemporalArgs) -> Result<tfc::temporal::Remote, String> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("."));
    let cfg = engine_settings(&cwd);
    let address = a
        .address
        .clone()
        .or_else(|| std::env::var("TFC_TEMPORAL").ok().filter(|s| !s.is_empty()))
        .or(cfg.address)
        .ok_or_else(|| {
            "no Temporal service given: pass --temporal HOST:PORT (or set TFC_TEMPORAL, or \
             `address` under [engine] in .tfc/config.toml)"
                .to_owned()
        })?;
    Ok(tfc::temporal::Remote {
        address,
        namespace: a
            .namespace
            .clone()
            .or(cfg.namespace)
            .unwrap_or_else(|| "default".to_owned()),
        task_queue: a
            .task_queue
            .clone()
            .or(cfg.task_queue)
            .unwrap_or_else(|| tfc::temporal::DEFAULT_TASK_QUEUE.to_owned()),
        shard_items: cfg
            .shard_items
            .map_or(tfc::temporal::DEFAULT_SHARD_ITEMS, |n| n as usize),
    })
}

#[cfg(feature = "temporal")]
pub fn worker(a: WorkerArgs) -> ExitCode {
    use std::sync::Arc;
    let slots = a.slots();
    let remote = match remote(&a.remote) {
        Ok(r) => r,
        Err(m) => return super::usage_error(m).into(),
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("."));
    let agent_cmd = match a
        .agent_cmd
        .as_deref()
        .map(tfc::agent::command::split_command)
    {
        Some(Ok(c)) => Some(c),
        Some(Err(m)) => return super::usage_error(m).into(),
        None => None,
    };
    let options = tfc::agent::RosterOptions {
        backend: a.backend.clone(),
        agent_backends: Vec::new(),
        agent_cmd,
        record: None,
        dry_run: None,
        allow_writes: a.allow_writes,
    };
    let roster = match tfc::agent::ConfigRoster::load(
        &cwd,
        tfc::flow::AgentScope::default(),
        options,
        Arc::new(tfc::agent::ProcessBackends),
    ) {
        Ok((r, warnings)) => {
            for w in warnings {
                sayln!("warning: {w}");
            }
            r
        }
        Err(m) => {
            sayln!("error[E0701]: {m}");
            return ExitCode::from(3);
        }
    };
    // The spans of the traced runs whose workflows this worker holds (`OTEL_*`, else
    // `[telemetry]`); the process that starts a run decides whether it is traced.
    let export = super::telemetry::start(&roster.config().telemetry, false, false);
    sayln!(
        "worker: serving task queue '{}' of namespace '{}' at {} (build {}, at most {} calls at once)",
        remote.task_queue,
        remote.namespace,
        remote.address,
        tfc::temporal::BUILD_ID,
        slots
    );
    match export.telemetry.as_ref() {
        Some(tel) => {
            let to = tel
                .settings()
                .traces
                .as_ref()
                .map_or("", |t| t.url.as_str());
            sayln!("worker: traced runs' spans go to {to}");
            tfc::temporal::export_traces(tel.clone());
        }
        None => sayln!(
            "worker: traced runs' spans are not exported (set OTEL_EXPORTER_OTLP_ENDPOINT \
             for this worker to export them)"
        ),
    }
    flush_on_signals(export);
    match tfc::temporal::worker(&remote, Arc::new(roster), slots) {
        Ok(()) => ExitCode::SUCCESS,
        Err(m) => {
            sayln!("error: {m}");
            ExitCode::from(1)
        }
    }
}

/// Ctrl-C or SIGTERM stops the worker, its agents and scripts (Temporal gives its
/// workflows and calls to the other workers), after sending the spans it still holds.
#[cfg(feature = "temporal")]
fn flush_on_signals(export: super::telemetry::Export) {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            super::telemetry::flush(&export);
            // The agents and scripts it started stop too (their calls are retried elsewhere).
            tfc::process::kill_all_groups();
            std::process::exit(128 + signal);
        }
    });
}

/// The full run id `tfc cancel`/`tfc approve` name: a prefix or `last` is looked up in this
/// project's run store (workers share it); an id the store does not hold is passed on as
/// given, for Temporal to find.
#[cfg(feature = "temporal")]
fn full_run_id(query: &str) -> Result<String, String> {
    use tfc::run::runs::{LookupError, find};
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let root = tfc::project::project_root(&cwd);
    match find(&root, query, None) {
        Ok(entry) => Ok(entry.run_id),
        Err(LookupError::NotFound(_)) if query != "last" => Ok(query.to_owned()),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(feature = "temporal")]
pub fn cancel(a: CancelArgs) -> ExitCode {
    let remote = match remote(&a.remote) {
        Ok(r) => r,
        Err(m) => return super::usage_error(m).into(),
    };
    let run = match full_run_id(&a.run) {
        Ok(id) => id,
        Err(m) => return super::usage_error(m).into(),
    };
    match tfc::temporal::cancel(&remote, &run) {
        Ok(()) => {
            sayln!("run {run}: cancellation requested; it ends paused (interrupted)");
            ExitCode::SUCCESS
        }
        Err(m) => super::usage_error(m).into(),
    }
}

#[cfg(feature = "temporal")]
pub fn approve(a: ApproveArgs) -> ExitCode {
    use tfc::run::machine::Decision;
    let remote = match remote(&a.remote) {
        Ok(r) => r,
        Err(m) => return super::usage_error(m).into(),
    };
    let decision = if a.reject {
        Decision::Reject
    } else {
        Decision::Approve
    };
    let run = match full_run_id(&a.run) {
        Ok(id) => id,
        Err(m) => return super::usage_error(m).into(),
    };
    // The deadline decided it already (perhaps as the run started: a resumed run keeps its
    // parent's deadline, SPEC §8.8), and the record says so: refused without asking the
    // workflow, which was never asked that approval.
    if let Some(refusal) = expired_in_record(&run, &a.phase) {
        return super::usage_error(refusal).into();
    }
    match tfc::temporal::approve(&remote, &run, &a.phase, decision, a.reason.clone()) {
        Ok(()) => {
            sayln!(
                "run {run}: phase '{}' {}",
                a.phase,
                if a.reject { "rejected" } else { "approved" }
            );
            ExitCode::SUCCESS
        }
        // A run its deadline ended meanwhile has no workflow left to refuse the decision:
        // its record says why.
        Err(m) => super::usage_error(expired_in_record(&run, &a.phase).unwrap_or(m)).into(),
    }
}

/// SPEC §8.8's refusal for approval `phase` (a node path) of run `run` when the run's
/// record says its deadline decided it; `None` otherwise (or when there is no record here).
#[cfg(feature = "temporal")]
fn expired_in_record(run: &str, phase: &str) -> Option<String> {
    use tfc::value::Value;
    let cwd = std::env::current_dir().ok()?;
    let root = tfc::project::project_root(&cwd);
    let entry = tfc::run::runs::find(&root, run, None).ok()?;
    let field = |v: &Value, k: &str| v.as_object()?.get(k).cloned();
    let mut record = entry.record;
    let mut steps = phase.split('/').peekable();
    let mut approval = None;
    while let Some(step) = steps.next() {
        let rec = field(&field(&record, "phases")?, step)?;
        if steps.peek().is_some() {
            record = field(&rec, "subRun")?;
        } else {
            approval = field(&rec, "approval");
        }
    }
    let approval = approval?;
    let text = |k: &str| field(&approval, k).and_then(|v| v.as_str().map(str::to_owned));
    if text("source")? != "timeout" {
        return None;
    }
    let at = text("expiresAt")?;
    let on = match text("decision")?.as_str() {
        "expired" => "fail".to_owned(),
        d => d.to_owned(),
    };
    Some(tfc::temporal::expired_refusal(phase, &at, &on))
}

#[cfg(not(feature = "temporal"))]
pub fn worker(a: WorkerArgs) -> ExitCode {
    let _ = a.slots();
    super::usage_error(NO_TEMPORAL).into()
}

#[cfg(not(feature = "temporal"))]
pub fn cancel(a: CancelArgs) -> ExitCode {
    let _ = (&a.run, &a.remote);
    super::usage_error(format!(
        "tfc cancel stops runs on Temporal, and {NO_TEMPORAL}; a local run stops with Ctrl-C"
    ))
    .into()
}

#[cfg(not(feature = "temporal"))]
pub fn approve(a: ApproveArgs) -> ExitCode {
    let _ = (&a.run, &a.phase, a.reject, &a.reason, &a.remote);
    super::usage_error(format!(
        "tfc approve decides approvals of runs on Temporal, and {NO_TEMPORAL}; a local run \
         paused at an approval continues with `tfc resume RUN --approve PHASE`"
    ))
    .into()
}
