//! `tfc run` end to end: the real binary, small shell-script agents through `--agent-cmd`,
//! exit codes, stdout/stderr discipline, persistence, replay/record and interrupts.

mod common;

use std::path::{Path, PathBuf};

use common::{Outcome, root, scratch, shown_codes, tfc_in};

fn agent() -> String {
    root()
        .join("tests/fixtures/agents/scripted.sh")
        .display()
        .to_string()
}

/// Write `flow` into a fresh directory and run `tfc run flow.json args…` there.
fn run_flow(name: &str, flow: &str, args: &[&str]) -> (Outcome, PathBuf) {
    let dir = scratch(name);
    // Its own project root (the nearest `.tfc/` up the tree would otherwise be this repo's).
    std::fs::create_dir_all(dir.join(".tfc")).expect("create .tfc");
    std::fs::write(dir.join("flow.json"), flow).expect("write flow");
    let mut argv = vec!["run", "flow.json"];
    argv.extend_from_slice(args);
    (tfc_in(Some(&dir), &argv, b""), dir)
}

fn with_agent(extra: &[&str]) -> Vec<String> {
    let mut v = vec!["--agent-cmd".to_string(), agent()];
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn run_agent(name: &str, flow: &str, extra: &[&str]) -> (Outcome, PathBuf) {
    let args = with_agent(extra);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    run_flow(name, flow, &refs)
}

#[test]
fn if_else_routing_prints_only_the_final_output() {
    let flow = r#"{"name": "review", "phases": [
        {"id": "triage", "output": "json", "task": "Classify."},
        {"id": "deep", "when": "{steps.triage.json.severity} == high", "dependsOn": ["triage"], "task": "Deep: {steps.triage.json.reason}"},
        {"id": "quick", "when": "{steps.triage.json.severity} != high", "dependsOn": ["triage"], "task": "Quick."},
        {"id": "merge", "type": "reduce", "join": "any", "from": ["deep", "quick"], "dependsOn": ["deep", "quick"], "task": "Merge {previous.output}"}
    ]}"#;
    let (out, dir) = run_agent("run-routing", flow, &[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "merge: Merge deep: Deep: auth bypass\n");
    assert!(
        out.stderr.contains("quick skipped: Condition not met"),
        "{}",
        out.stderr
    );
    let runs = dir.join(".tfc/runs/review");
    let run_dir = std::fs::read_dir(&runs)
        .expect("run dir")
        .next()
        .expect("one run")
        .expect("entry")
        .path();
    let record = std::fs::read_to_string(run_dir.join("run.json")).expect("run.json");
    assert!(record.contains("\"status\": \"completed\""), "{record}");
    let journal = std::fs::read_to_string(run_dir.join("journal.jsonl")).expect("journal");
    assert!(
        journal
            .lines()
            .next()
            .is_some_and(|l| l.contains("\"type\":\"run-start\""))
    );
    assert!(
        journal
            .lines()
            .last()
            .is_some_and(|l| l.contains("\"type\":\"run-end\""))
    );
    assert!(journal.contains("\"type\":\"agent-call\""));
    assert!(!run_dir.join("lock").exists());
}

#[test]
fn json_format_prints_the_run_record() {
    let flow = r#"{"phases": [{"id": "a", "task": "Hello"}]}"#;
    let (out, _) = run_agent("run-json", flow, &["--format", "json"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("\"schemaVersion\": 1"));
    assert!(out.stdout.contains("\"finalOutput\": \"a: Hello\""));
}

#[test]
fn transient_errors_are_retried_hard_ones_are_not() {
    let flow = r#"{"phases": [{"id": "flaky", "task": "x", "retry": {"max": 0, "backoffMs": 0}}]}"#;
    let (out, _) = run_agent("run-flaky", flow, &["--format", "json"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("\"finalOutput\": \"recovered on attempt 2\""),
        "{}",
        out.stdout
    );
    let flow =
        r#"{"phases": [{"id": "broken", "task": "x", "retry": {"max": 0, "backoffMs": 0}}]}"#;
    let (out, _) = run_agent("run-broken", flow, &["--format", "json"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stdout.contains("\"error\": \"hard failure\""),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("\"attempts\": 1"), "{}", out.stdout);
}

#[test]
fn gate_block_exits_4() {
    let flow = r#"{"phases": [{"id": "work", "task": "x"}, {"id": "gate", "type": "gate", "dependsOn": ["work"], "task": "Ok?"}]}"#;
    let (out, _) = run_agent("run-block", flow, &[]);
    assert_eq!(out.code, 4, "{out:?}");
    assert!(
        out.stdout.starts_with("Gate blocked the workflow."),
        "{}",
        out.stdout
    );
}

#[test]
fn approvals_pause_with_exit_5_and_flags_decide() {
    let flow = r#"{"phases": [{"id": "plan", "task": "p"}, {"id": "ok", "type": "approval", "dependsOn": ["plan"]}, {"id": "go", "dependsOn": ["ok"], "task": "go"}]}"#;
    let (out, _) = run_agent("run-approval", flow, &[]);
    assert_eq!(out.code, 5, "{out:?}");
    // Paused before its final phase: nothing on stdout, the resume hint on stderr.
    assert_eq!(out.stdout, "", "{out:?}");
    assert!(
        out.stderr.contains("awaiting approval: ok"),
        "{}",
        out.stderr
    );
    let (out, _) = run_agent("run-approval-yes", flow, &["--approve", "ok"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "go: go\n"), "{out:?}");
}

#[test]
fn idle_timeout_kills_a_hung_agent_and_its_process_group() {
    let flow = r#"{"idleTimeout": 1000, "phases": [{"id": "hang", "task": "x", "retry": {"max": 0, "backoffMs": 0}, "idempotent": false}]}"#;
    let dir = scratch("run-idle");
    std::fs::write(dir.join("flow.json"), flow).expect("write");
    let pidfile = dir.join("agent.pid");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_tfc"));
    cmd.args(["run", "flow.json", "--agent-cmd", &agent()])
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .env("AGENT_TEST_PIDFILE", &pidfile);
    let started = std::time::Instant::now();
    let out = cmd.output().expect("run tfc");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no output for 1000ms (idle timeout)"),
        "{stderr}"
    );
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .expect("pid")
        .trim()
        .parse()
        .expect("pid number");
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.contains(") Z ")),
        "agent {pid} still running"
    );
}

#[test]
fn interrupt_pauses_the_run() {
    let flow = r#"{"phases": [{"id": "hang", "task": "x"}, {"id": "after", "dependsOn": ["hang"], "task": "y"}]}"#;
    let dir = scratch("run-interrupt");
    std::fs::write(dir.join("flow.json"), flow).expect("write");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_tfc"))
        .args(["run", "flow.json", "--agent-cmd", &agent()])
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(std::time::Duration::from_millis(700));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .expect("signal");
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("paused: interrupted"), "{stderr}");
}

#[test]
fn invalid_flows_and_missing_backends() {
    let (out, _) = run_agent(
        "run-invalid",
        r#"{"phases": [{"id": "a", "dependsOn": ["b"], "task": "x"}]}"#,
        &[],
    );
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("E0103"), "{}", out.stderr);
    assert_eq!(out.stdout, "");
    let (out, _) = run_flow(
        "run-nobackend",
        r#"{"phases": [{"id": "a", "task": "x"}]}"#,
        &["--backend", "nonesuch"],
    );
    assert_eq!(out.code, 3, "{out:?}");
    let (out, dir) = run_flow(
        "run-missing-cli",
        r#"{"phases": [{"id": "s", "type": "script", "run": "touch ran"}, {"id": "a", "dependsOn": ["s"], "task": "x"}]}"#,
        &["--agent-cmd", "/nonexistent/agent"],
    );
    assert_eq!(out.code, 3, "{out:?}");
    assert!(
        out.stderr
            .contains("command not found: `/nonexistent/agent`"),
        "{}",
        out.stderr
    );
    assert!(
        !dir.join("ran").exists(),
        "nothing runs when a backend is missing"
    );
}

#[test]
fn a_misspelled_argument_stops_the_run_before_anything_executes() {
    let flow = r#"{"args": {"feature": {"type": "string", "default": "search"}},
        "phases": [{"id": "s", "type": "script", "run": "touch ran"},
                   {"id": "a", "dependsOn": ["s"], "task": "Build {args.feature}"}]}"#;
    for (name, args) in [
        ("run-typo-pair", vec!["fetaure=x"]),
        ("run-typo-json", vec!["--args", r#"{"fetaure": "x"}"#]),
    ] {
        let (out, dir) = run_agent(name, flow, &args);
        assert_eq!(out.code, 2, "{out:?}");
        assert!(out.stderr.contains("E0504"), "{}", out.stderr);
        assert!(
            out.stderr.contains("did you mean 'feature'?"),
            "{}",
            out.stderr
        );
        assert!(out.stderr.contains("declared: feature"), "{}", out.stderr);
        assert_eq!(out.stdout, "");
        assert!(!dir.join("ran").exists(), "the script must not run");
        assert!(!dir.join(".tfc/runs").exists(), "no run is recorded");
    }
    // The declared name runs.
    let (out, dir) = run_agent("run-typo-fixed", flow, &["feature=x"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(dir.join("ran").exists());
}

#[test]
fn an_undeclared_argument_that_a_placeholder_reads_passes_through() {
    // The flow declares `args` but not `note`, and reads `{args.note}` (here inside an inline
    // def too): the original passes it through, so must tfc (SPEC §2.2).
    let flow = r#"{"args": {"topic": {"type": "string", "default": "search"}},
        "phases": [{"id": "a", "task": "Topic {args.topic}; note: {args.note}"},
                   {"id": "sub", "type": "flow", "dependsOn": ["a"],
                    "def": {"phases": [{"id": "x", "task": "Ticket {args.ticket}"}]}}]}"#;
    let (out, _) = run_flow(
        "run-undeclared-read",
        flow,
        &["note=hi there", "ticket=7", "--dry-run"],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("note: hi there"), "{}", out.stdout);
    assert!(!out.stderr.contains("E0504"), "{}", out.stderr);
    // Strict mode notes it (W0203, as an error); an unread one is still E0504.
    let strict = flow.replacen('{', r#"{"strictInterpolation": true, "#, 1);
    let (out, _) = run_flow("run-undeclared-strict", &strict, &["note=hi", "--dry-run"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("W0203"), "{}", out.stderr);
    assert!(!out.stderr.contains("E0504"), "{}", out.stderr);
    let (out, _) = run_flow("run-undeclared-unread", flow, &["nope=1", "--dry-run"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr
            .contains("unknown argument 'nope'; declared: topic"),
        "{}",
        out.stderr
    );
    // `tfc check --arg` agrees.
    let dir = scratch("check-undeclared-read");
    std::fs::write(dir.join("flow.json"), flow).expect("write flow");
    let out = tfc_in(
        Some(&dir),
        &["check", "flow.json", "--arg", "note=hi there"],
        b"",
    );
    assert_eq!(out.code, 0, "{out:?}");
    let out = tfc_in(Some(&dir), &["check", "flow.json", "--arg", "nope=1"], b"");
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("E0504"), "{}", out.stderr);
}

#[test]
fn a_skipped_final_phase_is_said_not_hidden() {
    // The final phase's own `when` is false: the run completes with `draft`'s output (SPEC
    // §8.9), and says so on stderr and in the summary line.
    let own = r#"{"name": "pub", "phases": [
        {"id": "draft", "task": "Draft."},
        {"id": "publish", "dependsOn": ["draft"], "final": true,
         "when": "{steps.draft.output} == ready", "task": "Publish {steps.draft.output}"}]}"#;
    let (out, _) = run_agent("run-final-when", own, &[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "draft: Draft.\n");
    let why = "the final phase 'publish' was skipped because its when was false: {steps.draft.output} == ready";
    assert!(
        out.stderr.contains(&format!(
            "warning: {why} — printed the output of phase 'draft' instead"
        )),
        "{}",
        out.stderr
    );
    let summary = out
        .stderr
        .lines()
        .find(|l| l.starts_with("run "))
        .unwrap_or_default();
    assert!(
        summary.contains(
            "completed · final phase 'publish' skipped (its when was false: {steps.draft.output} == ready) · output of 'draft' instead"
        ),
        "{summary}"
    );
    // Skipped because an ancestor's `when` was false; `--format json` keeps §11.1's shape
    // and adds one run-level warning.
    let chain = r#"{"name": "pub", "phases": [
        {"id": "draft", "task": "Draft."},
        {"id": "review", "dependsOn": ["draft"], "when": "{steps.draft.output} == ready", "task": "Review."},
        {"id": "polish", "dependsOn": ["review"], "task": "Polish."},
        {"id": "publish", "dependsOn": ["polish"], "final": true, "task": "Publish."}]}"#;
    let (out, _) = run_agent("run-final-ancestor", chain, &["--format", "json"]);
    assert_eq!(out.code, 0, "{out:?}");
    let record = tfc::value::parse_json(&out.stdout).expect("a run record");
    let field = |k: &str| record.as_object().and_then(|r| r.get(k)).cloned();
    assert_eq!(
        field("outputPhase").map(|v| v.to_json()),
        Some(r#""draft""#.into())
    );
    assert_eq!(
        field("warnings").map(|v| v.to_json()),
        Some(
            r#"["publish: final phase skipped: its ancestor 'review' was skipped, whose when was false: {steps.draft.output} == ready; the run's output is that of phase 'draft'"]"#
                .into()
        )
    );
    assert!(
        out.stderr.contains(
            "warning: the final phase 'publish' was skipped because its ancestor 'review' was skipped, whose when was false: {steps.draft.output} == ready — the run's output is that of phase 'draft'"
        ),
        "{}",
        out.stderr
    );
    // A final phase that ran: nothing to say.
    let (out, _) = run_agent("run-final-ran", &own.replace("== ready", "!= ready"), &[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        !out.stderr.contains("warning: the final phase"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains("final phase 'publish' skipped"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_file_name_as_a_def_stops_the_run_instead_of_doing_nothing() {
    let flow = r#"{"phases": [{"id": "s", "type": "script", "run": "touch ran"},
        {"id": "review", "type": "flow", "dependsOn": ["s"], "def": "review.json"}]}"#;
    let (out, dir) = run_agent("run-def-file", flow, &[]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("E0308"), "{}", out.stderr);
    assert!(out.stderr.contains(r#""use": "review""#), "{}", out.stderr);
    assert_eq!(out.stdout, "");
    assert!(!dir.join("ran").exists(), "the script must not run");
}

#[test]
fn dry_run_lists_prompts() {
    let flow = r#"{"phases": [{"id": "a", "task": "First {args.x}"}, {"id": "b", "dependsOn": ["a"], "task": "Then {steps.a.output}"}]}"#;
    let (out, _) = run_flow("run-dry", flow, &["x=1", "--dry-run"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout,
        "── [a] agent=default model=default ──\nFirst 1\n── [b] agent=default model=default ──\nThen [dry-run] a\n"
    );
}

/// `--dry-run K=V`: the pair is an argument of the flow, not the flag's value (which needs
/// `=`); an unknown value is a usage error.
#[test]
fn dry_run_does_not_swallow_an_argument() {
    let flow = r#"{"phases": [{"id": "a", "task": "First {args.x}"}]}"#;
    let (out, _) = run_flow("run-dry-arg", flow, &["--dry-run", "x=1"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout,
        "── [a] agent=default model=default ──\nFirst 1\n"
    );
    let (out, _) = run_flow("run-dry-bad", flow, &["--dry-run=everything", "x=1"]);
    assert_eq!(out.code, 2, "{out:?}");
}

#[test]
fn record_then_replay() {
    let flow = r#"{"phases": [{"id": "a", "task": "Hello"}, {"id": "b", "dependsOn": ["a"], "task": "Then {steps.a.output}"}]}"#;
    let (out, dir) = run_agent("run-record", flow, &["--record", "calls.jsonl"]);
    assert_eq!(out.code, 0, "{out:?}");
    let fixture = dir.join("calls.jsonl");
    assert_eq!(
        std::fs::read_to_string(&fixture)
            .expect("fixture")
            .lines()
            .count(),
        2
    );
    let out = tfc_in(
        Some(&dir),
        &["run", "flow.json", "--replay", "calls.jsonl"],
        b"",
    );
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "b: Then a: Hello\n"),
        "{out:?}"
    );
    std::fs::write(dir.join("flow.json"), flow.replace("Hello", "Bye")).expect("write");
    let out = tfc_in(
        Some(&dir),
        &["run", "flow.json", "--replay", "calls.jsonl"],
        b"",
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("replay: no fixture for node 'a'"),
        "{}",
        out.stderr
    );
}

#[test]
fn readme_demo_runs_offline_from_its_fixture() {
    let out = tfc_in(
        None,
        &[
            "run",
            "examples/changelog/flow.json",
            "--replay",
            "examples/changelog/replay.jsonl",
            "--format",
            "json",
        ],
        b"",
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("\"finalOutput\": \"# 2.0.0\\n\\n## Breaking changes"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("\"replay\": true"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("\"bump\": {\n      \"status\": \"done\",\n      \"output\": \"major\""),
        "{}",
        out.stdout
    );
}

/// A dead end (W0101), a broken condition (W0201) and an agent without a definition file.
const WARNED: &str = r#"{"name": "warned", "phases": [
    {"id": "a", "agent": "scout", "task": "x"},
    {"id": "orphan", "dependsOn": ["a"], "task": "y"},
    {"id": "b", "dependsOn": ["a"], "when": "{steps.a.output} == = yes", "final": true, "task": "z"}
]}"#;

#[test]
fn run_reports_the_warnings_check_reports() {
    let (run, dir) = run_flow("run-warnings-dry", WARNED, &["--dry-run"]);
    assert_eq!(run.code, 0, "{run:?}");
    let check = common::tfc_in(
        Some(&dir),
        &["check", "--color", "never", "--args", "{}", "flow.json"],
        b"",
    );
    assert_eq!(shown_codes(&check.stderr), ["W0101", "W0201"], "{check:?}");
    // Dry-run: no model sees a system prompt, so no W0701 either.
    assert_eq!(
        shown_codes(&run.stderr),
        shown_codes(&check.stderr),
        "{run:?}"
    );

    // A real backend: the agent's missing definition matters, after the same check warnings.
    let (run, _) = run_agent("run-warnings-agent", WARNED, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        shown_codes(&run.stderr),
        ["W0101", "W0201", "W0701"],
        "{run:?}"
    );
}

#[test]
fn replayed_agents_need_no_definition_file() {
    let flow =
        r#"{"name": "replayed", "phases": [{"id": "a", "agent": "scout", "task": "Hello"}]}"#;
    let (out, dir) = run_agent("run-replayed-record", flow, &["--record", "calls.jsonl"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("[W0701]"), "{out:?}");
    let out = common::tfc_in(
        Some(&dir),
        &["run", "flow.json", "--replay", "calls.jsonl"],
        b"",
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(!out.stderr.contains("W0701"), "{out:?}");
}

#[test]
fn allow_and_quiet_on_run() {
    let (out, _) = run_agent(
        "run-allow",
        WARNED,
        &["--allow", "W0101", "--allow", "undefined-agent"],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(shown_codes(&out.stderr), ["W0201"], "{out:?}");
    // The flow's own lint.allow covers preflight warnings too.
    let linted = WARNED.replace(
        r#""name": "warned","#,
        r#""name": "warned", "lint": {"allow": ["W0701", "dead-end"]},"#,
    );
    let (out, _) = run_agent("run-lint-allow", &linted, &[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(shown_codes(&out.stderr), ["W0201"], "{out:?}");
    let (out, _) = run_agent("run-quiet", WARNED, &["--quiet"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(shown_codes(&out.stderr), Vec::<String>::new(), "{out:?}");
    assert!(!out.stdout.is_empty(), "{out:?}");
    // Errors are never hidden, and cannot be allowed.
    let broken = r#"{"phases": [{"id": "a", "dependsOn": ["nope"], "task": "x"}]}"#;
    let (out, _) = run_agent("run-quiet-errors", broken, &["--quiet"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert_eq!(shown_codes(&out.stderr), ["E0103"], "{out:?}");
    let (out, _) = run_agent("run-allow-error", broken, &["--allow", "E0103"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("errors cannot be allowed"), "{out:?}");
    assert!(
        !out.stderr.contains("[E0103]"),
        "usage error before any check: {out:?}"
    );
}
