//! `tfc test --coverage` end to end: the real binary on `tests/test_coverage/review.json` (a
//! retry, a `when`, an optional phase, a join "any", a gate, a loop, a race and an approval)
//! and its three tests. The text report is compared with `review.stdout` (the timing masked)
//! and `review.stderr` (the unreached outcomes, drawn as diagnostics);
//! `TFC_BLESS=1 cargo test --test test_coverage` rewrites them. Never edit a golden by hand.

mod common;

use common::{root, scratch, tfc, tfc_in};
use tfc::diag::Code;

const DIR: &str = "tests/test_coverage";

/// `finished in 0.02s` → `finished in <time>`.
fn mask_time(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("finished in ") {
            Some(k) => format!("{}finished in <time>", &l[..k]),
            None => l.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[test]
fn the_text_report_matches_its_golden() {
    let o = tfc(&["test", "--coverage", "--color", "never", DIR]);
    // Unreached outcomes inform; every test passed, so the exit is 0.
    assert_eq!(o.code, 0, "{o:?}");
    let dir = root().join(DIR);
    let problems: Vec<String> = [
        common::golden::compare(&dir.join("review.stdout"), &mask_time(&o.stdout)),
        common::golden::compare(&dir.join("review.stderr"), &o.stderr),
    ]
    .into_iter()
    .flatten()
    .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    assert!(o.stdout.ends_with("outcomes 13/15 (87%)\n"), "{}", o.stdout);
}

/// Each coverage code (T09xx) is shown by the golden above (`tests/test_check_golden.rs`
/// leaves them to this file).
#[test]
fn every_coverage_code_has_its_golden() {
    if common::golden::bless() {
        return; // the golden is being rewritten right now
    }
    let stderr =
        std::fs::read_to_string(root().join(DIR).join("review.stderr")).unwrap_or_default();
    let missing: Vec<&str> = Code::ALL
        .iter()
        .map(|c| c.as_str())
        .filter(|c| c.starts_with("T09") && !stderr.contains(&format!("[{c}]")))
        .collect();
    assert!(missing.is_empty(), "codes without a golden: {missing:?}");
}

#[test]
fn the_json_report_names_each_outcome_its_place_and_its_tests() {
    let o = tfc(&["test", "--coverage", "--format", "json", DIR]);
    assert_eq!(o.code, 0, "{o:?}");
    let lines: Vec<serde_json::Value> = o
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    // Three tests, then one coverage object for the flow.
    assert_eq!(lines.len(), 4, "{}", o.stdout);
    assert!(lines[..3].iter().all(|l| l["result"] == "ok"));
    let c = &lines[3]["coverage"];
    assert_eq!(c["flow"], "tests/test_coverage/review.json");
    assert_eq!(
        (
            c["tests"].as_u64(),
            c["reached"].as_u64(),
            c["total"].as_u64()
        ),
        (Some(3), Some(13), Some(15))
    );
    let outcomes = c["outcomes"].as_array().expect("outcomes");
    let (high, safe, blocked) = (
        "a risky change is reviewed in depth and published",
        "a safe change waits for its approval",
        "an incomplete review is blocked",
    );
    let expected: &[(&str, &str, &[&str])] = &[
        ("triage.retry.used", "retry", &[]),
        ("deep.when.true", "when", &[high, blocked]),
        ("deep.when.false", "when", &[safe]),
        ("lint.optional.failed", "optional", &[safe]),
        ("merge.join.deep", "join", &[high, blocked]),
        ("merge.join.lint", "join", &[safe]),
        ("check.gate.pass", "gate", &[high, safe]),
        ("check.gate.block", "gate", &[blocked]),
        ("fix.loop.until", "loop", &[high]),
        ("fix.loop.maxIterations", "loop", &[safe]),
        ("pick.race.0", "race", &[high]),
        ("pick.race.1", "race", &[safe]),
        ("publish.approval.approved", "approval", &[high]),
        ("publish.approval.rejected", "approval", &[]),
        ("publish.approval.pending", "approval", &[safe]),
    ];
    let actual: Vec<(String, String, Vec<String>)> = outcomes
        .iter()
        .map(|o| {
            (
                o["id"].as_str().unwrap_or("").to_owned(),
                o["kind"].as_str().unwrap_or("").to_owned(),
                o["hits"]
                    .as_array()
                    .map(|h| {
                        h.iter()
                            .filter_map(|t| t.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default(),
            )
        })
        .collect();
    let expected: Vec<(String, String, Vec<String>)> = expected
        .iter()
        .map(|(id, kind, hits)| {
            (
                id.to_string(),
                kind.to_string(),
                hits.iter().map(|h| h.to_string()).collect(),
            )
        })
        .collect();
    assert_eq!(actual, expected);
    // Spans point at the field that makes the outcome: the second branch of the race.
    let race = &outcomes[11];
    assert_eq!(race["label"], "race won by branch 1");
    assert_eq!(
        (
            race["span"]["line"].as_u64(),
            race["span"]["column"].as_u64()
        ),
        (Some(20), Some(106))
    );
    let text = std::fs::read_to_string(root().join(DIR).join("review.json")).expect("the flow");
    let (start, end) = (
        race["span"]["start"].as_u64().unwrap_or(0) as usize,
        race["span"]["end"].as_u64().unwrap_or(0) as usize,
    );
    assert_eq!(&text[start..end], r#"{ "task": "Write a short summary." }"#);
}

#[test]
fn coverage_never_changes_the_exit_code_and_files_of_one_flow_merge() {
    let dir = scratch("test-coverage-exit");
    std::fs::create_dir_all(dir.join(".tfc")).unwrap();
    std::fs::create_dir_all(dir.join("more")).unwrap();
    std::fs::write(
        dir.join("flow.json"),
        r#"{"name": "f", "phases": [
             {"id": "a", "task": "A"},
             {"id": "b", "task": "B", "dependsOn": ["a"], "when": "{steps.a.output} == yes"}]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("f.test.json"),
        r#"{"flow": "flow.json", "tests": [{"name": "yes", "answers": {"*": "yes"}}]}"#,
    )
    .unwrap();
    // Another file, elsewhere, naming the same flow: its test counts for the same flow.
    std::fs::write(
        dir.join("more/g.test.json"),
        r#"{"flow": "../flow.json", "tests": [
             {"name": "no, and a wrong expectation", "answers": {"*": "no"},
              "expect": {"status": "failed"}}]}"#,
    )
    .unwrap();
    for format in ["text", "json"] {
        let plain = tfc_in(Some(&dir), &["test", "--format", format], b"");
        let covered = tfc_in(Some(&dir), &["test", "--coverage", "--format", format], b"");
        assert_eq!(plain.code, 1, "{plain:?}");
        assert_eq!(covered.code, 1, "{covered:?}");
    }
    let o = tfc_in(Some(&dir), &["test", "--coverage"], b"");
    assert_eq!(o.stdout.matches("coverage of ").count(), 1, "{}", o.stdout);
    assert!(
        o.stdout.contains("coverage of flow.json (2 tests)"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("b: when true   yes\n"), "{}", o.stdout);
    assert!(
        o.stdout
            .contains("b: when false  no, and a wrong expectation\n"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.ends_with("outcomes 2/2 (100%)\n"), "{}", o.stdout);
    assert!(!o.stderr.contains("T0900"), "{}", o.stderr);
    // Without --coverage, no coverage.
    let plain = tfc_in(Some(&dir), &["test"], b"");
    assert!(!plain.stdout.contains("outcomes "), "{}", plain.stdout);
}
