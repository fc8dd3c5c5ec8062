//! `tfc run` and the terminal: signals (HUP, TERM), a closed stdout, what reaches stdout on a
//! failed or paused run, run-time warnings on stderr, and each phase's working directory.
//! Every test drives the real binary with small agents written next to the flow.

mod common;

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Outcome, scratch, tfc_in};

/// A fresh project folder (its own `.tfc/`) holding `flow.json` and an executable `agent.sh`.
fn project(name: &str, flow: &str, agent: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join(".tfc")).expect("create .tfc");
    std::fs::write(dir.join("flow.json"), flow).expect("write flow");
    let script = dir.join("agent.sh");
    std::fs::write(&script, format!("#!/bin/sh\n{agent}\n")).expect("write agent");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
}

fn agent_path(dir: &Path) -> String {
    dir.join("agent.sh").display().to_string()
}

fn run_in(dir: &Path, extra: &[&str]) -> Outcome {
    let agent = agent_path(dir);
    let mut argv = vec!["run", "flow.json", "--agent-cmd", agent.as_str()];
    argv.extend_from_slice(extra);
    tfc_in(Some(dir), &argv, b"")
}

/// The latest run record under `dir/.tfc/runs/`.
fn run_json(dir: &Path) -> serde_json::Value {
    let runs = dir.join(".tfc/runs");
    let mut records: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    for flow in std::fs::read_dir(&runs).expect("runs dir").flatten() {
        for run in std::fs::read_dir(flow.path()).expect("flow dir").flatten() {
            let file = run.path().join("run.json");
            let modified = std::fs::metadata(&file).and_then(|m| m.modified());
            records.push((modified.expect("run.json"), file));
        }
    }
    records.sort();
    let (_, file) = records.pop().expect("a run record");
    let text = std::fs::read_to_string(&file).expect("read run.json");
    serde_json::from_str(&text).expect("run.json is JSON")
}

fn wait_for(path: &Path) -> String {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(20) {
        if let Ok(s) = std::fs::read_to_string(path)
            && s.ends_with('\n')
        {
            return s;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("{} never appeared", path.display());
}

fn wait_output(child: Child) -> Outcome {
    let out = child.wait_with_output().expect("wait for tfc");
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Processes of group `pgid` that are still alive (zombies waiting for their reaper are dead).
fn live_in_group(pgid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid pgrp …`; comm may hold spaces, so split after its `)`.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 2 && fields[2] == pgid.to_string() && fields[0] != "Z" {
            out.push(pid);
        }
    }
    out
}

/// An agent that sleeps (in a child process of its own group) until it is stopped.
const SLEEPER: &str = r#"cat >/dev/null
if [ "$TFC_PHASE_ID" = "wait" ]; then
  echo "$$" > agent.pid
  sleep 30
  exit 0
fi
echo "$TFC_PHASE_ID ok""#;

/// Send `signal` to a `tfc run` whose agent sleeps: the run pauses (exit 5, `interrupted`),
/// the agent's whole process group is gone, and nothing stale reaches stdout.
fn signal_pauses_the_run(name: &str, signal: nix::sys::signal::Signal) {
    let flow = r#"{"name": "sig", "phases": [
        {"id": "first", "task": "one"},
        {"id": "wait", "dependsOn": ["first"], "task": "two"},
        {"id": "after", "dependsOn": ["wait"], "task": "three"}
    ]}"#;
    let dir = project(name, flow, SLEEPER);
    let child = Command::new(env!("CARGO_BIN_EXE_tfc"))
        .args(["run", "flow.json", "--agent-cmd", &agent_path(&dir)])
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tfc");
    let pid: i32 = wait_for(&dir.join("agent.pid"))
        .trim()
        .parse()
        .expect("pid");
    let started = Instant::now();
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).expect("signal");
    let out = wait_output(child);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(out.code, 5, "{out:?}");
    assert_eq!(out.stdout, "", "{out:?}");
    assert!(out.stderr.contains("paused: interrupted"), "{}", out.stderr);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    // The agent led its own process group (pgid = pid): nobody is left alive in it.
    assert_eq!(
        live_in_group(pid),
        Vec::<i32>::new(),
        "agent group {pid} survived"
    );
    let record = run_json(&dir);
    assert_eq!(record["status"], "paused", "{record}");
    assert_eq!(record["reason"], "interrupted", "{record}");
    assert_eq!(record["phases"]["wait"]["status"], "failed");
    assert_eq!(record["phases"]["after"]["status"], "skipped");
    assert_eq!(record["outputPhase"], "first");
}

#[test]
fn sighup_pauses_the_run_and_stops_its_agents() {
    signal_pauses_the_run("term-hup", nix::sys::signal::Signal::SIGHUP);
}

#[test]
fn sigterm_pauses_the_run_and_stops_its_agents() {
    signal_pauses_the_run("term-term", nix::sys::signal::Signal::SIGTERM);
}

/// Run `tfc args…` in `dir` with stdout closed before it writes anything.
fn closed_stdout(dir: &Path, args: &[&str]) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tfc"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tfc");
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("read stderr");
    let status = child.wait().expect("wait");
    (status.code().unwrap_or(-1), stderr)
}

#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let flow = r#"{"name": "big", "phases": [{"id": "a", "task": "x"}]}"#;
    let dir = project(
        "term-pipe",
        flow,
        "cat >/dev/null; head -c 300000 /dev/zero | tr '\\0' x",
    );
    std::fs::write(dir.join("ctx.json"), r#"{"args": {"x": "1"}}"#).expect("write ctx");
    let agent = agent_path(&dir);
    let cases: Vec<(Vec<&str>, i32)> = vec![
        (vec!["run", "flow.json", "--agent-cmd", &agent], 0),
        (
            vec![
                "run",
                "flow.json",
                "--agent-cmd",
                &agent,
                "--format",
                "json",
            ],
            0,
        ),
        (vec!["run", "flow.json", "--dry-run"], 0),
        (vec!["check", "flow.json", "--format", "json"], 0),
        (vec!["eval", "template", "{args.x}", "--ctx", "ctx.json"], 0),
        (
            vec![
                "eval",
                "when",
                "{args.x} == 1",
                "--ctx",
                "ctx.json",
                "--format",
                "json",
            ],
            0,
        ),
        (vec!["graph", "flow.json"], 0),
        (vec!["schema"], 0),
    ];
    for (args, code) in cases {
        let (got, stderr) = closed_stdout(&dir, &args);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(got, code, "{args:?}: {stderr}");
    }
}

#[test]
fn a_failed_final_phase_leaves_stdout_empty_and_names_the_fallback() {
    let flow = r#"{"name": "stale", "phases": [
        {"id": "draft", "task": "x"},
        {"id": "publish", "dependsOn": ["draft"], "task": "y", "retry": {"max": 0, "backoffMs": 0}, "idempotent": false}
    ]}"#;
    let agent = r#"cat >/dev/null
if [ "$TFC_PHASE_ID" = "publish" ]; then echo "cannot publish" >&2; exit 2; fi
echo "draft text""#;
    let dir = project("term-stale", flow, agent);
    let out = run_in(&dir, &[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(out.stdout, "", "{out:?}");
    assert!(
        out.stderr.contains("the final phase 'publish' is failed")
            && out
                .stderr
                .contains("the output of phase 'draft' is in the run record"),
        "{}",
        out.stderr
    );
    let record = run_json(&dir);
    assert_eq!(record["finalOutput"], "draft text");
    assert_eq!(record["outputPhase"], "draft");
    // The JSON format still prints the whole record.
    let out = run_in(&dir, &["--format", "json"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stdout.contains("\"outputPhase\": \"draft\""),
        "{}",
        out.stdout
    );
}

#[test]
fn a_done_final_phase_is_printed_and_named() {
    let flow = r#"{"name": "fine", "phases": [
        {"id": "side", "optional": true, "task": "x", "retry": {"max": 0, "backoffMs": 0}, "idempotent": false},
        {"id": "main", "task": "y"}
    ]}"#;
    let agent = r#"cat >/dev/null
if [ "$TFC_PHASE_ID" = "side" ]; then exit 3; fi
echo "main text""#;
    let dir = project("term-final-done", flow, agent);
    let out = run_in(&dir, &[]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "main text\n"),
        "{out:?}"
    );
    assert_eq!(run_json(&dir)["outputPhase"], "main");
}

#[test]
fn awaited_approval_prints_its_resume_hint_on_stderr() {
    let flow = r#"{"name": "appr", "phases": [
        {"id": "plan", "task": "p"},
        {"id": "ok", "type": "approval", "dependsOn": ["plan"]},
        {"id": "go", "dependsOn": ["ok"], "task": "go"}
    ]}"#;
    let dir = project("term-approval", flow, "cat >/dev/null; echo fine");
    let out = run_in(&dir, &[]);
    assert_eq!(out.code, 5, "{out:?}");
    assert_eq!(out.stdout, "", "{out:?}");
    assert!(
        out.stderr.contains("Run paused — awaiting approval: ok."),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("--approve ok"), "{}", out.stderr);
}

#[test]
fn run_time_surprises_reach_stderr_as_they_happen() {
    let flow = r#"{"name": "warn", "phases": [
        {"id": "facts", "output": "json", "task": "Facts."},
        {"id": "use", "dependsOn": ["facts"], "when": "1.2.3", "task": "Use {steps.facts.json.nope}."},
        {"id": "shape", "dependsOn": ["use"], "output": "json", "expect": {"required": ["score"]},
         "retry": {"max": 1, "backoffMs": 0}, "idempotent": false, "task": "Score."}
    ]}"#;
    let agent = r#"prompt=$(cat)
case "$TFC_PHASE_ID" in
  facts) echo '{"size": 3}' ;;
  shape) if [ "$TFC_ATTEMPT" = "1" ]; then echo '{"note": "x"}'; else echo '{"score": 1}'; fi ;;
  *) echo "$TFC_PHASE_ID: $prompt" ;;
esac"#;
    let dir = project("term-warnings", flow, agent);
    let out = run_in(&dir, &[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "{\"score\": 1}\n");
    for expected in [
        "warning: use: when condition could not be parsed (treated as true): trailing tokens",
        "warning: use: unresolved refs in task: {steps.facts.json.nope} — left intact",
        // The first attempt's violation, in full, although the retry then succeeded.
        "warning: shape: attempt 1: Output contract violated:\n  - $.score: required key is missing",
    ] {
        assert!(
            out.stderr.contains(expected),
            "missing {expected:?} in:\n{}",
            out.stderr
        );
    }
    // Told once, as it happened: before the phase's own end line.
    let warned = out
        .stderr
        .find("warning: use: unresolved")
        .expect("warning");
    let ended = out.stderr.find("✓ use done").expect("end line");
    assert!(warned < ended, "{}", out.stderr);
    // The record's warnings stay as they were.
    let record = run_json(&dir);
    let warnings = record["phases"]["use"]["warnings"]
        .as_array()
        .expect("warnings");
    assert_eq!(warnings.len(), 2, "{record}");
}

#[test]
fn a_violated_contract_fails_with_its_full_reason_on_stderr() {
    let flow = r#"{"name": "contract", "phases": [
        {"id": "shape", "output": "json", "expect": {"required": ["score", "why"]},
         "retry": {"max": 0, "backoffMs": 0}, "idempotent": false, "task": "Score."}
    ]}"#;
    let dir = project(
        "term-contract",
        flow,
        r#"cat >/dev/null; echo '{"note": "x"}'"#,
    );
    let out = run_in(&dir, &[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(out.stdout, "", "{out:?}");
    assert!(
        out.stderr.contains(
            "✗ shape failed: Output contract violated:\n  - $.score: required key is missing\n  - $.why: required key is missing"
        ),
        "{}",
        out.stderr
    );
}

/// The agent answers with the directory it runs in.
const PWD_AGENT: &str = "cat >/dev/null; pwd -P";

fn real(path: &Path) -> String {
    std::fs::canonicalize(path)
        .expect("canonicalize")
        .display()
        .to_string()
}

fn output_of<'r>(record: &'r serde_json::Value, phase: &str) -> &'r str {
    record["phases"][phase]["output"].as_str().expect("output")
}

#[test]
fn phases_run_in_their_working_directories() {
    let flow = r#"{"name": "dirs",
        "args": {"dir": {"type": "relative-path"}},
        "phases": [
        {"id": "here", "task": "x"},
        {"id": "lit", "cwd": "pkg/a", "task": "x"},
        {"id": "arg", "type": "script", "cwd": "{args.dir}", "run": "pwd -P"},
        {"id": "ded", "cwd": "dedicated", "task": "x"},
        {"id": "tmp", "type": "script", "cwd": "temp", "run": "pwd -P; touch made-here"},
        {"id": "par", "type": "parallel", "branches": [{"task": "a", "cwd": "pkg/a"}, {"task": "b", "cwd": "pkg/b"}, {"task": "c"}]},
        {"id": "sub", "type": "flow", "cwd": "pkg", "def": {"phases": [{"id": "inner", "cwd": "b", "task": "x"}]}},
        {"id": "last", "dependsOn": ["here", "lit", "arg", "ded", "tmp", "par", "sub"], "task": "x"}
    ]}"#;
    let dir = project("term-cwd", flow, PWD_AGENT);
    for d in ["pkg/a", "pkg/b"] {
        std::fs::create_dir_all(dir.join(d)).expect("mkdir");
    }
    let out = run_in(&dir, &["dir=pkg/b"]);
    assert_eq!(out.code, 0, "{out:?}");
    let record = run_json(&dir);
    let run_id = record["runId"].as_str().expect("runId");
    let root = real(&dir);
    assert_eq!(output_of(&record, "here"), root);
    assert_eq!(output_of(&record, "lit"), real(&dir.join("pkg/a")));
    assert_eq!(output_of(&record, "arg"), real(&dir.join("pkg/b")));
    let dedicated = dir.join(".tfc/work").join(run_id).join("ded");
    assert_eq!(output_of(&record, "ded"), real(&dedicated));
    // A fresh temporary directory, gone once the phase ended.
    let tmp = output_of(&record, "tmp");
    assert!(tmp != root && !tmp.starts_with(&root), "{tmp}");
    assert!(!Path::new(tmp).exists(), "{tmp} was not removed");
    let par = output_of(&record, "par");
    for (k, d) in [
        (1, real(&dir.join("pkg/a"))),
        (2, real(&dir.join("pkg/b"))),
        (3, root.clone()),
    ] {
        assert!(
            par.contains(&format!("### [{k}/3] default\n\n{d}\n"))
                || par.ends_with(&format!("### [{k}/3] default\n\n{d}")),
            "{par}"
        );
    }
    // A sub-flow's invocation directory is its phase's: the child's paths resolve there.
    assert_eq!(output_of(&record, "sub"), real(&dir.join("pkg/b")));
    assert_eq!(out.stdout, format!("{root}\n"));
}

#[test]
fn a_missing_directory_fails_the_phase_and_says_which() {
    let flow = r#"{"name": "nodir", "phases": [
        {"id": "lit", "cwd": "not/there", "task": "x"},
        {"id": "par", "type": "parallel", "branches": [{"task": "a", "cwd": "gone"}, {"task": "b"}]}
    ]}"#;
    let dir = project("term-cwd-missing", flow, PWD_AGENT);
    let out = run_in(&dir, &[]);
    assert_eq!(out.code, 1, "{out:?}");
    let record = run_json(&dir);
    let error = record["phases"]["lit"]["error"].as_str().expect("error");
    assert!(
        error.starts_with("working directory \"not/there\" does not exist: ")
            && error.contains("create it or correct 'cwd'"),
        "{error}"
    );
    assert_eq!(record["phases"]["lit"]["attempts"], 0);
    assert!(
        out.stderr
            .contains("✗ lit failed: working directory \"not/there\" does not exist"),
        "{}",
        out.stderr
    );
    let error = record["phases"]["par"]["error"].as_str().expect("error");
    assert!(
        error.contains("working directory of branch 0 \"gone\" does not exist"),
        "{error}"
    );
    assert_eq!(record["phases"]["par"]["items"][1]["status"], "done");
}

#[test]
fn shorthand_steps_run_in_their_cwd() {
    let flow = r#"{"chain": [{"task": "one", "cwd": "a"}, "two"], "cwd": "b"}"#;
    let dir = project("term-cwd-shorthand", flow, PWD_AGENT);
    for d in ["a", "b"] {
        std::fs::create_dir_all(dir.join(d)).expect("mkdir");
    }
    let out = run_in(&dir, &[]);
    assert_eq!(out.code, 0, "{out:?}");
    let record = run_json(&dir);
    assert_eq!(output_of(&record, "step1"), real(&dir.join("a")));
    assert_eq!(output_of(&record, "step2"), real(&dir.join("b")));
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn worktree_phases_get_a_detached_worktree_or_a_warning() {
    let flow = r#"{"name": "wt", "phases": [
        {"id": "wt", "type": "script", "cwd": "worktree", "run": "pwd -P; cat tracked.txt; git status --porcelain --branch | head -n 1"}
    ]}"#;
    let dir = project("term-worktree", flow, PWD_AGENT);
    std::fs::write(dir.join("tracked.txt"), "committed\n").expect("write");
    std::fs::write(dir.join(".gitignore"), ".tfc/\n").expect("write");
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "tracked.txt", ".gitignore"]);
    git(&dir, &["commit", "-qm", "init"]);
    let out = run_in(&dir, &[]);
    assert_eq!(out.code, 0, "{out:?}");
    let record = run_json(&dir);
    let run_id = record["runId"].as_str().expect("runId");
    let tree = dir.join(".tfc/worktrees").join(run_id).join("wt");
    assert_eq!(
        output_of(&record, "wt"),
        format!("{}\ncommitted\n## HEAD (no branch)", real(&tree))
    );

    // Outside a repository: the invocation directory, and a warning saying why.
    // (The scratch folder may sit inside another checkout: git must not look above it.)
    let dir = project("term-worktree-none", flow, PWD_AGENT);
    std::fs::write(dir.join("tracked.txt"), "plain\n").expect("write");
    let child = Command::new(env!("CARGO_BIN_EXE_tfc"))
        .args(["run", "flow.json"])
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .env("GIT_CEILING_DIRECTORIES", dir.parent().expect("parent"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tfc");
    let out = wait_output(child);
    let record = run_json(&dir);
    assert!(
        output_of(&record, "wt").starts_with(&format!("{}\nplain", real(&dir))),
        "{record}"
    );
    let warnings = record["phases"]["wt"]["warnings"].to_string();
    assert!(
        warnings.contains("cwd \\\"worktree\\\": git worktree add failed"),
        "{warnings}"
    );
    assert!(
        out.stderr
            .contains("warning: wt: cwd \"worktree\": git worktree add failed"),
        "{}",
        out.stderr
    );
}
