//! Supervised child processes (SPEC §9.4), shared by the agent backends and the script phase.
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
//! Files, one seam each:
//! * `spec.rs` — what to run ([`ProcessSpec`]) and what came out ([`ProcessResult`], [`End`]);
//!   the output cap of agent calls.
//! * `spawn.rs` — [`run_process`] / [`run_process_lines`]: spawning into a new group and the
//!   event loop that drives the child to its end.
//! * `watchdog.rs` — the idle and wall deadlines.
//! * `kill.rs` — the process-group guard and the SIGTERM → SIGKILL escalation.
//! * `capture.rs` — capped stdout/stderr buffers, line splitting, text of cut bytes.
//! * `cancel.rs` — [`Cancel`] tokens; `env.rs` — a child's explicit environment.
//!
//! A script phase (SPEC §3.11), for example:
//!
//! ```
//! use std::time::Duration;
//! use tfc::process::{Cancel, End, Keep, ProcessSpec, StdoutMode, env, run_process};
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

mod cancel;
mod capture;
pub mod env;
mod kill;
mod spawn;
mod spec;
mod text;
mod watchdog;

pub use cancel::{Cancel, CancelSource};
pub use kill::kill_all_groups;
pub use spawn::{run_process, run_process_lines};
pub use spec::{
    DEFAULT_MAX_OUTPUT, End, KILL_GRACE, Keep, LineFlow, MAX_LINE, OUTPUT_CAP_ERROR_START,
    ProcessResult, ProcessSpec, STDERR_TAIL, StdoutMode, max_output, output_cap_error,
    set_max_output,
};

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
