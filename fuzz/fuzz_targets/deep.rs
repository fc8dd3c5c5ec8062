//! Deep and wide values on purpose (structure-aware): `arbitrary` gives a small program of
//! container openings (one op may open thousands of levels at once), closings and scalars; the
//! value it builds goes through clone, compare, drop, compact and pretty JSON, text-mode (under
//! the prompt cap, as a run renders) and value-mode template rendering, and safeParse.
//! Sizes: the levels an op opens are spread over powers of two, and an input may open a few
//! hundred containers (past the readable and parser depths, fast) — or 50,000 (SPEC's 10,000
//! levels and beyond) for one input in [`LARGE_ONE_IN`], picked by a hash of its bytes
//! ([`tfc_fuzz::large_draw`]); `corpus/deep/seed-deep-50000` is such an input.

#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use tfc::compile::Template;
use tfc::eval::Bindings;
use tfc::eval::safe_parse::safe_parse;
use tfc::value::{Map, Value, parse_json};
use tfc_fuzz::{has_non_finite, large_draw, same};

/// The default `[limits] max_prompt_bytes`.
const PROMPT_CAP: usize = 16 << 20;

#[derive(Arbitrary, Debug)]
enum Op {
    /// Open [`levels`]`(n)` arrays (or objects keyed `k`), one inside the other.
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

/// One input in this many is large.
const LARGE_ONE_IN: u64 = 256;
/// Containers a small input may open (an object one more per four bytes of its key): past
/// the readable depth (64) and the parsers' nesting limit (256).
const SMALL: usize = 512;
/// Containers a large input may open: well past SPEC's 10,000 levels, within memory.
const LARGE: usize = 50_000;

/// Levels one `Open` op nests: `1 + n`, shifted right by `n % 16`, so that the counts spread
/// over every power of two up to 65,536 instead of sitting near 32,768.
fn levels(n: u16) -> usize {
    1 + usize::from(n >> (n % 16))
}

fuzz_target!(|data: &[u8]| {
    let budget = if large_draw(data, LARGE_ONE_IN) {
        LARGE
    } else {
        SMALL
    };
    let Ok(ops) = Vec::<Op>::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let value = build(ops, budget);
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
fn build(ops: Vec<Op>, mut budget: usize) -> Value {
    // Each open container: its key in the parent (for objects) and its finished members.
    enum Open {
        Array(Vec<Value>),
        Object(Map, String),
    }
    let mut stack: Vec<(Open, Option<String>)> = vec![(Open::Array(Vec::new()), None)];
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
                // Every level of an object repeats its key in each rendering: long keys cost more.
                let cost = if object { 1 + key.len() / 4 } else { 1 };
                for _ in 0..levels(n) {
                    if budget < cost {
                        break;
                    }
                    budget -= cost;
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
