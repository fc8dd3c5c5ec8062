//! coerceArray (SPEC §5.2).

use crate::value::Value;

/// An array itself; an object's first array among `items`, `results`, `list`, `data`,
/// `findings`; else `None`.
pub fn coerce_array(value: &Value) -> Option<&Vec<Value>> {
    match value {
        Value::Array(a) => Some(a),
        Value::Object(o) => ["items", "results", "list", "data", "findings"]
            .iter()
            .find_map(|k| o.get(*k).and_then(Value::as_array)),
        _ => None,
    }
}
