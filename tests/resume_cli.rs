//! `tfc resume` end to end (SPEC §10.4): paused, budget-stopped, interrupted and failed runs
//! continue as a new run that reuses every `done` phase of its parent, with a fake agent that
//! logs each call.

mod common;

use std::path::{Path, PathBuf};

use common::{Outcome, calls, records, tfc_in};

/// A project with `flow.json` and `agent.sh`: the agent logs `<node>` per call to
/// `calls.log`, sleeps `TFC_TEST_SLEEP` seconds when set, fails when the prompt says FAIL
/// (unless `pass.flag` exists), and answers `answer to: <prompt>`.
pub fn project(name: &str, flow: &str) -> PathBuf {
    common::agent_project(name, flow, AGENT)
}

const AGENT: &str = r#"#!/bin/sh
p=$(cat)
if [ -n "$TFC_TEST_SLEEP" ]; then sleep "$TFC_TEST_SLEEP"; fi
case "$p" in *FAIL*) if [ ! -f pass.flag ]; then echo "$TFC_NODE" >> calls.log; echo "asked to fail" >&2; exit 3; fi;; esac
case "$p" in *Review*) echo "$TFC_NODE" >> calls.log; echo "looks fine"; echo "VERDICT: PASS"; exit 0;; esac
echo "$TFC_NODE" >> calls.log
echo "answer to: $p"
"#;

pub fn tfc(dir: &Path, args: &[&str]) -> Outcome {
    tfc_in(Some(dir), args, b"")
}

pub fn clear_calls(dir: &Path) {
    let _ = std::fs::remove_file(dir.join("calls.log"));
}

fn run_id(o: &Outcome) -> String {
    common::printed_run_id(o)
}

const APPROVAL: &str = r#"{"name":"gated","phases":[
 {"id":"a","task":"first"},
 {"id":"side","task":"independent"},
 {"id":"ok","type":"approval","dependsOn":["a"],"task":"go?"},
 {"id":"b","dependsOn":["ok"],"task":"second {steps.a.output}"}
]}"#;

#[test]
fn an_approval_pause_resumes_with_approve_and_calls_nothing_twice() {
    let dir = project("resume-approval", APPROVAL);
    let out = tfc(&dir, &["run", "flow.json", "--agent-cmd", "./agent.sh"]);
    assert_eq!(out.code, 5, "{}", out.stderr);
    let parent = run_id(&out);
    let mut first = calls(&dir);
    first.sort();
    assert_eq!(first, vec!["a", "side"]);
    // The message names a command that works exactly as printed.
    let line = out
        .stderr
        .lines()
        .find(|l| l.starts_with("Resume with: "))
        .expect("resume instructions");
    assert!(
        line.contains(&format!("tfc resume {parent} --approve ok")),
        "{line}"
    );
    clear_calls(&dir);
    let out = tfc(&dir, &["resume", &parent, "--approve", "ok"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "answer to: second answer to: first");
    assert_eq!(calls(&dir), vec!["b"]);
    let recs = records(&dir);
    assert_eq!(recs.len(), 2);
    let child = &recs[1];
    assert_eq!(child["parentRunId"], parent.as_str());
    assert_eq!(child["status"], "completed");
    assert_eq!(child["phases"]["a"]["cacheHit"], "run-only");
    assert_eq!(child["phases"]["a"]["attempts"], 0);
    assert_eq!(child["phases"]["side"]["cacheHit"], "run-only");
    assert!(child["phases"]["b"].get("cacheHit").is_none());
    assert!(
        child["phases"]["b"]["inputHash"]
            .as_str()
            .is_some_and(|h| h.len() == 16)
    );
    assert_eq!(child["phases"]["ok"]["approval"]["source"], "flag");
    assert!(
        out.stderr.contains("a done: reused (run-only)"),
        "{}",
        out.stderr
    );
    // The parent is never modified.
    assert_eq!(recs[0]["status"], "paused");
    assert!(child["flowDefHash"].as_str().is_some_and(|h| h.len() == 16));
    assert!(child.get("gitCommit").is_some());
    // `last` and a unique prefix name runs too; a completed run is not resumable.
    let out = tfc(&dir, &["resume", "last"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("has status 'completed' and is not resumable (expected failed or paused)"),
        "{}",
        out.stderr
    );
    let out = tfc(&dir, &["resume", "nosuchrun"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("no run found with id or id prefix 'nosuchrun'"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_rejection_on_resume_blocks() {
    let dir = project("resume-reject", APPROVAL);
    let out = tfc(&dir, &["run", "flow.json", "--agent-cmd", "./agent.sh"]);
    assert_eq!(out.code, 5);
    let parent = run_id(&out);
    let out = tfc(
        &dir,
        &[
            "resume",
            &parent[..parent.len() - 2],
            "--reject",
            "ok",
            "--reason",
            "not now",
        ],
    );
    assert_eq!(out.code, 4, "{}", out.stderr);
    let child = &records(&dir)[1];
    assert_eq!(child["phases"]["ok"]["approval"]["note"], "not now");
}

const CHAIN: &str = r#"{"name":"chain","phases":[
 {"id":"a","task":"one"},
 {"id":"b","dependsOn":["a"],"task":"two {steps.a.output} FAIL"},
 {"id":"c","dependsOn":["b"],"task":"three {steps.b.output}"},
 {"id":"d","task":"four"}
]}"#;

#[test]
fn a_failed_run_resumes_and_a_phase_patch_reruns_it_and_its_descendants_only() {
    let dir = project("resume-patch", CHAIN);
    let out = tfc(&dir, &["run", "flow.json", "--agent-cmd", "./agent.sh"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let parent = run_id(&out);
    // Patching needs something to patch.
    let out = tfc(&dir, &["resume", &parent, "--phase", "b"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("needs at least one of --task"),
        "{}",
        out.stderr
    );
    let out = tfc(&dir, &["resume", &parent, "--phase", "zz", "--task", "x"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no such phase"), "{}", out.stderr);
    clear_calls(&dir);
    let out = tfc(
        &dir,
        &[
            "resume",
            &parent,
            "--phase",
            "b",
            "--task",
            "two again {steps.a.output}",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(calls(&dir), vec!["b", "c"]);
    let child = &records(&dir)[1];
    assert_eq!(child["phases"]["a"]["cacheHit"], "run-only");
    assert_eq!(child["phases"]["d"]["cacheHit"], "run-only");
    assert_eq!(
        child["phases"]["b"]["output"],
        "answer to: two again answer to: one"
    );
    // A plain resume of the failed run re-runs the failed phase (now passing) and what
    // follows; `a` and `d` stay reused.
    std::fs::write(dir.join("pass.flag"), "").expect("flag");
    clear_calls(&dir);
    let out = tfc(&dir, &["resume", &parent]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(calls(&dir), vec!["b", "c"]);
}

#[test]
fn a_budget_pause_is_refused_until_the_caps_are_raised() {
    let dir = project(
        "resume-budget",
        r#"{"name":"spend","budget":{"maxTokens":100},"phases":[
 {"id":"a","task":"one"},
 {"id":"b","dependsOn":["a"],"task":"two"},
 {"id":"c","dependsOn":["b"],"task":"three"}
]}"#,
    );
    let line = |node: &str, prompt: &str| {
        format!(
            r#"{{"type":"agent-call","node":"{node}","agent":"default","ok":true,"prompt":"{prompt}","output":"out {node}","usage":{{"input":50,"output":30,"cacheRead":0,"cacheWrite":0,"costUSD":0.01,"turns":1}}}}"#
        )
    };
    let fixture = [line("a", "one"), line("b", "two"), line("c", "three")].join("\n");
    std::fs::write(dir.join("replay.jsonl"), fixture + "\n").expect("fixture");
    let out = tfc(&dir, &["run", "flow.json", "--replay", "replay.jsonl"]);
    assert_eq!(out.code, 5, "{}", out.stderr);
    let parent = run_id(&out);
    let recs = records(&dir);
    assert_eq!(
        recs[0]["reason"],
        "budget exceeded: tokens 160 exceeded cap 100"
    );
    // Still over the flow's cap: refused, verbatim.
    let out = tfc(&dir, &["resume", &parent]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains(&format!(
            "Run '{parent}' stopped at its budget (tokens 160 exceeded cap 100); pass --max-usd/--max-tokens above the amount already spent to continue"
        )),
        "{}",
        out.stderr
    );
    let out = tfc(&dir, &["resume", &parent, "--max-tokens", "150"]);
    assert_eq!(out.code, 2, "150 is still under the 160 spent");
    // Raised above the spend: c runs, and the cap applies to the total.
    let out = tfc(&dir, &["resume", &parent, "--max-tokens", "1000"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "out c");
    let child = records(&dir).pop().expect("child");
    assert_eq!(child["spentBefore"]["input"], 100);
    assert_eq!(child["spentBefore"]["output"], 60);
    assert_eq!(child["usage"]["input"], 50);
    assert_eq!(child["phases"]["a"]["usage"]["input"], 0);
    assert_eq!(child["phases"]["b"]["cacheHit"], "run-only");
}

#[test]
fn an_interrupted_run_resumes() {
    let dir = project(
        "resume-sigint",
        r#"{"name":"slow","phases":[
 {"id":"a","task":"one"},
 {"id":"b","dependsOn":["a"],"task":"two slow"},
 {"id":"c","dependsOn":["b"],"task":"three"}
]}"#,
    );
    // The agent sleeps on b only.
    let agent = dir.join("agent.sh");
    let body = std::fs::read_to_string(&agent).expect("agent");
    let body = body.replace(
        "p=$(cat)\n",
        "p=$(cat)\ncase \"$p\" in *slow*) echo started > b.started; sleep 30;; esac\n",
    );
    std::fs::write(&agent, body).expect("agent");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tfc"))
        .args(["run", "flow.json", "--agent-cmd", "./agent.sh"])
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let start = std::time::Instant::now();
    while !dir.join("b.started").exists() {
        assert!(start.elapsed().as_secs() < 20, "b never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .expect("SIGINT");
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(5));
    let recs = records(&dir);
    assert_eq!(recs[0]["reason"], "interrupted");
    // Resume with b fast this time.
    let body = std::fs::read_to_string(&agent).expect("agent");
    std::fs::write(&agent, body.replace("sleep 30", "true")).expect("agent");
    clear_calls(&dir);
    let out = tfc(&dir, &["resume", "last"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(calls(&dir), vec!["b", "c"]);
}
