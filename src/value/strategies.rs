//! Proptest strategies shared by the JSON tests.

use super::types::{Map, Value};
use proptest::prelude::*;

/// Any finite double: normal, subnormal and zero, of either sign, plus small integers and
/// short decimals as models write them.
pub fn finite_f64() -> impl Strategy<Value = f64> {
    use proptest::num::f64::{NEGATIVE, NORMAL, POSITIVE, SUBNORMAL, ZERO};
    prop_oneof![
        POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | ZERO,
        (-1_000_000i64..1_000_000).prop_map(|n| n as f64),
        (-100_000i64..100_000).prop_map(|n| n as f64 / 100.0),
    ]
}

/// Any value with finite numbers, nested a few levels.
pub fn arb_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        finite_f64().prop_map(Value::Number),
        any::<String>().prop_map(Value::String),
        "[a-z\"\\\\/\n\t\u{0}-\u{1f}é中😀]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-e\"]{0,3}|.{0,6}", inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map>())),
        ]
    })
}
