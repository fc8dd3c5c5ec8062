//! The generic command backend (SPEC §9.6) driven through the `Agent` trait with shell scripts.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use smol::Timer;
use smol::future::FutureExt;
use tfc::agent::{
    Agent, Cancel, CancelSource, CommandBackend, Outcome, Request, StopReason, Usage,
};

fn request(prompt: &str) -> Request {
    Request {
        attempt: 2,
        cwd: PathBuf::new(),
        ..Request::new("run-1", "audit#3", "scout", prompt)
    }
}

/// `sh -c SCRIPT` as a command backend, with a short kill grace.
fn script(script: &str) -> CommandBackend {
    let mut b = CommandBackend::new(vec!["sh".into(), "-c".into(), script.into()]).unwrap();
    b.kill_grace = Duration::from_millis(300);
    b
}

fn call(backend: &CommandBackend, request: Request) -> Outcome {
    smol::block_on(backend.call(request, Cancel::never()))
}

#[test]
fn stdin_is_the_prompt_and_output_is_trimmed_at_the_end() {
    let b = script("cat; printf ' \\n\\t\\n'");
    let o = call(&b, request("  exactly\nthis\u{a0}"));
    assert!(o.is_ok(), "{o:?}");
    assert_eq!(o.output, "  exactly\nthis");
    assert_eq!(o.exit_code, Some(0));
    assert_eq!(o.usage, Usage::default());
    assert_eq!(o.usage.cost_usd, None);
    assert_eq!(b.name(), "command");
    assert!(!b.reports_tokens() && !b.reports_cost());
}

#[test]
fn failure_carries_partial_output_and_trimmed_stderr() {
    let o = call(
        &script("echo partial; echo ' first' >&2; echo 'second  ' >&2; exit 4"),
        request("x"),
    );
    assert_eq!(o.stop, StopReason::Failed);
    assert_eq!(o.output, "partial");
    assert_eq!(o.error.as_deref(), Some("first\nsecond"));
    assert_eq!(o.exit_code, Some(4));
    assert_eq!(o.stderr, " first\nsecond  \n");

    let o = call(&script("echo '  ' >&2; exit 3"), request("x"));
    assert_eq!(o.error.as_deref(), Some("command exited with code 3"));
    // Killed by a signal: 128 + S.
    let o = call(&script("kill -9 $$"), request("x"));
    assert_eq!(o.error.as_deref(), Some("command exited with code 137"));
    assert_eq!(o.exit_code, Some(137));
}

#[test]
fn stderr_error_is_its_last_64_kib() {
    let o = call(
        &script("head -c 100000 /dev/zero | tr '\\0' 'e' >&2; printf END >&2; exit 1"),
        request("x"),
    );
    let error = o.error.unwrap();
    assert_eq!(error.len(), 64 * 1024);
    assert!(error.ends_with("eEND"));
}

#[test]
fn call_environment() {
    let mut b = script("env | grep '^TFC_' | sort; echo \"HOME=$HOME\"");
    b.base_env = Some(vec![
        (OsString::from("PATH"), std::env::var_os("PATH").unwrap()),
        ("HOME".into(), "/home/x".into()),
        ("TFC_RUN_ID".into(), "from-parent".into()),
        ("TFC_STALE".into(), "1".into()),
        ("TFC_SYSTEM_PROMPT_FILE".into(), "/stale".into()),
    ]);
    let o = call(&b, request("x"));
    assert_eq!(
        o.output,
        "TFC_AGENT=scout\nTFC_ATTEMPT=2\nTFC_NODE=audit#3\nTFC_PHASE_ID=audit\n\
         TFC_RUN_ID=run-1\nHOME=/home/x"
    );
    let mut r = request("x");
    r.iteration = Some(4);
    r.item_index = Some(3);
    r.model = Some("big-model".into());
    let o = call(&b, r);
    for want in ["TFC_ITERATION=4", "TFC_ITEM_INDEX=3", "TFC_MODEL=big-model"] {
        assert!(o.output.lines().any(|l| l == want), "{want}: {}", o.output);
    }
}

#[test]
fn the_full_parent_environment_passes_by_default() {
    // This test process's own environment: pick a variable every shell has.
    let o = call(&script("echo \"$PATH\""), request("x"));
    assert_eq!(o.output, std::env::var("PATH").unwrap());
}

#[test]
fn system_prompt_goes_to_a_private_temp_file_deleted_afterwards() {
    let b = script(
        "echo \"$TFC_SYSTEM_PROMPT_FILE\"; stat -c %a \"$TFC_SYSTEM_PROMPT_FILE\"; \
         cat \"$TFC_SYSTEM_PROMPT_FILE\"",
    );
    let mut r = request("x");
    r.system_prompt = "You are terse.\nLine 2".into();
    let o = call(&b, r);
    assert!(o.is_ok(), "{o:?}");
    let lines: Vec<&str> = o.output.lines().collect();
    assert_eq!(lines[1..], ["600", "You are terse.", "Line 2"]);
    let path = PathBuf::from(lines[0]);
    assert!(path.is_absolute());
    assert!(!path.exists(), "{} was not deleted", path.display());

    // Also deleted when the call fails or times out.
    let mut b = script("echo \"$TFC_SYSTEM_PROMPT_FILE\"; sleep 1000");
    b.kill_grace = Duration::from_millis(100);
    let mut r = request("x");
    r.system_prompt = "S".into();
    r.idle_timeout = Some(Duration::from_millis(300));
    let o = call(&b, r);
    assert_eq!(o.stop, StopReason::IdleTimeout);
    assert!(!PathBuf::from(o.output.trim()).exists());

    // No system prompt, no variable.
    let o = call(
        &script("echo \"[${TFC_SYSTEM_PROMPT_FILE-unset}]\""),
        request("x"),
    );
    assert_eq!(o.output, "[unset]");
}

#[test]
fn idle_timeout() {
    let mut r = request("x");
    r.idle_timeout = Some(Duration::from_millis(250));
    let started = Instant::now();
    let o = call(&script("echo started; sleep 1000"), r);
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(o.stop, StopReason::IdleTimeout);
    assert_eq!(
        o.error.as_deref(),
        Some("Subagent produced no output for 250ms (idle timeout)")
    );
    assert_eq!(o.output, "started");
}

#[test]
fn wall_timeout() {
    let mut r = request("x");
    r.idle_timeout = Some(Duration::from_secs(10));
    r.wall_timeout = Some(Duration::from_millis(400));
    let o = call(&script("while :; do echo tick; sleep 0.05; done"), r);
    assert_eq!(o.stop, StopReason::WallTimeout);
    assert_eq!(
        o.error.as_deref(),
        Some("Phase timed out after 400ms (subagent aborted)")
    );
    assert!(o.output.starts_with("tick"));
}

#[test]
fn cancellation() {
    let b = script("echo begun; sleep 1000");
    let source = CancelSource::new();
    let token = source.token();
    let started = Instant::now();
    let o = smol::block_on(async {
        let fire = async {
            Timer::after(Duration::from_millis(200)).await;
            source.cancel();
            std::future::pending::<Outcome>().await
        };
        b.call(request("x"), token).or(fire).await
    });
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(o.stop, StopReason::Cancelled);
    assert_eq!(o.error.as_deref(), Some("Aborted"));
    assert_eq!(o.output, "begun");
}

#[test]
fn missing_program_or_directory() {
    let b = CommandBackend::new(vec!["tfc-no-such-agent".into(), "--x".into()]).unwrap();
    let o = call(&b, request("x"));
    assert_eq!(o.stop, StopReason::BackendMissing);
    assert_eq!(
        o.error.as_deref(),
        Some("command not found: `tfc-no-such-agent` (not on PATH, or the path does not exist)")
    );
    let mut r = request("x");
    r.cwd = "/nonexistent/tfc-dir".into();
    let o = call(&script("true"), r);
    assert_eq!(o.stop, StopReason::Failed);
    assert_eq!(
        o.error.as_deref(),
        Some("working directory does not exist: /nonexistent/tfc-dir")
    );
    assert!(CommandBackend::new(Vec::new()).is_err());
}

#[test]
fn working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = request("x");
    r.cwd = dir.path().to_owned();
    let o = call(&script("pwd -P"), r);
    assert_eq!(PathBuf::from(o.output), dir.path().canonicalize().unwrap());
}

#[test]
fn agent_cmd_command_lines() {
    let b = CommandBackend::from_command_line(r#"sh -c 'cat; echo " [$0]"' "my arg""#).unwrap();
    assert_eq!(b.argv(), ["sh", "-c", "cat; echo \" [$0]\"", "my arg"]);
    let o = call(&b, request("hi"));
    assert_eq!(o.output, "hi [my arg]");
    assert!(CommandBackend::from_command_line("agent | tee log").is_err());
    assert!(CommandBackend::from_command_line("  ").is_err());
}
