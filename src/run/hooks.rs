//! The flow's hooks at the end of a run (SPEC §8.10): the command of the event the run ended
//! with, run once after `run.json` is final — in the invocation directory, the run record on
//! stdin, `TFC_RUN_*` and `TFC_HOOK_ID` in its environment — through the process supervisor
//! (its own process group, killed at `hooks.timeout`; its output kept up to 64 KiB a stream).
//! A hook never changes the run: how it went is a `hook` journal line and, when it did not
//! succeed, one warning.
//!
//! [`prepare`] decides what runs (pure: the argv rendered from the record), [`run`] runs it,
//! and [`HookRun`] says how it went, as a journal value and a warning. The local driver, a
//! `tfc test` case with `"hooks": true` and the Temporal activity share these.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::flow::{Flow, HookEvent};
use crate::process::{Cancel, End, Keep, ProcessSpec, StdoutMode, env, run_process};
use crate::run::RunStatus;
use crate::run::record::RunRecord;
use crate::value::{Map, Value};

/// How much of each of a hook's output streams is kept.
pub const HOOK_OUTPUT_MAX: usize = 64 * 1024;

/// The hook event of a run that ended with `status` (`None` for a run still running).
pub fn event_of(status: RunStatus) -> Option<HookEvent> {
    match status {
        RunStatus::Completed => Some(HookEvent::Complete),
        RunStatus::Failed => Some(HookEvent::Fail),
        RunStatus::Paused => Some(HookEvent::Pause),
        RunStatus::Blocked => Some(HookEvent::Block),
        RunStatus::Running => None,
    }
}

/// One hook, ready to run.
#[derive(Clone, Debug, PartialEq)]
pub struct HookCall {
    /// The event it follows.
    pub event: HookEvent,
    /// The program and its arguments, rendered.
    pub argv: Vec<String>,
    /// The run record (SPEC §11.1), for its stdin.
    pub stdin: String,
    /// `TFC_RUN_ID`, `TFC_RUN_STATUS`, `TFC_RUN_DIR`, `TFC_FLOW`, `TFC_HOOK_ID`.
    pub env: Vec<(&'static str, String)>,
    /// Where it runs: the invocation directory.
    pub cwd: PathBuf,
    /// Its wall limit.
    pub timeout_ms: u64,
}

impl HookCall {
    /// `<runId>:<event>`: the same for every attempt of this run's hook (deduplication).
    pub fn hook_id(&self) -> &str {
        self.env
            .iter()
            .find(|(k, _)| *k == "TFC_HOOK_ID")
            .map_or("", |(_, v)| v.as_str())
    }
}

/// The hook `flow` runs for `record`'s ending, if it has one. `run_dir` is the run's
/// directory (`None`: the run keeps no record, and `{run.dir}` / `TFC_RUN_DIR` are empty).
pub fn prepare(
    flow: &Flow,
    record: &RunRecord,
    run_dir: Option<&Path>,
    cwd: &Path,
) -> Option<HookCall> {
    let mut call = plan(flow, record, run_dir, cwd)?;
    call.stdin = record.to_value().to_pretty_json();
    Some(call)
}

/// [`prepare`] without the stdin (empty): a host that hands the hook to another process
/// (a Temporal activity) gives it the record there, from `run.json`.
pub fn plan(
    flow: &Flow,
    record: &RunRecord,
    run_dir: Option<&Path>,
    cwd: &Path,
) -> Option<HookCall> {
    let hooks = &flow.hooks.as_ref()?.value;
    let event = event_of(record.status)?;
    let hook = hooks.get(event)?;
    let dir = run_dir.map_or(String::new(), |d| d.display().to_string());
    let mut run = Map::default();
    run.insert("id".into(), Value::from(record.run_id.as_str()));
    run.insert("status".into(), Value::from(record.status.as_str()));
    run.insert("dir".into(), Value::from(dir.as_str()));
    let scope = HookScope {
        args: Value::Object(record.args.clone()),
        run: Value::Object(run),
    };
    let argv = hook
        .argv
        .iter()
        .map(|a| a.template.render(&scope).text)
        .collect();
    let env = vec![
        ("TFC_RUN_ID", record.run_id.clone()),
        ("TFC_RUN_STATUS", record.status.as_str().to_owned()),
        ("TFC_RUN_DIR", dir),
        ("TFC_FLOW", record.flow.clone()),
        ("TFC_HOOK_ID", format!("{}:{}", record.run_id, event.key())),
    ];
    Some(HookCall {
        event,
        argv,
        stdin: String::new(),
        env,
        cwd: cwd.to_path_buf(),
        timeout_ms: hooks.timeout_ms(),
    })
}

/// The variables a hook gets besides its parent's environment.
const HOOK_VARS: [&str; 5] = [
    "TFC_RUN_ID",
    "TFC_RUN_STATUS",
    "TFC_RUN_DIR",
    "TFC_FLOW",
    "TFC_HOOK_ID",
];

/// The hook variables among `vars`, named as [`HookCall::env`] names them (a call that
/// crossed a process boundary); any other is dropped.
pub fn env_names(vars: Vec<(String, String)>) -> Vec<(&'static str, String)> {
    vars.into_iter()
        .filter_map(|(k, v)| HOOK_VARS.iter().find(|n| **n == k).map(|n| (*n, v)))
        .collect()
}

/// The run record a hook reads on stdin, from the text of `run.json` (which adds `def` and
/// the store's own fields to it).
pub fn record_from_run_json(text: &str) -> Option<String> {
    let mut record = crate::value::parse_json(text).ok()?;
    let Value::Object(m) = &mut record else {
        return None;
    };
    for key in [
        "def",
        "cwd",
        "tfcVersion",
        "gitCommit",
        "flowDefHash",
        "launch",
        "engine",
        "traceId",
        "traceUrl",
        "rootSpanId",
    ] {
        m.shift_remove(key);
    }
    Some(record.to_pretty_json())
}

/// What a hook reads: the arguments and `run`.
struct HookScope {
    args: Value,
    run: Value,
}

impl crate::eval::Scope for HookScope {
    fn args(&self) -> Option<&Value> {
        Some(&self.args)
    }
    fn step_output(&self, _: &str) -> Option<&Value> {
        None
    }
    fn step_json(&self, _: &str) -> Option<&Value> {
        None
    }
    fn previous(&self) -> Option<&Value> {
        None
    }
    fn reflexion(&self) -> Option<&Value> {
        None
    }
    fn local(&self, name: &str) -> Option<&Value> {
        (name == "run").then_some(&self.run)
    }
}

/// How a hook went.
#[derive(Clone, Debug, PartialEq)]
pub struct HookRun {
    /// The event it followed.
    pub event: HookEvent,
    /// What ran.
    pub argv: Vec<String>,
    /// Its exit code (128 + S when killed by signal S); `None` when it did not start.
    pub exit_code: Option<i32>,
    /// From the spawn to its end.
    pub duration_ms: u64,
    /// Why it did not succeed: it did not start, exited non-zero, or timed out.
    pub error: Option<String>,
    /// The first [`HOOK_OUTPUT_MAX`] bytes of its stdout.
    pub stdout: String,
    /// The first [`HOOK_OUTPUT_MAX`] bytes of its stderr.
    pub stderr: String,
    /// Some output was cut.
    pub truncated: bool,
}

impl HookRun {
    /// The `hook` journal line (SPEC §10.3) without `type` and `ts`.
    pub fn fill(&self, m: &mut Map) {
        m.insert("event".into(), Value::from(self.event.key()));
        m.insert(
            "argv".into(),
            Value::Array(self.argv.iter().map(|a| Value::from(a.as_str())).collect()),
        );
        m.insert(
            "exitCode".into(),
            self.exit_code
                .map_or(Value::Null, |c| Value::Number(c as f64)),
        );
        m.insert("durationMs".into(), Value::Number(self.duration_ms as f64));
        if let Some(e) = &self.error {
            m.insert("error".into(), Value::from(e.as_str()));
        }
        m.insert("stdout".into(), Value::from(self.stdout.as_str()));
        m.insert("stderr".into(), Value::from(self.stderr.as_str()));
        if self.truncated {
            m.insert("truncated".into(), Value::Bool(true));
        }
    }

    /// The `hook` journal line, stamped now.
    pub fn journal_value(&self) -> Value {
        let mut m = Map::default();
        m.insert("type".into(), Value::from("hook"));
        m.insert(
            "ts".into(),
            Value::from(crate::run::record::timestamp(std::time::SystemTime::now())),
        );
        self.fill(&mut m);
        Value::Object(m)
    }

    /// The one warning line of a hook that did not succeed: `hooks.<event>: <error>`.
    pub fn warning(&self) -> Option<String> {
        let e = self.error.as_ref()?;
        Some(format!("hooks.{}: {e}", self.event.key()))
    }
}

/// Run `call` to its end (or its timeout, or `cancel`).
pub async fn run(call: &HookCall, cancel: Cancel) -> HookRun {
    let mut out = HookRun {
        event: call.event,
        argv: call.argv.clone(),
        exit_code: None,
        duration_ms: 0,
        error: None,
        stdout: String::new(),
        stderr: String::new(),
        truncated: false,
    };
    let Some((program, args)) = call.argv.split_first() else {
        out.error = Some("the hook has no command".into());
        return out;
    };
    let mut spec = ProcessSpec::new(program).args(args);
    spec.cwd = Some(call.cwd.clone());
    spec.env = env::parent_env();
    env::set(
        &mut spec.env,
        call.env.iter().map(|(k, v)| (*k, v.as_str())),
    );
    spec.stdin = Some(call.stdin.clone().into_bytes());
    spec.wall_timeout = Some(Duration::from_millis(call.timeout_ms));
    spec.kill_on_cancel = true;
    spec.stdout = StdoutMode::Keep(Keep::Head(HOOK_OUTPUT_MAX));
    spec.stderr = Keep::Head(HOOK_OUTPUT_MAX);
    // Output past the cut is read and dropped: a chatty hook is not stopped for it.
    spec.max_output = None;
    match run_process(spec, cancel).await {
        Err(e) => out.error = Some(format!("the hook could not start `{program}`: {e}")),
        Ok(r) => {
            out.exit_code = Some(r.code());
            out.duration_ms = r.elapsed.as_millis() as u64;
            out.stdout = r.stdout_text();
            out.stderr = r.stderr_text();
            out.truncated = r.stdout_truncated || r.stderr_truncated;
            out.error = match r.end {
                End::WallTimeout | End::IdleTimeout => Some(format!(
                    "the hook timed out after {}ms; its process group was killed",
                    call.timeout_ms
                )),
                End::Cancelled => Some("the hook was interrupted".into()),
                _ if r.code() != 0 => Some(exit_error(r.code(), &out.stderr)),
                _ => None,
            };
        }
    }
    out
}

/// `the hook exited with code N[: <the first line of its stderr>]`.
fn exit_error(code: i32, stderr: &str) -> String {
    let first: Cow<'_, str> = match stderr.trim().lines().next() {
        Some(l) if l.chars().count() > 200 => {
            Cow::Owned(format!("{}…", l.chars().take(200).collect::<String>()))
        }
        Some(l) => Cow::Borrowed(l),
        None => Cow::Borrowed(""),
    };
    if first.is_empty() {
        format!("the hook exited with code {code}")
    } else {
        format!("the hook exited with code {code}: {first}")
    }
}

#[cfg(test)]
mod tests;
