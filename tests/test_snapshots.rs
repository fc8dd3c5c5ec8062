//! `tfc test` end to end, the parts that write files: `--from-run` (a real run, made with a
//! scripted `--agent-cmd` agent, becomes a test that passes), `--update` (plain-string
//! matchers rewritten, comments and layout kept) and `--keep-runs` (each test's run in the
//! run store, for `tfc show` and `tfc report`; nothing written without it).

mod common;

use std::path::{Path, PathBuf};

use common::{Outcome, root, scratch, tfc_in};

fn agent() -> String {
    root()
        .join("tests/fixtures/agents/scripted.sh")
        .display()
        .to_string()
}

/// A flow with every kind of recorded answer: a JSON call, a retried call (the agent fails
/// `flaky`'s first attempt), map items over a script's output, an approval.
const FLOW: &str = r#"{"name": "ship", "args": {"topic": {"type": "string", "default": "x"}}, "phases": [
  {"id": "triage", "output": "json", "task": "Classify {args.topic}."},
  {"id": "flaky", "dependsOn": ["triage"], "task": "Try: {steps.triage.json.reason}"},
  {"id": "list", "type": "script", "run": "echo '[\"a\",\"b\"]'"},
  {"id": "items", "type": "map", "dependsOn": ["list"], "over": "{steps.list.json}", "task": "Item {item}"},
  {"id": "publish", "type": "approval", "dependsOn": ["flaky"], "task": "Publish it?"},
  {"id": "post", "dependsOn": ["publish", "items"], "task": "Post: {steps.flaky.output}"}
]}"#;

/// A scratch project (`.tfc/` marks its root) with the flow in `flows/ship.json`.
fn project(name: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join(".tfc")).unwrap();
    std::fs::create_dir_all(dir.join("flows")).unwrap();
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(dir.join("flows/ship.json"), FLOW).unwrap();
    dir
}

fn tfc(dir: &Path, args: &[&str]) -> Outcome {
    tfc_in(Some(dir), args, b"")
}

fn run_ids(dir: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(dir.join(".tfc/runs/ship"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

#[test]
fn a_recorded_run_becomes_a_test_that_passes() {
    let dir = project("test-from-run");
    let agent = agent();
    let run = tfc(
        &dir,
        &[
            "run",
            "flows/ship.json",
            "topic=rust",
            "--agent-cmd",
            &agent,
            "--approve",
            "publish",
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");

    // Printed: a whole test file naming the flow relative to the invocation directory.
    let printed = tfc(&dir, &["test", "--from-run", "last"]);
    assert_eq!(printed.code, 0, "{printed:?}");
    let file: serde_json::Value = serde_json::from_str(&printed.stdout).expect("a JSON file");
    assert_eq!(file["flow"], "flows/ship.json");
    let case = &file["tests"][0];
    assert!(
        case["name"].as_str().unwrap().starts_with("run ship-"),
        "{case}"
    );
    assert_eq!(case["args"]["topic"], "rust");
    assert_eq!(
        case["answers"]["flaky"],
        serde_json::json!([{"error": "HTTP 429 rate limited"}, "recovered on attempt 2"])
    );
    assert_eq!(case["answers"]["items#1"], "items: Item b");
    assert_eq!(
        case["answers"]["list"],
        serde_json::json!({"stdout": "[\"a\",\"b\"]\n", "exitCode": 0})
    );
    assert_eq!(case["approvals"]["publish"], "approve");
    assert_eq!(case["expect"]["status"], "completed");
    assert_eq!(case["expect"]["phases"]["items"]["status"], "done");
    assert_eq!(
        case["expect"]["output"],
        "post: Post: recovered on attempt 2"
    );
    assert_eq!(case["expect"]["outputPhase"], "post");

    // Written to a new file: the flow named relative to it.
    // The last run as a test named `approved` in tests/ship.test.json.
    let to_file = || {
        tfc(
            &dir,
            &[
                "test",
                "--from-run",
                "last",
                "-o",
                "tests/ship.test.json",
                "--name",
                "approved",
            ],
        )
    };
    let o = to_file();
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stderr
            .contains("test 'approved' written to tests/ship.test.json"),
        "{}",
        o.stderr
    );
    let text = std::fs::read_to_string(dir.join("tests/ship.test.json")).unwrap();
    assert!(text.contains("\"flow\": \"../flows/ship.json\""), "{text}");

    // A second run, rejected with a note, appended to the file (its comment kept).
    let rejected = tfc(
        &dir,
        &[
            "run",
            "flows/ship.json",
            "--agent-cmd",
            &agent,
            "--reject",
            "publish",
            "--reason",
            "not today",
        ],
    );
    assert_eq!(rejected.code, 4, "{rejected:?}");
    std::fs::write(
        dir.join("tests/ship.test.json"),
        format!("// recorded runs\n{text}"),
    )
    .unwrap();
    let o = to_file();
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stderr
            .contains("test 'approved (2)' appended to tests/ship.test.json"),
        "{}",
        o.stderr
    );
    let text = std::fs::read_to_string(dir.join("tests/ship.test.json")).unwrap();
    assert!(text.starts_with("// recorded runs\n{"), "{text}");
    assert!(
        text.contains("\"approvals\": {\"publish\": {\"reject\": \"not today\"}}"),
        "{text}"
    );

    // A paused run: its output names the run ("Resume with: tfc resume <runId> …"), which the
    // test's run is not; any run id matches there.
    let paused = tfc(&dir, &["run", "flows/ship.json", "--agent-cmd", &agent]);
    assert_eq!(paused.code, 5, "{paused:?}");
    let o = tfc(
        &dir,
        &[
            "test",
            "--from-run",
            "last",
            "-o",
            "tests/ship.test.json",
            "--name",
            "paused",
        ],
    );
    assert_eq!(o.code, 0, "{o:?}");
    let text = std::fs::read_to_string(dir.join("tests/ship.test.json")).unwrap();
    assert!(text.contains("\"regex\": \"\\\\ARun paused"), "{text}");

    // All pass, run for free.
    let t = tfc(&dir, &["test", "tests/ship.test.json"]);
    assert_eq!(t.code, 0, "{t:?}\n{text}");
    for line in [
        "test approved ... ok",
        "test approved (2) ... ok",
        "test paused ... ok",
    ] {
        assert!(t.stdout.contains(line), "{line}\n{}", t.stdout);
    }
    assert!(t.stdout.contains("3 passed; 0 failed"), "{}", t.stdout);
}

#[test]
fn from_run_refuses_a_file_of_another_flow_and_an_unknown_run() {
    let dir = project("test-from-run-refusals");
    std::fs::write(
        dir.join("flows/other.json"),
        r#"{"name": "other", "phases": [{"id": "a", "task": "A"}]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("flows/other.test.json"),
        r#"{"flow": "other.json", "tests": []}"#,
    )
    .unwrap();
    let none = tfc(&dir, &["test", "--from-run", "nope"]);
    assert_eq!(none.code, 2, "{none:?}");
    assert!(none.stderr.contains("no run found"), "{}", none.stderr);
    let run = tfc(
        &dir,
        &[
            "run",
            "flows/ship.json",
            "--agent-cmd",
            &agent(),
            "--approve",
            "publish",
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let o = tfc(
        &dir,
        &["test", "--from-run", "last", "-o", "flows/other.test.json"],
    );
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr.contains("tests the flow 'other'") && o.stderr.contains("of the flow 'ship'"),
        "{}",
        o.stderr
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("flows/other.test.json")).unwrap(),
        r#"{"flow": "other.json", "tests": []}"#
    );
}

const UPDATE_FLOW: &str = r#"{"name": "ship", "phases": [
  {"id": "draft", "task": "Write about \"tests\".\nBe brief."},
  {"id": "post", "dependsOn": ["draft"], "task": "Post: {steps.draft.output}"}
]}"#;

#[test]
fn update_rewrites_plain_string_matchers_and_nothing_else() {
    let dir = project("test-update");
    std::fs::write(dir.join("flows/ship.json"), UPDATE_FLOW).unwrap();
    let before = r#"{
  // snapshots of the ship flow
  "flow": "ship.json",
  "tests": [
    {"name": "snap",
     "answers": {"draft": "A \"quoted\"\ndraft \\ ok", "post": "posted"},
     "expect": {
       "output": "old output", /* a snapshot */
       "prompts": {"draft": "old prompt", "post": {"contains": "Post:"}},
       "phases": {"draft": {"output": "old draft"}, "post": {"output": {"contains": "post"}}}
     }}
  ]
}
"#;
    std::fs::write(dir.join("flows/ship.test.json"), before).unwrap();
    let failing = tfc(&dir, &["test", "flows"]);
    assert_eq!(failing.code, 1, "{failing:?}");

    let o = tfc(&dir, &["test", "flows", "--update"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stderr
            .contains("updated 3 matchers in flows/ship.test.json"),
        "{}",
        o.stderr
    );
    assert!(o.stdout.contains("test snap ... ok"), "{}", o.stdout);
    let after = std::fs::read_to_string(dir.join("flows/ship.test.json")).unwrap();
    let expected = before
        .replace("\"old output\"", "\"posted\"")
        .replace(
            "\"old prompt\"",
            "\"Write about \\\"tests\\\".\\nBe brief.\"",
        )
        .replace("\"old draft\"", "\"A \\\"quoted\\\"\\ndraft \\\\ ok\"");
    assert_eq!(after, expected);
    // Nothing left to update: the file stays as it is.
    let again = tfc(&dir, &["test", "flows", "--update"]);
    assert_eq!(again.code, 0, "{again:?}");
    assert!(!again.stderr.contains("updated"), "{}", again.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.join("flows/ship.test.json")).unwrap(),
        expected
    );
}

#[test]
fn keep_runs_writes_each_tests_run_to_the_store() {
    let dir = project("test-keep-runs");
    std::fs::write(dir.join("flows/ship.json"), UPDATE_FLOW).unwrap();
    std::fs::write(
        dir.join("flows/ship.test.json"),
        r#"{"flow": "ship.json", "tests": [
          {"name": "one", "answers": {"*": "x"}, "expect": {"status": "completed"}},
          {"name": "two", "answers": {"draft": {"error": "permission denied"}}, "expect": {"status": "failed"}}]}"#,
    )
    .unwrap();
    let plain = tfc(&dir, &["test"]);
    assert_eq!(plain.code, 0, "{plain:?}");
    assert!(!dir.join(".tfc/runs").exists(), "a test wrote a run");

    let kept = tfc(&dir, &["test", "--keep-runs"]);
    assert_eq!(kept.code, 0, "{kept:?}");
    let ids = run_ids(&dir);
    assert_eq!(ids.len(), 2, "{ids:?}");
    let runs = tfc(&dir, &["runs", "--format", "json"]);
    assert_eq!(runs.code, 0, "{runs:?}");
    let list: serde_json::Value = serde_json::from_str(&runs.stdout).unwrap();
    let mut statuses: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    statuses.sort();
    assert_eq!(statuses, ["completed", "failed"]);
    for id in &ids {
        let show = tfc(&dir, &["show", id, "draft", "--format", "json"]);
        assert_eq!(show.code, 0, "{show:?}");
        let phase: serde_json::Value = serde_json::from_str(&show.stdout).unwrap();
        assert_eq!(
            phase["prompts"][0]["prompt"],
            "Write about \"tests\".\nBe brief."
        );
        let report = tfc(&dir, &["report", id, "-o", "r.html"]);
        assert_eq!(report.code, 0, "{report:?}");
        assert!(dir.join("r.html").is_file());
        assert!(!dir.join(".tfc/runs/ship").join(id).join("lock").exists());
    }
}

#[test]
fn the_help_describes_from_run_update_and_keep_runs() {
    let h = common::tfc(&["test", "--help"]);
    assert_eq!(h.code, 0, "{h:?}");
    for text in [
        "--from-run <RUN>",
        "-o, --output <FILE>",
        "--name <TEXT>",
        "--update",
        "--keep-runs",
        "Snapshots: --update rewrites",
        "From a real run: `tfc test --from-run RUN -o FILE`",
    ] {
        assert!(h.stdout.contains(text), "{text}\n{}", h.stdout);
    }
    // --from-run makes a test; it runs none, so it takes no test paths.
    let o = common::tfc(&["test", "--from-run", "last", "examples"]);
    assert_eq!(o.code, 2, "{o:?}");
}
