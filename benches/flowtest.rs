//! `tfc test` (SPEC §17) speed: one test of a 20-phase flow, 1,000 tests across 50 files at
//! one and two jobs, and `--property 1000` on a 20-phase flow. Run with
//! `cargo bench --bench flowtest`.
//!
//! Targets (SPEC §17): a 20-phase flow's test under 2 ms; the 1,000 tests scale linearly with
//! `--jobs` (two jobs take about half the time of one on a 2-core machine); `--property 1000`
//! under 5 s.
//!
//! The flow has every kind that runs without a process: contracts, guards, a gate with a
//! rework round, a map over a contract-typed array, a reduce, a loop, a tournament and a
//! sub-flow; the test answers each call by pattern and checks statuses, outputs and prompts,
//! so the figure is that of a real test, expectations included.

use std::path::{Path, PathBuf};

use divan::{Bencher, black_box};
use tfc::check::{CheckOptions, check_source};
use tfc::flow::LowerOptions;
use tfc::source::Source;
use tfc::test::property::{PropertyOptions, run_flow};
use tfc::test::{CheckedFile, Outcome, TestOptions, check_text, run_files};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    divan::main();
}

/// 20 phases (counting the sub-flow's own as one).
const FLOW: &str = r#"{
  "name": "twenty",
  "args": {"topic": {"type": "string", "default": "parsers"}, "deep": {"type": "boolean", "default": true}},
  "phases": [
    {"id": "triage", "task": "Triage {args.topic}.", "output": "json",
     "expect": {"type": "object", "required": ["severity", "files"], "properties": {
       "severity": {"enum": ["low", "high"]},
       "files": {"type": "array", "minItems": 1, "items": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}}}}},
    {"id": "plan", "dependsOn": ["triage"], "task": "Plan for {steps.triage.json.severity}."},
    {"id": "deep", "dependsOn": ["triage"], "when": "{steps.triage.json.severity} == 'high' && {args.deep} == true", "task": "Deep review of {steps.triage.json.files.0.path}."},
    {"id": "quick", "dependsOn": ["triage"], "when": "{steps.triage.json.severity} == 'low'", "task": "Quick look."},
    {"id": "review", "type": "map", "over": "{steps.triage.json.files}", "as": "f", "dependsOn": ["triage"], "task": "Review {f.path}."},
    {"id": "merge", "type": "reduce", "from": ["review"], "dependsOn": ["review"], "task": "Merge:\n{steps.review.output}"},
    {"id": "draft", "dependsOn": ["plan", "merge"], "task": "Draft from {steps.plan.output} and {steps.merge.output}."},
    {"id": "quality", "type": "gate", "dependsOn": ["draft"], "onBlock": "retry", "retry": {"max": 1}, "task": "Judge {steps.draft.output}. VERDICT: PASS or BLOCK."},
    {"id": "polish", "type": "loop", "dependsOn": ["quality"], "maxIterations": 3, "output": "json",
     "until": "{steps.polish.json.done} == true", "task": "Polish, iteration {loop.iteration}: {loop.lastOutput}"},
    {"id": "title", "dependsOn": ["quality"], "task": "A title for {steps.draft.output}."},
    {"id": "pick", "type": "tournament", "dependsOn": ["title"], "variants": 2, "task": "Abstract for {steps.title.output}."},
    {"id": "notes", "dependsOn": ["deep", "quick"], "join": "any", "task": "Notes: {steps.deep.output}{steps.quick.output}"},
    {"id": "tags", "dependsOn": ["title"], "task": "Tags for {steps.title.output}."},
    {"id": "links", "dependsOn": ["title"], "task": "Links for {steps.title.output}."},
    {"id": "faq", "dependsOn": ["draft"], "task": "FAQ for {steps.draft.output}."},
    {"id": "intro", "dependsOn": ["draft"], "task": "Intro for {steps.draft.output}."},
    {"id": "outro", "dependsOn": ["draft"], "task": "Outro for {steps.draft.output}."},
    {"id": "sub", "type": "flow", "dependsOn": ["intro"], "def": {"name": "inner", "phases": [
      {"id": "inner", "task": "Inner step."}]}},
    {"id": "assemble", "type": "reduce", "dependsOn": ["polish", "pick", "notes", "tags", "links", "faq", "outro", "sub"],
     "from": ["pick", "tags", "links", "faq", "outro"], "task": "Assemble:\n{steps.pick.output}"},
    {"id": "final", "dependsOn": ["assemble"], "final": true, "task": "Final: {steps.assemble.output}"}
  ]
}"#;

/// One test of [`FLOW`]: the deep route, a gate rework round, a two-iteration loop.
const CASE: &str = r#"{
  "name": "NAME",
  "answers": {
    "triage": {"json": {"severity": "high", "files": [{"path": "src/a.rs"}, {"path": "src/b.rs"}, {"path": "src/c.rs"}]}},
    "review#*": "looks fine",
    "quality": ["VERDICT: BLOCK", "VERDICT: PASS"],
    "polish@1": {"json": {"done": false}},
    "polish@*": {"json": {"done": true}},
    "pick#judge": "WINNER: 2",
    "final": "The final answer.",
    "*": "ok"
  },
  "expect": {
    "status": "completed",
    "ran": ["deep", "notes", "sub"],
    "skipped": ["quick"],
    "phases": {"quality": {"verdict": "pass"}, "polish": {"iterations": 2}, "review": {"items": 3}},
    "output": {"contains": "final answer"},
    "prompts": {"deep": {"contains": "src/a.rs"}, "review#1": "Review src/b.rs."}
  }
}"#;

/// A directory holding the flow and `files` test files of `per_file` tests each; the test
/// files read and checked.
fn project(files: usize, per_file: usize) -> (tempdir::Dir, Vec<CheckedFile>) {
    let dir = tempdir::Dir::new();
    std::fs::write(dir.path().join("twenty.json"), FLOW).expect("write the flow");
    let checked = (0..files)
        .map(|f| {
            let tests: Vec<String> = (0..per_file)
                .map(|t| CASE.replace("NAME", &format!("case {f}.{t}")))
                .collect();
            let text = format!(
                "{{\"flow\": \"twenty.json\", \"tests\": [{}]}}",
                tests.join(",\n")
            );
            let path = dir.path().join(format!("t{f}.test.json"));
            let c = check_text(&path, text, dir.path());
            assert!(
                c.invalid().is_none(),
                "the bench's test file is invalid: {:?}",
                c.diagnostics
            );
            c
        })
        .collect();
    (dir, checked)
}

fn options(cwd: &Path, jobs: usize) -> TestOptions {
    TestOptions {
        cwd: cwd.to_path_buf(),
        jobs,
        ..TestOptions::default()
    }
}

/// Every test of `reports` passed (so the bench times passing tests, not early errors).
fn all_passed(reports: &[tfc::test::FileReport]) -> bool {
    reports
        .iter()
        .flat_map(|r| &r.tests)
        .all(|t| t.outcome == Outcome::Passed)
}

/// One test of the 20-phase flow, its file already checked.
#[divan::bench]
fn one_test_20_phases(b: Bencher) {
    let (dir, files) = project(1, 1);
    let opts = options(dir.path(), 1);
    let first = run_files(files.clone(), &opts);
    assert!(
        all_passed(&first),
        "{}",
        tfc::test::report::details(&first[0].tests[0])
    );
    b.bench(|| run_files(black_box(files.clone()), &opts));
}

/// 1,000 tests across 50 files, on 1 and 2 jobs.
#[divan::bench(args = [1, 2], sample_count = 10)]
fn thousand_tests_50_files(b: Bencher, jobs: usize) {
    let (dir, files) = project(50, 20);
    let opts = options(dir.path(), jobs);
    assert!(all_passed(&run_files(files.clone(), &opts)));
    b.bench(|| run_files(black_box(files.clone()), &opts));
}

/// Twenty phases: a JSON triage whose contract every later phase reads through, maps over
/// its files, JSON steps, gates and loops, in a chain.
fn property_flow() -> String {
    let mut phases = vec![
        r#"{"id": "p0", "task": "Triage.", "output": "json",
            "expect": {"type": "object", "required": ["severity", "files"],
                       "properties": {"severity": {"enum": ["low", "medium", "high"]},
                                      "files": {"type": "array", "minItems": 1, "maxItems": 8,
                                                "items": {"type": "string"}},
                                      "note": {"type": "string"}}}}"#
            .to_owned(),
    ];
    for i in 1..20 {
        let prev = i - 1;
        let body = match i % 5 {
            1 => r#""type": "map", "over": "{steps.p0.json.files}", "task": "Review {item}.""#.to_owned(),
            2 => format!(r#""type": "gate", "task": "Good? {{steps.p{prev}.output}}""#),
            3 => r#""task": "Fix {steps.p0.json.files.0} at {steps.p0.json.severity}.", "output": "json",
                    "expect": {"type": "object", "required": ["level"], "properties": {"level": {"type": "integer"}}}"#
                .to_owned(),
            4 => format!(r#""task": "Level {{steps.p{prev}.json.level}}: {{steps.p0.json.note}}""#),
            _ => format!(
                r#""type": "loop", "task": "Polish {{steps.p{prev}.output}}.", "maxIterations": 2, "until": "{{loop.lastOutput}} contains DONE""#
            ),
        };
        phases.push(format!(
            r#"{{"id": "p{i}", "dependsOn": ["p{prev}"], {body}}}"#
        ));
    }
    format!(
        r#"{{"name": "bench-20", "phases": [{}]}}"#,
        phases.join(",\n")
    )
}

/// `--property 1000` on a 20-phase flow (target: under 5 s). The flow is correct (its
/// array has `minItems: 1`), so every run is made: no finding cuts the work short.
#[divan::bench(sample_count = 3)]
fn property_1000_on_20_phases(b: Bencher) {
    let text = property_flow();
    let checked = check_source(&text, &LowerOptions::default(), &CheckOptions::default());
    assert!(!checked.has_errors(), "{:?}", checked.diagnostics);
    let flow = checked.flow.expect("a flow");
    let source = Source::new("bench-20.json", text.clone());
    let opts = PropertyOptions {
        runs: 1000,
        seed: 1,
        cwd: ".".into(),
    };
    b.bench(|| {
        let (runs, finding) = run_flow(black_box(&flow), &source, None, &opts);
        assert!(finding.is_none(), "{:?}", finding.map(|f| f.violation));
        assert_eq!(runs, 1000);
    });
}

/// A scratch directory removed on drop (no extra dependency for one bench).
mod tempdir {
    use super::*;

    pub struct Dir(PathBuf);

    impl Dir {
        pub fn new() -> Dir {
            let p = std::env::temp_dir().join(format!("tfc-bench-flowtest-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).expect("create a scratch directory");
            Dir(p)
        }

        pub fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
