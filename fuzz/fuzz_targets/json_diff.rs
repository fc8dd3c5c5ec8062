//! Differential oracle for the two JSON readers: tfc's strict parser (`parse_json`, used on model
//! output) and the span-keeping JSONC flow reader, both against `serde_json` on the same text.
//!
//! * Whatever `serde_json` accepts, the strict parser accepts with the same value.
//! * Whatever the strict parser accepts and `serde_json` rejects is one of the documented
//!   differences: a lone surrogate escape (tfc decodes it to U+FFFD), a number that overflows a
//!   double (tfc gives ±∞ like `JSON.parse`), or nesting past `serde_json`'s recursion limit
//!   (tfc never recurses).
//! * On strict JSON the JSONC reader gives the same value, or reports only what it is meant to
//!   reject in flow files: a repeated key (E0002) or nesting past 256 levels.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tfc::value::{Value, parse_json};
use tfc_fuzz::same;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let ours = parse_json(text);
    let theirs: Result<serde_json::Value, _> = serde_json::from_str(text);
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) => assert!(same_as_serde(a, b), "values differ for {text:?}"),
        (Err(e), Ok(_)) => panic!("strict parser rejects JSON that serde_json accepts: {e}"),
        (Ok(_), Err(e)) => {
            let msg = e.to_string();
            assert!(
                has_surrogate_escape(text)
                    || msg.contains("number out of range")
                    || msg.contains("recursion limit"),
                "strict parser accepts what serde_json rejects ({msg}): {text:?}"
            );
        }
        (Err(_), Err(_)) => {}
    }

    if let Ok(strict) = &ours {
        let tree = tfc::json::parse(text);
        if tree.diagnostics.is_empty() {
            let root = tree.root.expect("no diagnostics means a tree");
            assert!(
                same(&root.to_value(), strict),
                "JSONC reader differs: {text:?}"
            );
        } else {
            for diag in &tree.diagnostics {
                assert!(
                    diag.code.as_str() == "E0002" || diag.message.contains("nesting too deep"),
                    "JSONC reader rejects strict JSON: {} {}",
                    diag.code.as_str(),
                    diag.message
                );
            }
        }
    }
});

/// `a` equals serde_json's `b`, without recursion (inputs nest deep). Numbers compare as doubles
/// (serde_json keeps integers exact, but JSON numbers are doubles in tfc, as in JavaScript).
fn same_as_serde(a: &Value, b: &serde_json::Value) -> bool {
    let mut stack = vec![(a, b)];
    while let Some(pair) = stack.pop() {
        match pair {
            (Value::Null, serde_json::Value::Null) => {}
            (Value::Bool(x), serde_json::Value::Bool(y)) if x == y => {}
            (Value::Number(x), serde_json::Value::Number(y)) => {
                if y.as_f64() != Some(*x) {
                    return false;
                }
            }
            (Value::String(x), serde_json::Value::String(y)) if x == y => {}
            (Value::Array(x), serde_json::Value::Array(y)) if x.len() == y.len() => {
                stack.extend(x.iter().zip(y));
            }
            (Value::Object(x), serde_json::Value::Object(y)) if x.len() == y.len() => {
                for ((kx, vx), (ky, vy)) in x.iter().zip(y) {
                    if kx != ky {
                        return false;
                    }
                    stack.push((vx, vy));
                }
            }
            _ => return false,
        }
    }
    true
}

/// Whether `text` has a `\uD800`–`\uDFFF` escape. serde_json rejects an unpaired one (with
/// "lone surrogate" or, when another escape follows, "unexpected end of hex escape"); tfc, like
/// `JSON.parse`, reads it (as U+FFFD).
fn has_surrogate_escape(text: &str) -> bool {
    text.as_bytes().windows(4).any(|w| {
        w[0] == b'\\'
            && w[1] == b'u'
            && w[2].eq_ignore_ascii_case(&b'd')
            && matches!(w[3].to_ascii_lowercase(), b'8'..=b'9' | b'a'..=b'f')
    })
}
