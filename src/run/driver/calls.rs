//! Executing a call or a script, outside any run state (the local driver and the Temporal
//! activities both use these): preparing a backend call, one attempt with its wall timeout
//! and stop grace, a script through the process supervisor, and the code-compiles check.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_lite::future;
use smol::Timer;

use crate::agent::{CancelSource, Outcome, Request, ResolvedAgent, Roster, StopReason, ToolPolicy};
use crate::process::env;
use crate::process::{End, Keep, ProcessSpec, StdoutMode, run_process};
use crate::run::ctx::caught;
use crate::run::machine::{
    CallDir, CallEnd, CallOutcome, CallRequest, ScriptEnd, ScriptOutcome, ScriptRequest,
};

/// How long a backend may keep running after it was told to stop.
const STOP_GRACE: Duration = Duration::from_millis(5500);

/// A call ready to be made: the backend, the request, and what the record keeps of it.
pub(crate) struct PreparedCall {
    backend: Arc<dyn crate::agent::Agent>,
    backend_name: String,
    model: Option<String>,
    warnings: Vec<String>,
    pub request: Request,
}

/// The agent `name` from `agents` (those resolved so far), or else resolved by `roster` and
/// kept there.
pub(crate) fn resolve_agent<'a>(
    agents: &'a mut HashMap<String, ResolvedAgent>,
    roster: &dyn Roster,
    name: &str,
) -> Result<&'a ResolvedAgent, String> {
    if !agents.contains_key(name) {
        let r = roster.resolve(name)?;
        agents.insert(name.to_owned(), r);
    }
    Ok(&agents[name])
}

/// A sub-flow's agents (`Command::ResolveAgents`), each through [`resolve_agent`]: their
/// backend names in order, up to the first that cannot be resolved, and that one's error.
pub(crate) fn resolve_agents(
    names: Vec<String>,
    agents: &mut HashMap<String, ResolvedAgent>,
    roster: &dyn Roster,
) -> (Vec<(String, String)>, Option<String>) {
    let mut backends = Vec::new();
    for name in names {
        match resolve_agent(agents, roster, &name) {
            Ok(r) => {
                let backend = r.backend_name.clone();
                backends.push((name, backend));
            }
            Err(e) => return (backends, Some(e)),
        }
    }
    (backends, None)
}

/// A sub-flow's text (`Command::LoadFlow`): the saved flow `name` seen from `cwd`, if found.
pub(crate) fn load_saved_flow(name: &str, cwd: &Path) -> Option<String> {
    let saved = crate::project::SavedFlows::new(cwd);
    crate::check::FlowLoader::load(&saved, name)
        .ok()
        .map(|(_, t)| t)
}

/// Turn the machine's request into a backend request: the agent's backend (`resolved`), the
/// branch directory checked, the model role mapped. `Err`: the call's end, nothing called.
pub(crate) fn prepare_call(
    resolved: Option<&ResolvedAgent>,
    roster: &dyn Roster,
    req: CallRequest,
) -> Result<PreparedCall, CallEnd> {
    let Some(resolved) = resolved else {
        let message = format!("no backend for agent '{}'", req.agent);
        return Err(CallEnd::NoBackend { message });
    };
    let cwd = match &req.cwd {
        CallDir::At(p) => p.to_path_buf(),
        CallDir::Branch {
            index,
            path,
            phase,
            base,
        } => match crate::run::workdir::existing(
            base,
            path,
            &format!("of branch {index} \"{path}\""),
            true,
        ) {
            Ok(d) => d,
            Err(e) => {
                let message = format!("{phase}: {e}");
                return Err(CallEnd::Refused { message });
            }
        },
    };
    let mut warnings = Vec::new();
    let model = match req.model.as_ref().map(|m| roster.role_model(m)) {
        Some(Ok(m)) => Some(m),
        Some(Err(w)) => {
            warnings.push(w);
            resolved.model.clone()
        }
        None => resolved.model.clone(),
    };
    let tools = if req.tools.is_empty() {
        resolved.tools.clone()
    } else {
        req.tools.clone()
    };
    let request = Request {
        run_id: req.run_id,
        phase_id: req.phase_id,
        node: req.node,
        attempt: req.attempt,
        agent: req.agent,
        system_prompt: resolved.system_prompt.clone(),
        prompt: req.prompt,
        model: model.clone(),
        thinking: req.thinking.or_else(|| resolved.thinking.clone()),
        tools: ToolPolicy::from_tools(&tools),
        cwd,
        idle_timeout: req.idle_timeout_ms.map(Duration::from_millis),
        wall_timeout: req.wall_timeout_ms.map(Duration::from_millis),
        purpose: req.purpose,
        iteration: req.iteration,
        item_index: req.item_index,
        json_stub: req.json_stub,
        traceparent: None,
    };
    Ok(PreparedCall {
        backend: resolved.backend.clone(),
        backend_name: resolved.backend_name.clone(),
        model,
        warnings,
        request,
    })
}

/// Make one attempt of a prepared call; `stop` cancels it (the backend gets 5.5 s to stop).
pub(crate) async fn perform_call(call: PreparedCall, stop: Arc<CancelSource>) -> CallEnd {
    let PreparedCall {
        backend,
        backend_name,
        model,
        warnings,
        request,
    } = call;
    let wall = request.wall_timeout;
    let started = Instant::now();
    match caught(attempt_call(backend.as_ref(), request, wall, stop)).await {
        Ok(outcome) => {
            let mut o = CallOutcome {
                output: outcome.output,
                usage: outcome.usage.into(),
                model: outcome.model.or(model),
                stop: outcome.stop.as_str().to_owned(),
                error: outcome.error,
                stderr: outcome.stderr,
                warnings,
                backend: backend_name,
                elapsed_ms: started.elapsed().as_millis() as u64,
                exit_code: outcome.exit_code,
            };
            o.warnings.extend(outcome.warnings);
            CallEnd::Outcome(Box::new(o))
        }
        Err(message) => CallEnd::Panicked { message },
    }
}

/// Run a script under the process supervisor; `token` stops it (its process group killed).
pub(crate) async fn run_script(s: ScriptRequest, token: crate::agent::Cancel) -> ScriptOutcome {
    let Some((program, args)) = s.argv.split_first() else {
        return ScriptOutcome::not_started("the script has no command".into());
    };
    let mut spec = ProcessSpec::new(program).args(args);
    spec.cwd = Some(s.cwd.clone());
    spec.env = env::parent_env();
    env::set(
        &mut spec.env,
        [
            ("TFC_RUN_ID", s.run_id.as_str()),
            ("TFC_PHASE_ID", s.phase_id.as_str()),
        ],
    );
    if let Some(tp) = &s.traceparent {
        env::set(&mut spec.env, [("TRACEPARENT", tp.as_str())]);
    }
    spec.stdin = s.input.map(String::into_bytes);
    spec.wall_timeout = Some(Duration::from_millis(s.timeout_ms));
    spec.kill_on_cancel = true;
    spec.stdout = StdoutMode::Keep(Keep::Head(1_048_576));
    spec.stderr = Keep::Head(500);
    // A script's stdout beyond its first MiB is read and dropped (SPEC §3.11), never capped.
    spec.max_output = None;
    match run_process(spec, token).await {
        Err(e) => ScriptOutcome::not_started(e.to_string()),
        Ok(r) => ScriptOutcome {
            spawn_error: None,
            end: match r.end {
                End::WallTimeout | End::IdleTimeout => ScriptEnd::Timeout,
                End::Cancelled => ScriptEnd::Cancelled,
                _ => ScriptEnd::Exited,
            },
            code: r.code(),
            stdout: r.stdout_text(),
            stdout_truncated: r.stdout_truncated,
            stderr: r.stderr_text(),
            elapsed_ms: r.elapsed.as_millis() as u64,
        },
    }
}

/// One attempt, with the wall timeout and the stop enforced here for every backend: the
/// backend is told to stop (by the machine's cancel, or here at the wall timeout), and given
/// 5.5 s to do so.
async fn attempt_call(
    backend: &dyn crate::agent::Agent,
    request: Request,
    wall: Option<Duration>,
    stop: Arc<CancelSource>,
) -> Outcome {
    let abort = stop.token();
    let call = backend.call(request, abort.clone());
    futures_lite::pin!(call);
    enum Trigger {
        Abort,
        Wall,
    }
    let watchdog = async {
        future::or(
            async {
                abort.cancelled().await;
                Trigger::Abort
            },
            async {
                match wall {
                    Some(w) => Timer::after(w).await,
                    None => future::pending::<Instant>().await,
                };
                Trigger::Wall
            },
        )
        .await
    };
    let first = future::or(async { Ok((&mut call).await) }, async {
        Err(watchdog.await)
    })
    .await;
    let (mut outcome, trigger) = match first {
        // The backend saw the machine's cancel before the watchdog did.
        Ok(outcome) if abort.is_cancelled() && !outcome.is_ok() => (outcome, Trigger::Abort),
        Ok(outcome) => return outcome,
        Err(t) => {
            stop.cancel();
            let settled = future::or(async { Some((&mut call).await) }, async {
                Timer::after(STOP_GRACE).await;
                None
            })
            .await;
            let outcome = settled.unwrap_or_else(|| {
                Outcome::failed(
                    StopReason::Cancelled,
                    "Phase runner did not stop within 5500ms after abort",
                )
            });
            (outcome, t)
        }
    };
    match trigger {
        Trigger::Wall => {
            outcome.stop = StopReason::WallTimeout;
        }
        Trigger::Abort => {
            outcome.stop = StopReason::Cancelled;
            if outcome.error.is_none() || outcome.error.as_deref() == Some("cancelled") {
                outcome.error = Some("Aborted".into());
            }
        }
    }
    outcome
}

/// `node --check` / `tsc --noEmit` on a temp file, 30 s; a missing tool fails.
pub(crate) async fn code_compiles(language: &str, code: &str) -> (bool, Option<String>) {
    let (ext, program, args): (&str, &str, &[&str]) = if language == "typescript" {
        ("ts", "tsc", &["--noEmit"])
    } else {
        ("js", "node", &["--check"])
    };
    let dir = std::env::temp_dir().join(format!(
        "tfc-score-{}-{}",
        std::process::id(),
        crate::run::store::random_hex(6)
    ));
    if std::fs::create_dir_all(&dir).is_err() {
        return (false, Some("cannot create a temp dir".into()));
    }
    let file = dir.join(format!("candidate.{ext}"));
    let _ = std::fs::write(&file, code);
    let mut cmd = smol::process::Command::new(program);
    cmd.args(args)
        .arg(&file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let result = match cmd.spawn() {
        Err(e) => (false, Some(format!("{program} not available: {e}"))),
        Ok(child) => {
            let waited = future::or(async { Some(child.output().await) }, async {
                Timer::after(Duration::from_secs(30)).await;
                None
            })
            .await;
            match waited {
                Some(Ok(out)) if out.status.success() => (true, None),
                Some(Ok(out)) => (
                    false,
                    Some(
                        String::from_utf8_lossy(&out.stderr)
                            .lines()
                            .next()
                            .unwrap_or("does not compile")
                            .to_owned(),
                    ),
                ),
                Some(Err(e)) => (false, Some(e.to_string())),
                None => (false, Some("timed out after 30 s".into())),
            }
        }
    };
    let _ = std::fs::remove_dir_all(&dir);
    result
}
