//! One logical agent call with both retry layers (SPEC §8.4), the output contract (§3.15), wall
//! timeouts and abort (§8.6), usage accounting and an `agent-call` journal record per attempt.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures_lite::future;
use smol::Timer;

use super::contract::{check_output, violation_error};
use super::ctx::Shared;
use super::verdict::is_transient;
use crate::agent::{
    AgentCallRecord, Cancel, CancelSource, Outcome, Purpose, Request, StopReason, ToolPolicy,
    Usage, is_replay_miss,
};
use crate::flow::{Contract, Phase};

/// How long a backend may keep running after it was told to stop.
const STOP_GRACE: Duration = Duration::from_millis(5500);

/// What to call.
pub struct CallSpec<'a> {
    /// Node path without the sub-flow prefix (`id`, `id#3`, `id@2`, `id#judge`, …).
    pub node: String,
    pub agent: &'a str,
    pub prompt: String,
    pub purpose: Purpose,
    pub iteration: Option<u32>,
    pub item_index: Option<usize>,
    /// Checked after every successful attempt.
    pub contract: Option<&'a Contract>,
    /// Extra cancellation (race losers); the run's abort always applies.
    pub cancel: Option<Cancel>,
    /// The working directory of the call (the phase's, or a parallel branch's); the
    /// invocation directory when `None`.
    pub cwd: Option<PathBuf>,
    /// Why this call must not be made (its phase's prompt passed the cap): it fails at once.
    pub refused: Option<String>,
}

impl<'a> CallSpec<'a> {
    /// A plain call: no iteration, item, contract or extra cancellation.
    pub fn new(node: String, agent: &'a str, prompt: String, purpose: Purpose) -> CallSpec<'a> {
        CallSpec {
            node,
            agent,
            prompt,
            purpose,
            iteration: None,
            item_index: None,
            contract: None,
            cancel: None,
            cwd: None,
            refused: None,
        }
    }

    /// Run the call in `dir`.
    pub fn in_dir(mut self, dir: impl Into<PathBuf>) -> CallSpec<'a> {
        self.cwd = Some(dir.into());
        self
    }

    /// Refuse the call when the phase's prompt passed the cap ([`Exec::oversize`]).
    ///
    /// [`Exec::oversize`]: super::exec::Exec::oversize
    pub fn refuse(mut self, why: Option<String>) -> CallSpec<'a> {
        self.refused = why;
        self
    }

    /// The phase's contract applies when it stores JSON output.
    pub fn checked(mut self, phase: &'a Phase) -> CallSpec<'a> {
        if phase.output == crate::flow::OutputMode::Json {
            self.contract = phase.expect.as_deref();
        }
        self
    }
}

/// The result of a call over all its attempts.
#[derive(Debug, Clone)]
pub struct CallResult {
    pub ok: bool,
    /// The answer, or the last attempt's partial output.
    pub output: String,
    pub error: Option<String>,
    pub attempts: u32,
    pub usage: Usage,
    pub timed_out: bool,
    pub aborted: bool,
    pub model: Option<String>,
    pub warnings: Vec<String>,
}

/// Effective idle timeout: phase > flow > configuration > 300000 ms; 0 disables.
fn idle_timeout(sh: &Shared, phase: &Phase) -> Option<Duration> {
    let ms = phase
        .idle_timeout
        .as_ref()
        .or(sh.flow.idle_timeout.as_ref())
        .map(|f| f.value as u64)
        .or(sh.opts.default_idle_timeout_ms)
        .unwrap_or(300_000);
    (ms > 0).then(|| Duration::from_millis(ms))
}

/// [`call`] for a call running in a task of its own (fan-out items, race branches): a panic
/// becomes a failed call instead of taking the run down.
pub async fn call_caught(sh: &Shared, phase: &Phase, spec: CallSpec<'_>) -> CallResult {
    super::ctx::caught(call(sh, phase, spec))
        .await
        .unwrap_or_else(|msg| CallResult {
            ok: false,
            output: String::new(),
            error: Some(format!("internal error: {msg}")),
            attempts: 1,
            usage: Usage::default(),
            timed_out: false,
            aborted: false,
            model: None,
            warnings: Vec::new(),
        })
}

fn is_output_cap_error(e: &str) -> bool {
    e.starts_with(crate::process::OUTPUT_CAP_ERROR_START)
}

pub async fn call(sh: &Shared, phase: &Phase, mut spec: CallSpec<'_>) -> CallResult {
    let explicit = 1 + phase
        .retry
        .as_ref()
        .map_or(0, |r| r.value.max.floor() as u32);
    let transient_layer = phase.idempotent;
    let max_attempts = if transient_layer {
        explicit.max(4)
    } else {
        explicit
    };
    let (base, factor) = phase
        .retry
        .as_ref()
        .and_then(|r| {
            r.value
                .backoff_ms
                .map(|b| (b, r.value.factor.unwrap_or(1.0)))
        })
        .unwrap_or((2000.0, 2.0));
    let resolved = sh.agents.get(spec.agent);
    let wall = phase
        .timeout
        .as_ref()
        .map(|t| Duration::from_millis(t.value as u64));
    let mut result = CallResult {
        ok: false,
        output: String::new(),
        error: None,
        attempts: 0,
        usage: Usage::default(),
        timed_out: false,
        aborted: false,
        model: None,
        warnings: Vec::new(),
    };
    let Some(resolved) = resolved else {
        result.error = Some(format!("no backend for agent '{}'", spec.agent));
        return result;
    };
    let max_prompt = sh.opts.max_prompt();
    if let Some(why) = spec.refused {
        result.error = Some(why);
        return result;
    }
    if spec.prompt.len() > max_prompt {
        result.error = Some(format!(
            "the prompt weighs {} bytes, over the limit of {max_prompt} bytes; pass less text into it, or raise `max_prompt_bytes` under `[limits]` in .tfc/config.toml",
            spec.prompt.len()
        ));
        return result;
    }
    let max_output = sh.opts.max_output();
    let model = match phase.model.as_ref().map(|m| sh.roster.role_model(&m.value)) {
        Some(Ok(m)) => Some(m),
        Some(Err(warning)) => {
            result.warnings.push(warning);
            resolved.model.clone()
        }
        None => resolved.model.clone(),
    };
    let thinking = phase
        .thinking
        .as_ref()
        .map(|t| t.value.clone())
        .or_else(|| resolved.thinking.clone());
    let tools: Vec<String> = if phase.tools.is_empty() {
        resolved.tools.clone()
    } else {
        phase.tools.iter().map(|t| t.value.clone()).collect()
    };
    let json_stub = (phase.output == crate::flow::OutputMode::Json && sh.opts.dry_run)
        .then(|| super::contract::stub(spec.contract));
    for k in 0..max_attempts {
        if sh.cancel.is_cancelled() || spec.cancel.as_ref().is_some_and(Cancel::is_cancelled) {
            result.aborted = true;
            result.error = Some("Aborted".into());
            break;
        }
        let request = Request {
            run_id: sh.run_id.clone(),
            phase_id: phase.id.clone(),
            node: sh.node(&spec.node),
            attempt: k + 1,
            agent: spec.agent.to_owned(),
            system_prompt: resolved.system_prompt.clone(),
            // The last attempt takes the prompt instead of copying it.
            prompt: if k + 1 == max_attempts {
                std::mem::take(&mut spec.prompt)
            } else {
                spec.prompt.clone()
            },
            model: model.clone(),
            thinking: thinking.clone(),
            tools: ToolPolicy::from_tools(&tools),
            cwd: spec.cwd.clone().unwrap_or_else(|| sh.cwd.clone()),
            idle_timeout: idle_timeout(sh, phase),
            wall_timeout: wall,
            purpose: spec.purpose,
            iteration: spec.iteration,
            item_index: spec.item_index,
            json_stub: json_stub.clone(),
        };
        let started = Instant::now();
        let journal_request = sh.journaling.then(|| request.clone());
        let mut outcome = attempt(
            sh,
            resolved.backend.as_ref(),
            request,
            wall,
            spec.cancel.as_ref(),
        )
        .await;
        result.attempts += 1;
        // Any backend: an answer over the cap fails the call (process backends never even
        // read past it) and is not kept.
        let over_cap = outcome.output.len() > max_output
            || outcome.error.as_deref().is_some_and(is_output_cap_error);
        if over_cap {
            outcome.output = String::new();
            outcome.stop = StopReason::Failed;
            outcome.error = Some(crate::process::output_cap_error(max_output));
        }
        result.usage.add(&outcome.usage);
        sh.meter.add(&outcome.usage);
        result.model = outcome.model.clone().or(model.clone());
        for w in outcome.warnings.drain(..) {
            if !result.warnings.contains(&w) {
                result.warnings.push(w);
            }
        }
        let mut contract_failed = false;
        if outcome.is_ok()
            && let Some(c) = spec.contract
            && let Err(v) = check_output(c, &outcome.output)
        {
            let error = violation_error(&v);
            sh.notice(&spec.node, &format!("attempt {}: {error}", k + 1));
            outcome.error = Some(error);
            outcome.stop = StopReason::Failed;
            contract_failed = true;
        }
        if let Some(req) = &journal_request {
            let rec = AgentCallRecord::from_call(
                req,
                &resolved.backend_name,
                &outcome,
                started.elapsed(),
                true,
            );
            sh.journal(rec.to_value());
        }
        result.output = outcome.output.clone();
        if outcome.is_ok() {
            result.ok = true;
            result.error = None;
            return result;
        }
        result.error = outcome
            .error
            .clone()
            .or_else(|| Some(format!("agent call ended: {}", outcome.stop.as_str())));
        if over_cap {
            // The same question would get the same oversized answer.
            return result;
        }
        match outcome.stop {
            StopReason::WallTimeout => {
                result.timed_out = true;
                result.error = Some(format!(
                    "Phase timed out after {}ms (subagent aborted)",
                    wall.map_or(0, |w| w.as_millis())
                ));
                return result;
            }
            StopReason::Cancelled => {
                result.aborted = true;
                return result;
            }
            _ => {}
        }
        if is_replay_miss(&outcome) {
            return result;
        }
        if sh.meter.over().is_some() {
            return result;
        }
        let transient = !contract_failed
            && outcome.stop != StopReason::IdleTimeout
            && is_transient(&format!(
                "{} {} {}",
                result.error.as_deref().unwrap_or(""),
                outcome.stderr,
                outcome.output
            ));
        let again = k + 1 < explicit || (transient_layer && transient && k < 3);
        if !again || k + 1 >= max_attempts {
            return result;
        }
        let delay = (base * factor.powi(k as i32)).round().min(60_000.0);
        if delay > 0.0 && !sh.opts.dry_run {
            let slept = future::or(
                async {
                    Timer::after(Duration::from_millis(delay as u64)).await;
                    true
                },
                async {
                    sh.cancel.cancelled().await;
                    false
                },
            )
            .await;
            if !slept {
                result.aborted = true;
                result.error = Some("Aborted".into());
                return result;
            }
        }
    }
    result
}

/// One attempt, with the wall timeout and the abort enforced here for every backend: the
/// backend is told to stop, and given 5.5 s to do so.
async fn attempt(
    sh: &Shared,
    backend: &dyn crate::agent::Agent,
    request: Request,
    wall: Option<Duration>,
    extra: Option<&Cancel>,
) -> Outcome {
    let stop = CancelSource::new();
    let call = backend.call(request, stop.token());
    futures_lite::pin!(call);
    enum Trigger {
        Abort,
        Wall,
    }
    let watchdog = async {
        future::or(
            future::or(
                async {
                    sh.cancel.cancelled().await;
                    Trigger::Abort
                },
                async {
                    match extra {
                        Some(c) => c.cancelled().await,
                        None => future::pending::<()>().await,
                    }
                    Trigger::Abort
                },
            ),
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
    let trigger = match first {
        Ok(outcome) => return outcome,
        Err(t) => t,
    };
    stop.cancel();
    let settled = future::or(async { Some((&mut call).await) }, async {
        Timer::after(STOP_GRACE).await;
        None
    })
    .await;
    let mut outcome = settled.unwrap_or_else(|| {
        Outcome::failed(
            StopReason::Cancelled,
            "Phase runner did not stop within 5500ms after abort",
        )
    });
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
