//! `tfc test --property N [--seed S]` end to end: the real binary finds the planted bug (a
//! flow whose only defect is `{steps.triage.json.files.0}` on an array its contract lets be
//! empty), prints the seed and a shrunk, ready-to-paste test case, repeats itself with
//! `--seed`; the fixed flow (`minItems: 1`) passes; the file's `invariants` hold in every run.

mod common;

use common::{scratch, tfc_in};
use tfc::value::{Value, parse_json};

/// Twelve phases, all correct but one read: `fix` reads the first of `files`, which may be
/// empty.
const PLANTED: &str = r#"{"name": "review", "args": {"focus": {"type": "enum", "values": ["speed", "safety"]}},
 "phases": [
  {"id": "triage", "task": "Triage for {args.focus}.", "output": "json",
   "expect": {"type": "object", "required": ["severity", "files"],
              "properties": {"severity": {"enum": ["low", "medium", "high"]},
                             "files": {"type": "array", "items": {"type": "string"}},
                             "note": {"type": "string"}}}},
  {"id": "scope", "task": "Scope {steps.triage.json.severity}: {steps.triage.json.note}", "dependsOn": ["triage"]},
  {"id": "reviews", "type": "map", "over": "{steps.triage.json.files}", "task": "Review {item}.", "dependsOn": ["triage"]},
  {"id": "risk", "task": "Risk of {steps.scope.output}", "output": "json", "dependsOn": ["scope"],
   "expect": {"type": "object", "required": ["level"], "properties": {"level": {"type": "integer"}}}},
  {"id": "deep", "task": "Deep review at {steps.risk.json.level}.", "dependsOn": ["risk"],
   "when": "{steps.triage.json.severity} == high"},
  {"id": "quick", "task": "Quick review.", "dependsOn": ["risk"],
   "when": "{steps.triage.json.severity} != high"},
  {"id": "merge", "task": "Merge {steps.deep.output}{steps.quick.output}", "dependsOn": ["deep", "quick"], "join": "any"},
  {"id": "fix", "task": "Fix {steps.triage.json.files.0} given {steps.merge.output}.", "dependsOn": ["merge", "reviews"]},
  {"id": "polish", "type": "loop", "task": "Polish {steps.fix.output}.", "maxIterations": 2,
   "until": "{loop.lastOutput} contains DONE", "dependsOn": ["fix"]},
  {"id": "check", "type": "gate", "task": "Good? {steps.polish.output}", "dependsOn": ["polish"]},
  {"id": "ok", "type": "approval", "task": "Ship?", "dependsOn": ["check"]},
  {"id": "summary", "task": "Summarise {steps.fix.output}.", "dependsOn": ["ok"]}
 ]}"#;

fn fixed() -> String {
    PLANTED.replace(
        r#""files": {"type": "array", "items""#,
        r#""files": {"type": "array", "minItems": 1, "items""#,
    )
}

/// A scratch project holding `review.json` (`flow`) and `review.test.json` (`file`).
fn project(name: &str, flow: &str, file: &str) -> std::path::PathBuf {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join(".tfc")).unwrap();
    std::fs::write(dir.join("review.json"), flow).unwrap();
    std::fs::write(dir.join("review.test.json"), file).unwrap();
    dir
}

const NO_TESTS: &str = r#"{"flow": "review.json", "tests": []}"#;

/// The output without its timing.
fn untimed(s: &str) -> String {
    s.lines()
        .filter(|l| !l.contains("finished in"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_planted_bug_is_found_shrunk_and_repeated_by_its_seed() {
    let dir = project("property-planted", PLANTED, NO_TESTS);
    let o = tfc_in(Some(&dir), &["test", "--property", "200"], b"");
    assert_eq!(o.code, 1, "{o:?}");
    let out = &o.stdout;
    assert!(
        out.contains("violated: every read whose type excludes `missing` must resolve: {steps.triage.json.files.0} in the task of phase 'fix' did not (its type is string); the array may be empty: give its contract `minItems: 1`"),
        "{out}"
    );
    assert!(out.contains("\"files\": []"), "shrunk to no files: {out}");
    assert!(out.contains("property result: FAILED. 0 passed; 1 failed; 0 errors; seed "));
    // The seed is printed, and repeats the same report byte for byte (timing aside).
    let repeat = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("repeat with: tfc test "))
        .expect("a repeat line");
    let seed = repeat.rsplit(' ').next().unwrap();
    assert!(seed.parse::<u64>().is_ok(), "{repeat}");
    let again = tfc_in(
        Some(&dir),
        &["test", "--property", "200", "--seed", seed],
        b"",
    );
    assert_eq!(again.code, 1);
    assert_eq!(untimed(&again.stdout), untimed(out));
}

#[test]
fn the_shrunk_case_pastes_into_the_file_as_a_failing_test() {
    let dir = project("property-paste", PLANTED, NO_TESTS);
    let o = tfc_in(
        Some(&dir),
        &[
            "test",
            "--property",
            "300",
            "--seed",
            "7",
            "--format",
            "json",
        ],
        b"",
    );
    assert_eq!(o.code, 1, "{o:?}");
    let finding = parse_json(o.stdout.trim()).unwrap();
    let f = finding.as_object().unwrap();
    assert_eq!(f["status"], Value::from("failed"));
    assert_eq!(f["invariant"], Value::from("reads-resolve"));
    assert_eq!(f["seed"], Value::from(7.0));
    let case = f["case"].clone();
    let answers = case.as_object().unwrap()["answers"].as_object().unwrap();
    assert_eq!(
        answers["triage"].to_json(),
        r#"{"json":{"severity":"low","files":[]}}"#
    );
    // Pasted under "tests", it reproduces the violation as a failing test.
    let file = format!(
        r#"{{"flow": "review.json", "tests": [{}]}}"#,
        case.to_pretty_json()
    );
    std::fs::write(dir.join("review.test.json"), file).unwrap();
    let t = tfc_in(Some(&dir), &["test"], b"");
    assert_eq!(t.code, 1, "{t:?}");
    assert!(
        t.stdout.contains(
            "test property: {steps.triage.json.files.0} resolves in the task of 'fix' ... FAILED"
        ),
        "{}",
        t.stdout
    );
    assert!(
        t.stdout.contains("{steps.triage.json.files.0}"),
        "{}",
        t.stdout
    );
}

#[test]
fn the_fixed_flow_keeps_its_invariants_in_200_runs() {
    let dir = project("property-fixed", &fixed(), NO_TESTS);
    let o = tfc_in(
        Some(&dir),
        &["test", "--property", "200", "--seed", "1"],
        b"",
    );
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stdout
            .contains("property review.test.json (flow review): 200 runs ... ok (seed 1)"),
        "{}",
        o.stdout
    );
}

#[test]
fn the_files_invariants_hold_in_every_run() {
    let file = r#"{"flow": "review.json", "tests": [], "invariants": {"calls": {"max": 4}}}"#;
    let dir = project("property-invariants", &fixed(), file);
    let o = tfc_in(
        Some(&dir),
        &[
            "test",
            "--property",
            "50",
            "--seed",
            "3",
            "--format",
            "json",
        ],
        b"",
    );
    assert_eq!(o.code, 1, "{o:?}");
    let f = parse_json(o.stdout.trim()).unwrap();
    let f = f.as_object().unwrap();
    assert_eq!(f["invariant"], Value::from("invariants"));
    assert_eq!(
        f["case"].as_object().unwrap()["expect"].to_json(),
        r#"{"calls":{"max":4}}"#
    );
    // A misspelt invariant key is the test file's error, as in `expect` (exit 2).
    let bad = r#"{"flow": "review.json", "tests": [], "invariants": {"cals": {"max": 4}}}"#;
    std::fs::write(dir.join("review.test.json"), bad).unwrap();
    let o = tfc_in(Some(&dir), &["test", "--property", "5"], b"");
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr.contains("unknown key 'cals' in 'invariants'"),
        "{}",
        o.stderr
    );
}

#[test]
fn property_flags_are_checked() {
    let dir = project("property-flags", &fixed(), NO_TESTS);
    let o = tfc_in(Some(&dir), &["test", "--seed", "3"], b"");
    assert_eq!(o.code, 2, "{o:?}");
    let o = tfc_in(Some(&dir), &["test", "--property", "0"], b"");
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr.contains("--property must be at least 1"),
        "{}",
        o.stderr
    );
    // --property runs generated answers, not the files' tests: what reports on those
    // tests does not combine with it.
    for other in [
        &["--coverage"][..],
        &["--junit", "j.xml"],
        &["--filter", "x"],
        &["--update"],
    ] {
        let mut argv = vec!["test", "--property", "5"];
        argv.extend_from_slice(other);
        let o = tfc_in(Some(&dir), &argv, b"");
        assert_eq!(o.code, 2, "{argv:?}: {o:?}");
        assert!(o.stderr.contains("cannot be used with"), "{}", o.stderr);
    }
}

/// The signal the invariant reads: a condition's journal event names the operands that were
/// undefined when it was decided (`when`, and now `until` too).
#[test]
fn a_run_journals_the_undefined_operands_of_its_conditions() {
    let dir = scratch("property-journal");
    std::fs::create_dir_all(dir.join(".tfc")).unwrap();
    let flow = r#"{"name": "conds", "phases": [
      {"id": "a", "task": "hello"},
      {"id": "b", "task": "then", "dependsOn": ["a"], "when": "{steps.a.json.nope} != x && {steps.a.output} == hello"},
      {"id": "c", "type": "loop", "task": "again", "dependsOn": ["b"], "maxIterations": 1,
       "until": "{steps.b.json.gone} == 1"}
    ]}"#;
    std::fs::write(dir.join("flow.json"), flow).unwrap();
    let o = tfc_in(Some(&dir), &["run", "flow.json", "--agent-cmd", "cat"], b"");
    assert_eq!(o.code, 0, "{o:?}");
    let runs = dir.join(".tfc/runs/conds");
    let run = std::fs::read_dir(&runs)
        .unwrap()
        .flatten()
        .find(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .expect("a run directory");
    let journal = std::fs::read_to_string(run.path().join("journal.jsonl")).unwrap();
    let conditions: Vec<Value> = journal
        .lines()
        .filter(|l| l.contains(r#""type":"condition""#))
        .map(|l| parse_json(l).unwrap())
        .collect();
    let unresolved = |field: &str| {
        conditions
            .iter()
            .find(|c| c.as_object().unwrap()["field"] == Value::from(field))
            .and_then(|c| c.as_object().unwrap().get("unresolved").cloned())
            .map(|u| u.to_json())
    };
    assert_eq!(
        unresolved("when").as_deref(),
        Some(r#"["steps.a.json.nope"]"#),
        "{journal}"
    );
    assert_eq!(
        unresolved("until").as_deref(),
        Some(r#"["steps.b.json.gone"]"#),
        "{journal}"
    );
}
