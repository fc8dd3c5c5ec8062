//! Supervised child processes (SPEC §9.4), shared by the command backends and the script phase.
//!
//! [`run_process`] spawns one program without a shell, in a process group of its own, and drives
//! it to the end inside the calling future: the stdin text is written and stdin closed (or stdin
//! is `/dev/null`), stdout and stderr are read concurrently, and watchdogs stop it:
//!
//! - the **idle** timeout, reset by every byte on stdout or stderr;
//! - the **wall** timeout, from the spawn;
//! - **cancellation** through a [`Cancel`];
//! - the line handler of [`run_process_lines`], which may abort (a protocol error) or *settle*
//!   (the answer is complete: the process gets a grace period to exit, then it is stopped).
//!
//! Stopping = SIGTERM to the whole group, SIGKILL [`ProcessSpec::kill_grace`] later (or SIGKILL
//! at once, for cancellation with [`ProcessSpec::kill_on_cancel`]). When the call ends the whole
//! group is SIGKILLed — on every path, including when the future is dropped half-way, so nothing
//! the child started in its group outlives the call.
//!
//! Output is kept within caps chosen by the caller ([`Keep`]): the script phase keeps the first
//! MiB of stdout and 500 bytes of stderr, the agent backends the last 64 KiB of stderr and feed
//! stdout line by line to an event-stream parser (lines longer than a cap end the call).
//!
//! A script phase (SPEC §3.11), for example:
//!
//! ```
//! use std::time::Duration;
//! use tfc::agent::supervisor::{End, Keep, ProcessSpec, StdoutMode, run_process};
//! use tfc::agent::{Cancel, env};
//!
//! let mut spec = ProcessSpec::new("sh").args(["-c", "cat; echo oops >&2; exit 3"]);
//! spec.env = env::parent_env();
//! env::set(&mut spec.env, [("TFC_RUN_ID", "r1"), ("TFC_PHASE_ID", "build")]);
//! spec.stdin = Some(b"input text".to_vec());
//! spec.wall_timeout = Some(Duration::from_millis(60_000));
//! spec.kill_on_cancel = true;
//! spec.stdout = StdoutMode::Keep(Keep::Head(1_048_576));
//! spec.stderr = Keep::Head(500);
//! let r = smol::block_on(run_process(spec, Cancel::never())).expect("spawn");
//! assert_eq!((r.end, r.code()), (End::Exited, 3)); // killed by signal S: 128 + S
//! assert_eq!(r.stdout_text(), "input text");
//! assert_eq!((r.stderr_text().as_str(), r.stdout_truncated), ("oops\n", false));
//! ```

use std::collections::VecDeque;
use std::ffi::OsString;
use std::future::Future;
use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use smol::Timer;
use smol::io::{AsyncRead, AsyncWrite};
use smol::process::{ChildStderr, ChildStdin, ChildStdout};

use std::sync::atomic::{AtomicUsize, Ordering};

use super::Cancel;

/// Is `program` runnable: an existing file when it holds a `/`, else found on `PATH`?
/// Nothing is spawned.
pub fn program_available(program: &str) -> Result<(), String> {
    let found = if program.contains('/') {
        std::path::Path::new(program).is_file()
    } else {
        std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
    };
    if found {
        Ok(())
    } else {
        Err(format!(
            "command not found: `{program}` (not on PATH, or the path does not exist)"
        ))
    }
}

/// The default SIGTERM → SIGKILL grace (SPEC §9.4).
pub const KILL_GRACE: Duration = Duration::from_secs(5);
/// The stderr tail the agent backends keep (SPEC §9.4).
pub const STDERR_TAIL: usize = 64 * 1024;
/// The longest NDJSON line an agent backend accepts (SPEC §9.4).
pub const MAX_LINE: usize = 1024 * 1024;

/// The default cap on what an agent call may write to stdout (`[limits] max_output_bytes`).
pub const DEFAULT_MAX_OUTPUT: usize = 16 * 1024 * 1024;
static MAX_OUTPUT: AtomicUsize = AtomicUsize::new(DEFAULT_MAX_OUTPUT);

/// Set the cap every later [`ProcessSpec::new`] starts with (the CLI sets it from
/// `[limits] max_output_bytes` before running anything; the HTTP backend reads it too).
pub fn set_max_output(bytes: usize) {
    MAX_OUTPUT.store(bytes, Ordering::Relaxed);
}

/// The current cap on an agent call's output (see [`set_max_output`]).
pub fn max_output() -> usize {
    MAX_OUTPUT.load(Ordering::Relaxed)
}

/// How [`output_cap_error`] begins.
pub const OUTPUT_CAP_ERROR_START: &str = "the agent's output exceeded the limit of ";

/// The error of a call stopped by the output cap.
pub fn output_cap_error(cap: usize) -> String {
    format!(
        "{OUTPUT_CAP_ERROR_START}{cap} bytes, so the call was stopped; raise `max_output_bytes` under `[limits]` in .tfc/config.toml if answers this large are expected"
    )
}
/// How long output is still read after the child itself exited, while something else in its
/// group holds the pipes open (a backgrounded grandchild); then the group is killed.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(500);
const READ_CHUNK: usize = 64 * 1024;

/// Which bytes of a stream to keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// The first N bytes (the rest is read and dropped).
    Head(usize),
    /// The last N bytes.
    Tail(usize),
}

impl Keep {
    /// Everything.
    pub const ALL: Keep = Keep::Head(usize::MAX);
}

/// What to do with stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StdoutMode {
    /// Collect it (within the cap) into [`ProcessResult::stdout`].
    Keep(Keep),
    /// Hand each line to the line handler of [`run_process_lines`]; a line (or an unterminated
    /// tail) longer than `max_line` bytes ends the call with [`End::LineTooLong`].
    Lines { max_line: usize },
}

/// One process to run.
#[derive(Clone, Debug)]
pub struct ProcessSpec {
    /// The program: a path, or a name looked up on the child's `PATH`.
    pub program: OsString,
    pub args: Vec<OsString>,
    /// `None`: the caller's working directory.
    pub cwd: Option<PathBuf>,
    /// The child's whole environment (nothing is inherited implicitly); see [`super::env`].
    pub env: Vec<(OsString, OsString)>,
    /// Written to stdin, which is then closed; `None` = stdin is `/dev/null`.
    pub stdin: Option<Vec<u8>>,
    /// `None` (or zero): no idle watchdog.
    pub idle_timeout: Option<Duration>,
    /// `None` (or zero): no wall clock limit.
    pub wall_timeout: Option<Duration>,
    /// SIGTERM → SIGKILL delay when stopping the group (zero: SIGKILL at once).
    pub kill_grace: Duration,
    /// Cancellation sends SIGKILL at once instead of SIGTERM (the script phase's abort).
    pub kill_on_cancel: bool,
    pub stdout: StdoutMode,
    pub stderr: Keep,
    /// More stdout bytes than this stop reading and kill the group ([`End::OutputTooLarge`]);
    /// `None`: no cap (what is kept is still bounded by [`Keep`]).
    pub max_output: Option<usize>,
}

impl ProcessSpec {
    /// A spec with the defaults of an agent backend: no timeouts, a 5 s kill grace, stdout kept
    /// whole up to [`max_output`] bytes, the last 64 KiB of stderr, an empty environment and
    /// stdin `/dev/null`.
    pub fn new(program: impl Into<OsString>) -> ProcessSpec {
        ProcessSpec {
            program: program.into(),
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
            stdin: None,
            idle_timeout: None,
            wall_timeout: None,
            kill_grace: KILL_GRACE,
            kill_on_cancel: false,
            stdout: StdoutMode::Keep(Keep::ALL),
            stderr: Keep::Tail(STDERR_TAIL),
            max_output: Some(max_output()),
        }
    }

    pub fn args<I, S>(mut self, args: I) -> ProcessSpec
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }
}

/// What the line handler wants after a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineFlow {
    Continue,
    /// The answer is complete: the process may run this much longer to exit by itself, then the
    /// group is stopped ([`End::Settled`]). Lines keep coming to the handler meanwhile.
    Settle(Duration),
    /// Stop the process now ([`End::Aborted`]); no more lines are handed over.
    Abort,
}

/// Why the supervision ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The process exited by itself.
    Exited,
    IdleTimeout,
    WallTimeout,
    Cancelled,
    /// The line handler settled (the process may or may not have exited by itself).
    Settled,
    /// The line handler aborted.
    Aborted,
    /// A stdout line exceeded the cap.
    LineTooLong,
    /// Stdout exceeded [`ProcessSpec::max_output`]: reading stopped and the group was killed.
    OutputTooLarge,
}

/// A finished process.
#[derive(Clone, Debug)]
pub struct ProcessResult {
    pub end: End,
    pub status: ExitStatus,
    /// Kept stdout ([`StdoutMode::Keep`]; empty in line mode).
    pub stdout: Vec<u8>,
    /// Stdout had more bytes than were kept.
    pub stdout_truncated: bool,
    pub stderr: Vec<u8>,
    pub stderr_truncated: bool,
    /// How stderr was kept (decides which end a cut character is dropped from).
    pub stderr_keep: Keep,
    pub elapsed: Duration,
}

impl ProcessResult {
    /// The exit code, or 128 + S when killed by signal S (the shell's convention).
    pub fn code(&self) -> i32 {
        match (self.status.code(), self.status.signal()) {
            (Some(c), _) => c,
            (None, Some(s)) => 128 + s,
            (None, None) => -1,
        }
    }

    pub fn signal(&self) -> Option<i32> {
        self.status.signal()
    }

    /// Stdout as text: lossy UTF-8, a character cut by the cap dropped.
    pub fn stdout_text(&self) -> String {
        head_text(&self.stdout, self.stdout_truncated)
    }

    /// Stderr as text: lossy UTF-8, a character cut by the cap dropped.
    pub fn stderr_text(&self) -> String {
        match self.stderr_keep {
            Keep::Head(_) => head_text(&self.stderr, self.stderr_truncated),
            Keep::Tail(_) => tail_text(&self.stderr, self.stderr_truncated),
        }
    }
}

/// Lossy UTF-8 of kept leading bytes; when `cut`, an incomplete last character is dropped.
pub fn head_text(bytes: &[u8], cut: bool) -> String {
    let mut end = bytes.len();
    if cut
        && let Err(e) = std::str::from_utf8(bytes)
        && e.error_len().is_none()
    {
        end = e.valid_up_to();
    }
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// Lossy UTF-8 of kept trailing bytes; when `cut`, continuation bytes of a character whose
/// start was dropped are skipped.
pub fn tail_text(bytes: &[u8], cut: bool) -> String {
    let skip = if cut {
        bytes
            .iter()
            .take(3)
            .take_while(|b| (**b & 0b1100_0000) == 0b1000_0000)
            .count()
    } else {
        0
    };
    String::from_utf8_lossy(&bytes[skip..]).into_owned()
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
    let idle_timeout = spec.idle_timeout.filter(|d| !d.is_zero());
    let wall_timeout = spec.wall_timeout.filter(|d| !d.is_zero());
    let mut cmd = std::process::Command::new(&spec.program);
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
    let mut stopper = Stopper {
        grace: spec.kill_grace,
        kill_on_cancel: spec.kill_on_cancel,
        term_sent: false,
        kill_at: None,
        killed: false,
    };

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
    let mut last_output = started;
    let mut exit: Option<(ExitStatus, Instant)> = None;
    let mut settle_at: Option<Instant> = None;

    loop {
        let now = Instant::now();
        // Deadlines first: they may start stopping the group. Once the child exited only the
        // drain deadline counts.
        if end.is_none() && exit.is_none() {
            if let Some(wall) = wall_timeout
                && now >= started + wall
            {
                end = Some(End::WallTimeout);
            } else if let Some(idle) = idle_timeout
                && now >= last_output + idle
            {
                end = Some(End::IdleTimeout);
            }
            if end.is_some() {
                stopper.stop(&sup.guard, false);
            }
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
        if end.is_none() && exit.is_none() {
            if let Some(w) = wall_timeout {
                due(started + w);
            }
            if let Some(i) = idle_timeout {
                due(last_output + i);
            }
        }
        if let (Some(at), false) = (settle_at, stopper.term_sent) {
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
                last_output = now;
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
                last_output = now;
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

    sup.guard.signal(Signal::SIGKILL);
    sup.guard.live = false;
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

/// Stopping the group: SIGTERM, then SIGKILL after the grace (or SIGKILL at once).
struct Stopper {
    grace: Duration,
    kill_on_cancel: bool,
    term_sent: bool,
    kill_at: Option<Instant>,
    killed: bool,
}

impl Stopper {
    fn kill_now(&mut self, guard: &GroupGuard) {
        guard.signal(Signal::SIGKILL);
        self.killed = true;
        self.term_sent = true;
    }

    fn stop(&mut self, guard: &GroupGuard, cancel: bool) {
        if self.killed {
            return;
        }
        if (cancel && self.kill_on_cancel) || self.grace.is_zero() {
            guard.signal(Signal::SIGKILL);
            self.killed = true;
            self.term_sent = true;
        } else if !self.term_sent {
            guard.signal(Signal::SIGTERM);
            self.term_sent = true;
            self.kill_at = Some(Instant::now() + self.grace);
        }
    }

    /// SIGKILL once the grace is over.
    fn tick(&mut self, guard: &GroupGuard, now: Instant) {
        if let Some(at) = self.pending_kill()
            && now >= at
        {
            guard.signal(Signal::SIGKILL);
            self.killed = true;
        }
    }

    fn pending_kill(&self) -> Option<Instant> {
        self.kill_at.filter(|_| !self.killed)
    }
}

/// Kills the process group when dropped (every exit path, a dropped future included).
struct GroupGuard {
    pgid: Pid,
    live: bool,
}

/// Process groups of children still running, so an exiting tfc can take them along.
static LIVE_GROUPS: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());

/// SIGKILL every process group a call still runs (for an immediate exit, e.g. a second
/// Ctrl-C, when no destructor will run).
pub fn kill_all_groups() {
    if let Ok(groups) = LIVE_GROUPS.lock() {
        for &g in groups.iter() {
            let _ = killpg(Pid::from_raw(g), Signal::SIGKILL);
        }
    }
}

impl GroupGuard {
    fn new(pgid: Pid) -> GroupGuard {
        if let Ok(mut groups) = LIVE_GROUPS.lock() {
            groups.push(pgid.as_raw());
        }
        GroupGuard { pgid, live: true }
    }

    fn signal(&self, sig: Signal) {
        // ESRCH (nobody left in the group) is the expected answer once everything exited.
        let _ = killpg(self.pgid, sig);
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.live {
            self.signal(Signal::SIGKILL);
        }
        if let Ok(mut groups) = LIVE_GROUPS.lock() {
            groups.retain(|&g| g != self.pgid.as_raw());
        }
    }
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fed {
    /// No complete line yet.
    More,
    /// The handler's answer to the last line (an `Abort` or `Settle` wins over later ones).
    Flow(LineFlow),
    TooLong,
}

/// Split `bytes` into lines (`eof`: the rest is a last line) and hand them to `on_line`.
fn feed_lines(
    pending: &mut Vec<u8>,
    mut bytes: &[u8],
    eof: bool,
    max: usize,
    on_line: &mut (dyn FnMut(&[u8]) -> LineFlow + Send),
) -> Fed {
    let mut result = Fed::More;
    let mut deliver = |line: &[u8], result: &mut Fed| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let flow = on_line(line);
        match (*result, flow) {
            (Fed::Flow(LineFlow::Abort), _) => {}
            (_, LineFlow::Abort) => *result = Fed::Flow(LineFlow::Abort),
            (Fed::Flow(LineFlow::Settle(_)), LineFlow::Continue) => {}
            (_, f) => *result = Fed::Flow(f),
        }
        matches!(flow, LineFlow::Abort)
    };
    while let Some(i) = bytes.iter().position(|b| *b == b'\n') {
        if pending.len() + i > max {
            return Fed::TooLong;
        }
        let stop = if pending.is_empty() {
            deliver(&bytes[..i], &mut result)
        } else {
            pending.extend_from_slice(&bytes[..i]);
            let line = std::mem::take(pending);
            deliver(&line, &mut result)
        };
        bytes = &bytes[i + 1..];
        if stop {
            return result;
        }
    }
    if pending.len() + bytes.len() > max {
        return Fed::TooLong;
    }
    pending.extend_from_slice(bytes);
    if eof && !pending.is_empty() {
        let line = std::mem::take(pending);
        deliver(&line, &mut result);
    }
    result
}

/// A capped byte buffer.
struct Capture {
    keep: Keep,
    buf: VecDeque<u8>,
    truncated: bool,
}

impl Capture {
    fn new(keep: Keep) -> Capture {
        Capture {
            keep,
            buf: VecDeque::new(),
            truncated: false,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        match self.keep {
            Keep::Head(n) => {
                let room = n.saturating_sub(self.buf.len());
                if bytes.len() > room {
                    self.truncated = true;
                }
                self.buf.extend(&bytes[..bytes.len().min(room)]);
            }
            Keep::Tail(n) => {
                let bytes = if bytes.len() > n {
                    self.truncated = true;
                    &bytes[bytes.len() - n..]
                } else {
                    bytes
                };
                let over = (self.buf.len() + bytes.len()).saturating_sub(n);
                if over > 0 {
                    self.truncated = true;
                    self.buf.drain(..over);
                }
                self.buf.extend(bytes);
            }
        }
    }

    fn bytes(&mut self) -> Vec<u8> {
        self.buf.make_contiguous().to_vec()
    }

    fn into_bytes(self) -> Vec<u8> {
        Vec::from(self.buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(chunks: &[&[u8]], max: usize) -> (Vec<String>, Fed) {
        let mut got = Vec::new();
        let mut pending = Vec::new();
        let mut last = Fed::More;
        let mut on_line = |l: &[u8]| {
            got.push(String::from_utf8_lossy(l).into_owned());
            LineFlow::Continue
        };
        for (i, c) in chunks.iter().enumerate() {
            last = feed_lines(&mut pending, c, i + 1 == chunks.len(), max, &mut on_line);
            if last == Fed::TooLong {
                break;
            }
        }
        (got, last)
    }

    #[test]
    fn lines_split_across_chunks() {
        let (got, _) = lines(&[b"{\"a\"", b":1}\r\n{\"b\":2}\n", b"tail", b""], 100);
        assert_eq!(got, ["{\"a\":1}", "{\"b\":2}", "tail"]);
    }

    #[test]
    fn line_cap_counts_pending_bytes() {
        assert_eq!(
            lines(&[b"12345", b"6\n"], 6).1,
            Fed::Flow(LineFlow::Continue)
        );
        assert_eq!(lines(&[b"12345", b"67\n"], 6).1, Fed::TooLong);
        assert_eq!(lines(&[b"1234567"], 6).1, Fed::TooLong);
    }

    #[test]
    fn capture_head_and_tail() {
        let mut h = Capture::new(Keep::Head(4));
        h.push(b"ab");
        h.push(b"cdef");
        assert_eq!((h.bytes(), h.truncated), (b"abcd".to_vec(), true));
        let mut t = Capture::new(Keep::Tail(4));
        t.push(b"ab");
        assert!(!t.truncated);
        t.push(b"cdef");
        t.push(b"g");
        assert_eq!((t.bytes(), t.truncated), (b"defg".to_vec(), true));
        t.push(b"0123456789");
        assert_eq!(t.bytes(), b"6789");
    }

    #[test]
    fn cut_characters_are_dropped() {
        let s = "aé€".as_bytes(); // 1 + 2 + 3 bytes
        assert_eq!(head_text(&s[..4], true), "aé");
        assert_eq!(head_text(&s[..4], false), "aé\u{fffd}");
        assert_eq!(tail_text(&s[2..], true), "€");
        assert_eq!(tail_text(&s[4..], true), "");
    }
}
