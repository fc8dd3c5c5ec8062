//! `tfc test` (SPEC §17) speed: one test of a 20-phase flow, and 1,000 tests across 50 files
//! at one and two jobs. Run with `cargo bench --bench flowtest`.
//!
//! Targets (SPEC §17): a 20-phase flow's test under 2 ms; the 1,000 tests scale linearly with
//! `--jobs` (two jobs take about half the time of one on a 2-core machine).
//!
//! The flow has every kind that runs without a process: contracts, guards, a gate with a
//! rework round, a map over a contract-typed array, a reduce, a loop, a tournament and a
//! sub-flow; the test answers each call by pattern and checks statuses, outputs and prompts,
//! so the figure is that of a real test, expectations included.

use std::path::{Path, PathBuf};

use divan::{Bencher, black_box};
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
