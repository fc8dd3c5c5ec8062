//! Deep and wide values on purpose (structure-aware): `arbitrary` gives a small program of
//! container openings (one op may open thousands of levels at once), closings and scalars; the
//! value it builds goes through clone, compare, drop, compact and pretty JSON, text-mode (under
//! the prompt cap, as a run renders) and value-mode template rendering, and safeParse.
//! Oracles: a clone equals its original; the rendered text of `{args.v}` (pretty JSON for
//! containers, SPEC §4.4) reads back as the same value; value mode returns the value itself;
//! safeParse of the compact JSON is the value. Nothing may recurse in proportion to depth, so
//! any nesting must pass.

#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use tfc::compile::Template;
use tfc::eval::Bindings;
use tfc::eval::safe_parse::safe_parse;
use tfc::value::{Map, Value, parse_json};
use tfc_fuzz::{has_non_finite, same};

/// The default `[limits] max_prompt_bytes`.
const PROMPT_CAP: usize = 16 << 20;

#[derive(Arbitrary, Debug)]
enum Op {
    /// Open `1 + n` arrays (or objects keyed `k`), one inside the other.
    Open { object: bool, n: u16, key: String },
    /// Close the innermost open container.
    Close,
    /// Add a scalar to the innermost open container.
    Scalar(Scalar),
}

#[derive(Arbitrary, Debug)]
enum Scalar {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
}

fuzz_target!(|ops: Vec<Op>| {
    let value = build(ops);
    let copy = value.clone();
    assert!(same(&copy, &value), "clone differs");
    assert!(
        copy == value || has_nan(&value),
        "== disagrees with the structural comparison"
    );
    drop(copy);

    let compact = value.to_json();
    let pretty = value.to_pretty_json();
    let finite = !has_non_finite(&value);
    if finite {
        let back = parse_json(&compact).expect("compact JSON parses");
        assert!(same(&back, &value), "compact JSON round trip");
        let back = parse_json(&pretty).expect("pretty JSON parses");
        assert!(same(&back, &value), "pretty JSON round trip");
        let parsed = safe_parse(&compact)
            .value
            .expect("safeParse reads compact JSON");
        assert!(same(&parsed, &value), "safeParse of compact JSON");
    }

    let mut args = Map::default();
    args.insert("v".into(), value);
    let scope = Bindings {
        args: Some(Value::Object(args)),
        ..Bindings::default()
    };
    let Some(Value::Object(args)) = &scope.args else {
        unreachable!()
    };
    let value = &args["v"];
    // Text mode pretty-prints containers (SPEC §4.4), which grows with the square of the depth:
    // render as a run does, under the prompt cap, and check what fits.
    match Template::parse("{args.v}").render_capped(&scope, PROMPT_CAP) {
        Ok(rendered) => {
            let text = rendered.text;
            assert!(text.len() <= PROMPT_CAP);
            if finite && matches!(value, Value::Array(_) | Value::Object(_)) {
                let back = parse_json(&text).expect("rendered containers are JSON");
                assert!(same(&back, value), "text-mode render round trip");
            }
            let (mixed, _) = Template::parse("<{args.v}>").render_value(&scope);
            assert_eq!(mixed.as_str(), Some(format!("<{text}>").as_str()));
        }
        Err(over) => assert!(
            over.partial.text.len() <= PROMPT_CAP,
            "the cap bounds memory"
        ),
    }
    let (raw, _) = Template::parse("{args.v}").render_value(&scope);
    assert!(same(&raw, value), "value mode returns the raw value");
});

/// Builds the value without recursion; containers left open are closed at the end.
fn build(ops: Vec<Op>) -> Value {
    // Each open container: its key in the parent (for objects) and its finished members.
    enum Open {
        Array(Vec<Value>),
        Object(Map, String),
    }
    let mut stack: Vec<(Open, Option<String>)> = vec![(Open::Array(Vec::new()), None)];
    let mut budget = 50_000usize; // total containers, so one input stays within memory
    let add = |stack: &mut Vec<(Open, Option<String>)>, v: Value| match stack.last_mut() {
        Some((Open::Array(items), _)) => items.push(v),
        Some((Open::Object(map, key), _)) => {
            let k = std::mem::take(key);
            map.insert(k, v);
        }
        None => unreachable!("the root array is never closed"),
    };
    let close = |stack: &mut Vec<(Open, Option<String>)>| {
        let (open, _) = stack.pop().expect("not the root");
        let v = match open {
            Open::Array(items) => Value::Array(items),
            Open::Object(map, _) => Value::Object(map),
        };
        add(stack, v);
    };
    for op in ops {
        match op {
            Op::Open { object, n, key } => {
                for _ in 0..=n {
                    if budget == 0 {
                        break;
                    }
                    budget -= 1;
                    let open = if object {
                        Open::Object(Map::default(), key.clone())
                    } else {
                        Open::Array(Vec::new())
                    };
                    stack.push((open, None));
                }
            }
            Op::Close if stack.len() > 1 => close(&mut stack),
            Op::Close => {}
            Op::Scalar(s) => {
                let v = match s {
                    Scalar::Null => Value::Null,
                    Scalar::Bool(b) => Value::Bool(b),
                    Scalar::Number(n) => Value::Number(n),
                    Scalar::String(s) => Value::String(s),
                };
                add(&mut stack, v);
            }
        }
    }
    while stack.len() > 1 {
        close(&mut stack);
    }
    match stack.pop() {
        Some((Open::Array(mut items), _)) if items.len() == 1 => items.pop().unwrap_or_default(),
        Some((Open::Array(items), _)) => Value::Array(items),
        _ => unreachable!(),
    }
}

/// NaN is not equal to itself under `==`, as in JavaScript.
fn has_nan(value: &Value) -> bool {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Number(n) if n.is_nan() => return true,
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    false
}
