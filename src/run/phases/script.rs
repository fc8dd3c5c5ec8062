//! script (SPEC §3.11): `sh -c` for a string `run`, direct exec for an argv array; `input` on
//! stdin; a timeout that stops the whole process group; capped output; never retried.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::Stdio;
use std::time::{Duration, Instant};

use futures_lite::{AsyncReadExt, AsyncWriteExt, future};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use super::super::exec::Exec;
use crate::eval::{js_trim, js_trim_end};
use crate::flow::Run;
use crate::value::{Map, Value};

const STDOUT_CAP: usize = 1_048_576;
const STDERR_CAP: usize = 500;

pub async fn run(ex: &mut Exec<'_>) {
    let phase = ex.phase;
    let scope = ex.scope.clone();
    let Some(run) = &phase.run else {
        ex.fail(String::new(), "Script error: no 'run' command");
        return;
    };
    let argv: Vec<String> = match &run.value {
        Run::Shell(cmd) => vec!["sh".into(), "-c".into(), cmd.value.clone()],
        Run::Argv(items) => items.iter().map(|t| ex.render("run", t, &scope)).collect(),
    };
    let input = phase.input.as_ref().map(|t| ex.render("input", t, &scope));
    let shown = match &run.value {
        Run::Shell(cmd) => Value::from(cmd.value.as_str()),
        Run::Argv(_) => Value::Array(argv.iter().map(|a| Value::from(a.as_str())).collect()),
    };
    ex.rec.attempts = 1;
    if ex.sh.opts.dry_run && !ex.sh.opts.dry_run_scripts {
        ex.succeed("[dry-run: script not executed]".into());
        return;
    }
    let timeout =
        Duration::from_millis(phase.timeout.as_ref().map_or(60_000.0, |t| t.value) as u64);
    let started = Instant::now();
    let result = execute(ex, &argv, input.as_deref(), timeout).await;
    let mut journal = Map::default();
    journal.insert("type".into(), Value::from("script"));
    journal.insert("ts".into(), Value::from(super::super::record::now()));
    journal.insert("phase".into(), Value::from(phase.id.as_str()));
    journal.insert("command".into(), shown);
    journal.insert(
        "exitCode".into(),
        result.code.map_or(Value::Null, |c| Value::Number(c as f64)),
    );
    journal.insert(
        "durationMs".into(),
        Value::Number(started.elapsed().as_millis() as f64),
    );
    ex.sh.journal(Value::Object(journal));
    let stdout = String::from_utf8_lossy(&result.stdout).into_owned();
    let stdout = drop_cut_char(stdout, result.stdout_truncated);
    let truncated_note = if result.stdout_truncated {
        "\n[stdout truncated at 1 MB]"
    } else {
        ""
    };
    match result.kind {
        Ended::Spawn(msg) => ex.fail(String::new(), format!("Script error: {msg}")),
        Ended::Timeout => {
            ex.rec.timed_out = true;
            ex.fail(
                stdout,
                format!("Script timed out after {}ms", timeout.as_millis()),
            );
        }
        Ended::Aborted => ex.fail(stdout, "Aborted"),
        Ended::Exit => {
            let code = result.code.unwrap_or(-1);
            if code == 0 {
                ex.succeed(format!("{}{truncated_note}", js_trim_end(&stdout)));
            } else {
                let stderr = String::from_utf8_lossy(&result.stderr).into_owned();
                let stderr = js_trim(&stderr);
                let mut err = format!("Script exited with code {code}");
                if !stderr.is_empty() {
                    err.push_str(": ");
                    err.push_str(stderr);
                }
                if result.stdout_truncated {
                    err.push_str(" [stdout truncated at 1 MB]");
                }
                ex.fail(stdout, err);
            }
        }
    }
}

/// Lossy decoding of a cut buffer leaves U+FFFD for a character cut in half: drop it.
fn drop_cut_char(mut s: String, truncated: bool) -> String {
    if truncated && s.ends_with('\u{fffd}') {
        s.pop();
    }
    s
}

enum Ended {
    Exit,
    Timeout,
    Aborted,
    Spawn(String),
}

struct ScriptResult {
    kind: Ended,
    code: Option<i32>,
    stdout: Vec<u8>,
    stdout_truncated: bool,
    stderr: Vec<u8>,
}

async fn execute(
    ex: &Exec<'_>,
    argv: &[String],
    input: Option<&str>,
    timeout: Duration,
) -> ScriptResult {
    let mut result = ScriptResult {
        kind: Ended::Exit,
        code: None,
        stdout: Vec::new(),
        stdout_truncated: false,
        stderr: Vec::new(),
    };
    let Some((program, args)) = argv.split_first() else {
        result.kind = Ended::Spawn("empty command".into());
        return result;
    };
    let mut std_cmd = std::process::Command::new(program);
    std_cmd
        .args(args)
        .current_dir(&ex.sh.cwd)
        .env("TFC_RUN_ID", &ex.sh.run_id)
        .env("TFC_PHASE_ID", &ex.phase.id)
        .process_group(0);
    // Stdio is set on the async command: it only wraps the pipes it configured itself.
    let mut cmd = smol::process::Command::from(std_cmd);
    cmd.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            result.kind = Ended::Spawn(e.to_string());
            return result;
        }
    };
    let pgid = Pid::from_raw(child.id() as i32);
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let input = input.map(str::to_owned);
    let feed = async move {
        if let (Some(pipe), Some(text)) = (stdin.as_mut(), input) {
            let _ = pipe.write_all(text.as_bytes()).await;
        }
        drop(stdin);
    };
    let read_out = async move {
        let mut kept = Vec::new();
        let mut truncated = false;
        let mut buf = vec![0u8; 64 * 1024];
        if let Some(out) = stdout.as_mut() {
            while let Ok(n) = out.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let room = STDOUT_CAP.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
                truncated |= n > room;
            }
        }
        (kept, truncated)
    };
    let read_err = async move {
        let mut tail = Vec::new();
        if let Some(err) = stderr.as_mut() {
            let _ = err.read_to_end(&mut tail).await;
        }
        tail.truncate(STDERR_CAP);
        tail
    };
    let io = async { future::zip(feed, future::zip(read_out, read_err)).await };
    let waited = async {
        let ((), ((out, truncated), err)) = io.await;
        let status = child.status().await;
        (out, truncated, err, status)
    };
    enum Stop {
        Timeout,
        Abort,
    }
    let watchdog = async {
        future::or(
            async {
                smol::Timer::after(timeout).await;
                Stop::Timeout
            },
            async {
                ex.sh.cancel.cancelled().await;
                Stop::Abort
            },
        )
        .await
    };
    futures_lite::pin!(waited);
    match future::or(async { Ok((&mut waited).await) }, async {
        Err(watchdog.await)
    })
    .await
    {
        Ok((out, truncated, err, status)) => {
            result.stdout = out;
            result.stdout_truncated = truncated;
            result.stderr = err;
            result.code = status
                .ok()
                .map(|s| s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0)));
        }
        Err(stop) => {
            let first = if matches!(stop, Stop::Abort) {
                Signal::SIGKILL
            } else {
                Signal::SIGTERM
            };
            let _ = killpg(pgid, first);
            let settled = future::or(async { Some((&mut waited).await) }, async {
                smol::Timer::after(Duration::from_secs(5)).await;
                None
            })
            .await;
            let settled = match settled {
                Some(s) => Some(s),
                None => {
                    let _ = killpg(pgid, Signal::SIGKILL);
                    Some((&mut waited).await)
                }
            };
            if let Some((out, truncated, err, _)) = settled {
                result.stdout = out;
                result.stdout_truncated = truncated;
                result.stderr = err;
            }
            result.kind = match stop {
                Stop::Timeout => Ended::Timeout,
                Stop::Abort => Ended::Aborted,
            };
        }
    }
    result
}
