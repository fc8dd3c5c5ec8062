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
