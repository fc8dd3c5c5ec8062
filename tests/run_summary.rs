//! What a run's summaries count, the same everywhere: the end line of `tfc run`, `tfc runs`,
//! `tfc show` and the HTML report say the same number of calls — agent calls, retries
//! included, script runs not — and a fan-out whose items did not all succeed never shows
//! them as done (`2/3 items, 1 aborted`, not `3/3 items`).

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{scratch, tfc_in, with_examples};

/// The changelog demo runs two scripts and five agent calls (four commits, one writer): every
/// summary says 5 calls.
#[test]
fn every_summary_counts_agent_calls_and_not_script_runs() {
    let dir = with_examples("summary-calls");
    let out = tfc_in(
        Some(&dir),
        &[
            "run",
            "examples/changelog/flow.json",
            "--replay",
            "examples/changelog/replay.jsonl",
        ],
        b"",
    );
    assert_eq!(out.code, 0, "{out:?}");
    let end = out.stderr.lines().last().expect("an end line");
    assert!(end.contains(" · 5 calls · "), "{end}");
    // The script phases' lines carry no call.
    assert!(out.stderr.contains("✓ collect done\n"), "{}", out.stderr);
    assert!(out.stderr.contains("✓ bump done\n"), "{}", out.stderr);

    let runs = tfc_in(Some(&dir), &["runs"], b"");
    assert!(runs.stdout.contains("  5 calls  "), "{}", runs.stdout);

    let show = tfc_in(Some(&dir), &["show", "last"], b"");
    assert!(
        show.stdout.contains("usage:    5 calls  "),
        "{}",
        show.stdout
    );
    let collect = show
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("collect "))
        .expect("a line for collect");
    assert!(collect.contains(" 0 calls "), "{collect}");
    let script = tfc_in(Some(&dir), &["show", "last", "bump"], b"");
    assert!(
        script.stdout.contains("usage:    0 calls  "),
        "{}",
        script.stdout
    );

    let report = tfc_in(Some(&dir), &["report", "last", "-o", "-"], b"");
    assert_eq!(report.code, 0, "{report:?}");
    assert!(
        report.stdout.contains("calls</dt><dd>5</dd>"),
        "{}",
        report.stdout
    );
}

fn wait_for(path: &Path) {
    let started = Instant::now();
    while !path.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A map of three items is interrupted while its third item runs: its line, `tfc show` and
/// the report say two of three items are done and one was aborted.
#[test]
fn an_aborted_item_is_not_counted_as_done() {
    let dir = scratch("summary-aborted-items");
    std::fs::create_dir_all(dir.join(".tfc")).expect(".tfc");
    std::fs::write(
        dir.join("flow.json"),
        r#"{"name":"ab","phases":[
 {"id":"list","type":"script","run":["echo","[\"a\",\"b\",\"c\"]"]},
 {"id":"m","type":"map","dependsOn":["list"],"over":"{steps.list.json}","task":"item {item}"},
 {"id":"z","dependsOn":["m"],"task":"sum {steps.m.output}"}
]}"#,
    )
    .expect("flow");
    // Items a and b answer at once; c waits until both have ended, then says so and sleeps.
    let agent = dir.join("agent.sh");
    std::fs::write(
        &agent,
        "#!/bin/sh\np=$(cat)\ncase \"$p\" in *'item c'*) sleep 1; touch c.started; sleep 30;; esac\necho \"ok $p\"\n",
    )
    .expect("agent");
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let child = Command::new(env!("CARGO_BIN_EXE_tfc"))
        .args(["run", "flow.json", "--agent-cmd", "./agent.sh"])
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tfc");
    wait_for(&dir.join("c.started"));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .expect("SIGINT");
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("✗ m failed"))
        .unwrap_or_else(|| panic!("no line for m:\n{stderr}"));
    assert!(line.contains("[2/3 items, 1 aborted]"), "{line}");
    assert!(!stderr.contains("3/3 items"), "{stderr}");

    let show = tfc_in(Some(&dir), &["show", "last", "m"], b"");
    assert!(
        show.stdout.contains("── items ──\n2/3 items, 1 aborted\n"),
        "{}",
        show.stdout
    );
    let report = tfc_in(Some(&dir), &["report", "last", "-o", "-"], b"");
    assert!(
        report.stdout.contains("Items: 2/3 items, 1 aborted"),
        "{}",
        report.stdout
    );
}

/// One agent phase and an inline sub-flow of two agent phases make 3 calls: the end line,
/// `tfc runs`, `tfc show` (the run and the flow phase) and the report count the sub-flow's.
#[test]
fn a_sub_flows_calls_are_counted_everywhere() {
    let dir = scratch("summary-sub-flow-calls");
    std::fs::create_dir_all(dir.join(".tfc")).expect(".tfc");
    std::fs::write(
        dir.join("flow.json"),
        r#"{"name":"nest","phases":[
 {"id":"a","task":"first"},
 {"id":"sub","type":"flow","dependsOn":["a"],"def":{"phases":[
   {"id":"x","task":"inner one"},
   {"id":"y","dependsOn":["x"],"task":"inner two {steps.x.output}"}]}}
]}"#,
    )
    .expect("flow");
    let out = tfc_in(Some(&dir), &["run", "flow.json", "--agent-cmd", "cat"], b"");
    assert_eq!(out.code, 0, "{out:?}");
    let end = out.stderr.lines().last().expect("an end line");
    assert!(end.contains(" · 3 calls · "), "{end}");

    let runs = tfc_in(Some(&dir), &["runs"], b"");
    assert!(runs.stdout.contains("  3 calls  "), "{}", runs.stdout);

    let show = tfc_in(Some(&dir), &["show", "last"], b"");
    assert!(
        show.stdout.contains("usage:    3 calls  "),
        "{}",
        show.stdout
    );
    let sub = show
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("sub "))
        .expect("a line for sub");
    assert!(sub.contains(" 2 calls "), "{sub}");
    let phase = tfc_in(Some(&dir), &["show", "last", "sub"], b"");
    assert!(
        phase.stdout.contains("usage:    2 calls  "),
        "{}",
        phase.stdout
    );

    let report = tfc_in(Some(&dir), &["report", "last", "-o", "-"], b"");
    assert_eq!(report.code, 0, "{report:?}");
    assert!(
        report.stdout.contains("calls</dt><dd>3</dd>"),
        "{}",
        report.stdout
    );
}

/// `tfc runs` says `1 call`, `2 calls` (SPEC §11.4).
#[test]
fn tfc_runs_says_one_call() {
    let dir = scratch("summary-one-call");
    std::fs::create_dir_all(dir.join(".tfc")).expect(".tfc");
    std::fs::write(
        dir.join("flow.json"),
        r#"{"name":"one","phases":[{"id":"a","task":"only"}]}"#,
    )
    .expect("flow");
    let out = tfc_in(Some(&dir), &["run", "flow.json", "--agent-cmd", "cat"], b"");
    assert_eq!(out.code, 0, "{out:?}");
    let runs = tfc_in(Some(&dir), &["runs"], b"");
    assert!(runs.stdout.contains("  1 call  "), "{}", runs.stdout);
    assert!(!runs.stdout.contains("1 calls"), "{}", runs.stdout);
}
