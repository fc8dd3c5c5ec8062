//! `tfc resume RUN …` (SPEC §1, §10.4): fork a failed, paused or interrupted run into a new
//! run that reuses its parent's `done` phases; same output, progress and exit codes as
//! `tfc run`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;

use super::Color;
use super::run::{Format, RunArgs, code, launch};
use super::usage_error;
use tfc::project::project_root;
use tfc::run::resume::{Caps, Parent, Patch, Plan, open, plan};
use tfc::source::Source;

#[derive(Args, Debug)]
pub struct ResumeArgs {
    /// The run: its id, a unique prefix of it, or `last`.
    #[arg(value_name = "RUN")]
    run: String,
    /// Approve this pending approval (repeatable).
    #[arg(long, value_name = "PHASE")]
    approve: Vec<String>,
    /// Approve every approval.
    #[arg(long)]
    approve_all: bool,
    /// Reject this pending approval (repeatable).
    #[arg(long, value_name = "PHASE")]
    reject: Vec<String>,
    /// The note recorded with --reject.
    #[arg(long)]
    reason: Option<String>,
    #[command(flatten)]
    patch: PatchFlags,
    #[command(flatten)]
    child: ChildFlags,
}

/// `--phase P` and what to change in it (`tfc resume`, `tfc fork`).
#[derive(Args, Debug)]
pub(super) struct PatchFlags {
    /// Patch this phase (with --task/--model/--timeout/--idle-timeout) and run it and its
    /// descendants again.
    #[arg(long, value_name = "P")]
    phase: Option<String>,
    /// The patched phase's new task.
    #[arg(long, requires = "phase")]
    task: Option<String>,
    /// The patched phase's new model.
    #[arg(long, requires = "phase")]
    model: Option<String>,
    /// The patched phase's new timeout (ms).
    #[arg(long, requires = "phase", value_name = "MS")]
    timeout: Option<f64>,
    /// The patched phase's new idle timeout (ms).
    #[arg(long = "idle-timeout", requires = "phase", value_name = "MS")]
    idle_timeout: Option<f64>,
}

impl PatchFlags {
    pub(super) fn patch(&self) -> Option<Patch> {
        self.phase.as_ref().map(|p| Patch {
            phase: p.clone(),
            task: self.task.clone(),
            model: self.model.clone(),
            timeout: self.timeout,
            idle_timeout: self.idle_timeout,
        })
    }
}

/// The flags of a run started from another (`tfc resume`, `tfc fork`): its caps, backends,
/// output and engine.
#[derive(Args, Debug)]
pub(super) struct ChildFlags {
    /// Cost cap in USD (applies to the total, the parent's spend included).
    #[arg(long = "max-usd")]
    max_usd: Option<f64>,
    /// Token cap (applies to the total, the parent's spend included).
    #[arg(long = "max-tokens")]
    max_tokens: Option<f64>,
    /// Agent call cap (applies to the total, the parent's calls included).
    #[arg(long = "max-calls", value_name = "N", value_parser = super::run::max_calls_value)]
    max_calls: Option<u64>,
    /// `text`: the final output on stdout; `json`: the run record instead.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Serve every agent with this backend (default: as the parent run did).
    #[arg(long)]
    backend: Option<String>,
    /// Serve one agent with a backend: AGENT=NAME (default: as the parent run did).
    #[arg(long = "agent-backend", value_name = "AGENT=NAME")]
    agent_backend: Vec<String>,
    /// Serve every agent with this command (default: as the parent run did).
    #[arg(long = "agent-cmd", value_name = "CMD")]
    agent_cmd: Option<String>,
    /// Print no warnings.
    #[arg(long, short = 'q')]
    pub(super) quiet: bool,
    /// Colour and the live view on stderr (auto: when it is a terminal and NO_COLOR is unset).
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
    /// Where the new run executes: here (`local`), or on Temporal workers (`temporal`).
    /// Default: `[engine] kind` of the configuration, else local.
    #[arg(long, value_enum)]
    engine: Option<super::run::Engine>,
    /// With `--engine temporal`: the Temporal service and queue.
    #[command(flatten)]
    remote: super::worker::TemporalArgs,
    /// With OpenTelemetry export on: put prompts and outputs on the agent call spans.
    #[arg(long = "otel-content")]
    otel_content: bool,
    /// The child run's id (internal: `tfc mcp` names a run before starting its process).
    #[arg(long = "run-id", value_name = "ID", hide = true)]
    run_id: Option<String>,
}

impl ChildFlags {
    /// `--max-usd`/`--max-tokens`/`--max-calls`.
    pub(super) fn caps(&self) -> Caps {
        Caps {
            max_usd: self.max_usd,
            max_tokens: self.max_tokens,
            max_calls: self.max_calls,
        }
    }

    /// The run's flags: these, and the parent's backends where none is given.
    pub(super) fn run_args(&self, parent: &Parent, args: &tfc::value::Map) -> RunArgs {
        let launch_flags = parent.launch.as_ref();
        let flag = |k: &str| {
            launch_flags
                .and_then(|l| match l {
                    tfc::value::Value::Object(m) => m.get(k),
                    _ => None,
                })
                .and_then(tfc::value::Value::as_str)
                .map(str::to_owned)
        };
        let parent_agent_backends: Vec<String> = match launch_flags {
            Some(tfc::value::Value::Object(m)) => match m.get("agentBackend") {
                Some(tfc::value::Value::Array(list)) => list
                    .iter()
                    .filter_map(tfc::value::Value::as_str)
                    .map(str::to_owned)
                    .collect(),
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        let given_backend = self.backend.is_some() || self.agent_cmd.is_some();
        RunArgs {
            flow: parent.flow.clone(),
            args_json: Some(tfc::value::Value::Object(args.clone()).to_json()),
            format: self.format,
            backend: self
                .backend
                .clone()
                .or_else(|| flag("backend").filter(|_| !given_backend)),
            agent_backend: if self.agent_backend.is_empty() {
                parent_agent_backends
            } else {
                self.agent_backend.clone()
            },
            agent_cmd: self
                .agent_cmd
                .clone()
                .or_else(|| flag("agentCmd").filter(|_| !given_backend)),
            replay: flag("replay").filter(|_| !given_backend).map(PathBuf::from),
            max_usd: self.max_usd,
            max_tokens: self.max_tokens,
            max_calls: self.max_calls,
            quiet: self.quiet,
            color: self.color,
            run_id: self.run_id.clone(),
            otel_content: self.otel_content,
            engine: self.engine,
            remote: self.remote.clone(),
            ..RunArgs::default()
        }
    }
}

/// The run `query` names, read (its warnings printed unless `quiet`), with its effective
/// status; `Err`: the exit code of a refusal, already reported.
pub(super) fn parent_of(query: &str, quiet: bool) -> Result<(Parent, String), ExitCode> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let root = project_root(&cwd);
    let (dir, status) = match tfc::run::runs::find(&root, query, None) {
        Ok(found) => (found.dir, found.status),
        Err(e) => {
            usage_error(e.to_string());
            return Err(ExitCode::from(code::INVALID));
        }
    };
    let parent = match open(&dir) {
        Ok(p) => p,
        Err(m) => {
            usage_error(m);
            return Err(ExitCode::from(code::INVALID));
        }
    };
    if !quiet {
        for w in &parent.warnings {
            sayln!("warning: run '{}': {w}", parent.run_id);
        }
    }
    Ok((parent, status))
}

/// The refusal of `--approve/--reject` flags for approvals whose deadline passed (SPEC §8.8).
pub(super) fn refuse_expired(planned: &Plan, flagged: &[String]) -> Result<(), ExitCode> {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    match planned.expired_flag(flagged, now_ms) {
        Some(m) => {
            sayln!("error: {m}");
            Err(ExitCode::from(code::INVALID))
        }
        None => Ok(()),
    }
}

pub fn run(a: ResumeArgs) -> ExitCode {
    let (parent, status) = match parent_of(&a.run, a.child.quiet) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let patch = a.patch.patch();
    let planned = match plan(&parent, &status, patch.as_ref(), a.child.caps()) {
        Ok(p) => p,
        Err(m) => {
            sayln!("error: {m}");
            return ExitCode::from(code::INVALID);
        }
    };
    // A flag for an approval whose deadline passed is refused before anything runs.
    let flagged: Vec<String> = a.approve.iter().chain(&a.reject).cloned().collect();
    if let Err(code) = refuse_expired(&planned, &flagged) {
        return code;
    }
    let args = RunArgs {
        approve: a.approve.clone(),
        approve_all: a.approve_all,
        reject: a.reject.clone(),
        reason: a.reason.clone(),
        ..a.child.run_args(&parent, &parent.args)
    };
    let text = planned.def.to_pretty_json();
    let source = Source::new(
        format!("{} (resumed from {})", parent.flow, parent.run_id),
        text,
    );
    launch(
        args,
        source,
        parent.flow.clone(),
        Some(Arc::new(planned.carried)),
    )
}
