//! `budget.maxCalls` / `--max-calls` end to end (SPEC §8.7): the cap is taken before every
//! agent call, so a run makes exactly N calls whatever its concurrency, pauses with the
//! reason, and `tfc resume --max-calls M` finishes it; bad caps are usage errors. The agent
//! is a script that logs one line per call.

mod common;

use std::path::{Path, PathBuf};

use common::{Outcome, calls, records, tfc_in};

/// A project with `flow.json` and `agent.sh`, which logs `<node>` per call to `calls.log`
/// (after a short sleep, so calls overlap) and answers `answer to: <prompt>`.
fn project(name: &str, flow: &str) -> PathBuf {
    common::agent_project(name, flow, AGENT)
}

const AGENT: &str =
    "#!/bin/sh\np=$(cat)\necho \"$TFC_NODE\" >> calls.log\nsleep 0.2\necho \"answer to: $p\"\n";

fn tfc(dir: &Path, args: &[&str]) -> Outcome {
    tfc_in(Some(dir), args, b"")
}

const MAP: &str = r#"{"name": "wide", "budget": {"maxCalls": 5},
  "args": {"xs": {"default": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]}},
  "phases": [
    {"id": "each", "type": "map", "concurrency": 4, "over": "{args.xs}", "task": "do {item}"},
    {"id": "sum", "dependsOn": ["each"], "task": "sum {steps.each.output}"}
  ]}"#;

#[test]
fn a_wide_map_makes_exactly_the_capped_calls_and_resume_finishes_it() {
    let dir = project("max-calls-map", MAP);
    let out = tfc(&dir, &["run", "flow.json", "--agent-cmd", "./agent.sh"]);
    assert_eq!(out.code, 5, "paused: {}", out.stderr);
    assert_eq!(calls(&dir).len(), 5, "{:?}", calls(&dir));
    assert!(
        out.stderr.contains("calls 5 reached cap 5"),
        "the reason is shown: {}",
        out.stderr
    );
    let parent = records(&dir).pop().expect("record");
    assert_eq!(parent["status"], "paused");
    assert_eq!(parent["reason"], "budget exceeded: calls 5 reached cap 5");
    assert_eq!(parent["usage"]["calls"], 5);
    assert_eq!(parent["phases"]["each"]["budgetTruncated"], true);
    assert_eq!(
        parent["phases"]["sum"]["skipReason"],
        "Budget exceeded: calls 5 reached cap 5"
    );
    let id = parent["runId"].as_str().expect("run id").to_owned();
    // The flow's cap is spent: refused, and the message says how to go on.
    let out = tfc(&dir, &["resume", &id]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "Run '{id}' stopped at its budget (calls 5 reached cap 5); pass --max-calls above the 5 call(s) already made to continue"
        )),
        "{}",
        out.stderr
    );
    // Raised: the five items left and `sum` run, the finished items are not called again.
    let out = tfc(&dir, &["resume", &id, "--max-calls", "11"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let all = calls(&dir);
    assert_eq!(all.len(), 11, "{all:?}");
    let mut items: Vec<&String> = all.iter().filter(|c| c.starts_with("each#")).collect();
    items.sort();
    items.dedup();
    assert_eq!(items.len(), 10, "every item called once: {all:?}");
    let child = records(&dir).pop().expect("child");
    assert_eq!(child["status"], "completed");
    assert_eq!(child["spentBefore"]["calls"], 5);
    assert_eq!(child["usage"]["calls"], 6);
}

#[test]
fn the_flag_overrides_the_flow_and_the_total_is_capped_across_resumes() {
    let dir = project(
        "max-calls-chain",
        r#"{"name": "chain", "phases": [
  {"id": "a", "task": "one"},
  {"id": "b", "dependsOn": ["a"], "task": "two"},
  {"id": "s", "type": "script", "dependsOn": ["b"], "run": "echo scripted"},
  {"id": "c", "dependsOn": ["s"], "task": "three"},
  {"id": "d", "dependsOn": ["c"], "task": "four"}
]}"#,
    );
    let out = tfc(
        &dir,
        &[
            "run",
            "flow.json",
            "--agent-cmd",
            "./agent.sh",
            "--max-calls",
            "2",
        ],
    );
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert_eq!(calls(&dir), ["a", "b"]);
    let parent = records(&dir).pop().expect("record");
    assert_eq!(
        parent["phases"]["s"]["status"], "done",
        "a script needs no call"
    );
    assert_eq!(parent["phases"]["c"]["status"], "skipped");
    assert_eq!(parent["reason"], "budget exceeded: calls 2 reached cap 2");
    let id = parent["runId"].as_str().expect("run id").to_owned();
    // The cap covers the total: three more calls would pass 4.
    let out = tfc(&dir, &["resume", &id, "--max-calls", "3"]);
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert_eq!(calls(&dir), ["a", "b", "c"]);
    let child = records(&dir).pop().expect("child");
    assert_eq!(child["reason"], "budget exceeded: calls 3 reached cap 3");
    let id = child["runId"].as_str().expect("run id").to_owned();
    let out = tfc(&dir, &["resume", &id, "--max-calls", "4"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(calls(&dir), ["a", "b", "c", "d"]);
    assert_eq!(out.stdout.trim(), "answer to: four");
    let last = records(&dir).pop().expect("last");
    assert_eq!(last["spentBefore"]["calls"], 3);
    assert_eq!(last["usage"]["calls"], 1);
}

#[test]
fn a_run_within_its_cap_completes() {
    let dir = project(
        "max-calls-within",
        r#"{"name": "two", "budget": {"maxCalls": 2}, "phases": [
  {"id": "a", "task": "one"}, {"id": "b", "task": "two"}]}"#,
    );
    let out = tfc(&dir, &["run", "flow.json", "--agent-cmd", "./agent.sh"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(calls(&dir).len(), 2);
    assert_eq!(records(&dir)[0]["usage"]["calls"], 2);
}

#[test]
fn bad_caps_are_usage_errors() {
    let dir = project(
        "max-calls-bad",
        r#"{"name": "bad", "budget": {"maxCalls": -1}, "phases": [{"id": "a", "task": "one"}]}"#,
    );
    let out = tfc(&dir, &["run", "flow.json", "--agent-cmd", "./agent.sh"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("E0005"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("invalid value -1 for 'maxCalls': expected an integer >= 1"),
        "{}",
        out.stderr
    );
    assert!(calls(&dir).is_empty());
    std::fs::write(
        dir.join("flow.json"),
        r#"{"name": "bad", "phases": [{"id": "a", "task": "one"}]}"#,
    )
    .expect("flow");
    for bad in ["0", "-3", "2.5", "many"] {
        let flag = format!("--max-calls={bad}");
        let out = tfc(
            &dir,
            &["run", "flow.json", "--agent-cmd", "./agent.sh", &flag],
        );
        assert_eq!(out.code, 2, "{bad}: {}", out.stderr);
        assert!(
            out.stderr.contains("expected an integer >= 1"),
            "{bad}: {}",
            out.stderr
        );
        let out = tfc(&dir, &["resume", "last", &flag]);
        assert_eq!(out.code, 2, "{bad}: {}", out.stderr);
        assert!(
            out.stderr.contains("expected an integer >= 1"),
            "{bad}: {}",
            out.stderr
        );
    }
    assert!(calls(&dir).is_empty());
}

#[test]
fn the_workers_old_max_calls_spelling_warns() {
    let out = tfc_in(None, &["worker", "--help"], b"");
    assert!(
        out.stdout.contains("--max-concurrent-calls"),
        "{}",
        out.stdout
    );
    assert!(
        !out.stdout.contains("--max-calls"),
        "the old spelling is hidden: {}",
        out.stdout
    );
    let out = tfc_in(
        None,
        &["worker", "--temporal", "127.0.0.1:1", "--max-calls", "3"],
        b"",
    );
    assert!(
        out.stderr
            .contains("`tfc worker --max-calls` is deprecated and will be removed in the next release; use --max-concurrent-calls 3"),
        "{}",
        out.stderr
    );
    let out = tfc_in(
        None,
        &["worker", "--max-calls", "3", "--max-concurrent-calls", "4"],
        b"",
    );
    assert_eq!(out.code, 2, "both spellings at once: {}", out.stderr);
}
