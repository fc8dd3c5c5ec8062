//! What every preset shares: its configuration, the event-stream parser, and running the CLI
//! under the supervisor to an [`Outcome`].

use std::time::Duration;

use serde_json::Value;
use tempfile::NamedTempFile;

use crate::agent::call::{Outcome, Request, StopReason, Usage};
use crate::agent::command::{check_cwd, spawn_failure, stopped, work_dir};
use crate::agent::env::{self, EnvPolicy, EnvVars};
use crate::process::Cancel;
use crate::process::{self, End, Keep, LineFlow, ProcessSpec, StdoutMode};
use crate::value::js_trim;

/// Argv prompts longer than this fail at once (SPEC §9.5; Linux caps one argv string at 128 KiB).
pub(crate) const MAX_ARGV_PROMPT: usize = 120 * 1024;

/// A preset backend's configuration (`[backends.NAME]` with `preset = …`, SPEC §9.2).
#[derive(Clone)]
pub struct PresetConfig {
    /// The executable; default: the preset's name, looked up on `PATH`.
    pub bin: Option<String>,
    /// Appended to the preset's argv (before a trailing prompt operand).
    pub extra_args: Vec<String>,
    /// More environment variables to pass: exact names, or prefixes ending in `*`.
    pub env_allow: Vec<String>,
    /// The environment the allowlist filters; default: tfc's own, read at each call.
    pub base_env: Option<EnvVars>,
    /// SIGTERM → SIGKILL grace when a call is stopped.
    pub kill_grace: Duration,
}

impl std::fmt::Debug for PresetConfig {
    // Environment values may be secrets: only their names are shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PresetConfig")
            .field("bin", &self.bin)
            .field("extra_args", &self.extra_args)
            .field("env_allow", &self.env_allow)
            .field("base_env", &self.base_env.as_ref().map(|e| env::names(e)))
            .field("kill_grace", &self.kill_grace)
            .finish()
    }
}

impl Default for PresetConfig {
    fn default() -> Self {
        PresetConfig {
            bin: None,
            extra_args: Vec::new(),
            env_allow: Vec::new(),
            base_env: None,
            kill_grace: process::KILL_GRACE,
        }
    }
}

/// What a CLI's event stream said.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stream {
    /// The answer (on failure: whatever partial answer there was).
    pub answer: String,
    /// Tokens and cost the stream reported.
    pub usage: Usage,
    /// The model the stream said answered.
    pub model: Option<String>,
    /// The terminal event came.
    pub terminal: bool,
    /// The stream reported a failure, with this message.
    pub failure: Option<String>,
    /// A malformed line, or output after the terminal event.
    pub protocol_error: Option<String>,
    /// Notices that are not failures.
    pub warnings: Vec<String>,
}

/// What one event means for the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Keep reading.
    Continue,
    /// The terminal event.
    Terminal,
    /// The terminal event, after which the process gets this long to exit before it is reaped.
    Settle(Duration),
}

/// One CLI's event vocabulary.
pub trait Events: Default + Send {
    /// The event that ends a successful stream.
    const TERMINAL: &'static str;
    /// Handle one event; `kind` is its `type`.
    fn event(&mut self, kind: &str, event: &Value, stream: &mut Stream) -> Step;
    /// May an event of `kind` still come after the terminal event? (pi: `agent_settled`)
    fn after_terminal(&self, _kind: &str) -> bool {
        false
    }
    /// End of output (the process exited or was stopped).
    fn finish(&mut self, _stream: &mut Stream) {}
}

/// An incremental parser: NDJSON lines in, a [`Stream`] out.
pub struct Parser<E: Events> {
    events: E,
    stream: Stream,
}

impl<E: Events> Default for Parser<E> {
    fn default() -> Self {
        Parser {
            events: E::default(),
            stream: Stream::default(),
        }
    }
}

impl<E: Events> Parser<E> {
    /// Feed one line (without its newline). After a protocol error the rest is ignored.
    pub fn line(&mut self, line: &[u8]) -> LineFlow {
        if self.stream.protocol_error.is_some() {
            return LineFlow::Abort;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            return LineFlow::Continue;
        }
        let event: Option<Value> = serde_json::from_slice(line).ok();
        let kind = event
            .as_ref()
            .and_then(|e| e.get("type"))
            .and_then(Value::as_str);
        let (Some(event), Some(kind)) = (event.as_ref(), kind) else {
            self.stream.protocol_error = Some(format!("malformed event line: {}", excerpt(line)));
            return LineFlow::Abort;
        };
        if self.stream.terminal && !self.events.after_terminal(kind) {
            self.stream.protocol_error = Some(format!(
                "output after the terminal `{}` event: {}",
                E::TERMINAL,
                excerpt(line)
            ));
            return LineFlow::Abort;
        }
        match self.events.event(kind, event, &mut self.stream) {
            Step::Continue => LineFlow::Continue,
            Step::Terminal => {
                self.stream.terminal = true;
                LineFlow::Continue
            }
            Step::Settle(grace) => {
                self.stream.terminal = true;
                LineFlow::Settle(grace)
            }
        }
    }

    /// End of output: let the parser finish and hand over what the stream said.
    pub fn finish(mut self) -> Stream {
        self.events.finish(&mut self.stream);
        unmeasured_cost(&mut self.stream.usage);
        self.stream
    }
}

/// Parse a whole recorded stream (stdout text) with `E`'s vocabulary.
pub(crate) fn parse_text<E: Events>(text: &str) -> Stream {
    let mut p = Parser::<E>::default();
    for line in text.lines() {
        if p.line(line.as_bytes()) == LineFlow::Abort {
            break;
        }
    }
    p.finish()
}

/// A cost of 0 over no tokens at all is no measurement — claude and pi print one for a request
/// the provider refused — so it is unknown, as it is for presets that report no cost: `null` in
/// the record, never a fake 0.
fn unmeasured_cost(usage: &mut Usage) {
    let tokens = usage.input + usage.output + usage.cache_read + usage.cache_write;
    if tokens == 0 && usage.cost_usd == Some(0.0) {
        usage.cost_usd = None;
    }
}

/// The start of a line, for messages.
fn excerpt(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let mut cut: String = text.chars().take(200).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}

/// How one CLI is invoked.
pub(crate) struct Invocation {
    pub args: Vec<String>,
    /// `None`: stdin is `/dev/null`.
    pub stdin: Option<String>,
    pub env: Vec<(String, String)>,
    /// Kept alive for the call, deleted after.
    pub temp_files: Vec<NamedTempFile>,
    /// Settings of the request the CLI cannot honour.
    pub warnings: Vec<String>,
}

impl Invocation {
    pub fn new(args: Vec<String>, stdin: Option<String>) -> Invocation {
        Invocation {
            args,
            stdin,
            env: Vec::new(),
            temp_files: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

/// One CLI: how to call it. The shared machinery is [`run`].
pub(crate) trait Cli: Send + Sync {
    type Events: Events;
    /// The preset name, also the default executable.
    const NAME: &'static str;
    const ENV: EnvPolicy;
    fn config(&self) -> &PresetConfig;
    /// The argv after the program, stdin and extra environment; `Err` = fail the call at once
    /// with this message.
    fn invocation(&self, request: &Request) -> Result<Invocation, String>;
    /// The id to record for a configured model (claude drops display suffixes such as `[1m]`).
    fn model_id(model: &str) -> String {
        model.to_owned()
    }
}

/// Implements [`Agent`] for a [`Cli`].
macro_rules! preset_agent {
    ($ty:ty, cost: $cost:expr, sandboxed: $sandboxed:expr) => {
        impl $crate::agent::call::Agent for $ty {
            fn name(&self) -> &str {
                <$ty as $crate::agent::presets::cli::Cli>::NAME
            }
            fn call<'a>(
                &'a self,
                request: $crate::agent::call::Request,
                cancel: $crate::process::Cancel,
            ) -> $crate::agent::call::BoxFuture<'a, $crate::agent::call::Outcome> {
                Box::pin($crate::agent::presets::cli::run(self, request, cancel))
            }
            fn reports_tokens(&self) -> bool {
                true
            }
            fn reports_cost(&self) -> bool {
                $cost
            }
            fn sandboxed(&self) -> bool {
                $sandboxed
            }
            fn available(&self) -> Result<(), String> {
                let config = <$ty as $crate::agent::presets::cli::Cli>::config(self);
                let bin = config
                    .bin
                    .as_deref()
                    .unwrap_or(<$ty as $crate::agent::presets::cli::Cli>::NAME);
                $crate::process::program_available(bin)
            }
        }
    };
}
pub(crate) use preset_agent;

/// Run one call of `cli`.
pub(crate) async fn run<C: Cli>(cli: &C, request: Request, cancel: Cancel) -> Outcome {
    let config = cli.config();
    let bin = config.bin.clone().unwrap_or_else(|| C::NAME.to_owned());
    let invocation = match cli.invocation(&request) {
        Ok(i) => i,
        Err(e) => return Outcome::failed(StopReason::Failed, e),
    };
    let mut env = env::filter(
        &config.base_env.clone().unwrap_or_else(env::parent_env),
        &C::ENV,
        &config.env_allow,
    );
    env::set(&mut env, invocation.env);
    env::set(&mut env, env::call_vars(&request));
    let mut spec = ProcessSpec::new(&bin).args(invocation.args);
    spec.env = env;
    spec.cwd = work_dir(&request);
    spec.stdin = invocation.stdin.map(String::into_bytes);
    spec.idle_timeout = request.idle_timeout;
    spec.wall_timeout = request.wall_timeout;
    spec.kill_grace = config.kill_grace;
    spec.stdout = StdoutMode::Lines {
        max_line: process::MAX_LINE,
    };
    spec.stderr = Keep::Tail(process::STDERR_TAIL);
    if let Some(failed) = check_cwd(&spec) {
        return failed;
    }
    let mut parser = Parser::<C::Events>::default();
    let result = process::run_process_lines(spec, cancel, &mut |line| parser.line(line)).await;
    drop(invocation.temp_files);
    let mut warnings = invocation.warnings;
    let result = match result {
        Ok(r) => r,
        Err(e) => return spawn_failure(&bin, &e),
    };
    let stream = parser.finish();
    let stderr = result.stderr_text();
    let code = result.code();
    let mut outcome = if let Some(o) = stopped(&result, &request) {
        o
    } else if result.end == End::LineTooLong {
        Outcome::failed(
            StopReason::ProtocolError,
            format!(
                "{bin} wrote a stdout line longer than {} bytes",
                process::MAX_LINE
            ),
        )
    } else if let Some(p) = &stream.protocol_error {
        Outcome::failed(StopReason::ProtocolError, format!("{bin}: {p}"))
    } else if let Some(f) = &stream.failure {
        Outcome::failed(StopReason::Failed, f.clone())
    } else if stream.terminal && (result.end == End::Settled || result.status.success()) {
        Outcome::ok("")
    } else if stream.terminal {
        Outcome::failed(
            StopReason::Failed,
            exit_error(
                &format!(
                    "{bin} exited with code {code} after `{}`",
                    C::Events::TERMINAL
                ),
                &stderr,
            ),
        )
    } else if result.status.success() {
        Outcome::failed(
            StopReason::Failed,
            format!("process exited without {}", C::Events::TERMINAL),
        )
    } else {
        Outcome::failed(
            StopReason::Failed,
            exit_error(&format!("{bin} exited with code {code}"), &stderr),
        )
    };
    outcome.output = stream.answer;
    outcome.usage = stream.usage;
    // The model the stream named, else the one configuration asked for, on success and failure.
    outcome.model = stream
        .model
        .or_else(|| request.model.as_deref().map(C::model_id));
    outcome.exit_code = Some(code);
    outcome.stderr = stderr;
    warnings.extend(stream.warnings);
    outcome.warnings = warnings;
    outcome
}

/// `head: <the last 1000 chars of stderr>`, or `head` when stderr is blank.
fn exit_error(head: &str, stderr: &str) -> String {
    let tail = js_trim(stderr);
    if tail.is_empty() {
        return head.to_owned();
    }
    let n = tail.chars().count();
    let tail: String = tail.chars().skip(n.saturating_sub(1000)).collect();
    format!("{head}: {tail}")
}

/// The prompt of CLIs without a system-prompt flag: `SYS\n\n---\n\nTask: PROMPT`, or the
/// prompt alone when there is no system prompt.
pub(crate) fn with_system(request: &Request) -> String {
    if request.system_prompt.is_empty() {
        request.prompt.clone()
    } else {
        format!(
            "{}\n\n---\n\nTask: {}",
            request.system_prompt, request.prompt
        )
    }
}

/// Fail at once when an argv prompt is too large (SPEC §9.5).
pub(crate) fn check_argv_prompt(arg: &str) -> Result<(), String> {
    if arg.len() > MAX_ARGV_PROMPT {
        return Err(format!(
            "prompt too large for argv ({} bytes); use a stdin-capable backend",
            arg.len()
        ));
    }
    Ok(())
}

// Small readers for event fields.

pub(crate) fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    at(v, path)?.as_str()
}

pub(crate) fn u64_at(v: &Value, path: &[&str]) -> u64 {
    at(v, path).and_then(Value::as_u64).unwrap_or(0)
}

pub(crate) fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

/// Add to an optional cost.
pub(crate) fn add_cost(cost: &mut Option<f64>, more: Option<f64>) {
    if let Some(m) = more {
        *cost = Some(cost.unwrap_or(0.0) + m);
    }
}
