//! The process supervisor with small shell scripts: timeouts, cancellation, killing the whole
//! process group on every path, output caps, stdin handling, line mode.

use std::path::Path;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::killpg;
use nix::unistd::Pid;
use smol::Timer;
use smol::future::FutureExt;
use tfc::agent::{Cancel, CancelSource, env};
use tfc::process::{
    End, Keep, LineFlow, ProcessResult, ProcessSpec, StdoutMode, run_process, run_process_lines,
};

fn sh(script: &str) -> ProcessSpec {
    let mut s = ProcessSpec::new("sh").args(["-c", script]);
    s.env = env::parent_env();
    s.kill_grace = Duration::from_millis(300);
    s
}

fn run(spec: ProcessSpec) -> ProcessResult {
    smol::block_on(run_process(spec, Cancel::never())).expect("spawn sh")
}

/// Live (non-zombie) processes whose process group is `pgid`, from /proc.
fn live_members(pgid: i32) -> Vec<i32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp …; comm may contain spaces and parentheses.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.len() > 2 && f[2] == pgid.to_string() && f[0] != "Z" {
            pids.push(pid);
        }
    }
    pids
}

/// The group is gone: `kill(-pgid, 0)` fails with ESRCH, or (while dead members still wait to
/// be reaped by init) no live process is left in it.
fn assert_group_gone(pgid: i32) {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        if killpg(Pid::from_raw(pgid), None) == Err(Errno::ESRCH) || live_members(pgid).is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "process group {pgid} still alive: {:?}",
            live_members(pgid)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The first line of stdout: the shell's `$$`, which is the group id.
fn pgid_of(r: &ProcessResult) -> i32 {
    let text = r.stdout_text();
    text.lines().next().unwrap().trim().parse().unwrap()
}

#[test]
fn exit_code_output_and_stdin() {
    let mut s = sh("cat; echo err >&2; exit 3");
    s.stdin = Some(b"prompt\n".to_vec());
    let r = run(s);
    assert_eq!(r.end, End::Exited);
    assert_eq!(r.code(), 3);
    assert_eq!(r.stdout_text(), "prompt\n");
    assert_eq!(r.stderr_text(), "err\n");
    assert!(!r.stdout_truncated && !r.stderr_truncated);
}

#[test]
fn stdin_is_dev_null_when_unused_and_closed_when_written() {
    // `cat` would block forever on an open stdin.
    let mut s = sh("cat; echo done");
    s.wall_timeout = Some(Duration::from_secs(10));
    let r = run(s.clone());
    assert_eq!((r.end, r.stdout_text().as_str()), (End::Exited, "done\n"));
    s.stdin = Some(Vec::new());
    let r = run(s);
    assert_eq!((r.end, r.stdout_text().as_str()), (End::Exited, "done\n"));
}

#[test]
fn big_stdin_and_stdout_flow_concurrently() {
    // 4 MiB through `cat`: writing all of stdin before reading stdout would deadlock.
    let input: Vec<u8> = (0..4 * 1024 * 1024)
        .map(|i| b'a' + (i % 26) as u8)
        .collect();
    let mut s = sh("cat");
    s.stdin = Some(input.clone());
    let r = run(s);
    assert_eq!(r.end, End::Exited);
    assert!(r.stdout == input, "stdout differs from stdin");
}

#[test]
fn stdout_head_cap_keeps_the_first_bytes_and_drains_the_rest() {
    let mut s = sh("head -c 3000000 /dev/zero | tr '\\0' 'o'; echo tail");
    s.stdout = StdoutMode::Keep(Keep::Head(1_048_576));
    let r = run(s);
    assert_eq!(r.end, End::Exited);
    assert_eq!(r.code(), 0);
    assert_eq!(r.stdout.len(), 1_048_576);
    assert!(r.stdout.iter().all(|b| *b == b'o'));
    assert!(r.stdout_truncated);
}

#[test]
fn stderr_tail_and_head_caps() {
    let script = "head -c 200000 /dev/zero | tr '\\0' 'e' >&2; printf END >&2";
    let r = run(sh(script));
    assert_eq!(r.stderr.len(), 64 * 1024);
    assert!(r.stderr_truncated);
    assert!(r.stderr_text().ends_with("eeeEND"));
    let mut s = sh(script);
    s.stderr = Keep::Head(500);
    let r = run(s);
    assert_eq!(r.stderr_text(), "e".repeat(500));
    assert!(r.stderr_truncated);
}

#[test]
fn a_cut_character_is_dropped() {
    // 499 bytes of 'x' then 'é' (2 bytes): the 500-byte head ends inside the 'é'.
    let mut s = sh("head -c 499 /dev/zero | tr '\\0' 'x' >&2; printf '\\303\\251' >&2");
    s.stderr = Keep::Head(500);
    let r = run(s);
    assert_eq!(r.stderr_text(), "x".repeat(499));
}

#[test]
fn idle_timeout_kills_a_hung_process_and_its_group() {
    let mut s = sh("echo $$; sleep 1000 & sleep 1000");
    s.idle_timeout = Some(Duration::from_millis(300));
    let started = Instant::now();
    let r = run(s);
    assert_eq!(r.end, End::IdleTimeout);
    assert_eq!(r.signal(), Some(15));
    assert_eq!(r.code(), 143);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_group_gone(pgid_of(&r));
}

#[test]
fn output_on_stderr_resets_the_idle_timer() {
    let mut s = sh("for i in 1 2 3 4 5 6; do echo tick >&2; sleep 0.1; done; echo ok");
    s.idle_timeout = Some(Duration::from_millis(400));
    let r = run(s);
    assert_eq!((r.end, r.stdout_text().as_str()), (End::Exited, "ok\n"));
}

#[test]
fn sigterm_ignored_means_sigkill_after_the_grace() {
    let mut s = sh("trap '' TERM; echo $$; sleep 1000 & sleep 1000");
    s.idle_timeout = Some(Duration::from_millis(200));
    s.kill_grace = Duration::from_millis(500);
    let started = Instant::now();
    let r = run(s);
    let took = started.elapsed();
    assert_eq!(r.end, End::IdleTimeout);
    assert_eq!(r.signal(), Some(9));
    assert!(took >= Duration::from_millis(700), "{took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert_group_gone(pgid_of(&r));
}

#[test]
fn wall_timeout_stops_a_chatty_process() {
    let mut s = sh("echo $$; while :; do echo x; sleep 0.05; done");
    s.idle_timeout = Some(Duration::from_secs(10));
    s.wall_timeout = Some(Duration::from_millis(500));
    let started = Instant::now();
    let r = run(s);
    assert_eq!(r.end, End::WallTimeout);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(r.stdout_text().lines().count() > 3);
    assert_group_gone(pgid_of(&r));
}

#[test]
fn cancellation_stops_the_group() {
    for kill_on_cancel in [false, true] {
        let mut s = sh("trap '' TERM; echo $$; sleep 1000 & sleep 1000");
        s.kill_grace = Duration::from_millis(400);
        s.kill_on_cancel = kill_on_cancel;
        let source = CancelSource::new();
        let token = source.token();
        let started = Instant::now();
        let r = smol::block_on(async {
            let fire = async {
                Timer::after(Duration::from_millis(200)).await;
                source.cancel();
                std::future::pending::<std::io::Result<ProcessResult>>().await
            };
            run_process(s, token).or(fire).await.unwrap()
        });
        let took = started.elapsed();
        assert_eq!(r.end, End::Cancelled);
        assert_eq!(r.signal(), Some(9));
        if kill_on_cancel {
            assert!(took < Duration::from_millis(550), "{took:?}");
        } else {
            assert!(took >= Duration::from_millis(550), "{took:?}");
        }
        assert_group_gone(pgid_of(&r));
    }
}

#[test]
fn an_already_cancelled_token_stops_at_once() {
    let source = CancelSource::new();
    source.cancel();
    let r = smol::block_on(run_process(sh("sleep 1000"), source.token())).unwrap();
    assert_eq!(r.end, End::Cancelled);
}

#[test]
fn dropping_the_future_kills_the_group() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let script = format!(
        "echo $$ > '{}'; sleep 1000 & sleep 1000",
        pid_file.display()
    );
    let fut = run_process(sh(&script), Cancel::never());
    let pgid = smol::block_on(async {
        let wait_pid = async {
            loop {
                if let Ok(t) = std::fs::read_to_string(&pid_file)
                    && t.ends_with('\n')
                {
                    return Some(t.trim().parse::<i32>().unwrap());
                }
                Timer::after(Duration::from_millis(20)).await;
            }
        };
        let run = async {
            fut.await.unwrap();
            None
        };
        wait_pid.or(run).await
    })
    .expect("the script never ends by itself");
    // `fut` was dropped with the `or` above, mid-run.
    assert_group_gone(pgid);
}

#[test]
fn a_backgrounded_child_holding_the_pipes_does_not_hold_the_call() {
    // The shell exits at once; its background child keeps stdout open.
    let started = Instant::now();
    let r = run(sh("echo $$; sleep 1000 & echo parent-done"));
    assert_eq!(r.end, End::Exited);
    assert_eq!(r.code(), 0);
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(r.stdout_text().lines().nth(1), Some("parent-done"));
    assert_group_gone(pgid_of(&r));
}

#[test]
fn spawn_errors() {
    let e = smol::block_on(run_process(
        ProcessSpec::new("/nonexistent/tfc-no-such-program"),
        Cancel::never(),
    ))
    .unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    // The environment is exactly the spec's: without PATH a bare name is not found.
    let e = smol::block_on(run_process(
        ProcessSpec::new("tfc-no-such-program"),
        Cancel::never(),
    ))
    .unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
}

#[test]
fn environment_and_cwd_are_exactly_the_specs() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = ProcessSpec::new("/bin/sh").args(["-c", "env | sort; pwd"]);
    s.env = vec![("ONLY".into(), "this".into())];
    s.cwd = Some(dir.path().to_owned());
    let r = run(s);
    let text = r.stdout_text();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with("PWD=")).collect();
    let cwd = dir.path().canonicalize().unwrap();
    assert!(lines.contains(&"ONLY=this"), "{text}");
    assert_eq!(lines.last().map(Path::new), Some(cwd.as_path()));
    assert!(!text.contains("HOME="), "{text}");
}

fn lines_spec(script: &str, max_line: usize) -> ProcessSpec {
    let mut s = sh(script);
    s.stdout = StdoutMode::Lines { max_line };
    s
}

#[test]
fn line_mode_hands_over_every_line() {
    let mut got = Vec::new();
    let r = smol::block_on(run_process_lines(
        lines_spec("printf 'a\\r\\nb\\n\\nlast'", 100),
        Cancel::never(),
        &mut |l| {
            got.push(String::from_utf8(l.to_vec()).unwrap());
            LineFlow::Continue
        },
    ))
    .unwrap();
    assert_eq!(r.end, End::Exited);
    assert_eq!(got, ["a", "b", "", "last"]);
    assert!(r.stdout.is_empty());
}

#[test]
fn line_mode_long_line_and_abort_stop_the_process() {
    let r = smol::block_on(run_process_lines(
        lines_spec("echo $$ >&2; head -c 5000 /dev/zero; sleep 1000", 4096),
        Cancel::never(),
        &mut |_| LineFlow::Continue,
    ))
    .unwrap();
    assert_eq!(r.end, End::LineTooLong);
    let pgid: i32 = r.stderr_text().trim().parse().unwrap();
    assert_group_gone(pgid);

    let mut seen = 0;
    let r = smol::block_on(run_process_lines(
        lines_spec("echo one; echo two; sleep 1000", 100),
        Cancel::never(),
        &mut |_| {
            seen += 1;
            LineFlow::Abort
        },
    ))
    .unwrap();
    assert_eq!((r.end, seen), (End::Aborted, 1));
}

#[test]
fn settle_gives_a_grace_then_reaps() {
    // Exits by itself within the grace.
    let started = Instant::now();
    let r = smol::block_on(run_process_lines(
        lines_spec("echo done; sleep 0.2; exit 0", 100),
        Cancel::never(),
        &mut |_| LineFlow::Settle(Duration::from_secs(5)),
    ))
    .unwrap();
    assert_eq!((r.end, r.code()), (End::Settled, 0));
    assert!(started.elapsed() < Duration::from_secs(3));
    // Lingers: stopped after the grace.
    let started = Instant::now();
    let r = smol::block_on(run_process_lines(
        lines_spec("echo done; sleep 1000", 100),
        Cancel::never(),
        &mut |_| LineFlow::Settle(Duration::from_millis(300)),
    ))
    .unwrap();
    let took = started.elapsed();
    assert_eq!((r.end, r.signal()), (End::Settled, Some(15)));
    assert!(took >= Duration::from_millis(300) && took < Duration::from_secs(3));
}
