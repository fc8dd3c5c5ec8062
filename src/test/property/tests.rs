use proptest::prelude::*;

use super::generate::{plan, satisfies, texts, value};
use super::rng::Rng;
use super::*;
use crate::check::{CheckOptions, check_source};
use crate::flow::{Contract, LowerOptions};

fn flow(text: &str) -> Flow {
    let checked = check_source(text, &LowerOptions::default(), &CheckOptions::default());
    assert!(!checked.has_errors(), "{:?}", checked.diagnostics);
    checked.flow.unwrap()
}

/// The contract `json` as a phase's `expect` lowers it.
fn contract(json: &str) -> Contract {
    let f = flow(&format!(
        r#"{{"name": "c", "phases": [{{"id": "a", "task": "t", "output": "json", "expect": {json}}}]}}"#
    ));
    *f.phases[0].expect.clone().unwrap()
}

fn opts(runs: u64, seed: u64) -> PropertyOptions {
    PropertyOptions {
        runs,
        seed,
        cwd: ".".into(),
    }
}

fn run(text: &str, invariants: Option<&str>, runs: u64, seed: u64) -> (u64, Option<Finding>) {
    let f = flow(text);
    let source = Source::new("f.json", text.to_owned());
    let inv = invariants.map(|i| crate::value::parse_json(i).unwrap());
    run_flow(&f, &source, inv.as_ref(), &opts(runs, seed))
}

/// The planted bug: `files` may be empty, and `fix` reads its first element.
const PLANTED: &str = r#"{"name": "planted", "phases": [
    {"id": "triage", "task": "Triage.", "output": "json",
     "expect": {"type": "object", "required": ["severity", "files"],
                "properties": {"severity": {"enum": ["low", "medium", "high"]},
                               "files": {"type": "array", "items": {"type": "string"}},
                               "note": {"type": "string"}}}},
    {"id": "review", "task": "Review {steps.triage.output} at {steps.triage.json.severity}.", "dependsOn": ["triage"]},
    {"id": "fix", "task": "Fix {steps.triage.json.files.0} after {steps.review.output}.", "dependsOn": ["review"]},
    {"id": "gate", "type": "gate", "task": "Good? {steps.fix.output}", "dependsOn": ["fix"]},
    {"id": "publish", "task": "Publish {steps.triage.json.note}.", "dependsOn": ["gate"]}
]}"#;

fn fixed() -> String {
    PLANTED.replace(
        r#""files": {"type": "array", "items""#,
        r#""files": {"type": "array", "minItems": 1, "items""#,
    )
}

#[test]
fn the_planted_bug_is_found_and_shrunk() {
    let (_, finding) = run(PLANTED, None, 200, 1);
    let f = finding.expect("an empty `files` is drawn within 200 runs");
    assert_eq!(f.violation.invariant, "reads-resolve");
    assert_eq!(f.violation.key, "read:fix:task:steps.triage.json.files.0");
    assert!(
        f.violation.message.contains("minItems: 1"),
        "{}",
        f.violation.message
    );
    let answers = f.case.as_object().unwrap()["answers"].as_object().unwrap();
    // Shrunk: the first enum member, no optional property, no files; texts empty.
    assert_eq!(
        answers["triage"].to_json(),
        r#"{"json":{"severity":"low","files":[]}}"#
    );
    assert_eq!(answers["review"], Value::from(""));
    // The case says what broke, in the expect syntax: the placeholder stayed in the prompt.
    assert_eq!(
        f.case.as_object().unwrap()["expect"].to_json(),
        r#"{"prompts":{"fix":{"not":{"contains":"{steps.triage.json.files.0}"}}}}"#
    );
}

#[test]
fn the_printed_case_reproduces_the_violation() {
    let (_, finding) = run(PLANTED, None, 200, 3);
    let f = finding.unwrap();
    let case = TestCase::parse(&f.case.to_json()).expect("a valid tests[] entry");
    let report = crate::test::run_case(PLANTED, &case, std::path::Path::new("."));
    assert!(
        matches!(report.outcome, crate::test::Outcome::Failed(_)),
        "{:?}",
        report.outcome
    );
}

#[test]
fn the_same_seed_gives_the_same_finding() {
    let a = run(PLANTED, None, 200, 42);
    let b = run(PLANTED, None, 200, 42);
    let (fa, fb) = (a.1.unwrap(), b.1.unwrap());
    assert_eq!(a.0, b.0);
    assert_eq!((fa.run, fa.case.to_json()), (fb.run, fb.case.to_json()));
    let f = flow(PLANTED);
    let plans: Vec<Plan> = (0..3).map(|_| plan(&f, &mut Rng::for_run(9, 5))).collect();
    assert!(plans.windows(2).all(|w| w[0] == w[1]));
    assert_ne!(
        plan(&f, &mut Rng::for_run(9, 5)),
        plan(&f, &mut Rng::for_run(9, 6))
    );
}

#[test]
fn the_fixed_flow_keeps_every_invariant() {
    let (runs, finding) = run(&fixed(), None, 200, 5);
    assert!(finding.is_none(), "{:?}", finding.map(|f| f.violation));
    assert_eq!(runs, 200);
}

#[test]
fn an_undefined_condition_operand_is_found() {
    let text = PLANTED.replace(
        r#""task": "Fix {steps.triage.json.files.0} after {steps.review.output}.", "dependsOn": ["review"]}"#,
        r#""task": "Fix it.", "dependsOn": ["review"], "when": "{steps.triage.json.files.0} != skip"}"#,
    );
    assert_ne!(text, PLANTED);
    let (_, finding) = run(&text, None, 200, 11);
    let v = finding.unwrap().violation;
    assert_eq!(v.invariant, "conditions-defined", "{}", v.message);
    assert_eq!(v.key, "operand:fix:when:steps.triage.json.files.0");
}

#[test]
fn a_final_phase_skipped_by_its_guard_is_found_unless_allowed() {
    let guarded = r#"{"name": "g", "phases": [
        {"id": "a", "task": "A.", "output": "json",
         "expect": {"type": "object", "required": ["go"], "properties": {"go": {"type": "boolean"}}}},
        {"id": "b", "task": "B.", "dependsOn": ["a"], "when": "{steps.a.json.go}"}
    ]}"#;
    let (_, finding) = run(guarded, None, 100, 2);
    let f = finding.unwrap();
    assert_eq!(f.violation.invariant, "final-output");
    assert_eq!(
        f.case.as_object().unwrap()["expect"].to_json(),
        r#"{"outputPhase":"b"}"#
    );
    let allowed = guarded.replace(
        r#""name": "g","#,
        r#""name": "g", "lint": {"allow": ["W0109"]},"#,
    );
    assert!(run(&allowed, None, 100, 2).1.is_none());
}

#[test]
fn the_files_invariants_hold_in_every_run() {
    let inv = r#"{"calls": {"max": 3}}"#;
    let (_, finding) = run(&fixed(), Some(inv), 100, 4);
    let f = finding.unwrap();
    assert_eq!(f.violation.invariant, "invariants");
    assert_eq!(
        f.case.as_object().unwrap()["expect"].to_json(),
        inv.replace(' ', "")
    );
    assert!(
        run(&fixed(), Some(r#"{"calls": {"max": 40}}"#), 100, 4)
            .1
            .is_none()
    );
}

#[test]
fn every_enum_member_and_both_array_bounds_are_drawn() {
    let c = contract(
        r#"{"type": "object", "required": ["s", "xs"], "properties": {
            "s": {"enum": ["a", "b", "c"]},
            "xs": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "integer"}},
            "opt": {"type": "string"}}}"#,
    );
    let mut rng = Rng::new(1);
    let drawn: Vec<Value> = (0..300).map(|_| value(&c, &mut rng, 0)).collect();
    let field = |v: &Value, k: &str| v.as_object().unwrap().get(k).cloned();
    for m in ["a", "b", "c"] {
        assert!(drawn.iter().any(|v| field(v, "s") == Some(Value::from(m))));
    }
    let lens: Vec<usize> = drawn
        .iter()
        .map(|v| field(v, "xs").unwrap().as_array().unwrap().len())
        .collect();
    assert!(lens.contains(&1) && lens.contains(&3) && lens.iter().all(|n| (1..=3).contains(n)));
    assert!(drawn.iter().any(|v| field(v, "opt").is_none()));
    assert!(drawn.iter().any(|v| field(v, "opt").is_some()));
    assert!(drawn.iter().all(|v| satisfies(&c, v)));
}

#[test]
fn text_phases_draw_the_adversarial_set() {
    let t = texts();
    assert_eq!(t[2].len(), 10 * 1024);
    assert!(crate::eval::safe_parse::safe_parse(&t[3]).value.is_some());
    let f = flow(
        r#"{"name": "t", "phases": [{"id": "g", "type": "gate", "task": "ok?"},
            {"id": "ok", "type": "approval", "task": "ship?", "dependsOn": ["g"]}]}"#,
    );
    let mut verdicts = std::collections::BTreeSet::new();
    let mut decisions = std::collections::BTreeSet::new();
    for run in 0..200 {
        let p = plan(&f, &mut Rng::for_run(0, run));
        if let Some(Gen::Text(t)) = &p.nodes[0].reply {
            verdicts.insert(t.clone());
        }
        decisions.insert(p.approvals[0].1);
    }
    assert!(verdicts.contains("VERDICT: PASS") && verdicts.contains("VERDICT: BLOCK"));
    assert_eq!(decisions.len(), 3);
}

/// A contract as JSON text: nested types, enums, required keys, array bounds.
fn arb_contract() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just(r#"{"type": "string"}"#.to_owned()),
        Just(r#"{"type": "integer"}"#.to_owned()),
        Just(r#"{"type": ["number", "null"]}"#.to_owned()),
        Just(r#"{"type": "boolean"}"#.to_owned()),
        Just(r#"{"enum": ["x", 2, true]}"#.to_owned()),
        Just(r#"{"type": "string", "enum": ["x", 2, "y"]}"#.to_owned()),
        Just("{}".to_owned()),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            (inner.clone(), 0u64..3, 0u64..4).prop_map(|(item, min, extra)| {
                format!(
                    r#"{{"type": "array", "items": {item}, "minItems": {min}, "maxItems": {}}}"#,
                    min + extra
                )
            }),
            (inner.clone(), any::<bool>()).prop_map(|(item, bounded)| {
                let b = if bounded { r#", "minItems": 2"# } else { "" };
                format!(r#"{{"items": {item}{b}}}"#)
            }),
            (proptest::collection::vec((inner, any::<bool>()), 0..4), any::<bool>()).prop_map(
                |(props, closed)| {
                    let body: Vec<String> = props
                        .iter()
                        .enumerate()
                        .map(|(i, (c, _))| format!(r#""p{i}": {c}"#))
                        .collect();
                    let req: Vec<String> = props
                        .iter()
                        .enumerate()
                        .filter(|(_, (_, r))| *r)
                        .map(|(i, _)| format!(r#""p{i}""#))
                        .collect();
                    format!(
                        r#"{{"type": "object", "properties": {{{}}}, "required": [{}], "additionalProperties": {}}}"#,
                        body.join(", "),
                        req.join(", "),
                        !closed
                    )
                }
            ),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The oracle: the run's own contract check accepts every generated value.
    #[test]
    fn generated_json_satisfies_its_contract(c in arb_contract(), seed in any::<u64>()) {
        let contract = contract(&c);
        let mut rng = Rng::new(seed);
        for _ in 0..8 {
            let v = value(&contract, &mut rng, 0);
            let checked = crate::run::contract::check_output(&contract, &v.to_json());
            prop_assert!(checked.is_ok(), "{} against {}: {:?}", v.to_json(), c, checked);
        }
    }

    /// Shrinking reduces: following the first simpler value the contract accepts, again and
    /// again, ends (every step is smaller in a well-founded order) with a value that still
    /// satisfies the contract.
    #[test]
    fn shrinking_only_reduces(c in arb_contract(), seed in any::<u64>()) {
        let contract = contract(&c);
        let mut v = value(&contract, &mut Rng::new(seed), 0);
        let mut steps = 0;
        while let Some(s) = shrink::smaller_values(&v, Some(&contract))
            .into_iter()
            .find(|s| satisfies(&contract, s))
        {
            prop_assert_ne!(&s, &v);
            v = s;
            steps += 1;
            prop_assert!(steps < 2_000, "no end to shrinking {}", v.to_json());
        }
        prop_assert!(satisfies(&contract, &v));
    }
}
