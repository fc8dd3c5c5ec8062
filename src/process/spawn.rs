//! Spawning a supervised process into a group of its own, and the event loop that drives it to
//! its end: stdin written, stdout/stderr read, watchdogs, cancellation, the line handler.

use std::ffi::{OsStr, OsString};
use std::future::Future;
use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use nix::unistd::Pid;
use smol::Timer;
use smol::io::{AsyncRead, AsyncWrite};
use smol::process::{ChildStderr, ChildStdin, ChildStdout};

use super::cancel::Cancel;
use super::capture::{Capture, Fed, feed_lines};
use super::kill::{GroupGuard, Stopper};
use super::spec::{End, Keep, LineFlow, ProcessResult, ProcessSpec, StdoutMode};
use super::watchdog::Watchdog;

/// How long output is still read after the child itself exited, while something else in its
/// group holds the pipes open (a backgrounded grandchild); then the group is killed.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(500);
const READ_CHUNK: usize = 64 * 1024;

/// `program` as a path: a bare name is looked up on the child's `PATH` (absolute entries;
/// the first executable file wins, as `execvp` would pick it). std spawns a program given by
/// path with `posix_spawn` (no copy of this process's page tables), but falls back to
/// `fork` for a bare name under a `PATH` of the child's own — which costs milliseconds per
/// call in a large run. A name not found (or a relative `PATH` entry before it) is left as it
/// is, so the spawn reports it as before.
fn program_path(program: &OsStr, env: &[(OsString, OsString)]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    let bare = PathBuf::from(program);
    if program.as_bytes().contains(&b'/') || program.is_empty() {
        return bare;
    }
    let Some((_, path)) = env.iter().rev().find(|(k, _)| k == "PATH") else {
        return bare;
    };
    for dir in std::env::split_paths(path) {
        if !dir.is_absolute() {
            return bare;
        }
        let candidate = dir.join(program);
        let executable = std::fs::metadata(&candidate)
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
        if executable {
            return candidate;
        }
    }
    bare
}

/// Run a process, collecting its output ([`StdoutMode::Keep`]). `Err` only when it cannot be
/// started (not found, not executable, bad working directory).
pub async fn run_process(spec: ProcessSpec, cancel: Cancel) -> io::Result<ProcessResult> {
    run_process_lines(spec, cancel, &mut |_| LineFlow::Continue).await
}

/// Run a process; with [`StdoutMode::Lines`] every stdout line (without its `\n` and a `\r`
/// before it) goes to `on_line`. A last line without `\n` is handed over at end of output.
pub async fn run_process_lines(
    spec: ProcessSpec,
    cancel: Cancel,
    on_line: &mut (dyn FnMut(&[u8]) -> LineFlow + Send),
) -> io::Result<ProcessResult> {
    let started = Instant::now();
    let mut watchdog = Watchdog::new(started, spec.idle_timeout, spec.wall_timeout);
    let mut cmd = std::process::Command::new(program_path(&spec.program, &spec.env));
    cmd.args(&spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .process_group(0);
    if let Some(dir) = &spec.cwd {
        cmd.current_dir(dir);
    }
    // The stdio settings go on the async command: converting resets them to "inherit".
    let mut child = smol::process::Command::from(cmd)
        .stdin(if spec.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    // The child leads its own group: pgid = pid. From here on the group dies with this future.
    let guard = GroupGuard::new(Pid::from_raw(child.id() as i32));
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let mut sup = Supervision {
        guard,
        stdin,
        input: spec.stdin.clone().unwrap_or_default(),
        written: 0,
        stdout,
        stderr,
        status: Some(Box::pin(child.status())),
        cancel: {
            let c = cancel.clone();
            Some(Box::pin(async move { c.cancelled().await }))
        },
        timer: Timer::never(),
        timer_at: None,
        out_buf: vec![0; READ_CHUNK],
        err_buf: vec![0; READ_CHUNK],
    };
    drop(child);
    let mut stopper = Stopper::new(spec.kill_grace, spec.kill_on_cancel);

    let mut out = Capture::new(match spec.stdout {
        StdoutMode::Keep(k) => k,
        StdoutMode::Lines { .. } => Keep::Head(0),
    });
    let mut err = Capture::new(spec.stderr);
    let mut line = Vec::new();
    let max_line = match spec.stdout {
        StdoutMode::Lines { max_line } => Some(max_line),
        StdoutMode::Keep(_) => None,
    };
    let mut lines_open = max_line.is_some();
    let mut stdout_total: usize = 0;

    let mut end: Option<End> = None;
    let mut exit: Option<(ExitStatus, Instant)> = None;
    let mut settle_at: Option<Instant> = None;

    loop {
        let now = Instant::now();
        // Deadlines first: they may start stopping the group. Once the child exited only the
        // drain deadline counts.
        if end.is_none()
            && exit.is_none()
            && let Some(timeout) = watchdog.expired(now)
        {
            end = Some(timeout);
            stopper.stop(&sup.guard, false);
        }
        if let Some(at) = settle_at
            && now >= at
        {
            stopper.stop(&sup.guard, false);
        }
        stopper.tick(&sup.guard, now);
        let streams_open = sup.stdout.is_some() || sup.stderr.is_some();
        if let Some((_, at)) = exit
            && (!streams_open || now >= at + DRAIN_AFTER_EXIT)
        {
            break;
        }

        // The next instant anything is due.
        let mut next: Option<Instant> = None;
        let mut due = |t: Instant| next = Some(next.map_or(t, |n: Instant| n.min(t)));
        if end.is_none()
            && exit.is_none()
            && let Some(at) = watchdog.next_due()
        {
            due(at);
        }
        if let (Some(at), false) = (settle_at, stopper.term_sent()) {
            due(at);
        }
        if let Some(at) = stopper.pending_kill() {
            due(at);
        }
        if let Some((_, at)) = exit {
            due(at + DRAIN_AFTER_EXIT);
        }
        sup.arm(next);

        let events = std::future::poll_fn(|cx| sup.poll_events(cx)).await;
        let now = Instant::now();
        if let Some(n) = events.stdin_written {
            sup.written += n;
            if sup.written >= sup.input.len() {
                sup.stdin = None;
            }
        }
        if let Some(n) = events.stdout {
            if n > 0 {
                watchdog.output(now);
            }
            stdout_total = stdout_total.saturating_add(n);
            let bytes = &sup.out_buf[..n];
            if spec.max_output.is_some_and(|cap| stdout_total > cap) {
                // Over the cap: nothing more is read or kept, and the group dies now.
                if matches!(end, None | Some(End::Settled)) {
                    end = Some(End::OutputTooLarge);
                }
                lines_open = false;
                line = Vec::new();
                sup.stdout = None;
                stopper.kill_now(&sup.guard);
            } else if let Some(max) = max_line {
                if lines_open {
                    let fed = feed_lines(&mut line, bytes, n == 0, max, on_line);
                    match fed {
                        Fed::More | Fed::Flow(LineFlow::Continue) => {}
                        Fed::Flow(LineFlow::Settle(grace)) => {
                            end.get_or_insert(End::Settled);
                            let at = now + grace;
                            settle_at = Some(settle_at.map_or(at, |s| s.min(at)));
                        }
                        Fed::Flow(LineFlow::Abort) | Fed::TooLong => {
                            lines_open = false;
                            line = Vec::new();
                            if matches!(end, None | Some(End::Settled)) {
                                end = Some(if fed == Fed::TooLong {
                                    End::LineTooLong
                                } else {
                                    End::Aborted
                                });
                            }
                            stopper.stop(&sup.guard, false);
                        }
                    }
                }
            } else {
                out.push(bytes);
            }
            if n == 0 {
                sup.stdout = None;
            }
        }
        if let Some(n) = events.stderr {
            if n > 0 {
                watchdog.output(now);
            }
            err.push(&sup.err_buf[..n]);
            if n == 0 {
                sup.stderr = None;
            }
        }
        if let Some(status) = events.exit {
            // A failed wait leaves nothing to wait for: report exit code 127.
            let status = status.unwrap_or_else(|_| ExitStatus::from_raw(127 << 8));
            exit = Some((status, now));
        }
        if events.cancelled {
            sup.cancel = None;
            if end.is_none() && exit.is_none() {
                end = Some(End::Cancelled);
                stopper.stop(&sup.guard, true);
            }
        }
    }

    sup.guard.finish();
    let (status, _) = exit.expect("the loop ends only after the exit");
    let stdout_truncated = out.truncated;
    Ok(ProcessResult {
        end: end.unwrap_or(End::Exited),
        status,
        stdout: out.into_bytes(),
        stdout_truncated,
        stderr: err.bytes(),
        stderr_truncated: err.truncated,
        stderr_keep: spec.stderr,
        elapsed: started.elapsed(),
    })
}

type BoxedFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// The child's pipes and the futures the loop waits on. The guard is the first field, so a
/// dropped future kills the group before the child handle goes to the reaper.
struct Supervision {
    guard: GroupGuard,
    stdin: Option<ChildStdin>,
    input: Vec<u8>,
    written: usize,
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    status: Option<BoxedFuture<io::Result<ExitStatus>>>,
    cancel: Option<BoxedFuture<()>>,
    timer: Timer,
    timer_at: Option<Instant>,
    out_buf: Vec<u8>,
    err_buf: Vec<u8>,
}

/// Everything that became ready in one poll (each source polled once, so none starves).
#[derive(Default)]
struct Events {
    stdin_written: Option<usize>,
    /// Bytes read into `out_buf`; 0 = end of stream (or a read error).
    stdout: Option<usize>,
    stderr: Option<usize>,
    exit: Option<io::Result<ExitStatus>>,
    cancelled: bool,
}

impl Supervision {
    fn arm(&mut self, at: Option<Instant>) {
        if at != self.timer_at {
            self.timer_at = at;
            match at {
                Some(t) => self.timer.set_at(t),
                None => self.timer = Timer::never(),
            }
        }
    }

    fn poll_events(&mut self, cx: &mut Context<'_>) -> Poll<Events> {
        let mut ev = Events::default();
        let mut ready = false;
        if let Some(stdin) = self.stdin.as_mut() {
            if self.written >= self.input.len() {
                self.stdin = None;
            } else {
                match Pin::new(stdin).poll_write(cx, &self.input[self.written..]) {
                    Poll::Ready(Ok(n)) if n > 0 => {
                        ev.stdin_written = Some(n);
                        ready = true;
                    }
                    // The child closed stdin (EPIPE) or will take no more: stop writing.
                    Poll::Ready(_) => {
                        self.stdin = None;
                        ev.stdin_written = Some(0);
                        self.written = self.input.len();
                        ready = true;
                    }
                    Poll::Pending => {}
                }
            }
        }
        if let Some(stdout) = self.stdout.as_mut()
            && let Poll::Ready(r) = Pin::new(stdout).poll_read(cx, &mut self.out_buf)
        {
            ev.stdout = Some(r.unwrap_or(0));
            ready = true;
        }
        if let Some(stderr) = self.stderr.as_mut()
            && let Poll::Ready(r) = Pin::new(stderr).poll_read(cx, &mut self.err_buf)
        {
            ev.stderr = Some(r.unwrap_or(0));
            ready = true;
        }
        if let Some(status) = self.status.as_mut()
            && let Poll::Ready(r) = status.as_mut().poll(cx)
        {
            self.status = None;
            ev.exit = Some(r);
            ready = true;
        }
        if let Some(cancel) = self.cancel.as_mut()
            && cancel.as_mut().poll(cx).is_ready()
        {
            ev.cancelled = true;
            ready = true;
        }
        if self.timer_at.is_some() && Pin::new(&mut self.timer).poll(cx).is_ready() {
            self.timer_at = None;
            ready = true;
        }
        if ready {
            Poll::Ready(ev)
        } else {
            Poll::Pending
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(path: &str) -> Vec<(OsString, OsString)> {
        vec![("PATH".into(), path.into())]
    }

    #[test]
    fn a_bare_name_is_found_on_the_childs_path() {
        let found = program_path(OsStr::new("sh"), &env("/nonexistent:/bin:/usr/bin"));
        assert!(found.is_absolute(), "{}", found.display());
        assert!(found.ends_with("sh"));
        // The first match wins, in PATH order.
        assert_eq!(
            program_path(OsStr::new("sh"), &env("/usr/bin:/bin")),
            PathBuf::from("/usr/bin/sh")
        );
    }

    #[test]
    fn what_cannot_be_resolved_is_left_to_the_spawn() {
        for (program, path) in [
            ("./run.sh", "/bin"),
            ("dir/tool", "/bin"),
            ("sh", "relative/dir:/bin"),
            ("no-such-program-tfc", "/bin:/usr/bin"),
            ("", "/bin"),
        ] {
            assert_eq!(
                program_path(OsStr::new(program), &env(path)),
                PathBuf::from(program),
                "{program} on {path}"
            );
        }
        assert_eq!(program_path(OsStr::new("sh"), &[]), PathBuf::from("sh"));
        // A directory or a file without an execute bit is not a program.
        assert_eq!(
            program_path(OsStr::new("tmp"), &env("/")),
            PathBuf::from("tmp")
        );
    }
}
