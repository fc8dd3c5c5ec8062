//! Fuzz target: any bytes, read as lossy UTF-8, through `safe_parse` and `parse_json`.
//!
//! Neither may panic (nor overflow the stack, whatever the nesting); `safe_parse` never returns
//! a value together with the warning; and whatever `parse_json` accepts re-serialises with
//! `Value::to_json` into JSON that parses back to the same value.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tfc::eval::safe_parse::safe_parse;
use tfc::value::{Value, parse_json};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);

    let parsed = safe_parse(&text);
    assert!(parsed.value.is_none() || parsed.warning.is_none());

    if let Ok(value) = parse_json(&text) {
        let json = value.to_json();
        let again = parse_json(&json).expect("to_json output must parse");
        // JSON cannot hold NaN, and to_json writes ±∞ (from overflowing literals) as null.
        if !has_non_finite(&value) {
            assert!(same(&again, &value), "round trip of {json}");
        }
    }
});

/// Whether any number in `value` is NaN or infinite (without recursion: fuzzed input nests deep).
fn has_non_finite(value: &Value) -> bool {
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

/// `a == b` without recursion (the derived `PartialEq` recurses, and fuzzed values nest deep).
fn same(a: &Value, b: &Value) -> bool {
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
            (x, y) if x != y => return false,
            _ => {}
        }
    }
    true
}
