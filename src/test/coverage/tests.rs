//! Coverage: the outcomes a flow has, the ones a run reaches, and the merged report.

use std::path::Path;

use super::*;
use crate::check::{CheckOptions, check_document};
use crate::flow::LowerOptions;
use crate::source::Source;
use crate::test::{TestCase, TestOptions, run_checked_covering};

/// Every kind of outcome once (two for a join and a race).
const FLOW: &str = r#"{"name": "cov", "phases": [
  {"id": "triage", "task": "Triage", "retry": {"max": 1}},
  {"id": "deep", "task": "Deep", "dependsOn": ["triage"], "when": "{steps.triage.output} == high"},
  {"id": "quick", "task": "Quick", "dependsOn": ["triage"], "optional": true},
  {"id": "merge", "task": "Merge", "dependsOn": ["deep", "quick"], "join": "any"},
  {"id": "check", "type": "gate", "dependsOn": ["merge"], "task": "Good?",
   "onBlock": "retry", "retry": {"max": 2}},
  {"id": "fix", "type": "loop", "dependsOn": ["check"], "task": "Fix", "until": "{steps.fix.output} == DONE",
   "maxIterations": 2, "convergence": false},
  {"id": "pick", "type": "race", "dependsOn": ["fix"], "branches": [{"task": "A"}, {"task": "B"}]},
  {"id": "publish", "type": "approval", "dependsOn": ["pick"]}
]}"#;

fn flow() -> (Flow, Source) {
    let checked = check_document(FLOW, &LowerOptions::default(), &CheckOptions::default());
    assert!(!checked.has_errors(), "{:#?}", checked.diagnostics);
    (
        checked.flow.expect("a flow"),
        Source::new("cov.json", FLOW.to_owned()),
    )
}

/// The ids of the outcomes one test reaches.
fn reached(case: &str) -> Vec<String> {
    let (flow, source) = flow();
    let case = TestCase::parse(case).unwrap_or_else(|d| panic!("bad case: {d:#?}"));
    let r = run_checked_covering(&flow, &source, &case, Path::new("."), false, true);
    assert_eq!(
        r.outcome,
        crate::test::Outcome::Passed,
        "{}",
        crate::test::report::details(&r)
    );
    let points = outcomes(&flow);
    for h in &r.hits {
        assert!(
            points.iter().any(|p| p.hit == *h),
            "{h:?} is no outcome of the flow"
        );
    }
    // In flow order.
    points
        .into_iter()
        .filter(|p| r.hits.contains(&p.hit))
        .map(|p| p.id)
        .collect()
}

#[test]
fn every_outcome_is_enumerated_with_the_field_that_makes_it() {
    let (flow, source) = flow();
    let points = outcomes(&flow);
    let ids: Vec<&str> = points.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "triage.retry.used",
            "deep.when.true",
            "deep.when.false",
            "quick.optional.failed",
            "merge.join.deep",
            "merge.join.quick",
            "check.gate.pass",
            "check.gate.block",
            "check.onBlock.1",
            "check.onBlock.2",
            "check.retry.used",
            "fix.loop.until",
            "fix.loop.maxIterations",
            "pick.race.0",
            "pick.race.1",
            "publish.approval.approved",
            "publish.approval.rejected",
            "publish.approval.pending",
        ]
    );
    let text = |id: &str| {
        let p = points.iter().find(|p| p.id == id).expect("listed");
        &source.text[p.span.range()]
    };
    assert_eq!(text("triage.retry.used"), "\"retry\"");
    assert_eq!(text("deep.when.false"), "\"when\"");
    assert_eq!(text("quick.optional.failed"), "\"optional\"");
    assert_eq!(text("merge.join.quick"), "\"quick\"");
    assert_eq!(text("check.gate.block"), "\"check\"");
    assert_eq!(text("check.onBlock.2"), "\"onBlock\"");
    assert_eq!(text("fix.loop.until"), "\"until\"");
    assert_eq!(text("fix.loop.maxIterations"), "\"maxIterations\"");
    assert_eq!(text("pick.race.1"), "{\"task\": \"B\"}");
    assert_eq!(text("publish.approval.pending"), "\"publish\"");
    let labels: Vec<&str> = points.iter().map(|p| p.label.as_str()).collect();
    assert!(labels.contains(&"join any reached by deep"), "{labels:?}");
    assert!(labels.contains(&"race won by branch 1"), "{labels:?}");
}

#[test]
fn a_flow_without_decisions_has_no_outcomes_and_defaults_count_once() {
    let checked = check_document(
        r#"{"name": "plain", "phases": [{"id": "a", "task": "A", "retry": {"max": 0}},
             {"id": "g", "type": "gate", "dependsOn": ["a"], "task": "ok?", "onBlock": "retry"},
             {"id": "s", "type": "script", "dependsOn": ["g"], "run": ["true"], "retry": {"max": 3}}]}"#,
        &LowerOptions::default(),
        &CheckOptions::default(),
    );
    let flow = checked.flow.expect("a flow");
    let ids: Vec<String> = outcomes(&flow).into_iter().map(|p| p.id).collect();
    // No retry outcome for `retry.max: 0` (only the transient layer) nor for a script; one
    // onBlock round by default.
    assert_eq!(ids, ["g.gate.pass", "g.gate.block", "g.onBlock.1"]);
}

#[test]
fn the_happy_path_reaches_its_own_outcomes() {
    let hits = reached(
        r#"{"name": "high", "answers": {"triage": "high", "check": "VERDICT: PASS",
              "fix": "DONE", "*": "ok"},
            "approvals": {"publish": "approve"},
            "expect": {"status": "completed"}}"#,
    );
    assert_eq!(
        hits,
        [
            "deep.when.true",
            "merge.join.deep",
            "check.gate.pass",
            "fix.loop.until",
            "pick.race.0",
            "publish.approval.approved",
        ]
    );
}

#[test]
fn the_other_ways_are_recorded_from_the_machine() {
    let hits = reached(
        r#"{"name": "low", "answers": {
              "triage": [{"error": "overloaded"}, "low"],
              "quick": {"error": "permission denied"},
              "merge": "m",
              "check": ["VERDICT: BLOCK", "VERDICT: BLOCK", "VERDICT: PASS"],
              "fix": "not yet",
              "pick#0": {"error": "permission denied"}, "pick#1": "b"},
            "approvals": {"publish": {"reject": "no"}},
            "expect": {"status": "blocked", "skipped": ["deep"], "failed": ["quick"]}}"#,
    );
    // `quick` failed, but it is optional: it satisfied the join.
    assert_eq!(
        hits,
        [
            "triage.retry.used",
            "deep.when.false",
            "quick.optional.failed",
            "merge.join.quick",
            "check.gate.pass",
            "check.gate.block",
            "check.onBlock.1",
            "check.onBlock.2",
            "fix.loop.maxIterations",
            "pick.race.1",
            "publish.approval.rejected",
        ]
    );
}

/// A directory with `cov.json` and two test files naming it.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temp dir");
    std::fs::write(dir.path().join("cov.json"), FLOW).expect("write the flow");
    std::fs::write(
        dir.path().join("a.test.json"),
        r#"{"flow": "cov.json", "tests": [
             {"name": "high", "answers": {"triage": "high", "check": "VERDICT: PASS", "fix": "DONE", "*": "ok"},
              "approvals": {"publish": "approve"}}]}"#,
    )
    .expect("write a test file");
    std::fs::write(
        dir.path().join("b.test.json"),
        r#"{"flow": "./cov.json", "tests": [
             {"name": "paused", "answers": {"triage": "high", "check": "VERDICT: PASS", "fix": "DONE", "*": "ok"}},
             {"name": "blocked", "answers": {"*": "VERDICT: BLOCK"}}]}"#,
    )
    .expect("write a test file");
    dir
}

fn run_project(dir: &Path, coverage: bool) -> Vec<crate::test::FileReport> {
    let files = ["a.test.json", "b.test.json"]
        .iter()
        .map(|f| crate::test::check_file(&dir.join(f), dir))
        .collect();
    let opts = TestOptions {
        cwd: dir.to_path_buf(),
        jobs: 2,
        coverage,
        ..TestOptions::default()
    };
    crate::test::run_files(files, &opts)
}

#[test]
fn the_tests_of_every_file_naming_a_flow_merge() {
    let dir = project();
    let reports = run_project(dir.path(), true);
    let all = tally(&reports);
    assert_eq!(all.len(), 1, "one flow: {all:#?}");
    let c = &all[0];
    assert_eq!(c.tests, 3);
    let row = |id: &str| {
        c.rows
            .iter()
            .find(|r| r.point.id == id)
            .map(|r| r.tests.clone())
            .expect("listed")
    };
    assert_eq!(row("deep.when.true"), ["high", "paused"]);
    assert_eq!(row("publish.approval.approved"), ["high"]);
    assert_eq!(row("publish.approval.pending"), ["paused"]);
    assert_eq!(row("check.onBlock.1"), ["blocked"]);
    assert_eq!(row("deep.when.false"), ["blocked"]);
    assert!(row("publish.approval.rejected").is_empty());
    let reached: Vec<&str> = c
        .rows
        .iter()
        .filter(|r| !r.tests.is_empty())
        .map(|r| r.point.id.as_str())
        .collect();
    assert_eq!(
        reached,
        [
            "deep.when.true",
            "deep.when.false",
            "merge.join.deep",
            "merge.join.quick",
            "check.gate.pass",
            "check.gate.block",
            "check.onBlock.1",
            "check.onBlock.2",
            "fix.loop.until",
            "pick.race.0",
            "publish.approval.approved",
            "publish.approval.pending",
        ]
    );
    assert_eq!(c.count_line(), "outcomes 12/18 (67%)");
    // Each unreached outcome is a warning at its place in the flow; none is an error.
    let d = c.unreached();
    assert_eq!(d.len(), 6);
    assert!(
        d.iter()
            .all(|d| !d.is_error() && d.code.as_str() == "T0900")
    );
    let first = &d[0];
    assert_eq!(
        &c.source.text[first.span.expect("placed").range()],
        "\"retry\""
    );
    assert!(
        first.message.contains("'triage.retry.used'"),
        "{}",
        first.message
    );
    // The JSON object.
    let v = c.to_value().to_json();
    assert!(v.contains(r#""reached":12,"total":18"#), "{v}");
    assert!(
        v.contains(r#""id":"publish.approval.pending","kind":"approval","phase":"publish","label":"approval pending","span":{"start":"#),
        "{v}"
    );
    assert!(v.contains(r#""hits":["paused"]"#), "{v}");
    // The table.
    let t = text(&all);
    assert!(t.contains("coverage of "), "{t}");
    assert!(t.contains("  deep: when true "), "{t}");
    assert!(t.contains("  high, paused\n"), "{t}");
    assert!(t.contains("  not reached\n"), "{t}");
    assert!(t.ends_with("outcomes 12/18 (67%)\n"), "{t}");
}

#[test]
fn without_coverage_nothing_is_recorded() {
    let dir = project();
    let reports = run_project(dir.path(), false);
    assert!(
        reports
            .iter()
            .flat_map(|r| &r.tests)
            .all(|t| t.hits.is_empty())
    );
    let all = tally(&reports);
    assert_eq!(all[0].reached(), 0);
}

#[test]
fn the_percentage_is_never_rounded_up_to_complete() {
    let (flow, source) = flow();
    let mut c = Coverage {
        source,
        tests: 1,
        rows: outcomes(&flow)
            .into_iter()
            .map(|point| Row {
                point,
                tests: vec!["t".into()],
            })
            .collect(),
    };
    assert_eq!(c.count_line(), "outcomes 18/18 (100%)");
    c.rows[0].tests.clear();
    assert_eq!(c.count_line(), "outcomes 17/18 (94%)");
    let many = c.rows[0].clone();
    c.rows = std::iter::repeat_n(
        Row {
            tests: vec!["t".into()],
            ..many.clone()
        },
        999,
    )
    .chain([many])
    .collect();
    assert_eq!(c.count_line(), "outcomes 999/1000 (99%)");
    c.rows.clear();
    assert_eq!(c.count_line(), "outcomes 0/0 (nothing to cover)");
}

/// A flow phase with an inline object `def`: its phases count, named by node path.
const NESTED: &str = r#"{"name": "outer", "phases": [
  {"id": "a", "task": "A"},
  {"id": "sub", "type": "flow", "dependsOn": ["a"], "def": {"phases": [
    {"id": "rate", "task": "Rate", "retry": {"max": 1}},
    {"id": "deep", "task": "Deep", "dependsOn": ["rate"], "when": "{steps.rate.output} == high"},
    {"id": "ok", "type": "gate", "dependsOn": ["rate"], "task": "ok?"}]}},
  {"id": "b", "task": "B {steps.sub.output}", "dependsOn": ["sub"], "when": "{steps.a.output} == go"}
]}"#;

#[test]
fn the_phases_of_an_inline_def_count_by_node_path() {
    let checked = check_document(NESTED, &LowerOptions::default(), &CheckOptions::default());
    assert!(!checked.has_errors(), "{:#?}", checked.diagnostics);
    let flow = checked.flow.expect("a flow");
    let points = outcomes(&flow);
    let ids: Vec<&str> = points.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "sub/rate.retry.used",
            "sub/deep.when.true",
            "sub/deep.when.false",
            "sub/ok.gate.pass",
            "sub/ok.gate.block",
            "b.when.true",
            "b.when.false",
        ]
    );
    // Spans are in the outer file.
    let inner_when = &points[1];
    assert_eq!(&NESTED[inner_when.span.range()], "\"when\"");
    assert!(inner_when.span.start < points[5].span.start);
    let source = Source::new("outer.json", NESTED.to_owned());
    let case = TestCase::parse(
        r#"{"name": "nested", "answers": {"sub/rate": [{"error": "overloaded"}, "high"],
              "sub/ok": "VERDICT: PASS", "a": "stop", "*": "x"},
            "expect": {"status": "completed"}}"#,
    )
    .expect("a case");
    let r = run_checked_covering(&flow, &source, &case, Path::new("."), false, true);
    assert_eq!(
        r.outcome,
        crate::test::Outcome::Passed,
        "{}",
        crate::test::report::details(&r)
    );
    let reached: Vec<&str> = points
        .iter()
        .filter(|p| r.hits.contains(&p.hit))
        .map(|p| p.id.as_str())
        .collect();
    assert_eq!(
        reached,
        [
            "sub/rate.retry.used",
            "sub/deep.when.true",
            "sub/ok.gate.pass",
            "b.when.false"
        ]
    );
    assert_eq!(r.hits.len(), reached.len(), "{:?}", r.hits);
}

#[test]
fn a_join_is_reached_even_when_its_condition_then_skips_the_phase() {
    let text = r#"{"name": "j", "phases": [
      {"id": "a", "task": "A"},
      {"id": "b", "task": "B"},
      {"id": "j", "task": "J", "dependsOn": ["a", "b"], "join": "any", "when": "{steps.a.output} == go"}]}"#;
    let checked = check_document(text, &LowerOptions::default(), &CheckOptions::default());
    let flow = checked.flow.expect("a flow");
    let case = TestCase::parse(
        r#"{"name": "stop", "answers": {"*": "stop"}, "expect": {"skipped": ["j"]}}"#,
    )
    .expect("a case");
    let source = Source::new("j.json", text.to_owned());
    let r = run_checked_covering(&flow, &source, &case, Path::new("."), false, true);
    assert_eq!(r.outcome, crate::test::Outcome::Passed);
    let reached: Vec<String> = outcomes(&flow)
        .into_iter()
        .filter(|p| r.hits.contains(&p.hit))
        .map(|p| p.id)
        .collect();
    assert_eq!(reached, ["j.when.false", "j.join.a"]);
}

#[test]
fn at_most_fifty_unreached_outcomes_are_drawn_then_a_count() {
    let phases: Vec<String> = (0..30)
        .map(|i| format!(r#"{{"id": "p{i}", "task": "T", "when": "{{args.x}} == {i}"}}"#))
        .collect();
    let text = format!(
        r#"{{"name": "many", "args": {{"x": {{"default": "1"}}}}, "phases": [{}]}}"#,
        phases.join(",")
    );
    let checked = check_document(&text, &LowerOptions::default(), &CheckOptions::default());
    let flow = checked.flow.expect("a flow");
    let c = Coverage {
        source: Source::new("many.json", text.clone()),
        tests: 0,
        rows: outcomes(&flow)
            .into_iter()
            .map(|point| Row {
                point,
                tests: Vec::new(),
            })
            .collect(),
    };
    assert_eq!(c.unreached().len(), 60);
    let drawn = c.render_unreached(false);
    assert_eq!(drawn.matches("[T0900]").count(), 50, "{drawn}");
    assert!(
        drawn.ends_with("… and 10 more unreached outcomes of many.json (not shown; `tfc test --coverage --format json` lists them all)\n"),
        "{drawn}"
    );
    assert_eq!(c.count_line(), "outcomes 0/60 (0%)");
}
