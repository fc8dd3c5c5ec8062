//! `tfc test --property N [--seed S]` (SPEC §17 "Properties"): each flow run N times with
//! answers *generated* from the flow itself, checking after every run the invariants a
//! correct flow keeps whatever its agents say. The first run that breaks one is shrunk to
//! the simplest answer set that still breaks it and printed as a ready-to-paste `tests[]`
//! entry; the seed is printed, and the same seed repeats the same runs byte for byte.
//!
//! ```
//! use tfc::test::property::{PropertyOptions, run_flow};
//!
//! // `{steps.t.json.files.0}` reads the first file, but the contract lets `files` be empty.
//! let flow = r#"{"name": "demo", "phases": [
//!     {"id": "t", "task": "List files.", "output": "json",
//!      "expect": {"type": "object", "required": ["files"],
//!                 "properties": {"files": {"type": "array", "items": {"type": "string"}}}}},
//!     {"id": "fix", "task": "Fix {steps.t.json.files.0}.", "dependsOn": ["t"]}
//! ]}"#;
//! let checked = tfc::check::check_source(flow, &Default::default(), &Default::default());
//! let source = tfc::source::Source::new("demo.json", flow.to_owned());
//! let opts = PropertyOptions { runs: 100, seed: 7, cwd: ".".into() };
//! let (_, finding) = run_flow(checked.flow.as_ref().unwrap(), &source, None, &opts);
//! assert_eq!(finding.unwrap().violation.invariant, "reads-resolve");
//! ```
//!
//! Files: `rng.rs` (the seeded generator), `plan.rs` (an answer set, written as a test
//! case), `generate.rs` (answers from contracts), `invariant.rs` (the checks), `shrink.rs`.

mod generate;
mod invariant;
mod plan;
mod rng;
mod shrink;

use std::path::PathBuf;
use std::time::{Duration, Instant};

pub use invariant::Violation;
pub use plan::{Approval, Gen, NodePlan, Plan};
pub use rng::Rng;

use crate::flow::Flow;
use crate::source::Source;
use crate::value::{Map, Value};

use super::{CheckedFile, TestCase};

/// The most runs a finding's shrinking may make.
const SHRINK_BUDGET: usize = 400;

/// What a property test is told.
#[derive(Clone, Debug)]
pub struct PropertyOptions {
    /// Runs per flow.
    pub runs: u64,
    /// The seed (the same seed, the same runs).
    pub seed: u64,
    /// The invocation directory.
    pub cwd: PathBuf,
}

/// A broken invariant, shrunk.
#[derive(Clone, Debug)]
pub struct Finding {
    /// The run that broke it (counted from 0).
    pub run: u64,
    /// What broke, as the shrunk case breaks it.
    pub violation: Violation,
    /// The shrunk case: a `tests[]` entry.
    pub case: Value,
    /// How many simplifications shrinking kept.
    pub shrink_steps: usize,
}

/// How one file's property test ended.
#[derive(Clone, Debug)]
pub enum PropertyResult {
    /// Every run kept every invariant.
    Passed,
    /// A run broke one.
    Failed(Box<Finding>),
    /// The file or its flow is invalid: nothing ran.
    Invalid(String),
}

/// The property test of one test file.
#[derive(Clone, Debug)]
pub struct PropertyReport {
    /// The test file, as named.
    pub file: String,
    /// Its flow's name.
    pub flow: String,
    /// The runs made (up to and including a failing one).
    pub runs: u64,
    /// How it ended.
    pub result: PropertyResult,
    /// Wall time.
    pub duration: Duration,
}

/// A seed from the clock and the process: a different one each time.
pub fn random_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    // Short enough to type back.
    Rng::new(nanos ^ u64::from(std::process::id()).rotate_left(32)).next_u64() % 1_000_000_000
}

/// One run of `plan`: its violation, if it broke an invariant.
struct Runner<'a> {
    flow: &'a Flow,
    source: &'a Source,
    invariants: Option<&'a Value>,
    required: Vec<invariant::Required>,
    /// How each run is made (its `cwd`; nothing recorded but what the invariants read).
    options: super::TestOptions,
}

impl Runner<'_> {
    fn run(&self, plan: &Plan) -> Option<Violation> {
        let entry = plan.entry("property run", self.invariants);
        let case = match TestCase::parse(&entry.to_json()) {
            Ok(c) => c,
            Err(d) => {
                let why: Vec<String> = d.iter().map(|d| d.message.clone()).collect();
                return Some(Violation {
                    invariant: "ends",
                    key: "ends:case".into(),
                    title: "property: the run ends".into(),
                    message: format!(
                        "internal error: a generated case did not read back: {}",
                        why.join("; ")
                    ),
                    expect: None,
                });
            }
        };
        let (report, conditions) =
            super::run_watched(self.flow, self.source, &case, &self.options, true);
        let inv = invariant::Invariants {
            flow: self.flow,
            required: &self.required,
            file: self.invariants,
        };
        invariant::check(&inv, &report, &conditions)
    }

    /// Shrink `plan` (which broke `violation`) as far as the budget allows.
    fn shrink(&self, mut plan: Plan, mut violation: Violation) -> (Plan, Violation, usize) {
        let mut budget = SHRINK_BUDGET;
        let mut steps = 0;
        'simpler: while budget > 0 {
            for candidate in shrink::candidates(&plan, self.flow) {
                if budget == 0 {
                    break 'simpler;
                }
                budget -= 1;
                if let Some(v) = self.run(&candidate)
                    && v.key == violation.key
                {
                    plan = candidate;
                    violation = v;
                    steps += 1;
                    continue 'simpler;
                }
            }
            break;
        }
        (plan, violation, steps)
    }
}

/// Run `flow` `opts.runs` times with generated answers, keeping `invariants` (the test file's,
/// as written) besides the flow's own; the runs made and the first violation, shrunk.
pub fn run_flow(
    flow: &Flow,
    source: &Source,
    invariants: Option<&Value>,
    opts: &PropertyOptions,
) -> (u64, Option<Finding>) {
    let runner = Runner {
        flow,
        source,
        invariants,
        required: invariant::required_reads(flow),
        options: super::TestOptions {
            cwd: opts.cwd.clone(),
            ..super::TestOptions::default()
        },
    };
    for run in 0..opts.runs {
        let mut rng = Rng::for_run(opts.seed, run);
        let plan = generate::plan(flow, &mut rng);
        let Some(violation) = runner.run(&plan) else {
            continue;
        };
        let (plan, violation, shrink_steps) = runner.shrink(plan, violation);
        let case = plan.entry(&violation.title, violation.expect.as_ref());
        return (
            run + 1,
            Some(Finding {
                run,
                violation,
                case,
                shrink_steps,
            }),
        );
    }
    (opts.runs, None)
}

/// The property test of one checked test file.
pub fn run_file(checked: &CheckedFile, opts: &PropertyOptions) -> PropertyReport {
    let started = Instant::now();
    let file = checked.source.name.clone();
    let flow_name = checked
        .flow
        .as_ref()
        .and_then(|f| f.flow.as_ref())
        .map(|f| f.name.clone())
        .unwrap_or_default();
    let (runs, result) = match (checked.invalid(), &checked.flow) {
        (None, Some(fut)) => match &fut.flow {
            Some(flow) => {
                let invariants = checked.file.invariants.as_ref().map(|(_, v)| v);
                match run_flow(flow, &fut.source, invariants, opts) {
                    (n, Some(f)) => (n, PropertyResult::Failed(Box::new(f))),
                    (n, None) => (n, PropertyResult::Passed),
                }
            }
            None => (0, PropertyResult::Invalid("the flow has errors".into())),
        },
        (Some(why), _) => (0, PropertyResult::Invalid(why)),
        (None, None) => (
            0,
            PropertyResult::Invalid("the flow could not be read".into()),
        ),
    };
    PropertyReport {
        file,
        flow: flow_name,
        runs,
        result,
        duration: started.elapsed(),
    }
}

/// The report as text: a line per file, each finding with its shrunk case, a summary.
pub fn text(reports: &[PropertyReport], opts: &PropertyOptions, elapsed: Duration) -> String {
    let mut out = String::new();
    let (mut passed, mut failed, mut errors) = (0, 0, 0);
    for r in reports {
        let head = format!("property {} (flow {})", r.file, r.flow);
        match &r.result {
            PropertyResult::Passed => {
                passed += 1;
                out.push_str(&format!(
                    "{head}: {} runs ... ok (seed {})\n",
                    r.runs, opts.seed
                ));
            }
            PropertyResult::Invalid(why) => {
                errors += 1;
                out.push_str(&format!("{head} ... error: {why}\n"));
            }
            PropertyResult::Failed(f) => {
                failed += 1;
                out.push_str(&format!(
                    "{head}: run {} of {} ... FAILED (seed {})\n",
                    f.run + 1,
                    opts.runs,
                    opts.seed
                ));
                out.push_str(&format!("  violated: {}\n", f.violation.message));
                out.push_str(&format!(
                    "  shrunk in {} steps to this test case (add it to \"tests\"):\n",
                    f.shrink_steps
                ));
                for line in f.case.to_pretty_json().lines() {
                    out.push_str("    ");
                    out.push_str(line);
                    out.push('\n');
                }
                out.push_str(&format!(
                    "  repeat with: tfc test {} --property {} --seed {}\n",
                    r.file, opts.runs, opts.seed
                ));
            }
        }
    }
    let word = if failed + errors == 0 { "ok" } else { "FAILED" };
    out.push_str(&format!(
        "\nproperty result: {word}. {passed} passed; {failed} failed; {errors} errors; seed {}; finished in {:.2}s\n",
        opts.seed,
        elapsed.as_secs_f64()
    ));
    out
}

/// The report as JSON lines: one object per file (`status` `passed` / `failed` / `error`;
/// a failure's `invariant`, `message`, `run`, shrunk `case` and `shrinkSteps`).
pub fn json_lines(reports: &[PropertyReport], opts: &PropertyOptions) -> String {
    let mut out = String::new();
    for r in reports {
        let mut m = Map::default();
        m.insert("file".into(), Value::from(r.file.as_str()));
        m.insert("flow".into(), Value::from(r.flow.as_str()));
        m.insert("seed".into(), Value::from(opts.seed as f64));
        m.insert("runs".into(), Value::from(r.runs as f64));
        match &r.result {
            PropertyResult::Passed => {
                m.insert("status".into(), Value::from("passed"));
            }
            PropertyResult::Invalid(why) => {
                m.insert("status".into(), Value::from("error"));
                m.insert("error".into(), Value::from(why.as_str()));
            }
            PropertyResult::Failed(f) => {
                m.insert("status".into(), Value::from("failed"));
                m.insert("run".into(), Value::from(f.run as f64));
                m.insert("invariant".into(), Value::from(f.violation.invariant));
                m.insert("message".into(), Value::from(f.violation.message.as_str()));
                m.insert("case".into(), f.case.clone());
                m.insert("shrinkSteps".into(), Value::from(f.shrink_steps as f64));
            }
        }
        out.push_str(&Value::Object(m).to_json());
        out.push('\n');
    }
    out
}

/// 0 every property held · 1 one failed · 2 a test file or its flow is invalid.
pub fn exit_code(reports: &[PropertyReport]) -> i32 {
    if reports
        .iter()
        .any(|r| matches!(r.result, PropertyResult::Invalid(_)))
    {
        2
    } else if reports
        .iter()
        .any(|r| matches!(r.result, PropertyResult::Failed(_)))
    {
        1
    } else {
        0
    }
}

#[cfg(test)]
mod tests;
