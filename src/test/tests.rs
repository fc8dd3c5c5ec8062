//! End-to-end tests of the library: in-memory cases through the real machine.

use std::path::Path;
use std::time::{Duration, Instant};

use super::*;

fn case(json: &str) -> TestCase {
    TestCase::parse(json).unwrap_or_else(|d| panic!("bad case: {d:#?}"))
}

fn run(flow: &str, json: &str) -> TestReport {
    run_case(flow, &case(json), Path::new("."))
}

fn failures(r: &TestReport) -> Vec<Failure> {
    match &r.outcome {
        Outcome::Failed(f) => f.clone(),
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[track_caller]
fn passes(r: &TestReport) {
    assert_eq!(r.outcome, Outcome::Passed, "{}", report::details(r));
}

const REVIEW: &str = r#"{"name": "review", "args": {"mode": {"default": "fast"}}, "phases": [
  {"id": "triage", "task": "Triage in {args.mode} mode.\nSecond line.", "output": "json",
   "expect": {"type": "object", "required": ["severity"]}},
  {"id": "deep", "task": "Deep review of {steps.triage.json.files}", "dependsOn": ["triage"],
   "when": "{steps.triage.json.severity} == high"},
  {"id": "quick", "task": "Quick look", "dependsOn": ["triage"],
   "when": "{steps.triage.json.severity} != high"},
  {"id": "summary", "task": "Sum up: {steps.deep.output}{steps.quick.output}",
   "dependsOn": ["deep", "quick"], "join": "any", "final": true}
]}"#;

#[test]
fn a_routed_flow_takes_the_answered_path() {
    let r = run(
        REVIEW,
        r#"{"name": "high", "answers": {
              "triage": {"json": {"severity": "high", "files": ["src/a.rs"]}},
              "deep": "Risky: unchecked index.", "*": "ok"},
            "expect": {"status": "completed", "ran": ["triage", "deep", "summary"],
              "skipped": ["quick"], "output": "ok", "outputPhase": "summary",
              "prompts": {"deep": {"contains": "src/a.rs"}, "summary": {"contains": "unchecked"}},
              "calls": 3, "tokens": 0,
              "phases": {"triage": {"json": {"severity": "high", "files": ["src/a.rs"]},
                                    "attempts": 1, "status": "done"},
                         "quick": {"skipReason": {"contains": "Condition not met"}}}}}"#,
    );
    passes(&r);
    assert_eq!(r.calls.len(), 3);
}

#[test]
fn unmet_expectations_say_expected_and_actual() {
    let r = run(
        REVIEW,
        r#"{"name": "low", "answers": {"triage": {"json": {"severity": "low"}}, "*": "fine\nall good"},
            "expect": {"status": "failed", "ran": ["deep"], "output": "fine\nall bad",
                       "calls": {"max": 1}, "phases": {"quick": {"attempts": 2}}}}"#,
    );
    let f = failures(&r);
    let what: Vec<&str> = f.iter().map(|f| f.what.as_str()).collect();
    assert_eq!(
        what,
        [
            "status",
            "ran: deep",
            "phases.quick.attempts",
            "output",
            "calls"
        ]
    );
    assert_eq!(
        (f[0].expected.as_str(), f[0].actual.as_str()),
        ("failed", "completed")
    );
    assert_eq!(f[1].actual, "skipped");
    assert_eq!(
        f[3].diff.as_deref(),
        Some(" fine\n-all bad\n+all good\n"),
        "a line diff for text"
    );
    assert_eq!(
        (f[4].expected.as_str(), f[4].actual.as_str()),
        ("at most 1", "3")
    );
}

#[test]
fn a_call_without_an_answer_fails_naming_node_agent_and_prompt() {
    let r = run(REVIEW, r#"{"name": "none", "answers": {}}"#);
    let f = failures(&r);
    assert_eq!(
        f[0].actual,
        "no answer for node 'triage' (agent 'default'): Triage in fast mode."
    );
}

#[test]
fn a_transient_error_is_retried_on_a_virtual_clock() {
    // Retries back off 2 s, 4 s, 8 s (SPEC §8.4): on the virtual clock they take no time.
    let flow = r#"{"name": "f", "phases": [{"id": "a", "task": "go"}]}"#;
    let started = Instant::now();
    let r = run(
        flow,
        r#"{"name": "retry", "answers": {"a": [{"error": "overloaded"}, {"error": "503 Service Unavailable"}, "done"]},
            "expect": {"status": "completed", "output": "done", "phases": {"a": {"attempts": 3}}, "calls": 3}}"#,
    );
    passes(&r);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    // Not transient: one attempt, the phase fails.
    let r = run(
        flow,
        r#"{"name": "hard", "answers": {"a": [{"error": "permission denied"}, "never"]},
            "expect": {"status": "failed", "failed": ["a"], "phases": {"a": {"attempts": 1}}}}"#,
    );
    passes(&r);
}

#[test]
fn a_timeout_answer_times_out_the_call() {
    let flow = r#"{"name": "f", "phases": [{"id": "a", "task": "go", "timeout": 5000}]}"#;
    let r = run(
        flow,
        r#"{"name": "t", "answers": {"a": {"timeout": true}},
            "expect": {"status": "failed", "phases": {"a": {"attempts": 1}}}}"#,
    );
    passes(&r);
    let rec = r.record.unwrap();
    assert_eq!(
        rec.phases["a"].error.as_deref(),
        Some("Phase timed out after 5000ms (subagent aborted)")
    );
}

#[test]
fn a_gate_blocks_and_the_rest_is_skipped() {
    let flow = r#"{"name": "g", "phases": [
      {"id": "draft", "task": "Write"},
      {"id": "check", "type": "gate", "dependsOn": ["draft"], "task": "Good? {steps.draft.output}"},
      {"id": "ship", "dependsOn": ["check"], "task": "Ship"}]}"#;
    let r = run(
        flow,
        r#"{"name": "block", "answers": {"draft": "bad", "check": "No.\nVERDICT: BLOCK"},
            "expect": {"status": "blocked", "skipped": ["ship"],
                       "phases": {"check": {"verdict": "block"}}}}"#,
    );
    passes(&r);
}

#[test]
fn approvals_are_decided_per_test_and_pending_pauses() {
    let flow = r#"{"name": "a", "phases": [
      {"id": "draft", "task": "Write"},
      {"id": "publish", "type": "approval", "dependsOn": ["draft"], "task": "Ship it?"},
      {"id": "ship", "dependsOn": ["publish"], "task": "Ship"}]}"#;
    passes(&run(
        flow,
        r#"{"name": "pending", "answers": {"*": "x"},
            "expect": {"status": "paused", "notRun": ["ship", "publish"], "calls": 1,
                       "output": {"contains": "awaiting approval: publish"}}}"#,
    ));
    passes(&run(
        flow,
        r#"{"name": "approved", "answers": {"*": "x"}, "approvals": {"publish": "approve"},
            "expect": {"status": "completed", "ran": ["ship"]}}"#,
    ));
    passes(&run(
        flow,
        r#"{"name": "rejected", "answers": {"*": "x"}, "approvals": {"publish": {"reject": "not now"}},
            "expect": {"status": "blocked", "skipped": ["ship"]}}"#,
    ));
}

#[test]
fn each_rejected_approval_keeps_its_own_note() {
    // A rejection blocks the run, so one run decides one of them: the note listed first
    // must not stand in for the other's.
    let flow = r#"{"name": "a", "phases": [
      {"id": "publish", "type": "approval", "task": "Publish?"},
      {"id": "post", "dependsOn": ["publish"], "task": "Post"},
      {"id": "announce", "type": "approval", "dependsOn": ["post"], "task": "Announce?"}]}"#;
    let note = |approvals: &str, id: &str| {
        let r = run(
            flow,
            &format!(
                r#"{{"name": "notes", "answers": {{"*": "x"}}, "approvals": {approvals},
                    "expect": {{"status": "blocked"}}}}"#
            ),
        );
        passes(&r);
        let record = r.record.expect("a record");
        let a = record.phases[id].approval.clone().expect("decided");
        (a.decision, a.note, record.reason)
    };
    assert_eq!(
        note(
            r#"{"announce": {"reject": "too loud"}, "publish": {"reject": "not yet"}}"#,
            "publish"
        ),
        (
            "reject",
            Some("not yet".into()),
            Some("Gate blocked: not yet".into())
        )
    );
    assert_eq!(
        note(
            r#"{"publish": "approve", "announce": {"reject": "too loud"}}"#,
            "announce"
        ),
        (
            "reject",
            Some("too loud".into()),
            Some("Gate blocked: too loud".into())
        )
    );
}

#[test]
fn items_iterations_and_sub_flow_nodes_are_answered_by_pattern() {
    let flow = r#"{"name": "n", "args": {"files": {"default": ["a", "b", "c"]}}, "phases": [
      {"id": "review", "type": "map", "over": "{args.files}", "task": "Review {item}"},
      {"id": "fix", "type": "loop", "dependsOn": ["review"], "task": "Fix {loop.iteration}",
       "maxIterations": 5, "until": "{steps.fix.output} == DONE", "convergence": false},
      {"id": "sub", "type": "flow", "dependsOn": ["fix"],
       "def": {"phases": [{"id": "inner", "task": "Inner"}, {"id": "other", "task": "Other", "dependsOn": ["inner"]}]}}]}"#;
    let r = run(
        flow,
        r#"{"name": "patterns", "answers": {"review#*": "r", "review#1": "one",
              "fix": "draft", "fix@3": "DONE", "sub/inner": "in", "sub/*": "rest"},
            "expect": {"status": "completed",
              "phases": {"fix": {"iterations": 3}, "review": {"items": ["done", "done", "done"]},
                         "sub": {"output": "rest"}},
              "prompts": {"review#2": "Review c", "fix@*": {"regex": "^Fix [123]$"}}}}"#,
    );
    passes(&r);
    let rec = r.record.unwrap();
    assert_eq!(
        rec.phases["review"].json,
        Some(crate::value::parse_json(r#"["r", "one", "r"]"#).unwrap())
    );
}

#[test]
fn a_json_answer_failing_the_contract_is_retried_by_the_explicit_layer() {
    let flow = r#"{"name": "c", "phases": [{"id": "t", "task": "JSON please", "output": "json",
      "retry": {"max": 1, "backoffMs": 60000}, "expect": {"required": ["risk"]}}]}"#;
    passes(&run(
        flow,
        r#"{"name": "second try", "answers": {"t": ["not JSON", {"json": {"risk": "low"}}]},
            "expect": {"status": "completed", "phases": {"t": {"attempts": 2, "json": {"risk": "low"}}},
                       "output": {"schema": {"type": "object", "required": ["risk"]}}}}"#,
    ));
}

#[test]
fn scripts_run_for_real_unless_answered() {
    let flow = r#"{"name": "s", "phases": [
      {"id": "sh", "type": "script", "run": ["echo", "real"]},
      {"id": "use", "dependsOn": ["sh"], "task": "Got {steps.sh.output}"}]}"#;
    passes(&run(
        flow,
        r#"{"name": "real", "answers": {"use": "x"},
            "expect": {"prompts": {"use": {"contains": "Got real"}}}}"#,
    ));
    passes(&run(
        flow,
        r#"{"name": "answered", "answers": {"use": "x", "sh": {"stdout": "fake", "exitCode": 0}},
            "expect": {"prompts": {"use": "Got fake"}}}"#,
    ));
    // A script answered like an agent call is an error of the test (T0011) ...
    let mixed = case(
        r#"{"name": "mixed", "answers": {"use": "x", "sh": ["text, not a script's answer", {"stdout": "", "exitCode": 0}]},
            "expect": {"status": "failed", "failed": ["sh"]}}"#,
    );
    let r = run_case(flow, &mixed, Path::new("."));
    assert!(
        matches!(r.outcome, Outcome::Error(ref e) if e.contains("[T0011]")),
        "{:?}",
        r.outcome
    );
    // ... and, run regardless, fails the script phase instead of running it.
    let checked = crate::check::check_source(
        flow,
        &crate::flow::LowerOptions::default(),
        &crate::check::CheckOptions::default(),
    );
    let mixed = run_checked(
        &checked.flow.unwrap(),
        &crate::source::Source::new("f", flow.to_owned()),
        &mixed,
        Path::new("."),
    );
    passes(&mixed);
    assert!(
        mixed.record.unwrap().phases["sh"]
            .error
            .as_deref()
            .is_some_and(|e| e.contains("answered with an agent call's answer")),
    );
    passes(&run(
        flow,
        r#"{"name": "failing", "answers": {"use": "x", "sh": {"stdout": "", "exitCode": 3}},
            "expect": {"status": "failed", "failed": ["sh"], "notRun": []}}"#,
    ));
}

#[test]
fn usage_counts_against_the_budget() {
    let flow = r#"{"name": "b", "budget": {"maxTokens": 100}, "phases": [
      {"id": "a", "task": "A"}, {"id": "b", "task": "B", "dependsOn": ["a"]}]}"#;
    passes(&run(
        flow,
        r#"{"name": "over", "answers": {"*": {"json": "x", "usage": {"input": 150, "output": 10, "costUSD": 0.25}}},
            "expect": {"status": "paused", "skipped": ["b"], "tokens": 160, "costUSD": {"min": 0.2, "max": 0.3}}}"#,
    ));
}

#[test]
fn bad_arguments_and_bad_flows_are_errors() {
    let flow = r#"{"name": "f", "args": {"n": {"type": "number", "required": true}},
      "phases": [{"id": "a", "task": "{args.n}"}]}"#;
    let r = run(flow, r#"{"name": "no args", "answers": {"*": "x"}}"#);
    assert!(
        matches!(r.outcome, Outcome::Error(ref e) if e.contains("[E0503] Missing required argument 'n'")),
        "{:?}",
        r.outcome
    );
    let r = run(r#"{"phases": []}"#, r#"{"name": "x"}"#);
    assert!(matches!(r.outcome, Outcome::Error(ref e) if e.contains("the flow has errors")));
}

#[test]
fn missing_answers_can_be_stubbed_like_a_dry_run() {
    let flow = r#"{"name": "s", "phases": [
      {"id": "t", "task": "JSON", "output": "json", "expect": {"required": ["level"], "properties": {"level": {"enum": ["low", "high"]}}}},
      {"id": "g", "type": "gate", "dependsOn": ["t"], "task": "ok?"},
      {"id": "w", "dependsOn": ["g"], "task": "write"}]}"#;
    let c = case(
        r#"{"name": "stubbed", "answers": {"w": "written"},
            "expect": {"status": "completed", "output": "written",
                       "phases": {"t": {"json": {"level": "low"}}, "g": {"verdict": "pass"}}}}"#,
    );
    let checked = crate::check::check_source(
        flow,
        &crate::flow::LowerOptions::default(),
        &crate::check::CheckOptions::default(),
    );
    let flow_ir = checked.flow.unwrap();
    let source = crate::source::Source::new("s", flow.to_owned());
    passes(&run_checked_with(
        &flow_ir,
        &source,
        &c,
        Path::new("."),
        true,
    ));
    // Without it, the first call fails the test.
    let r = run_checked(&flow_ir, &source, &c, Path::new("."));
    assert!(failures(&r)[0].actual.starts_with("no answer for node 't'"));
}

#[test]
fn branches_race_runners_and_judges_are_answered_by_their_nodes() {
    let flow = r#"{"name": "k", "phases": [
      {"id": "par", "type": "parallel", "branches": [{"task": "A"}, {"task": "B"}]},
      {"id": "race", "type": "race", "dependsOn": ["par"], "branches": [{"task": "fast"}, {"task": "slow"}]},
      {"id": "pick", "type": "tournament", "dependsOn": ["race"], "variants": 3, "task": "Name it"}]}"#;
    let r = run(
        flow,
        r#"{"name": "nodes", "answers": {"par#0": "a", "par#1": "b", "race#*": "won",
              "pick#*": "variant", "pick#2": "the best", "pick#judge": "WINNER: 3"},
            "expect": {"status": "completed", "output": "the best",
                       "phases": {"par": {"items": 2}},
                       "prompts": {"pick#judge": {"contains": "the best"}, "par#1": "B"}}}"#,
    );
    passes(&r);
    let nodes: Vec<&str> = r.calls.iter().map(|c| c.node.as_str()).collect();
    assert!(
        nodes.contains(&"pick#judge") && nodes.contains(&"race#0"),
        "{nodes:?}"
    );
}

#[test]
fn an_unreadable_or_non_utf8_test_file_is_a_diagnostic() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.test.json");
    std::fs::write(&bad, b"{\"flow\": \"\xff\"}").unwrap();
    let c = check_file(&bad, dir.path());
    assert_eq!(c.diagnostics[0].code.as_str(), "E0001");
    assert!(c.invalid().is_some());
    let c = check_file(&dir.path().join("missing.test.json"), dir.path());
    assert_eq!(c.diagnostics[0].code.as_str(), "T0003");
    assert!(c.invalid().is_some());
}

/// `"hooks": true` runs the flow's hook of the run's ending (SPEC §8.10), for real, in the
/// test's directory; without it no hook runs. A hook that fails is a warning of the record.
#[test]
fn hooks_run_only_in_a_test_that_asks_for_them() {
    let dir = std::env::temp_dir().join(format!("tfc-test-hooks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let flow = r#"{"name": "hooked", "hooks": {
        "onComplete": ["sh", "-c", "cat > ran.json; printf %s \"$TFC_HOOK_ID\" > id.txt"],
        "onFail": ["sh", "-c", "echo 'pager down' >&2; exit 3"]},
      "phases": [{"id": "a", "task": "go"}]}"#;
    let without = case(r#"{"name": "quiet", "answers": {"a": "ok"}}"#);
    passes(&run_case(flow, &without, &dir));
    assert!(!dir.join("ran.json").exists());
    let with = case(r#"{"name": "loud", "hooks": true, "answers": {"a": "ok"}}"#);
    assert!(with.hooks);
    passes(&run_case(flow, &with, &dir));
    let record = std::fs::read_to_string(dir.join("ran.json")).expect("the hook ran");
    assert!(record.contains("\"status\": \"completed\""), "{record}");
    assert_eq!(
        std::fs::read_to_string(dir.join("id.txt")).expect("id"),
        "test-hooked:onComplete"
    );
    let failing = case(
        r#"{"name": "fails", "hooks": true, "answers": {"a": {"error": "permission denied"}},
            "expect": {"status": "failed",
              "warnings": [{"contains": "hooks.onFail: the hook exited with code 3: pager down"}]}}"#,
    );
    passes(&run_case(flow, &failing, &dir));
    let _ = std::fs::remove_dir_all(&dir);
    let bad = TestCase::parse(r#"{"name": "x", "hooks": "yes"}"#).expect_err("not a bool");
    assert_eq!(bad[0].code.as_str(), "T0002", "{bad:?}");
}
