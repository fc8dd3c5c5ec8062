//! Exact figures for designed flows, one kind of phase at a time; and a property: the calls
//! of runs of generated flows lie within the plan's bounds.

use proptest::prelude::*;
use serde_json::{Value as Json, json};

use super::model::{Calls, Plan, Price};
use super::{Env, NoEnv, Options, plan};
use crate::check::{CheckOptions, check_source};
use crate::flow::{Flow, LowerOptions};
use crate::value::Map;

/// `text` lowered and checked: the tests plan valid flows only.
fn flow(text: &str) -> Flow {
    let checked = check_source(text, &LowerOptions::default(), &CheckOptions::default());
    let errors: Vec<String> = checked
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("[{}] {}", d.code.as_str(), d.message))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    checked.flow.expect("a flow")
}

fn planned(text: &str) -> Plan {
    plan(&flow(text), &Options::default(), &NoEnv)
}

fn calls(min: u64, max: u64, worst: u64) -> Calls {
    Calls {
        min: Some(min),
        max: Some(max),
        worst: Some(worst),
    }
}

/// Each phase's (id, min, max, worst).
fn rows(p: &Plan) -> Vec<(String, Calls)> {
    p.phases.iter().map(|p| (p.id.clone(), p.calls)).collect()
}

fn row(p: &Plan, id: &str) -> Calls {
    p.phases
        .iter()
        .find(|x| x.id == id)
        .expect("the phase")
        .calls
}

#[test]
fn a_when_phase_and_what_waits_for_it_may_make_no_call() {
    let p = planned(
        r#"{"phases": [
        {"id": "a", "task": "triage"},
        {"id": "b", "dependsOn": ["a"], "when": "{steps.a.output} == high", "task": "deep"},
        {"id": "c", "dependsOn": ["b"], "task": "after deep"},
        {"id": "d", "dependsOn": ["a", "b"], "join": "any", "task": "either", "final": true}
    ]}"#,
    );
    assert_eq!(
        rows(&p),
        [
            ("a".to_owned(), calls(1, 1, 4)),
            ("b".to_owned(), calls(0, 1, 4)),
            ("c".to_owned(), calls(0, 1, 4)),
            ("d".to_owned(), calls(1, 1, 4)),
        ]
    );
    assert_eq!(p.total.calls, calls(2, 4, 16));
    assert!(p.assumptions.iter().all(|a| a.starts_with("output tokens")));
}

#[test]
fn retry_gate_rounds_rerun_its_direct_dependencies() {
    let p = planned(
        r#"{"phases": [
        {"id": "draft", "task": "write"},
        {"id": "tests", "type": "script", "run": ["true"]},
        {"id": "fix", "dependsOn": ["draft"], "task": "fix"},
        {"id": "review", "type": "gate", "dependsOn": ["draft", "fix", "tests"], "onBlock": "retry",
         "retry": {"max": 2}, "task": "ok?"}
    ]}"#,
    );
    // Gate: E = 3, attempts max(3, 4) = 4; 1 call, 3 with two block rounds. Each round re-runs
    // draft and fix (1 call, 4 attempts each) and the script (no call).
    assert_eq!(row(&p, "review"), calls(1, 3 + 2 + 2, 12 + 8 + 8));
    assert_eq!(p.total.calls, calls(3, 9, 36));
}

#[test]
fn gate_fast_paths_may_decide_without_a_call() {
    let p = planned(
        r#"{"phases": [
        {"id": "a", "task": "write"},
        {"id": "e", "type": "gate", "dependsOn": ["a"], "eval": ["{steps.a.output} contains ok"], "task": "ok?"},
        {"id": "s", "type": "gate", "dependsOn": ["e"], "score": {"scorers": [{"type": "contains", "value": "x"}]}},
        {"id": "j", "type": "gate", "dependsOn": ["s"], "final": true,
         "score": {"scorers": [{"type": "contains", "value": "x"}], "judge": {"task": "judge it"}}}
    ]}"#,
    );
    assert_eq!(row(&p, "e"), calls(0, 1, 4));
    // Scorers alone, no task: never a call.
    assert_eq!(row(&p, "s"), calls(0, 0, 0));
    // A judge with combine "all" is always asked.
    assert_eq!(row(&p, "j"), calls(1, 1, 4));
}

#[test]
fn nested_reworks_stop_at_depth_three() {
    let p = planned(
        r#"{"phases": [
        {"id": "a", "task": "write"},
        {"id": "g1", "type": "gate", "dependsOn": ["a"], "onBlock": "retry", "task": "1?"},
        {"id": "g2", "type": "gate", "dependsOn": ["g1"], "onBlock": "retry", "task": "2?"},
        {"id": "g3", "type": "gate", "dependsOn": ["g2"], "onBlock": "retry", "task": "3?"},
        {"id": "g4", "type": "gate", "dependsOn": ["g3"], "onBlock": "retry", "task": "4?"}
    ]}"#,
    );
    // One round each (retry.max defaults to 1), 4 attempts a call. g1 re-run at depth 3
    // cannot rework: 1 call; g2 at depth 2: 2 + 1; g3 at depth 1: 2 + 3; g4: 2 + 5.
    assert_eq!(row(&p, "g1"), calls(1, 3, 12));
    assert_eq!(row(&p, "g4"), calls(1, 7, 28));
}

#[test]
fn a_loop_runs_once_at_least_and_max_iterations_at_most() {
    let p = planned(
        r#"{"phases": [
        {"id": "l", "type": "loop", "task": "improve", "until": "{loop.iteration} >= 3", "maxIterations": 5},
        {"id": "m", "type": "loop", "dependsOn": ["l"], "task": "again", "until": "{loop.iteration} >= 3",
         "idempotent": false, "retry": {"max": 1}}
    ]}"#,
    );
    assert_eq!(row(&p, "l"), calls(1, 5, 20));
    // Default 10 iterations; no transient layer: 2 attempts each.
    assert_eq!(row(&p, "m"), calls(1, 10, 20));
}

const MAP_FLOW: &str = r#"{"phases": [
    {"id": "list", "task": "list files", "output": "json",
     "expect": {"type": "object", "properties": {"files": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 5}}}},
    {"id": "each", "type": "map", "dependsOn": ["list"], "over": "{steps.list.json.files}", "task": "review {item}"},
    {"id": "again", "type": "map", "dependsOn": ["each"], "over": "{steps.each.json}", "task": "recheck {item}"},
    {"id": "free", "type": "map", "dependsOn": ["again"], "over": "{steps.list.output}", "task": "{item}"}
]}"#;

#[test]
fn map_items_come_from_the_source_contract() {
    let p = planned(MAP_FLOW);
    assert_eq!(row(&p, "each"), calls(2, 5, 20));
    // A map over a map's json: one element per item.
    assert_eq!(row(&p, "again"), calls(2, 5, 20));
    // The whole object is no array contract: at least 0, the most unknown.
    assert_eq!(
        row(&p, "free"),
        Calls {
            min: Some(0),
            max: None,
            worst: None
        }
    );
    assert_eq!(
        p.total.calls,
        Calls {
            min: Some(5),
            max: None,
            worst: None
        }
    );
    assert_eq!(
        p.assumptions[0],
        "free: the number of map items is unknown: pass --items N, or declare \"maxItems\" in the expect of 'list'"
    );
}

#[test]
fn a_script_source_is_settled_by_items_alone() {
    let p = planned(
        r#"{"phases": [{"id": "ls", "type": "script", "run": ["ls"]},
        {"id": "each", "type": "map", "dependsOn": ["ls"], "over": "{steps.ls.output}", "task": "{item}"}]}"#,
    );
    assert_eq!(
        p.assumptions[0],
        "each: the number of map items is unknown: pass --items N"
    );
}

#[test]
fn items_flag_sets_every_map() {
    let p = plan(
        &flow(MAP_FLOW),
        &Options {
            items: Some(7),
            ..Options::default()
        },
        &NoEnv,
    );
    assert_eq!(row(&p, "each"), calls(7, 7, 28));
    assert_eq!(p.total.calls, calls(22, 22, 88));
}

#[test]
fn map_over_a_known_argument() {
    let f = flow(
        r#"{"args": {"files": {"description": "the files"}}, "phases": [
        {"id": "each", "type": "map", "over": "{args.files}", "task": "{item}"}]}"#,
    );
    let mut args = Map::default();
    args.insert(
        "files".into(),
        crate::value::Value::Array(vec!["a".into(), "b".into(), "c".into()]),
    );
    let p = plan(
        &f,
        &Options {
            args: Some(&args),
            ..Options::default()
        },
        &NoEnv,
    );
    assert_eq!(row(&p, "each"), calls(3, 3, 12));
}

#[test]
fn tournament_variants_and_a_judge_race_every_branch() {
    let p = planned(
        r#"{"phases": [
        {"id": "t", "type": "tournament", "task": "name it", "variants": 4},
        {"id": "b", "type": "tournament", "dependsOn": ["t"], "branches": [{"task": "x"}, {"task": "y", "agent": "other"}], "judgeAgent": "judge"},
        {"id": "r", "type": "race", "dependsOn": ["b"], "branches": [{"task": "x"}, {"task": "y"}, {"task": "z"}]}
    ]}"#,
    );
    assert_eq!(row(&p, "t"), calls(5, 5, 20));
    assert_eq!(row(&p, "b"), calls(3, 3, 12));
    let agents: Vec<&str> = p.phases[1]
        .groups
        .iter()
        .map(|g| g.agent.as_str())
        .collect();
    assert_eq!(agents, ["default", "other", "judge"]);
    assert_eq!(row(&p, "r"), calls(3, 3, 12));
}

#[test]
fn tree_reduce_makes_its_batches() {
    let p = planned(
        r#"{"phases": [
        {"id": "a", "task": "1"}, {"id": "b", "task": "2"}, {"id": "c", "task": "3"},
        {"id": "d", "task": "4"}, {"id": "e", "task": "5"},
        {"id": "sum", "type": "reduce", "from": ["a", "b", "c", "d", "e"], "reduceStrategy": "tree",
         "task": "{previous.output}"},
        {"id": "any", "type": "reduce", "from": ["a", "b", "c"], "join": "any", "reduceStrategy": "tree",
         "batchSize": 3, "task": "{previous.output}", "dependsOn": ["sum"]}
    ]}"#,
    );
    // 5 inputs in pairs: 3 + 2 + 1 batches.
    assert_eq!(row(&p, "sum"), calls(6, 6, 24));
    // join "any": it may start with one input done (one call); 3 inputs in one batch.
    assert_eq!(row(&p, "any"), calls(1, 1, 4));
}

struct Saved;

impl Env for Saved {
    fn saved_flow(&self, name: &str) -> Option<String> {
        (name == "lint").then(|| {
            r#"{"phases": [{"id": "scan", "task": "scan"}, {"id": "each", "type": "loop", "dependsOn": ["scan"],
                "task": "fix", "until": "{loop.iteration} >= 2", "maxIterations": 3}]}"#
                .to_owned()
        })
    }

    fn context_file(&self, path: &str) -> Option<String> {
        (path == "notes.md").then(|| "x".repeat(100))
    }

    fn price(&self, agent: &str) -> Result<Price, String> {
        match agent {
            "default" => Ok(Price {
                input_per_mtok: 1.0,
                output_per_mtok: 2.0,
            }),
            _ => Err(format!("agent '{agent}' has no price")),
        }
    }
}

#[test]
fn sub_flows_count_their_phases() {
    let f = flow(
        r#"{"phases": [
        {"id": "inline", "type": "flow", "def": {"phases": [{"id": "x", "task": "x"}, {"id": "y", "dependsOn": ["x"], "when": "{steps.x.output} == go", "task": "y"}]}},
        {"id": "saved", "type": "flow", "use": "lint", "dependsOn": ["inline"]},
        {"id": "later", "type": "flow", "use": "missing", "dependsOn": ["saved"]},
        {"id": "built", "type": "flow", "def": "{steps.later.output}", "dependsOn": ["later"]},
        {"id": "grow", "type": "expand", "def": {"phases": [{"id": "z", "task": "z"}]}, "dependsOn": ["built"]}
    ]}"#,
    );
    let p = plan(&f, &Options::default(), &Saved);
    assert_eq!(row(&p, "inline"), calls(1, 2, 8));
    let children: Vec<(String, Calls)> = p.phases[0]
        .children
        .as_ref()
        .expect("children")
        .iter()
        .map(|c| (c.id.clone(), c.calls))
        .collect();
    assert_eq!(
        children,
        [("x".into(), calls(1, 1, 4)), ("y".into(), calls(0, 1, 4))]
    );
    assert_eq!(row(&p, "saved"), calls(2, 4, 16));
    for id in ["later", "built", "grow"] {
        assert_eq!(row(&p, id), Calls::UNKNOWN, "{id}");
    }
    assert_eq!(
        p.assumptions[..3],
        [
            "later: saved flow 'missing' was not found: its calls are unknown",
            "built: its 'def' is built at run time (a template): the calls of that sub-flow are unknown; write the def as an object to plan it",
            "grow: expand builds its phases at run time: its calls are unknown",
        ]
    );
}

#[test]
fn a_saved_flow_that_uses_itself_is_unknown() {
    struct Loop;
    impl Env for Loop {
        fn saved_flow(&self, _: &str) -> Option<String> {
            Some(r#"{"phases": [{"id": "again", "type": "flow", "use": "me"}]}"#.to_owned())
        }
    }
    let f = flow(r#"{"phases": [{"id": "go", "type": "flow", "use": "me"}]}"#);
    let p = plan(&f, &Options::default(), &Loop);
    assert_eq!(p.total.calls, Calls::UNKNOWN);
    assert_eq!(
        p.assumptions[0],
        "go/again: saved flow 'me' uses itself: its calls are unknown"
    );
}

#[test]
fn retries_raise_worst_only() {
    let p = planned(
        r#"{"phases": [
        {"id": "a", "task": "x", "retry": {"max": 5}},
        {"id": "b", "dependsOn": ["a"], "task": "x", "idempotent": false},
        {"id": "c", "dependsOn": ["b"], "task": "x", "idempotent": false, "retry": {"max": 2}},
        {"id": "s", "type": "script", "dependsOn": ["c"], "run": ["true"]},
        {"id": "ok", "type": "approval", "dependsOn": ["s"]}
    ]}"#,
    );
    assert_eq!(
        rows(&p)
            .into_iter()
            .map(|(_, c)| c.worst.unwrap())
            .collect::<Vec<_>>(),
        [6, 1, 3, 0, 0]
    );
    assert_eq!(p.total.calls, calls(3, 3, 10));
}

#[test]
fn prompt_tokens_count_static_text_and_pre_read_files() {
    let f = flow(
        r#"{"args": {"topic": {"type": "string"}}, "phases": [
        {"id": "a", "task": "Write about {args.topic} now", "context": ["notes.md", "missing.md"]},
        {"id": "g", "type": "gate", "dependsOn": ["a"], "task": "Good?"},
        {"id": "v", "type": "gate", "dependsOn": ["g"], "task": "End with VERDICT: PASS or BLOCK"}
    ]}"#,
    );
    let p = plan(&f, &Options::default(), &Saved);
    // "Write about  now" = 16 chars; notes.md's block: "## File: notes.md\n\n```md\n" (25)
    // + 100 + "\n```" (4) + "\n\n" (2) = 131; 147 chars = 37 tokens.
    assert_eq!((p.phases[0].prompt_tokens, p.phases[0].dynamic), (37, true));
    // "Good?" + the verdict suffix.
    let suffix = super::count::GATE_SUFFIX.chars().count() as u64;
    assert_eq!(p.phases[1].prompt_tokens, (5 + suffix).div_ceil(4));
    assert!(!p.phases[1].dynamic);
    // A task that asks for the verdict itself gets no suffix.
    assert_eq!(p.phases[2].prompt_tokens, 31u64.div_ceil(4));
    assert_eq!(
        p.total.input_tokens.min,
        Some(37 + (5 + suffix).div_ceil(4) + 8)
    );
}

/// The static sizes are those of the prompts a run sends, when no value is inserted (the
/// tournament's variants answer "", so its judge's prompt is all fixed text).
#[test]
fn static_sizes_are_the_runs_prompts() {
    let text = r#"{"phases": [
        {"id": "a", "task": "Write it."},
        {"id": "g", "type": "gate", "dependsOn": ["a"], "task": "Good?"},
        {"id": "t", "type": "tournament", "dependsOn": ["g"], "task": "Name it.", "variants": 2},
        {"id": "u", "type": "tournament", "dependsOn": ["t"], "task": "Again.", "mode": "aggregate", "judge": "Pick one."}
    ]}"#;
    let p = planned(text);
    let case = crate::test::TestCase::parse(
        r#"{"name": "static", "answers": {"g": "VERDICT: PASS", "*": ""}}"#,
    )
    .expect("a case");
    let report = crate::test::run_case(text, &case, std::path::Path::new("."));
    let sent = |node: &str| {
        report
            .calls
            .iter()
            .find(|c| c.node == node)
            .map(|c| c.prompt.chars().count() as u64)
            .expect(node)
    };
    let chars = |i: usize, g: usize| p.phases[i].groups[g].chars;
    assert_eq!(sent("a"), chars(0, 0));
    assert_eq!(sent("g"), chars(1, 0));
    assert_eq!(sent("t#0"), chars(2, 0));
    assert_eq!(sent("t#judge"), chars(2, 1));
    assert_eq!(sent("u#judge"), chars(3, 1));
    assert_eq!(report.calls.len() as u64, p.total.calls.max.unwrap());
}

#[test]
fn output_tokens_and_cost_need_the_flag_and_a_price() {
    let f = flow(
        r#"{"phases": [{"id": "a", "task": "abcdefgh"}, {"id": "l", "type": "loop", "dependsOn": ["a"],
        "task": "abcd", "until": "{loop.iteration} >= 2", "maxIterations": 2}]}"#,
    );
    let without = plan(&f, &Options::default(), &Saved);
    assert_eq!(
        (without.total.output_tokens, without.total.cost_usd),
        (None, None)
    );
    let with = plan(
        &f,
        &Options {
            output_tokens: Some(1000),
            ..Options::default()
        },
        &Saved,
    );
    let out = with.total.output_tokens.expect("output tokens");
    assert_eq!((out.min, out.max), (Some(2000), Some(3000)));
    // min: a (2 tokens) + one iteration (1 token): 3 input tokens, 2000 output tokens.
    let cost = with.total.cost_usd.expect("priced");
    let near = |x: Option<f64>, y: f64| (x.expect("a cost") - y).abs() < 1e-12;
    assert!(near(cost.min, (3.0 * 1.0 + 2000.0 * 2.0) / 1e6), "{cost:?}");
    assert!(near(cost.max, (4.0 * 1.0 + 3000.0 * 2.0) / 1e6), "{cost:?}");
    let unpriced = flow(r#"{"phases": [{"id": "a", "agent": "cheap", "task": "x"}]}"#);
    let p = plan(
        &unpriced,
        &Options {
            output_tokens: Some(10),
            ..Options::default()
        },
        &Saved,
    );
    assert_eq!(p.total.cost_usd, None);
    assert_eq!(p.assumptions, ["cost: agent 'cheap' has no price"]);
}

#[test]
fn caps_below_or_within_the_counts() {
    let text = |cap: u32| {
        format!(
            r#"{{"budget": {{"maxCalls": {cap}}}, "phases": [
            {{"id": "l", "type": "loop", "task": "x", "until": "{{loop.iteration}} >= 2", "maxIterations": 3}},
            {{"id": "a", "dependsOn": ["l"], "task": "y"}}]}}"#
        )
    };
    let below = planned(&text(1));
    assert_eq!(below.caps.max_calls, Some(1));
    assert_eq!(
        below.warnings,
        [
            "[W0103] Budget cap (1 calls) is below the minimum of 2 agent call(s) any run of this flow makes: the run will stop early"
        ]
    );
    let within = planned(&text(3));
    assert_eq!(
        within.warnings,
        [
            "the run may stop at its budget after 3 calls (maxCalls 3; the plan counts 2 to 4 calls, 16 with every retry)"
        ]
    );
    assert!(planned(&text(16)).warnings.is_empty());
    let allowed = text(1).replacen('{', r#"{"lint": {"allow": ["W0103"]}, "#, 1);
    assert!(planned(&allowed).warnings.is_empty());
    // `--max-calls` (tfc run --plan) replaces the budget's cap, with or without a budget.
    let flag = |text: &str| {
        plan(
            &flow(text),
            &Options {
                max_calls: Some(1),
                ..Options::default()
            },
            &NoEnv,
        )
    };
    assert_eq!(flag(&text(16)).warnings, below.warnings);
    let unbudgeted = flag(
        r#"{"phases": [{"id": "a", "task": "x"}, {"id": "b", "dependsOn": ["a"], "task": "y"}]}"#,
    );
    assert_eq!(unbudgeted.caps.max_calls, Some(1));
    assert_eq!(
        unbudgeted.warnings,
        [
            "[W0103] Budget cap (1 calls) is below the minimum of 2 agent call(s) any run of this flow makes: the run will stop early"
        ]
    );
}

#[test]
fn json_has_the_stable_shape() {
    let p = planned(
        r#"{"name": "demo", "budget": {"maxTokens": 100}, "phases": [{"id": "a", "task": "abcd"},
        {"id": "s", "type": "flow", "dependsOn": ["a"], "def": {"phases": [{"id": "x", "task": "{args.who}"}]}}]}"#,
    );
    assert_eq!(
        super::to_json(&p).to_json(),
        concat!(
            r#"{"flow":"demo","phases":["#,
            r#"{"id":"a","kind":"agent","calls":{"min":1,"max":1,"worst":4},"promptTokens":1,"dynamic":false},"#,
            r#"{"id":"s","kind":"flow","calls":{"min":1,"max":1,"worst":4},"promptTokens":0,"dynamic":true,"children":["#,
            r#"{"id":"x","kind":"agent","calls":{"min":1,"max":1,"worst":4},"promptTokens":0,"dynamic":true}]}],"#,
            r#""total":{"calls":{"min":2,"max":2,"worst":8},"inputTokens":{"min":1,"max":1},"outputTokens":null,"costUSD":null},"#,
            r#""caps":{"maxCalls":null,"maxTokens":100,"maxUSD":null},"#,
            r#""assumptions":["output tokens and cost: pass --output-tokens N (the tokens of one answer) to count them"],"warnings":[]}"#
        )
    );
}

#[test]
fn text_is_a_table() {
    let p = planned(
        r#"{"name": "demo", "phases": [{"id": "scan", "task": "abcd"},
        {"id": "each", "type": "map", "dependsOn": ["scan"], "over": "{steps.scan.output}", "task": "{item}"}]}"#,
    );
    assert_eq!(
        super::to_text(&p),
        "plan of 'demo': agent calls if every call succeeds (min to max), and with every retry (worst)

  phase  kind   min  max  worst  prompt tokens
  scan   agent    1    1      4  ~1
  each   map      0    ?      ?  ~0 + run-time values
  total           1    ?      ?

  input tokens   ~1 to ?  (static prompt text; values inserted at run time not counted)
  output tokens  ?
  cost           ?

? assumptions:
  - each: the number of map items is unknown: pass --items N, or declare \"maxItems\" in the expect of 'scan'
  - output tokens and cost: pass --output-tokens N (the tokens of one answer) to count them
"
    );
}

// The plan bounds real runs: small generated flows run on the deterministic test machine
// (`crate::test`, every call answered) make between `min` and `max` calls when no call fails,
// and between `min` and `worst` when calls fail (transiently, each fewer times than its
// attempt limit, so every phase still succeeds).

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
