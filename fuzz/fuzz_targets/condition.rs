//! Conditions: any bytes (lossy UTF-8) → parse. A parse error must point inside the input on
//! char boundaries; a parsed condition must evaluate without panicking, and printing it must
//! give a condition that parses and prints the same. Every input is also run as a gate entry.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tfc::eval::{Bindings, StepState, StepStatus, eval_gate_entry};
use tfc::syntax::condition::{Condition, parse_cond};
use tfc::value::{Map, Value};

fn scope() -> Bindings {
    let mut scope = Bindings::default();
    let mut args = Map::default();
    args.insert("x".into(), Value::Number(5.0));
    args.insert("s".into(), Value::from(" 42 "));
    args.insert("t".into(), Value::Bool(true));
    args.insert("n".into(), Value::Null);
    let nested = Value::Array(vec![Value::from("b")]);
    args.insert(
        "a".into(),
        Value::Array(vec![Value::Number(1.0), Value::Null, nested]),
    );
    args.insert("o".into(), Value::Object(Map::default()));
    scope.args = Some(Value::Object(args));
    scope
        .steps
        .insert("a".into(), StepState::done("{\"sev\": \"high\"}"));
    scope.steps.insert(
        "f".into(),
        StepState::new(StepStatus::Failed, "x".into(), None),
    );
    scope
        .locals
        .insert("item".into(), Value::from("\u{e000}😀"));
    scope
}

fuzz_target!(|data: &[u8]| {
    let src = String::from_utf8_lossy(data);
    let scope = scope();
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
            let result = condition.eval(&scope);
            assert_eq!(result.value, condition.holds(&scope));
            for (span, _) in condition.refs() {
                assert!(span.range().end <= src.len());
            }
            let printed = parse_cond(&src).expect("parsed once").to_string();
            let again = parse_cond(&printed).expect("printed conditions parse");
            assert_eq!(again.to_string(), printed);
        }
    }
    let _ = eval_gate_entry(&src, &scope);
});
