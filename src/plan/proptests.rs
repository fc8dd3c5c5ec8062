//! The plan bounds real runs: small generated flows run on the deterministic test machine
//! (`crate::test`, every call answered) make between `min` and `max` calls when no call fails,
//! and between `min` and `worst` when calls fail (transiently, each fewer times than its
//! attempt limit, so every phase still succeeds).

use proptest::prelude::*;
use serde_json::{Value as Json, json};

use super::{NoEnv, Options, plan};
use crate::check::{CheckOptions, check_source};
use crate::flow::LowerOptions;

/// One generated phase: its kind (0..9), a seed for its details, whether it is guarded by
/// `when`, and how many times each of its calls fails before it succeeds.
#[derive(Clone, Debug)]
struct Gen {
    kind: u8,
    seed: u16,
    guarded: bool,
    fails: u8,
}

fn gen_phase() -> impl Strategy<Value = Gen> {
    (0u8..9, any::<u16>(), prop::bool::weighted(0.25), 0u8..3).prop_map(
        |(kind, seed, guarded, fails)| Gen {
            kind,
            seed,
            guarded,
            fails,
        },
    )
}

/// A flow (phase `src` first: a JSON list with a contract, then the generated phases, each
/// depending on an earlier one) and its test's answers.
fn build(phases: &[Gen], items: u64, go: bool, failing: bool) -> (String, Json) {
    let (lo, hi) = (1u64, 4u64);
    let mut out: Vec<Json> = vec![json!({
        "id": "src", "task": "list", "output": "json",
        "expect": {"type": "array", "items": {"type": "string"}, "minItems": lo, "maxItems": hi}
    })];
    let mut answers = serde_json::Map::new();
    let list: Vec<String> = (0..items.clamp(lo, hi)).map(|i| format!("f{i}")).collect();
    answers.insert("src".into(), json!({"json": list}));
    let fail = |n: u8, then: Vec<Json>| -> Json {
        let mut seq: Vec<Json> = (0..if failing { n } else { 0 })
            .map(|_| json!({"error": "overloaded"}))
            .collect();
        seq.extend(then);
        Json::Array(seq)
    };
    for (i, g) in phases.iter().enumerate() {
        let id = format!("p{i}");
        let s = usize::from(g.seed);
        // Its dependency: any earlier phase (src included).
        let dep = match s % (i + 1) {
            0 => "src".to_owned(),
            k => format!("p{}", k - 1),
        };
        let mut p = match g.kind {
            0 => json!({"task": "work"}),
            1 => json!({"type": "loop", "task": "improve",
                        "until": format!("{{loop.iteration}} >= {}", 1 + s % 4),
                        "maxIterations": 1 + (s / 4) % 4, "convergence": s % 2 == 0}),
            2 => json!({"type": "map", "over": "{steps.src.json}", "task": "each {item}",
                        "dependsOn": ["src"]}),
            3 => json!({"type": "tournament", "task": "name", "variants": 2 + s % 2}),
            4 => json!({"type": "race", "branches": [{"task": "x"}, {"task": "y"}]}),
            5 => {
                json!({"type": "parallel", "branches": [{"task": "x"}, {"task": "y"}, {"task": "z"}]})
            }
            6 => {
                let mut from = vec![Json::from("src")];
                from.extend((0..i).take(2).map(|k| Json::from(format!("p{k}"))));
                json!({"type": "reduce", "reduceStrategy": "tree", "from": from,
                       "task": "{previous.output}"})
            }
            7 => {
                let rounds = s % 3;
                json!({"type": "gate", "task": "good?", "onBlock": "retry",
                       "retry": {"max": rounds}})
            }
            _ => json!({"type": "flow", "def": {"phases": [
                {"id": "x", "task": "x"}, {"id": "y", "dependsOn": ["x"], "task": "y"}]}}),
        };
        let obj = p.as_object_mut().expect("an object");
        obj.insert("id".into(), Json::from(id.clone()));
        let deps = obj
            .entry("dependsOn")
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .expect("an array");
        if !deps.contains(&Json::from(dep.clone())) {
            deps.push(Json::from(dep));
        }
        if g.guarded {
            obj.insert("when".into(), json!("{args.go} == yes"));
        }
        let answer = match g.kind {
            1 => {
                // Each iteration its own answer, so the loop does not converge at once.
                let max = 1 + (s / 4) % 4;
                for k in 1..=max {
                    answers.insert(
                        format!("{id}@{k}"),
                        fail(g.fails, vec![json!(format!("draft {}", k % 2))]),
                    );
                }
                fail(g.fails, vec![json!("ok")])
            }
            7 => {
                // Block as many rounds as it may retry (at most), then pass.
                let blocks = (s / 3) % (s % 3 + 1);
                let mut seq: Vec<Json> = (0..blocks).map(|_| json!("VERDICT: BLOCK")).collect();
                seq.push(json!("VERDICT: PASS"));
                fail(g.fails, seq)
            }
            _ => fail(g.fails, vec![json!("ok")]),
        };
        answers.insert(id, answer);
        out.push(p);
    }
    answers.insert("*".into(), json!("ok"));
    let flow = json!({"name": "gen", "args": {"go": {"type": "string", "default": "yes"}},
                      "phases": out});
    let case = json!({"name": "gen", "args": {"go": if go { "yes" } else { "no" }},
                      "answers": answers});
    (flow.to_string(), case)
}

proptest! {
    #[test]
    fn runs_make_calls_within_the_plan(
        phases in prop::collection::vec(gen_phase(), 1..6),
        items in 0u64..6,
        go in any::<bool>(),
        failing in any::<bool>(),
    ) {
        let (text, case) = build(&phases, items, go, failing);
        let checked = check_source(&text, &LowerOptions::default(), &CheckOptions::default());
        let errors: Vec<String> = checked.diagnostics.iter().filter(|d| d.is_error())
            .map(|d| d.message.clone()).collect();
        prop_assert!(errors.is_empty(), "{errors:?}\n{text}");
        let flow = checked.flow.expect("a flow");
        let p = plan(&flow, &Options::default(), &NoEnv);
        let case = crate::test::TestCase::parse(&case.to_string()).expect("a valid case");
        let report = crate::test::run_case(&text, &case, std::path::Path::new("."));
        let record = report.record.as_ref().expect("it ran");
        prop_assert_eq!(record.status, crate::run::RunStatus::Completed, "{}", text);
        let made = report.calls.len() as u64;
        let (min, max, worst) = (p.total.calls.min.unwrap(), p.total.calls.max.unwrap(),
            p.total.calls.worst.unwrap());
        let upper = if failing { worst } else { max };
        prop_assert!(min <= made && made <= upper,
            "{made} calls, plan {min}..{max} (worst {worst})\n{text}\n{case:?}");
    }
}
