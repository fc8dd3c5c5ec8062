//! `tfc test` end to end: the real binary on test files in scratch projects — passing,
//! failing (expected vs actual, a line diff), invalid flows and test files (exit 2), retries,
//! gates, approvals, the JSON and JUnit reports, `--filter`, `--jobs` and discovery.

mod common;

use common::{scratch, tfc, tfc_in};

const FLOW: &str = r#"{"name": "ship", "args": {"topic": {"type": "string", "default": "x"}}, "phases": [
  {"id": "draft", "task": "Write about {args.topic}.\nBe brief.", "retry": {"max": 0}},
  {"id": "check", "type": "gate", "dependsOn": ["draft"], "task": "Is this good? {steps.draft.output}"},
  {"id": "publish", "type": "approval", "dependsOn": ["check"], "task": "Publish it?"},
  {"id": "post", "dependsOn": ["publish"], "task": "Post: {steps.draft.output}"}
]}"#;

/// A scratch project (`.tfc/` marks its root) with `ship.json` and `ship.test.json`.
fn project(name: &str, tests: &str) -> std::path::PathBuf {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join(".tfc")).unwrap();
    std::fs::write(dir.join("ship.json"), FLOW).unwrap();
    std::fs::write(
        dir.join("ship.test.json"),
        format!(r#"{{"flow": "ship.json", "tests": [{tests}]}}"#),
    )
    .unwrap();
    dir
}

const BEHAVIOUR: &str = r#"
  {"name": "an overloaded model is retried, then the post goes out",
   "answers": {"draft": [{"error": "overloaded"}, {"error": "429 Too Many Requests"}, "A fine text."],
               "check": "VERDICT: PASS", "post": "posted"},
   "approvals": {"publish": "approve"},
   "expect": {"status": "completed", "output": "posted", "calls": 5,
              "phases": {"draft": {"attempts": 3}, "check": {"verdict": "pass"}}}},
  {"name": "a bad draft is blocked by the gate",
   "answers": {"draft": "bad", "check": "Too short.\nVERDICT: BLOCK"},
   "expect": {"status": "blocked", "skipped": ["publish", "post"],
              "phases": {"check": {"verdict": "block"}}}},
  {"name": "an undecided approval pauses the run",
   "answers": {"*": "VERDICT: PASS"},
   "expect": {"status": "paused", "notRun": ["publish", "post"],
              "output": {"contains": "awaiting approval: publish"}}}"#;

#[test]
fn retries_gates_and_approvals_behave_as_in_a_real_run() {
    let dir = project("test-cli-behaviour", BEHAVIOUR);
    let started = std::time::Instant::now();
    let o = tfc_in(Some(&dir), &["test"], b"");
    assert_eq!(o.code, 0, "{o:?}");
    assert!(o.stdout.contains("\nrunning 3 tests from "), "{}", o.stdout);
    for line in [
        "test an overloaded model is retried, then the post goes out ... ok",
        "test a bad draft is blocked by the gate ... ok",
        "test an undecided approval pauses the run ... ok",
    ] {
        assert!(o.stdout.contains(line), "{line}\n{}", o.stdout);
    }
    assert!(
        o.stdout
            .contains("test result: ok. 3 passed; 0 failed; 0 errors; finished in "),
        "{}",
        o.stdout
    );
    // Two backoffs of 2 s and 4 s: on the virtual clock they take no time.
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
}

#[test]
fn a_failing_test_shows_expected_and_actual_and_exits_1() {
    let dir = project(
        "test-cli-failing",
        r#"{"name": "the post says hello",
            "answers": {"*": "VERDICT: PASS", "post": "hello\nworld"},
            "approvals": {"publish": "approve"},
            "expect": {"output": "hello\nthere", "status": "completed",
                       "prompts": {"draft": {"contains": "Write about rust"}}}},
           {"name": "nothing answers the draft", "answers": {"check": "VERDICT: PASS"}}"#,
    );
    let o = tfc_in(Some(&dir), &["test", "ship.test.json"], b"");
    assert_eq!(o.code, 1, "{o:?}");
    let out = &o.stdout;
    assert!(out.contains("test the post says hello ... FAILED"), "{out}");
    assert!(
        out.contains("---- the post says hello (ship.test.json) ----\noutput\n    expected: \"hello\\nthere\"\n    actual:   \"hello\\nworld\"\n    diff (- expected, + actual):\n       hello\n      -there\n      +world\n"),
        "{out}"
    );
    assert!(
        out.contains("prompts.draft (draft)\n    expected: contains \"Write about rust\"\n    actual:   \"Write about x.\\nBe brief.\""),
        "{out}"
    );
    assert!(
        out.contains("no answer for node 'draft' (agent 'default'): Write about x."),
        "{out}"
    );
    assert!(
        out.contains("test result: FAILED. 0 passed; 2 failed; 0 errors;"),
        "{out}"
    );
}

#[test]
fn an_invalid_flow_is_an_error_for_every_test_and_exits_2() {
    let dir = project("test-cli-invalid-flow", r#"{"name": "a"}, {"name": "b"}"#);
    std::fs::write(
        dir.join("ship.json"),
        r#"{"phases": [{"id": "a", "task": "x", "dependsOn": ["nope"]}]}"#,
    )
    .unwrap();
    let o = tfc_in(Some(&dir), &["test"], b"");
    assert_eq!(o.code, 2, "{o:?}");
    assert!(o.stdout.contains("test a ... error"), "{}", o.stdout);
    assert!(o.stdout.contains("test b ... error"), "{}", o.stdout);
    assert!(o.stdout.contains("error: the flow"), "{}", o.stdout);
    assert!(o.stderr.contains("[E0103]"), "{}", o.stderr);
    assert!(
        o.stdout.contains("0 passed; 0 failed; 2 errors"),
        "{}",
        o.stdout
    );
}

#[test]
fn an_invalid_test_file_exits_2_with_its_diagnostics() {
    let dir = project(
        "test-cli-invalid-file",
        r#"{"name": "t", "answers": {"drafts": "x"}}"#,
    );
    let o = tfc_in(Some(&dir), &["test"], b"");
    assert_eq!(o.code, 2, "{o:?}");
    assert!(o.stderr.contains("[T0005]"), "{}", o.stderr);
    assert!(o.stderr.contains("did you mean 'draft'?"), "{}", o.stderr);
    // `tfc check` reports the same.
    let c = tfc_in(Some(&dir), &["check", "ship.test.json"], b"");
    assert_eq!(c.code, 1, "{c:?}");
    assert!(c.stderr.contains("[T0005]"), "{}", c.stderr);
}

#[test]
fn json_lines_filter_and_jobs() {
    let dir = project("test-cli-json", BEHAVIOUR);
    let o = tfc_in(Some(&dir), &["test", "--format", "json"], b"");
    assert_eq!(o.code, 0, "{o:?}");
    let lines: Vec<serde_json::Value> = o
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object a line"))
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[1]["name"], "a bad draft is blocked by the gate");
    assert_eq!(lines[1]["result"], "ok");
    assert_eq!(lines[1]["status"], "blocked");

    let o = tfc_in(Some(&dir), &["test", "--filter", "gate"], b"");
    assert_eq!(o.code, 0, "{o:?}");
    assert!(o.stdout.contains("running 1 test from"), "{}", o.stdout);
    assert!(o.stdout.contains("1 passed; 0 failed"), "{}", o.stdout);

    // The same report, but for its timing, whatever the number of jobs.
    let strip = |s: &str| {
        s.lines()
            .filter(|l| !l.starts_with("test result:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let one = tfc_in(Some(&dir), &["test", "--jobs", "1"], b"");
    let four = tfc_in(Some(&dir), &["test", "--jobs", "4"], b"");
    assert_eq!(strip(&one.stdout), strip(&four.stdout));
    let zero = tfc_in(Some(&dir), &["test", "--jobs", "0"], b"");
    assert_eq!(zero.code, 2, "{zero:?}");
}

#[test]
fn junit_xml_is_well_formed() {
    let dir = project(
        "test-cli-junit",
        r#"{"name": "passes <&>", "answers": {"*": "VERDICT: PASS"}, "expect": {"status": "paused"}},
           {"name": "fails \"quoted\"", "answers": {"*": "VERDICT: PASS"}, "expect": {"status": "completed", "output": "a < b"}}"#,
    );
    let o = tfc_in(Some(&dir), &["test", "--junit", "report.xml"], b"");
    assert_eq!(o.code, 1, "{o:?}");
    let xml = std::fs::read_to_string(dir.join("report.xml")).expect("report.xml");
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "));
    assert!(
        xml.contains("<testcase name=\"passes &lt;&amp;&gt;\" classname=\"ship.test.json\""),
        "{xml}"
    );
    assert!(xml.contains("<failure message="), "{xml}");
    // A real JUnit consumer (junitparser, as CI systems' report plugins read it): suites,
    // cases, counts and each result's kind.
    let Some(python) = std::env::var_os("TFC_JUNIT_PYTHON") else {
        common::skip("TFC_JUNIT_PYTHON (a Python with junitparser) is not set");
        return;
    };
    let script = "import sys\n\
        from junitparser import JUnitXml\n\
        xml = JUnitXml.fromfile(sys.argv[1])\n\
        for suite in xml:\n\
        \x20   print(suite.name, suite.tests, suite.failures, suite.errors)\n\
        \x20   for case in suite:\n\
        \x20       kinds = [type(r).__name__ for r in case.result]\n\
        \x20       msg = case.result[0].message if case.result else ''\n\
        \x20       print(repr(case.name), case.classname, kinds, case.is_passed, repr(msg[:40]))\n";
    let out = std::process::Command::new(python)
        .args(["-c", script])
        .arg(dir.join("report.xml"))
        .output()
        .expect("run the JUnit consumer");
    assert!(
        out.status.success(),
        "junitparser could not read the JUnit XML: {}\n{xml}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = seen.lines().collect();
    assert_eq!(lines[0], "ship.test.json 2 1 0", "{seen}");
    assert_eq!(lines[1], "'passes <&>' ship.test.json [] True ''", "{seen}");
    assert!(
        lines[2].starts_with("'fails \"quoted\"' ship.test.json ['Failure'] False '"),
        "{seen}"
    );
}

#[test]
fn discovery_skips_build_and_vcs_directories() {
    let dir = project("test-cli-discovery", BEHAVIOUR);
    for skipped in ["target", "node_modules", ".git", ".tfc"] {
        let d = dir.join(skipped);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("broken.test.json"), "{ not json").unwrap();
    }
    std::fs::create_dir_all(dir.join("nested")).unwrap();
    std::fs::write(dir.join("nested/ship.json"), FLOW).unwrap();
    std::fs::write(
        dir.join("nested/more.test.json"),
        r#"{"flow": "ship.json", "tests": [{"name": "nested", "answers": {"*": "VERDICT: BLOCK"}, "expect": {"status": "blocked"}}]}"#,
    )
    .unwrap();
    let o = tfc_in(Some(&dir.join("nested")), &["test"], b"");
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stdout.contains("4 passed; 0 failed; 0 errors"),
        "{}",
        o.stdout
    );
    let none = tfc_in(Some(&dir.join("target")), &["test", "nothing-here"], b"");
    assert_eq!(none.code, 2, "{none:?}");
}

/// Every bundled example flow has its tests, and they all pass: `tfc test examples/` exits 0.
#[test]
fn the_bundled_example_tests_pass() {
    let o = tfc(&["test", "examples/"]);
    assert_eq!(o.code, 0, "{o:?}");
    let files = [
        ("examples/changelog/flow.test.json", 3),
        ("examples/conditional-review.test.json", 3),
        ("examples/gated-rework.test.json", 3),
        ("examples/map-reduce-audit.test.json", 5),
        ("examples/release-check.test.json", 5),
        ("examples/script-fallback.test.json", 6),
    ];
    for (file, n) in files {
        assert!(
            o.stdout
                .contains(&format!("running {n} tests from {file}\n")),
            "{file}: {}",
            o.stdout
        );
        let c = tfc(&["check", file]);
        assert_eq!(c.code, 0, "{c:?}");
        assert!(c.stderr.contains("0 errors, 0 warnings"), "{}", c.stderr);
    }
    let total: usize = files.iter().map(|(_, n)| n).sum();
    assert!(
        o.stdout
            .contains(&format!("{total} passed; 0 failed; 0 errors")),
        "{}",
        o.stdout
    );
    // A flow added to examples/ comes with its tests: `NAME.json` beside `NAME.test.json`.
    let mut flows = Vec::new();
    let mut dirs = vec![common::root().join("examples")];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                dirs.push(path);
            } else if name.ends_with(".json")
                && !name.ends_with(".test.json")
                && std::fs::read_to_string(&path)
                    .unwrap()
                    .contains("\"phases\"")
            {
                flows.push(path);
            }
        }
    }
    assert!(flows.len() >= files.len(), "{flows:?}");
    for flow in flows {
        let test = flow.with_extension("test.json");
        assert!(
            test.is_file(),
            "{} has no {}",
            flow.display(),
            test.display()
        );
    }
}

#[test]
fn missing_stub_answers_the_unanswered_calls_like_a_dry_run() {
    let dir = project(
        "test-cli-missing",
        r#"{"name": "no answers at all", "expect": {"status": "paused",
            "phases": {"draft": {"output": "[dry-run] draft"}, "check": {"verdict": "pass"}}}}"#,
    );
    let stubbed = tfc_in(Some(&dir), &["test", "--missing", "stub"], b"");
    assert_eq!(stubbed.code, 0, "{stubbed:?}");
    let failing = tfc_in(Some(&dir), &["test"], b"");
    assert_eq!(failing.code, 1, "{failing:?}");
    assert!(
        failing.stdout.contains("no answer for node 'draft'"),
        "{}",
        failing.stdout
    );
}
