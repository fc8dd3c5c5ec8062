//! `tfc run FLOW [K=V]…`: check, preflight, run; only the final output (or the run record) on
//! stdout, progress and diagnostics on stderr (SPEC §1, §8).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, ValueEnum};

use super::Color;
use super::usage_error;
use tfc::agent::{ConfigRoster, DryRun, PreflightOptions, RosterOptions, preflight};
use tfc::check::{CheckOptions, check_document};
use tfc::diag::render::render_file;
use tfc::flow::{Flow, Invocation, LowerOptions};
use tfc::project::{SavedFlows, locate_flow, project_root};
use tfc::run::summary::calls_text;
use tfc::run::{
    FlowSource, Interpreter, PhaseStatus, RunError, RunOptions, RunRecord, RunSettings, RunStatus,
};
use tfc::source::Source;

#[derive(Args, Debug, Default)]
pub struct RunArgs {
    /// The flow file, or a saved flow's name.
    #[arg(value_name = "FLOW")]
    pub(super) flow: String,
    /// Invocation arguments: NAME=VALUE (one bare VALUE binds to the first declared arg).
    #[arg(value_name = "K=V")]
    pub(super) pairs: Vec<String>,
    /// Invocation arguments as a JSON object (K=V pairs override it).
    #[arg(long = "args", value_name = "JSON")]
    pub(super) args_json: Option<String>,
    /// `text`: the final output on stdout; `json`: the run record instead.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(super) format: Format,
    /// Write the run's HTML report (report.html in its folder) when it ends.
    #[arg(long)]
    pub(super) report: bool,
    /// Print each resolved prompt instead of calling a model (`--dry-run=scripts` also runs scripts).
    /// The value needs `=`, so `--dry-run note=x` keeps `note=x` as an argument of the flow.
    #[arg(
        long,
        value_name = "scripts",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "prompts",
        value_parser = ["prompts", "scripts"]
    )]
    pub(super) dry_run: Option<String>,
    /// Serve every agent with this backend (a configured name, `dry-run`, `replay:FILE`).
    #[arg(long)]
    pub(super) backend: Option<String>,
    /// Serve one agent with a backend: AGENT=NAME (repeatable).
    #[arg(long = "agent-backend", value_name = "AGENT=NAME")]
    pub(super) agent_backend: Vec<String>,
    /// Serve every agent with this command (prompt on stdin, answer on stdout).
    #[arg(long = "agent-cmd", value_name = "CMD")]
    pub(super) agent_cmd: Option<String>,
    /// Answer every call from a recorded fixture (`--backend replay:FILE`).
    #[arg(long, value_name = "FILE")]
    pub(super) replay: Option<PathBuf>,
    /// Append every agent call to this fixture file.
    #[arg(long, value_name = "FILE")]
    pub(super) record: Option<PathBuf>,
    /// Approve this approval phase (repeatable).
    #[arg(long, value_name = "PHASE")]
    pub(super) approve: Vec<String>,
    /// Approve every approval phase.
    #[arg(long)]
    pub(super) approve_all: bool,
    /// Reject this approval phase (repeatable).
    #[arg(long, value_name = "PHASE")]
    pub(super) reject: Vec<String>,
    /// The note recorded with --reject.
    #[arg(long)]
    pub(super) reason: Option<String>,
    /// Let agents use write/edit/bash tools on unsandboxed backends.
    #[arg(long)]
    pub(super) allow_writes: bool,
    /// Max phases running at once (overrides the flow's concurrency).
    #[arg(long)]
    pub(super) concurrency: Option<usize>,
    /// Cost cap in USD for this invocation.
    #[arg(long = "max-usd")]
    pub(super) max_usd: Option<f64>,
    /// Token cap for this invocation.
    #[arg(long = "max-tokens")]
    pub(super) max_tokens: Option<f64>,
    /// Agent call cap for this invocation (retries, items, iterations each count).
    #[arg(long = "max-calls", value_name = "N", value_parser = max_calls_value)]
    pub(super) max_calls: Option<u64>,
    /// Do not report this warning: a code (W0102) or a name (gate-sole-path); repeatable.
    #[arg(long, value_name = "CODE")]
    pub(super) allow: Vec<String>,
    /// Print no warnings (errors, progress and the result still print).
    #[arg(long, short = 'q')]
    pub(super) quiet: bool,
    /// Colour and the live view on stderr (auto: when it is a terminal and NO_COLOR is unset).
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    pub(super) color: Color,
    /// Reuse `done` phase results across runs (the default cache scope becomes cross-run).
    #[arg(long, overrides_with = "no_incremental")]
    pub(super) incremental: bool,
    /// Do not reuse results across runs, whatever the flow's `incremental` says.
    #[arg(long = "no-incremental", overrides_with = "incremental")]
    pub(super) no_incremental: bool,
    /// Where the run executes: here (`local`), or on Temporal workers (`temporal`). Default:
    /// `[engine] kind` of the configuration, else local (a dry run: always local).
    #[arg(long, value_enum)]
    pub(super) engine: Option<Engine>,
    /// With `--engine temporal`: the Temporal service and queue.
    #[command(flatten)]
    pub(super) remote: super::worker::TemporalArgs,
    /// With OpenTelemetry export on: put prompts and outputs on the agent call spans (cut
    /// to [telemetry] content_max_chars). Off by default: they may hold secrets and code.
    #[arg(long = "otel-content")]
    pub(super) otel_content: bool,
    /// Print the plan (calls, tokens, cost per phase) first and ask before starting; without
    /// a terminal nothing runs unless --yes is given.
    #[arg(long)]
    pub(super) plan: bool,
    /// With --plan: start after printing the plan, without asking.
    #[arg(long, requires = "plan")]
    pub(super) yes: bool,
    /// The run id to use (internal: `tfc mcp` names a run before starting its process).
    #[arg(long = "run-id", value_name = "ID", hide = true)]
    pub(super) run_id: Option<String>,
}

/// `--engine`: where a run executes (SPEC §14).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub(super) enum Engine {
    // Plain comments, not doc comments: a described value would give `--help` a second,
    // longer layout than `-h` (the option's own help says what each value means).
    // This process.
    #[default]
    Local,
    // Temporal workers (`tfc worker`).
    Temporal,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub(super) enum Format {
    #[default]
    Text,
    Json,
}

/// Exit codes of `tfc run` (SPEC §1).
pub(super) mod code {
    pub const COMPLETED: u8 = 0;
    pub const FAILED: u8 = 1;
    pub const INVALID: u8 = 2;
    pub const NO_BACKEND: u8 = 3;
    pub const BLOCKED: u8 = 4;
    pub const PAUSED: u8 = 5;
}

pub fn run(a: RunArgs) -> ExitCode {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let Some((path, stem)) = locate_flow(&a.flow, &cwd) else {
        usage_error(format!(
            "cannot read flow '{}': no such file, and no saved flow of that name",
            a.flow
        ));
        return ExitCode::from(code::INVALID);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            usage_error(format!("cannot read flow '{}': {e}", path.display()));
            return ExitCode::from(code::INVALID);
        }
    };
    launch(a, Source::new(path.display().to_string(), text), stem, None)
}

/// Everything `tfc run` does once the flow's text is in hand, shared with `tfc resume`: the
/// full check, backends and preflight, the run, its output and exit code. `resume`: what a
/// resumed run carries from its parent.
pub(super) fn launch(
    a: RunArgs,
    source: Source,
    stem: String,
    resume: Option<Arc<tfc::run::resume::Carried>>,
) -> ExitCode {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let color = a.color.enabled();
    let engine = match engine_of(&a, &cwd) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let (invocation, allow) = match inputs(&a) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let (flow, document) = match checked(&a, &source, stem, &invocation, &allow, &cwd, color) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if a.plan
        && let Err(code) = confirm_plan(&a, &flow, &invocation, &cwd)
    {
        return code;
    }
    let dry_run = a.dry_run.is_some();
    let roster = match backends(&a, &flow, &allow, &source, &cwd, color) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let final_id = flow.final_phase().map(|i| flow.phases[i].id.clone());
    let root = project_root(&cwd);
    if !dry_run {
        prune_runs(&root, a.quiet);
    }
    // Export (off unless an endpoint is set); a dry run calls nothing and exports nothing.
    let export = if dry_run {
        super::telemetry::Export {
            telemetry: None,
            parent: None,
        }
    } else {
        super::telemetry::start(&roster.config().telemetry, a.otel_content, a.quiet)
    };
    let view = super::progress::View::start(color, a.quiet);
    let cancel = tfc::agent::CancelSource::new();
    let token = cancel.token();
    install_interrupts(cancel);
    let opts = run_options(&a, &roster, &root, &cwd, resume, &view, &export);
    let interp = Interpreter::new(Arc::new(roster))
        .options(opts)
        .cancel_on(token.clone());
    let started = std::time::Instant::now();
    let source = FlowSource::Checked {
        flow: Box::new(flow),
        source: Box::new(source),
        document,
    };
    // The output and the summary go first; the wait for the collector (at most 2 s) after.
    #[cfg(feature = "temporal")]
    if engine == Engine::Temporal {
        let ran = temporal_run(&a, &interp, source, invocation, &view, token);
        view.finish();
        let code = match ran {
            Ok(r) => finish(&a, r, &root, final_id.as_deref(), dry_run, started),
            Err(code) => code,
        };
        super::telemetry::finish(&export);
        return code;
    }
    #[cfg(not(feature = "temporal"))]
    let _ = engine;
    let ran = smol::block_on(interp.run(source, invocation));
    view.finish();
    let code = ended(&a, ran, &root, final_id.as_deref(), dry_run, started, color);
    super::telemetry::finish(&export);
    code
}

/// The engine the run executes on, once its flags are known to be usable (and `--run-id`
/// valid); `Err`: the exit code of a usage error, already reported.
fn engine_of(a: &RunArgs, cwd: &Path) -> Result<Engine, ExitCode> {
    let engine = effective_engine(a, cwd);
    if engine == Engine::Temporal {
        if a.dry_run.is_some() {
            usage_error(
                "--engine temporal runs real calls: a dry run runs here (drop --engine temporal)",
            );
            return Err(ExitCode::from(code::INVALID));
        }
        #[cfg(not(feature = "temporal"))]
        {
            let asked = if a.engine.is_some() {
                "--engine temporal"
            } else {
                "[engine] kind = \"temporal\" (.tfc/config.toml)"
            };
            usage_error(format!("{asked}: {}", super::worker::NO_TEMPORAL));
            return Err(ExitCode::from(code::INVALID));
        }
        #[cfg(feature = "temporal")]
        if let Err(m) = super::worker::remote(&a.remote) {
            usage_error(m);
            return Err(ExitCode::from(code::INVALID));
        }
    }
    if let Some(id) = &a.run_id
        && !valid_run_id(id)
    {
        usage_error(format!(
            "--run-id '{id}' is not a valid run id: letters, digits, '.', '_' and '-', at most \
             160 chars, no '..'"
        ));
        return Err(ExitCode::from(code::INVALID));
    }
    Ok(engine)
}

/// The invocation's arguments and the warnings `--allow` silences.
fn inputs(a: &RunArgs) -> Result<(Invocation, Vec<tfc::diag::Code>), ExitCode> {
    let invocation = invocation(a).map_err(|m| {
        usage_error(m);
        ExitCode::from(code::INVALID)
    })?;
    let allow = super::check::allowed(&a.allow).map_err(|m| {
        usage_error(m);
        ExitCode::from(code::INVALID)
    })?;
    Ok((invocation, allow))
}

/// The full check, its diagnostics printed: the flow and its parsed document, or (any error)
/// the exit code of a flow that must not run.
#[allow(clippy::too_many_arguments)]
fn checked(
    a: &RunArgs,
    source: &Source,
    stem: String,
    invocation: &Invocation,
    allow: &[tfc::diag::Code],
    cwd: &Path,
    color: bool,
) -> Result<(Flow, Option<Box<tfc::json::Node>>), ExitCode> {
    // The full check first: any error stops the run before anything executes.
    let saved = SavedFlows::new(cwd);
    let checked = check_document(
        &source.text,
        &LowerOptions {
            default_name: Some(stem),
        },
        &CheckOptions {
            args: Some(invocation),
            loader: Some(&saved),
            cwd: Some(cwd.to_path_buf()),
            allow: allow.to_vec(),
            ..CheckOptions::default()
        },
    );
    // The same diagnostics `tfc check` reports for this flow and these arguments.
    let shown: Vec<_> = checked
        .diagnostics
        .iter()
        .filter(|d| d.is_error() || !a.quiet)
        .cloned()
        .collect();
    say!("{}", render_file(&shown, source, color));
    let has_errors = checked.has_errors();
    let document = checked.document.map(Box::new);
    let Some(flow) = checked.flow.filter(|_| !has_errors) else {
        sayln!("error: the flow has errors; nothing was run");
        return Err(ExitCode::from(code::INVALID));
    };
    Ok((flow, document))
}

/// `--plan`: the plan on stderr, then the go-ahead — asked on a terminal, `--yes` without
/// one. `Err`: the exit code of a run that does not start (0 when the user declined).
fn confirm_plan(
    a: &RunArgs,
    flow: &Flow,
    invocation: &Invocation,
    cwd: &Path,
) -> Result<(), ExitCode> {
    // `--max-calls` is the cap this run would meet.
    let p = super::plan::plan_of(flow, invocation, None, None, a.max_calls, cwd);
    say!("{}", tfc::plan::to_text(&p));
    go_ahead(a.yes)
}

/// After a plan was shown: start (`yes`), or ask on a terminal; without one nothing starts.
/// `Err`: the exit code of a run that does not start (0 when the user declined).
pub(super) fn go_ahead(yes: bool) -> Result<(), ExitCode> {
    if yes {
        return Ok(());
    }
    use std::io::IsTerminal;
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        usage_error(
            "--plan asks before the run starts and there is no terminal to ask on: nothing was \
             run; pass --yes to start after the plan",
        );
        return Err(ExitCode::from(code::INVALID));
    }
    say!("Start the run? [y/N] ");
    let mut answer = String::new();
    let _ = std::io::stdin().read_line(&mut answer);
    if matches!(answer.trim(), "y" | "Y" | "yes" | "Yes" | "YES") {
        Ok(())
    } else {
        sayln!("not started");
        Err(ExitCode::from(code::COMPLETED))
    }
}

/// The roster of backends, its notes and warnings printed, and the preflight (SPEC §7.4);
/// `Err`: the exit code when no backend can serve the run.
fn backends(
    a: &RunArgs,
    flow: &Flow,
    allow: &[tfc::diag::Code],
    source: &Source,
    cwd: &Path,
    color: bool,
) -> Result<ConfigRoster, ExitCode> {
    let dry_run = a.dry_run.is_some();
    let roster = match roster(a, cwd, flow) {
        Ok(r) => r,
        Err(m) => {
            sayln!("error[E0701]: {m}");
            return Err(ExitCode::from(code::NO_BACKEND));
        }
    };
    if let Some(pick) = roster.auto_detected() {
        sayln!("note: {}", pick.describe());
    }
    for w in roster.take_warnings() {
        if !a.quiet {
            sayln!("warning: {w}");
        }
    }
    let uses = tfc::run::agent_uses(flow);
    let pre = preflight(
        &roster,
        &uses,
        &PreflightOptions {
            max_usd: a
                .max_usd
                .or(flow.budget.as_ref().and_then(|b| b.value.max_usd)),
            max_tokens: a
                .max_tokens
                .or(flow.budget.as_ref().and_then(|b| b.value.max_tokens)),
            allow_writes: a.allow_writes || roster.allow_writes(),
            dry_run,
        },
    );
    // Preflight warnings follow the same allow list (flag and the flow's `lint.allow`);
    // agents without a definition file are one line for the whole run.
    let (undefined, pre_shown): (Vec<_>, Vec<_>) = pre
        .iter()
        .filter(|d| {
            d.is_error()
                || !(a.quiet || allow.contains(&d.code) || flow.lint_allow.contains(&d.code))
        })
        .cloned()
        .partition(|d| d.code == tfc::diag::Code::UndefinedAgent);
    if let Some(line) = tfc::agent::undefined_agents_line(&undefined) {
        sayln!("{line}");
    }
    say!("{}", render_file(&pre_shown, source, color));
    if pre.iter().any(|d| d.is_error()) {
        return Err(ExitCode::from(code::NO_BACKEND));
    }
    Ok(roster)
}

/// Retention (SPEC §10.1): old finished runs beyond the newest 100 go.
fn prune_runs(root: &Path, quiet: bool) {
    let pruned = tfc::run::runs::prune(root, std::time::SystemTime::now());
    if pruned > 0 && !quiet {
        sayln!("note: removed {pruned} finished run(s) older than 30 days beyond the newest 100");
    }
}

/// The run's options: its settings from the flags, the roster's limits, where progress and
/// traces go.
fn run_options(
    a: &RunArgs,
    roster: &ConfigRoster,
    root: &Path,
    cwd: &Path,
    resume: Option<Arc<tfc::run::resume::Carried>>,
    view: &super::progress::View,
    export: &super::telemetry::Export,
) -> RunOptions {
    RunOptions {
        settings: RunSettings {
            concurrency: a.concurrency,
            dry_run: a.dry_run.is_some(),
            dry_run_scripts: a.dry_run.as_deref() == Some("scripts"),
            approve: a.approve.clone(),
            approve_all: a.approve_all,
            reject: a.reject.clone(),
            reject_reason: a.reason.clone(),
            reject_notes: Default::default(),
            default_idle_timeout_ms: roster.idle_timeout_ms(),
            project_root: Some(root.to_path_buf()),
        },
        interactive: true,
        max_usd: a.max_usd,
        max_tokens: a.max_tokens,
        max_calls: a.max_calls,
        cwd: Some(cwd.to_path_buf()),
        run_id: a.run_id.clone(),
        progress: Some(view.sink()),
        max_output_bytes: Some(roster.max_output_bytes()),
        max_prompt_bytes: Some(roster.max_prompt_bytes()),
        incremental: match (a.incremental, a.no_incremental) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        },
        resume,
        launch: Some(launch_value(a)),
        telemetry: export.telemetry.clone(),
        trace_parent: export.parent,
    }
}

/// The run's end as [`finish`] tells it, or why it did not run.
fn ended(
    a: &RunArgs,
    ran: Result<RunRecord, RunError>,
    root: &Path,
    final_id: Option<&str>,
    dry_run: bool,
    started: std::time::Instant,
    color: bool,
) -> ExitCode {
    let record = match ran {
        Ok(r) => r,
        Err(RunError::Invalid {
            source,
            diagnostics,
        }) => {
            say!("{}", render_file(&diagnostics, &source, color));
            return ExitCode::from(code::INVALID);
        }
        Err(RunError::NoBackend(m)) => {
            sayln!("error[E0701]: {m}");
            return ExitCode::from(code::NO_BACKEND);
        }
        Err(RunError::Io(m)) => {
            usage_error(m);
            return ExitCode::from(code::INVALID);
        }
    };
    finish(a, record, root, final_id, dry_run, started)
}

/// The end of a run, wherever it ran: the final output (or the record), the summary line,
/// the exit code.
fn finish(
    a: &RunArgs,
    record: RunRecord,
    root: &Path,
    final_id: Option<&str>,
    dry_run: bool,
    started: std::time::Instant,
) -> ExitCode {
    match a.format {
        Format::Json => outln!("{}", record.to_value().to_pretty_json()),
        Format::Text if dry_run => {}
        Format::Text if !final_done(&record, final_id) => {
            // SPEC §8.9: stdout stays empty, so a pipeline never consumes a stale result.
            let final_id = final_id.unwrap_or("(none)");
            let record_file = run_json(root, &record);
            match record.output_phase.as_deref() {
                Some(p) => sayln!(
                    "note: nothing on stdout: the final phase '{final_id}' is {}; the output of \
                     phase '{p}' is in the run record {}",
                    phase_status(&record, final_id),
                    record_file.display()
                ),
                None => sayln!(
                    "note: nothing on stdout: the final phase '{final_id}' is {}",
                    phase_status(&record, final_id)
                ),
            }
            if record.output_phase.is_none()
                && record
                    .reason
                    .as_deref()
                    .is_some_and(|r| r.starts_with("awaiting approval"))
            {
                // The resume instructions are the final output.
                sayln!("{}", record.final_output);
            }
        }
        Format::Text => {
            out!("{}", record.final_output);
            if !record.final_output.ends_with('\n') {
                outln!();
            }
        }
    }
    // Nothing more goes to stdout: a pipeline reading it has all it gets (SPEC §16: it never
    // waits for a trace collector).
    super::close_stdout();
    if let Some(skip) = tfc::run::FinalSkip::of(&record) {
        // SPEC §8.9's fallback stays, but never silently.
        let printed = matches!(a.format, Format::Text) && !dry_run && final_done(&record, final_id);
        let instead = match (&skip.output_phase, printed) {
            (Some(p), true) => format!("printed the output of phase '{p}' instead"),
            (Some(p), false) => format!("the run's output is that of phase '{p}'"),
            (None, _) => "no phase finished, so the run has no output".to_owned(),
        };
        sayln!(
            "warning: the final phase '{}' was skipped because {} — {instead}",
            skip.phase,
            skip.why
        );
    }
    for e in &record.store_errors {
        sayln!("error: the run record could not be fully written: {e}");
    }
    let mut report = None;
    if a.report && dry_run {
        sayln!("note: a dry run keeps no run record, so --report writes no report");
    } else if a.report {
        report = super::report::after_run(&run_json(root, &record));
    }
    let record_file = (!dry_run).then(|| run_json(root, &record));
    sayln!(
        "{}",
        summary(
            &record,
            started.elapsed(),
            record_file.as_deref(),
            report.as_deref()
        )
    );
    ExitCode::from(match record.status {
        RunStatus::Completed => code::COMPLETED,
        RunStatus::Failed | RunStatus::Running => code::FAILED,
        RunStatus::Blocked => code::BLOCKED,
        RunStatus::Paused => code::PAUSED,
    })
}

/// `--engine` when given; else, for a run that makes real calls (a new one or a resumed
/// one), `[engine] kind` of the project's configuration (a dry run here); else local.
fn effective_engine(a: &RunArgs, cwd: &Path) -> Engine {
    if let Some(e) = a.engine {
        return e;
    }
    if a.dry_run.is_some() {
        return Engine::Local;
    }
    match super::worker::engine_settings(cwd).kind.as_deref() {
        Some("temporal") => Engine::Temporal,
        _ => Engine::Local,
    }
}

/// `--engine temporal`: start the run on Temporal and follow it; `Err`: the exit code of a
/// run that did not end here (detached, lost, or not started).
#[cfg(feature = "temporal")]
fn temporal_run(
    a: &RunArgs,
    interp: &Interpreter,
    source: FlowSource,
    invocation: tfc::flow::Invocation,
    view: &super::progress::View,
    detach: tfc::agent::Cancel,
) -> Result<RunRecord, ExitCode> {
    use tfc::temporal::{Follow, Followed};
    let remote = super::worker::remote(&a.remote).map_err(|m| {
        usage_error(m);
        ExitCode::from(code::INVALID)
    })?;
    let address = remote.address.clone();
    let follow = Follow {
        progress: Some(view.sink()),
        detach,
        launch: Some(launch_value(a)),
        asked: Some(Arc::new(move |run: &str, phase: &str| {
            super::progress::message(&format!(
                "waiting for approval of '{phase}': tfc approve {run} {phase} [--reject] \
                 --temporal {address}"
            ));
        })),
    };
    match tfc::temporal::start_run(&remote, interp, source, invocation, follow) {
        Ok(Followed::Done(record)) => Ok(*record),
        Ok(Followed::Detached { run_id }) => {
            sayln!(
                "detached: run {run_id} goes on on Temporal; follow it with `tfc show {run_id}`, \
                 stop it with `tfc cancel {run_id} --temporal {}`",
                remote.address
            );
            Err(ExitCode::from(code::PAUSED))
        }
        Ok(Followed::Lost { run_id, message }) => {
            sayln!("error: run {run_id} ended on Temporal without finishing: {message}");
            Err(ExitCode::from(code::FAILED))
        }
        Err(RunError::Invalid {
            source,
            diagnostics,
        }) => {
            say!("{}", render_file(&diagnostics, &source, a.color.enabled()));
            Err(ExitCode::from(code::INVALID))
        }
        Err(RunError::NoBackend(m)) => {
            sayln!("error[E0701]: {m}");
            Err(ExitCode::from(code::NO_BACKEND))
        }
        Err(RunError::Io(m)) => {
            usage_error(m);
            Err(ExitCode::from(code::INVALID))
        }
    }
}

/// The run's one-line summary on stderr: `run <id> <status>[: <reason>] · <wall time> ·
/// <calls> · tokens <in> in / <out> out[ · $<cost>][ · record <run.json>][ · report <html>]`
/// (a reason over several lines is shown on one; the record keeps it whole).
fn summary(
    record: &RunRecord,
    wall: std::time::Duration,
    record_file: Option<&Path>,
    report: Option<&Path>,
) -> String {
    let mut line = format!("run {} {}", record.run_id, record.status.as_str());
    if let Some(r) = &record.reason {
        line.push_str(": ");
        line.push_str(&r.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    if let Some(skip) = tfc::run::FinalSkip::of(record) {
        line.push_str(" · ");
        line.push_str(&skip.summary());
    }
    line.push_str(&format!(
        " · {:.1}s · {} · tokens {} in / {} out",
        wall.as_secs_f64(),
        calls_text(record.agent_calls()),
        record.usage.input,
        record.usage.output
    ));
    if let Some(c) = record.usage.cost_usd {
        line.push_str(&format!(" · ${c:.4}"));
    }
    if let Some(f) = record_file {
        line.push_str(&format!(" · record {}", f.display()));
    }
    if let Some(f) = report {
        line.push_str(&format!(" · report {}", f.display()));
    }
    line
}

/// A run id fit for `--run-id` (SPEC §10.2): `[A-Za-z0-9._-]+`, ≤ 160 chars, no `..`.
fn valid_run_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 160
        && !id.contains("..")
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// How the run chose its backends (`launch` in `run.json`): `tfc resume` uses them again.
fn launch_value(a: &RunArgs) -> tfc::value::Value {
    use tfc::value::Value;
    let mut m = tfc::value::Map::default();
    let opt = |s: &Option<String>| s.as_deref().map_or(Value::Null, Value::from);
    m.insert("backend".into(), opt(&a.backend));
    m.insert(
        "agentBackend".into(),
        Value::Array(
            a.agent_backend
                .iter()
                .map(|s| Value::from(s.as_str()))
                .collect(),
        ),
    );
    m.insert("agentCmd".into(), opt(&a.agent_cmd));
    m.insert(
        "replay".into(),
        a.replay
            .as_ref()
            .map_or(Value::Null, |p| Value::from(p.display().to_string())),
    );
    Value::Object(m)
}

/// Whether the final output may go to stdout (SPEC §8.9): always, unless the run failed or
/// paused and its final phase is not `done`.
fn final_done(record: &RunRecord, final_id: Option<&str>) -> bool {
    if !matches!(record.status, RunStatus::Failed | RunStatus::Paused) {
        return true;
    }
    final_id
        .and_then(|id| record.phases.get(id))
        .is_some_and(|p| p.status == PhaseStatus::Done)
}

fn phase_status<'r>(record: &'r RunRecord, id: &str) -> &'r str {
    record
        .phases
        .get(id)
        .map_or("missing", |p| p.status.as_str())
}

/// Where the run record of `record` is stored.
fn run_json(root: &Path, record: &RunRecord) -> PathBuf {
    let path = root
        .join(".tfc")
        .join("runs")
        .join(tfc::run::store::sanitize(&record.flow))
        .join(&record.run_id)
        .join("run.json");
    let cwd = std::env::current_dir().unwrap_or_default();
    path.strip_prefix(&cwd)
        .map(Path::to_path_buf)
        .unwrap_or(path)
}

/// SPEC §8.6 for Ctrl-C, and the same for SIGTERM and SIGHUP (a closed terminal, a dropped
/// SSH session): the first signal stops starting work, cancels running agents (their process
/// groups are stopped) and ends the run `paused`, its record saved. A second signal kills the
/// agents' groups and exits at once. Nothing here may panic on a vanished terminal: the
/// messages go through [`super::say`].
fn install_interrupts(cancel: tfc::agent::CancelSource) {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        let mut seen = 0;
        for signal in signals.forever() {
            seen += 1;
            let (name, again) = match signal {
                SIGHUP => ("hangup", "a second signal exits now"),
                SIGTERM => ("terminated", "a second signal exits now"),
                _ => ("interrupted", "Ctrl-C again to exit now"),
            };
            if seen == 1 {
                super::progress::message(&format!("\n{name}: stopping ({again})"));
                cancel.cancel();
            } else {
                tfc::process::kill_all_groups();
                std::process::exit(128 + signal);
            }
        }
    });
}

fn roster(a: &RunArgs, cwd: &Path, flow: &Flow) -> Result<ConfigRoster, String> {
    let mut agent_backends = Vec::new();
    for pair in &a.agent_backend {
        let (agent, name) = pair
            .split_once('=')
            .ok_or_else(|| format!("--agent-backend expects AGENT=NAME, found '{pair}'"))?;
        agent_backends.push((agent.to_owned(), name.to_owned()));
    }
    let agent_cmd = match &a.agent_cmd {
        Some(cmd) => Some(tfc::agent::command::split_command(cmd)?),
        None => None,
    };
    let backend = a
        .replay
        .as_ref()
        .map(|f| format!("replay:{}", f.display()))
        .or_else(|| a.backend.clone());
    let dry_run = a.dry_run.is_some().then(|| {
        Arc::new(if a.format == Format::Json {
            DryRun::stderr()
        } else {
            DryRun::stdout()
        })
    });
    let options = RosterOptions {
        backend,
        agent_backends,
        agent_cmd,
        record: a.record.clone(),
        dry_run,
        allow_writes: a.allow_writes,
    };
    let (roster, warnings) = ConfigRoster::load(
        cwd,
        flow.agent_scope,
        options,
        Arc::new(tfc::agent::ProcessBackends),
    )?;
    if !a.quiet {
        for w in warnings {
            sayln!("warning: {w}");
        }
    }
    Ok(roster)
}

fn invocation(a: &RunArgs) -> Result<Invocation, String> {
    super::input::invocation(&a.pairs, a.args_json.as_deref())
}

/// `--max-calls N` (run, resume, and fork's caps): an integer >= 1 (SPEC §8.7).
pub(super) fn max_calls_value(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "'{s}' is not a call cap: expected an integer >= 1 (the agent calls the run may make)"
        )),
    }
}
