//! `tfc test` (SPEC §17 "Speed"): a 20-phase flow's `--property 1000` (target: under 5 s),
//! and one example test of it (target: under 2 ms). Run with `cargo bench --bench testing`.
//!
//! The flow is correct (its array has `minItems: 1`), so every run is made: no finding cuts
//! the work short.

use divan::{Bencher, black_box};
use tfc::check::{CheckOptions, check_source};
use tfc::flow::LowerOptions;
use tfc::source::Source;
use tfc::test::property::{PropertyOptions, run_flow};
use tfc::test::{Outcome, TestCase, run_checked};

/// The allocator `tfc` itself uses, so the figures are those of the shipped binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    divan::main();
}

/// Twenty phases: a JSON triage whose contract every later phase reads through, maps over
/// its files, JSON steps, gates and loops, in a chain.
fn flow_20() -> String {
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

#[divan::bench(sample_count = 3)]
fn property_1000_on_20_phases(b: Bencher) {
    let text = flow_20();
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

#[divan::bench(sample_count = 20)]
fn one_test_of_20_phases(b: Bencher) {
    let text = flow_20();
    let checked = check_source(&text, &LowerOptions::default(), &CheckOptions::default());
    let flow = checked.flow.expect("a flow");
    let source = Source::new("bench-20.json", text.clone());
    let case = TestCase::parse(
        r#"{"name": "all pass", "answers": {
              "p0": {"json": {"severity": "high", "files": ["a.rs", "b.rs"]}},
              "p3": {"json": {"level": 2}}, "p8": {"json": {"level": 2}},
              "p13": {"json": {"level": 2}}, "p18": {"json": {"level": 2}},
              "*": "VERDICT: PASS\nDONE"},
            "expect": {"status": "completed"}}"#,
    )
    .expect("a valid case");
    b.bench(|| {
        let r = run_checked(black_box(&flow), &source, &case, std::path::Path::new("."));
        assert_eq!(r.outcome, Outcome::Passed);
    });
}
