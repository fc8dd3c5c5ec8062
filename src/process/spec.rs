//! What to run and what came out: [`ProcessSpec`], [`ProcessResult`], [`End`], and the output
//! cap agent calls share.

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::text::{head_text, tail_text};

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
    /// Hand each line to the line handler of [`run_process_lines`](super::run_process_lines);
    /// a line (or an unterminated tail) longer than `max_line` bytes ends the call with
    /// [`End::LineTooLong`].
    Lines {
        /// The longest line accepted, in bytes.
        max_line: usize,
    },
}

/// One process to run.
#[derive(Clone, Debug)]
pub struct ProcessSpec {
    /// The program: a path, or a name looked up on the child's `PATH`.
    pub program: OsString,
    /// The arguments, passed as they are (no shell).
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
    /// What to do with stdout.
    pub stdout: StdoutMode,
    /// Which stderr bytes to keep.
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

    /// Append arguments.
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
    /// Keep reading.
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
    /// Nothing arrived on stdout or stderr for [`ProcessSpec::idle_timeout`].
    IdleTimeout,
    /// [`ProcessSpec::wall_timeout`] passed since the spawn.
    WallTimeout,
    /// The [`Cancel`](super::Cancel) token fired.
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
    /// Why the supervision ended.
    pub end: End,
    /// The child's exit status (a failed wait reads as exit code 127).
    pub status: ExitStatus,
    /// Kept stdout ([`StdoutMode::Keep`]; empty in line mode).
    pub stdout: Vec<u8>,
    /// Stdout had more bytes than were kept.
    pub stdout_truncated: bool,
    /// Kept stderr.
    pub stderr: Vec<u8>,
    /// Stderr had more bytes than were kept.
    pub stderr_truncated: bool,
    /// How stderr was kept (decides which end a cut character is dropped from).
    pub stderr_keep: Keep,
    /// From the spawn to the end of the supervision.
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

    /// The signal that killed the process, if one did.
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
