//! Helpers shared by the fuzz targets: value comparisons that never recurse (fuzzed values nest
//! as deep as the input allows) and a small evaluation scope.

use tfc::eval::{Bindings, StepState, StepStatus};
use tfc::value::{Map, Value};

/// `a == b` without recursion; NaN equals NaN (a value compared with itself must be equal).
pub fn same(a: &Value, b: &Value) -> bool {
    let mut stack = vec![(a, b)];
    while let Some(pair) = stack.pop() {
        match pair {
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                stack.extend(x.iter().zip(y));
            }
            (Value::Object(x), Value::Object(y)) if x.len() == y.len() => {
                for ((kx, vx), (ky, vy)) in x.iter().zip(y) {
                    if kx != ky {
                        return false;
                    }
                    stack.push((vx, vy));
                }
            }
            (Value::Array(_) | Value::Object(_), _) => return false,
            (Value::Number(x), Value::Number(y)) if x.is_nan() && y.is_nan() => {}
            (x, y) if x != y => return false,
            _ => {}
        }
    }
    true
}

/// Whether any number in `value` is NaN or infinite (JSON cannot carry those).
pub fn has_non_finite(value: &Value) -> bool {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Number(n) if !n.is_finite() => return true,
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    false
}

/// An evaluation scope whose values are picked by `seed`, so one fuzz input explores one context
/// and the next input another: args of every JSON type, a done step with JSON output, a failed
/// step, a skipped one, an `item` local and a loop counter.
pub fn scope(seed: &[u8]) -> Bindings {
    let byte = |i: usize| seed.get(i).copied().unwrap_or(0);
    let pick = |i: usize, choices: &[Value]| choices[byte(i) as usize % choices.len()].clone();
    let scalars = [
        Value::Null,
        Value::Bool(true),
        Value::Bool(false),
        Value::Number(0.0),
        Value::Number(5.0),
        Value::Number(-1.5),
        Value::Number(f64::NAN),
        Value::from(""),
        Value::from(" 42 "),
        Value::from("high"),
        Value::from("\u{e000}😀"),
        Value::Array(vec![]),
        Value::Array(vec![Value::from("b"), Value::Number(1.0)]),
        Value::Object(Map::default()),
    ];
    let mut args = Map::default();
    for (i, key) in ["x", "s", "t", "n", "mode"].into_iter().enumerate() {
        args.insert(key.into(), pick(i, &scalars));
    }
    let mut scope = Bindings {
        args: Some(Value::Object(args)),
        ..Bindings::default()
    };
    let outputs = [
        "{\"sev\": \"high\", \"n\": 3}",
        "ok",
        "",
        "[1, 2]",
        "3",
        " done ",
    ];
    let output = outputs[byte(5) as usize % outputs.len()];
    scope.steps.insert("a".into(), StepState::done(output));
    let statuses = [StepStatus::Done, StepStatus::Failed, StepStatus::Hidden];
    let status = statuses[byte(6) as usize % statuses.len()];
    scope
        .steps
        .insert("b".into(), StepState::new(status, "x".into(), None));
    scope.locals.insert("item".into(), pick(7, &scalars));
    let mut lp = Map::default();
    lp.insert("iteration".into(), Value::Number(f64::from(byte(8) % 4)));
    scope.locals.insert("loop".into(), Value::Object(lp));
    scope
}

/// Invocation arguments and lowering options for the check targets: known (if odd) arguments
/// turn on E0502/E0503/W0202/W0203/W0310.
pub fn check_setup() -> (tfc::flow::Invocation, tfc::flow::LowerOptions) {
    let inv = tfc::flow::Invocation {
        pairs: vec![("pr".into(), "1".into()), ("codebase".into(), "/x".into())],
        ..tfc::flow::Invocation::default()
    };
    let lower = tfc::flow::LowerOptions {
        default_name: Some("fuzz".into()),
    };
    (inv, lower)
}

/// The check runs of the check targets: plain, strict with arguments, and plain again (to compare
/// with the first).
pub fn check_options(inv: &tfc::flow::Invocation) -> [tfc::check::CheckOptions<'_>; 3] {
    [
        tfc::check::CheckOptions::default(),
        tfc::check::CheckOptions {
            strict: Some(true),
            args: Some(inv),
            cwd: Some("/y".into()),
            ..tfc::check::CheckOptions::default()
        },
        tfc::check::CheckOptions::default(),
    ]
}

/// Small flows that between them use every decision the run machine makes: retries with
/// backoff, `when`, `join: any`, `optional`, map over a JSON output, reduce, a gate with
/// rework, a loop, parallel, race, tournament, approval, a script, an inline sub-flow and a
/// token budget. Each checks clean (asserted on first use).
pub const MACHINE_FLOWS: [&str; 6] = [
    r#"{"phases":[{"id":"a","task":"A","retry":{"max":2,"backoffMs":10}},{"id":"b","task":"B {steps.a.output}","dependsOn":["a"],"when":"{steps.a.output} != skip"},{"id":"c","task":"C","dependsOn":["a","b"],"join":"any","optional":true}]}"#,
    r#"{"phases":[{"id":"list","task":"list","output":"json"},{"id":"m","type":"map","over":"{steps.list.json}","task":"do {item}","dependsOn":["list"]},{"id":"r","type":"reduce","from":["m"],"task":"sum {previous.output}"}]}"#,
    r#"{"phases":[{"id":"w","task":"work"},{"id":"g","type":"gate","task":"judge {steps.w.output}, end with VERDICT","dependsOn":["w"],"onBlock":"retry"},{"id":"l","type":"loop","task":"improve {steps.w.output}","until":"{loop.iteration} >= 2","maxIterations":3,"dependsOn":["g"]}]}"#,
    r#"{"phases":[{"id":"p","type":"parallel","branches":[{"task":"x"},{"task":"y"}]},{"id":"r","type":"race","branches":[{"task":"x"},{"task":"y"}],"dependsOn":["p"]},{"id":"t","type":"tournament","task":"t {steps.r.output}","variants":2,"dependsOn":["r"]}]}"#,
    r#"{"phases":[{"id":"ap","type":"approval","task":"ok?"},{"id":"s","type":"script","run":["cat"],"input":"hi","dependsOn":["ap"]},{"id":"sub","type":"flow","def":{"phases":[{"id":"inner","task":"in"}]},"dependsOn":["s"]}]}"#,
    r#"{"budget":{"maxTokens":100},"phases":[{"id":"a","task":"A"},{"id":"b","task":"B","dependsOn":["a"]},{"id":"c","type":"map","over":"{steps.a.json}","task":"c {item}","dependsOn":["a"]}]}"#,
];

/// The flows of [`MACHINE_FLOWS`], lowered and checked once.
pub fn machine_flows() -> &'static [std::sync::Arc<tfc::flow::Flow>] {
    static FLOWS: std::sync::OnceLock<Vec<std::sync::Arc<tfc::flow::Flow>>> =
        std::sync::OnceLock::new();
    FLOWS.get_or_init(|| {
        MACHINE_FLOWS
            .iter()
            .map(|text| {
                let checked = tfc::check::check_source(
                    text,
                    &tfc::flow::LowerOptions::default(),
                    &tfc::check::CheckOptions::default(),
                );
                assert!(!checked.has_errors(), "a machine flow has errors: {text}");
                std::sync::Arc::new(checked.flow.expect("lowered"))
            })
            .collect()
    })
}

/// The configuration the machine targets run with: `ask` for approvals, `lookups` for phases
/// asking for reusable states (as in a resumed run).
pub fn machine_config(ask: bool, lookups: bool) -> tfc::run::machine::Config {
    tfc::run::machine::Config {
        run_id: "fuzz".into(),
        ask,
        lookups,
        max_output: 1 << 20,
        max_prompt: 1 << 20,
        ..tfc::run::machine::Config::default()
    }
}

/// Whether a structure-aware target builds its rare large input from these bytes: one input
/// in `one_in`, by a hash of all of them (FNV-1a). Every mutation draws again, so large inputs
/// stay that share of the runs whatever the corpus holds. (A size read from the bytes would
/// survive most mutations, and large inputs reach new hit counts, so the corpus would fill
/// with them and the target would crawl.)
pub fn large_draw(data: &[u8], one_in: u64) -> bool {
    let hash = data.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    // The high half: FNV's low bits depend on the bytes' low bits only.
    (hash >> 32).is_multiple_of(one_in)
}

#[cfg(test)]
mod tests {
    use super::large_draw;

    #[test]
    fn the_committed_large_seeds_are_large_draws() {
        // Both targets draw one input in 256; editing a seed by a byte makes it small.
        for seed in [
            &include_bytes!("../corpus/deep/seed-deep-50000")[..],
            &include_bytes!("../corpus/flow_shape/seed-phases-2000")[..],
        ] {
            assert!(large_draw(seed, 256));
            assert!(!large_draw(&seed[..seed.len() - 1], 256));
        }
    }

    #[test]
    fn one_draw_in_n_is_large_and_trailing_zeros_do_not_keep_it() {
        // Inputs counting up, as mutations of one input do: about 1/128 of them are large.
        let large = (0u32..128_000)
            .filter(|i| large_draw(&i.to_le_bytes(), 128))
            .count();
        assert!((700..1_300).contains(&large), "{large}");
        // The low bits of FNV-1a survive appended zeros; the high half does not.
        let zeros = (0u32..128_000)
            .filter(|i| {
                let mut b = i.to_le_bytes().to_vec();
                b.push(0);
                large_draw(&b, 128) && large_draw(&i.to_le_bytes(), 128)
            })
            .count();
        assert!(zeros < 50, "{zeros}");
    }
}
