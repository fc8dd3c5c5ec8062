//! Fuzz target: any bytes, read as lossy UTF-8, through `safe_parse` and `parse_json`.
//!
//! Neither may panic (nor overflow the stack, whatever the nesting); `safe_parse` never returns
//! a value together with the warning; a value it returns, written with `to_json` and read back
//! by both `parse_json` and `safe_parse`, is the same value; and whatever `parse_json` accepts
//! re-serialises into JSON that parses back to the same value.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tfc::eval::safe_parse::safe_parse;
use tfc::value::parse_json;
use tfc_fuzz::{has_non_finite, same};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);

    let parsed = safe_parse(&text);
    assert!(parsed.value.is_none() || parsed.warning.is_none());
    if let Some(value) = &parsed.value {
        // JSON cannot hold NaN, and to_json writes ±∞ (from overflowing literals) as null.
        if !has_non_finite(value) {
            let json = value.to_json();
            let strict = parse_json(&json).expect("to_json output must parse");
            assert!(same(&strict, value), "safeParse result round trip: {json}");
            let again = safe_parse(&json)
                .value
                .expect("safeParse reads its own output");
            assert!(same(&again, value), "safeParse of its own output: {json}");
        }
    }

    if let Ok(value) = parse_json(&text) {
        let json = value.to_json();
        let again = parse_json(&json).expect("to_json output must parse");
        if !has_non_finite(&value) {
            assert!(same(&again, &value), "round trip of {json}");
        }
    }
});
