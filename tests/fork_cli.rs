//! `tfc fork` end to end (SPEC §10.4 "Fork"): a new run from any ended run that calls only
//! what `--from`, `--set`, changed arguments, blocked gates and undecided approvals reach —
//! counted with an agent that logs each call — and copies everything else, loops and side
//! effects included; every bad request is exit 2 before anything runs.

mod common;

use std::path::{Path, PathBuf};

use common::{Outcome, calls, records, tfc_in};

/// A project with `flow.json` and `agent.sh`: the agent logs `<node>` per call to
/// `calls.log`; a prompt with LIST answers a JSON array, one with JSON an object, one with
/// Review a passing verdict unless `block.flag` exists; else `answer to: <prompt>`.
fn project(name: &str, flow: &str) -> PathBuf {
    common::agent_project(name, flow, AGENT)
}

const AGENT: &str = r#"#!/bin/sh
p=$(cat)
echo "$TFC_NODE" >> calls.log
case "$p" in *LIST*) echo '["x","y","z"]'; exit 0;; esac
case "$p" in *JSON*) echo '{"n": 2}'; exit 0;; esac
case "$p" in *Review*) if [ -f block.flag ]; then echo "VERDICT: BLOCK"; else echo "VERDICT: PASS"; fi; exit 0;; esac
echo "answer to: $p"
"#;

fn tfc(dir: &Path, args: &[&str]) -> Outcome {
    tfc_in(Some(dir), args, b"")
}

fn clear_calls(dir: &Path) {
    let _ = std::fs::remove_file(dir.join("calls.log"));
}

/// The calls made, sorted.
fn sorted_calls(dir: &Path) -> Vec<String> {
    let mut c = calls(dir);
    c.sort();
    c
}

/// Run `flow.json` to completion; its run id.
fn first_run(dir: &Path) -> String {
    let out = tfc(dir, &["run", "flow.json", "--agent-cmd", "./agent.sh"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    clear_calls(dir);
    common::printed_run_id(&out)
}

const FLOW: &str = r#"{"name": "fk", "args": {"topic": {"type": "string", "default": "cats"}},
 "phases": [
  {"id": "a", "task": "about {args.topic}"},
  {"id": "list", "task": "LIST please", "output": "json"},
  {"id": "j", "task": "give JSON", "output": "json",
   "expect": {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}},
  {"id": "side", "task": "side effect", "idempotent": false},
  {"id": "lp", "type": "loop", "task": "iterate", "maxIterations": 2, "until": "{loop.iteration} >= 2"},
  {"id": "m", "type": "map", "over": "{steps.list.json}", "task": "item {item}", "dependsOn": ["list"]},
  {"id": "b", "dependsOn": ["a", "j"], "task": "b {steps.a.output} n={steps.j.json.n}"},
  {"id": "c", "dependsOn": ["b", "m", "side", "lp"], "task": "c {steps.b.output} / {steps.m.json}"}
 ]}"#;

#[test]
fn from_reruns_the_phase_and_its_descendants_and_copies_everything_else() {
    let dir = project("fork-from", FLOW);
    let parent = first_run(&dir);
    let out = tfc(&dir, &["fork", &parent, "--from", "b"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Only b and c are called: the loop, the map and the side effect are copied.
    assert_eq!(sorted_calls(&dir), vec!["b", "c"]);
    let child = records(&dir).pop().expect("child record");
    assert_eq!(child["parentRunId"], parent.as_str());
    assert_eq!(
        child["forkedFrom"],
        serde_json::json!({"runId": parent, "from": ["b"], "set": []})
    );
    for id in ["a", "list", "j", "side", "lp", "m"] {
        assert_eq!(child["phases"][id]["cacheHit"], "run-only", "{id}");
        assert_eq!(child["phases"][id]["attempts"], 0, "{id}");
    }
    assert_eq!(child["phases"]["b"]["attempts"], 1);
    // The copied phases' calls are what was spent before: a, list, j, side, 2 loop
    // iterations, 3 items.
    assert_eq!(child["spentBefore"]["calls"], 9);
    assert_eq!(child["usage"]["calls"], 2);
    // Lineage is shown.
    let show = tfc(&dir, &["show", &common::printed_run_id(&out)]);
    assert!(
        show.stdout
            .contains(&format!("forked from {parent} (--from b)")),
        "{}",
        show.stdout
    );
    let runs = tfc(&dir, &["runs"]);
    assert!(
        runs.stdout
            .contains(&format!("[forked from {parent} (--from b)]")),
        "{}",
        runs.stdout
    );
}

#[test]
fn set_gives_a_phase_its_output_and_reruns_only_its_descendants() {
    let dir = project("fork-set", FLOW);
    let parent = first_run(&dir);
    let out = tfc(
        &dir,
        &[
            "fork",
            &parent,
            "--set",
            r#"j={"n": 7}"#,
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(sorted_calls(&dir), vec!["b", "c"]);
    let child = records(&dir).pop().expect("child record");
    let j = &child["phases"]["j"];
    assert_eq!(j["cacheHit"], "set");
    assert_eq!(j["setFrom"], parent.as_str());
    assert_eq!(j["json"]["n"], 7);
    assert_eq!(j["usage"]["input"], 0);
    assert!(
        child["phases"]["b"]["output"]
            .as_str()
            .is_some_and(|o| o.ends_with("n=7")),
        "{}",
        child["phases"]["b"]
    );
    // @FILE reads the output from a file, and a fork of the fork keeps the set output.
    std::fs::write(dir.join("n.json"), r#"{"n": 9}"#).expect("write");
    clear_calls(&dir);
    let child_id = child["runId"].as_str().expect("id").to_owned();
    let out = tfc(&dir, &["fork", &child_id, "--set", "j=@n.json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(sorted_calls(&dir), vec!["b", "c"]);
    let grandchild = records(&dir).pop().expect("record");
    assert_eq!(grandchild["phases"]["j"]["json"]["n"], 9);
    clear_calls(&dir);
    let out = tfc(&dir, &["fork", &child_id, "--from", "c"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(sorted_calls(&dir), vec!["c"]);
    let last = records(&dir).pop().expect("record");
    assert_eq!(
        last["phases"]["j"]["json"]["n"], 7,
        "the set output is copied"
    );
}

#[test]
fn a_map_is_set_whole_or_one_item_without_calling_it() {
    let dir = project("fork-map", FLOW);
    let parent = first_run(&dir);
    let out = tfc(&dir, &["fork", &parent, "--set", "m#1=NEW ITEM"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(sorted_calls(&dir), vec!["c"]);
    let child = records(&dir).pop().expect("record");
    let m = &child["phases"]["m"];
    assert_eq!(m["cacheHit"], "set");
    assert_eq!(m["json"][0], "answer to: item x");
    assert_eq!(m["json"][1], "NEW ITEM");
    assert_eq!(m["json"][2], "answer to: item z");
    assert!(
        child["phases"]["c"]["output"]
            .as_str()
            .is_some_and(|o| o.contains("NEW ITEM")),
        "{}",
        child["phases"]["c"]
    );
    clear_calls(&dir);
    let out = tfc(&dir, &["fork", &parent, "--set", r#"m=["p", "q", "r"]"#]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(sorted_calls(&dir), vec!["c"]);
    let child = records(&dir).pop().expect("record");
    assert_eq!(
        child["phases"]["m"]["json"],
        serde_json::json!(["p", "q", "r"])
    );
}

#[test]
fn changed_arguments_rerun_only_what_reads_them() {
    let dir = project("fork-args", FLOW);
    let parent = first_run(&dir);
    let out = tfc(&dir, &["fork", &parent, "topic=dogs"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(sorted_calls(&dir), vec!["a", "b", "c"]);
    let child = records(&dir).pop().expect("record");
    assert_eq!(child["args"]["topic"], "dogs");
    assert_eq!(child["phases"]["a"]["output"], "answer to: about dogs");
    // The same value is no change: nothing runs again.
    clear_calls(&dir);
    let out = tfc(&dir, &["fork", &parent, "--args", r#"{"topic": "cats"}"#]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(calls(&dir).is_empty(), "{:?}", calls(&dir));
}

const GATED: &str = r#"{"name": "gk", "phases": [
  {"id": "draft", "task": "write it"},
  {"id": "review", "type": "gate", "dependsOn": ["draft"], "task": "Review {steps.draft.output}"},
  {"id": "ok", "type": "approval", "dependsOn": ["review"], "task": "ship?"},
  {"id": "ship", "dependsOn": ["ok"], "task": "ship {steps.draft.output}"}
]}"#;

#[test]
fn a_blocked_gate_and_an_undecided_approval_run_again() {
    let dir = project("fork-gate", GATED);
    std::fs::write(dir.join("block.flag"), "").expect("flag");
    let out = tfc(&dir, &["run", "flow.json", "--agent-cmd", "./agent.sh"]);
    assert_eq!(out.code, 4, "blocked: {}", out.stderr);
    let parent = common::printed_run_id(&out);
    clear_calls(&dir);
    std::fs::remove_file(dir.join("block.flag")).expect("unflag");
    // The gate runs again (the draft is copied); the approval waits: no terminal, no flag.
    let out = tfc(&dir, &["fork", &parent]);
    assert_eq!(out.code, 5, "paused at the approval: {}", out.stderr);
    assert_eq!(sorted_calls(&dir), vec!["review"]);
    let paused = common::printed_run_id(&out);
    clear_calls(&dir);
    // A fork of the paused run asks the approval again; resume decides it.
    let out = tfc(&dir, &["fork", &paused, "--plan", "--yes"]);
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("ok      run (blocked or undecided)    0/0/0"),
        "{}",
        out.stderr
    );
    assert!(calls(&dir).is_empty(), "{:?}", calls(&dir));
    let out = tfc(
        &dir,
        &["resume", &common::printed_run_id(&out), "--approve", "ok"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(sorted_calls(&dir), vec!["ship"]);
}

#[test]
fn bad_requests_are_refused_before_anything_runs() {
    let dir = project("fork-bad", FLOW);
    let parent = first_run(&dir);
    let before = records(&dir).len();
    let refused = |args: &[&str], message: &str| {
        let mut argv = vec!["fork"];
        argv.extend_from_slice(args);
        let out = tfc(&dir, &argv);
        assert_eq!(out.code, 2, "{argv:?}: {}", out.stderr);
        assert!(out.stderr.contains(message), "{argv:?}: {}", out.stderr);
    };
    refused(
        &["nosuchrun"],
        "no run found with id or id prefix 'nosuchrun'",
    );
    let last = if parent.ends_with('0') { "1" } else { "0" };
    let typo = format!("{}{last}", &parent[..parent.len() - 1]);
    refused(&[&typo], &format!("did you mean '{parent}'?"));
    refused(
        &[&parent, "--from", "bb"],
        &format!("--from bb: run '{parent}' has no phase 'bb'; did you mean 'b'?"),
    );
    refused(&[&parent, "--set", "jj=1"], "--set jj: run '");
    refused(
        &[&parent, "--set", r#"j={"n": "seven"}"#],
        "$.n: expected integer, got string",
    );
    refused(
        &[&parent, "--set", "j=not json"],
        "does not meet the phase's contract",
    );
    refused(
        &[&parent, "--from", "b", "--set", "c=x"],
        "--set c: 'c' runs again because of --from b",
    );
    refused(&[&parent, "--set", "m#3=x"], "map 'm' had 3 item(s) in run");
    refused(&[&parent, "--set", "m=[1, 2]"], "the array has 2");
    refused(&[&parent, "--set", "b#0=x"], "'b' is not a map");
    refused(&[&parent, "--set", "b"], "expected P=TEXT, P=@FILE");
    refused(
        &[&parent, "--set", "b=@missing.txt"],
        "cannot read --set b's file",
    );
    refused(&[&parent, "topic"], "has no name");
    refused(&[&parent, "--args", "[1]"], "--args must be a JSON object");
    // --plan without a terminal runs nothing unless --yes.
    refused(&[&parent, "--from", "b", "--plan"], "pass --yes");
    assert_eq!(records(&dir).len(), before, "no run was started");
    assert!(calls(&dir).is_empty(), "{:?}", calls(&dir));
}

#[test]
fn the_plan_lists_what_is_copied_and_what_runs_with_its_calls() {
    let dir = project("fork-plan", FLOW);
    let parent = first_run(&dir);
    let out = tfc(&dir, &["fork", &parent, "--from", "m", "--plan", "--yes"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let plan: Vec<&str> = out
        .stderr
        .lines()
        .skip_while(|l| !l.starts_with("fork of run"))
        .take(11)
        .collect();
    assert_eq!(plan[0], format!("fork of run {parent}"));
    assert!(
        plan.contains(&"a      copy                          0"),
        "{plan:#?}"
    );
    // The map runs over the same three items as in the parent (its source is copied).
    assert!(
        plan.contains(&"m      run (--from)                  3/3/12"),
        "{plan:#?}"
    );
    assert!(
        plan.contains(&"b      copy                          0"),
        "{plan:#?}"
    );
    assert!(
        plan.contains(&"c      run (--from)                  1/1/4"),
        "{plan:#?}"
    );
    assert_eq!(
        plan[10],
        "6 phase(s) copied or set (not paid again), 2 to run: calls 4/4/16 (min/max/worst)"
    );
    let mut c = sorted_calls(&dir);
    c.dedup_by(|a, b| a.starts_with("m#") && b.starts_with("m#"));
    assert_eq!(c, vec!["c", "m#0"]);
    assert_eq!(calls(&dir).len(), 4, "three items and c");
}

#[test]
fn a_killed_fork_resumes_without_running_its_copies() {
    // The fork is killed while c runs; its resume calls c again and nothing it copied.
    let dir = project("fork-kill", FLOW);
    let parent = first_run(&dir);
    let agent = std::fs::read_to_string(dir.join("agent.sh")).expect("agent");
    std::fs::write(
        dir.join("agent.sh"),
        agent.replace(
            "echo \"$TFC_NODE\" >> calls.log\n",
            "echo \"$TFC_NODE\" >> calls.log\nif [ \"$TFC_NODE\" = c ] && [ ! -f pass.flag ]; then sleep 30; fi\n",
        ),
    )
    .expect("agent");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tfc"))
        .args(["fork", &parent, "--from", "b"])
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let started = std::time::Instant::now();
    while !calls(&dir).contains(&"c".to_owned()) {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "c never started: {:?}",
            calls(&dir)
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().expect("kill -9");
    let _ = child.wait();
    std::fs::write(dir.join("pass.flag"), "").expect("flag");
    clear_calls(&dir);
    let fork = records(&dir).pop().expect("fork record");
    let fork_id = fork["runId"].as_str().expect("id").to_owned();
    let out = tfc(&dir, &["resume", &fork_id]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        sorted_calls(&dir),
        vec!["c"],
        "the loop and the side effect stay copied"
    );
    let resumed = records(&dir).pop().expect("record");
    assert_eq!(resumed["phases"]["lp"]["cacheHit"], "run-only");
    assert_eq!(resumed["phases"]["side"]["cacheHit"], "run-only");
}

#[test]
fn call_caps_count_the_copied_calls_and_stop_the_fork_exactly() {
    let dir = project("fork-caps", FLOW);
    let parent = first_run(&dir);
    // The copied phases made 9 calls: a cap at or under them is refused up front.
    let out = tfc(&dir, &["fork", &parent, "--from", "b", "--max-calls", "9"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("made 9 call(s), which already reaches the call cap"),
        "{}",
        out.stderr
    );
    assert!(calls(&dir).is_empty());
    // One more call is allowed: b runs, c is refused, the fork pauses.
    let out = tfc(&dir, &["fork", &parent, "--from", "b", "--max-calls", "10"]);
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert_eq!(calls(&dir), vec!["b"]);
    let child = records(&dir).pop().expect("record");
    assert_eq!(child["reason"], "budget exceeded: calls 10 reached cap 10");
    // Its resume with a higher cap finishes with the one call left.
    clear_calls(&dir);
    let id = child["runId"].as_str().expect("id").to_owned();
    let out = tfc(&dir, &["resume", &id, "--max-calls", "11"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(calls(&dir), vec!["c"]);
}

#[test]
fn a_pending_approval_keeps_its_deadline_in_the_fork() {
    let dir = project(
        "fork-deadline",
        r#"{"name": "dl", "phases": [
          {"id": "a", "task": "first"},
          {"id": "ok", "type": "approval", "dependsOn": ["a"], "task": "go?", "timeout": "1h"},
          {"id": "b", "dependsOn": ["ok"], "task": "second"}
        ]}"#,
    );
    let out = tfc(&dir, &["run", "flow.json", "--agent-cmd", "./agent.sh"]);
    assert_eq!(out.code, 5, "{}", out.stderr);
    let parent = records(&dir).pop().expect("record");
    let expires = parent["phases"]["ok"]["approval"]["expiresAt"].clone();
    assert!(expires.is_string(), "{parent:#}");
    clear_calls(&dir);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let out = tfc(&dir, &["fork", parent["runId"].as_str().expect("id")]);
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert!(calls(&dir).is_empty(), "a is copied: {:?}", calls(&dir));
    let child = records(&dir).pop().expect("record");
    assert_eq!(child["phases"]["ok"]["approval"]["expiresAt"], expires);
}
