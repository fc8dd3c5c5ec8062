//! Conditions: any bytes (lossy UTF-8) → parse. A parse error must point inside the input on
//! char boundaries. A parsed condition must evaluate without panicking, the compiled program must
//! agree with the value-only evaluation, and its printed form must parse, print the same, and
//! evaluate to the same value with the same reads in several contexts picked by the input's
//! bytes. Every input is also run as a gate entry.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tfc::compile::Condition;
use tfc::eval::eval_gate_entry;
use tfc::syntax::condition::parse_cond;

fuzz_target!(|data: &[u8]| {
    let src = String::from_utf8_lossy(data);
    let scopes: Vec<_> = (0u8..3)
        .map(|k| {
            let seed: Vec<u8> = data
                .iter()
                .rev()
                .take(9)
                .map(|b| b.wrapping_add(k))
                .collect();
            tfc_fuzz::scope(&seed)
        })
        .collect();
    match Condition::parse(&src) {
        Err(error) => {
            let range = error.span.range();
            assert!(
                range.start <= range.end && range.end <= src.len(),
                "{error:?}"
            );
            assert!(src.is_char_boundary(range.start) && src.is_char_boundary(range.end));
        }
        Ok(condition) => {
            for (span, _) in condition.refs() {
                assert!(span.range().end <= src.len());
            }
            let printed = parse_cond(&src).expect("parsed once").to_string();
            let again = parse_cond(&printed).expect("printed conditions parse");
            assert_eq!(again.to_string(), printed);
            let reparsed = Condition::parse(&printed).expect("printed conditions compile");
            for scope in &scopes {
                let result = condition.eval(scope);
                assert_eq!(result.value, condition.holds(scope));
                let other = reparsed.eval(scope);
                assert_eq!(
                    result.value, other.value,
                    "printed form {printed:?} evaluates differently"
                );
                assert_eq!(
                    result.reads, other.reads,
                    "printed form {printed:?} reads differently"
                );
            }
        }
    }
    let _ = eval_gate_entry(&src, &scopes[0]);
});
