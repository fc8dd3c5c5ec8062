//! coerceArray: the array a phase iterates over (SPEC §5.2), for `map.over` and gate scorer
//! targets.

use crate::value::Value;

/// Wrapper keys searched, in this order, when the value is an object.
pub const WRAPPER_KEYS: [&str; 5] = ["items", "results", "list", "data", "findings"];

/// An array is itself; an object yields the value of the first of [`WRAPPER_KEYS`] that holds
/// an array; anything else has no array.
pub fn coerce_array(value: &Value) -> Option<&Vec<Value>> {
    match value {
        Value::Array(items) => Some(items),
        Value::Object(map) => WRAPPER_KEYS
            .iter()
            .find_map(|key| map.get(*key).and_then(Value::as_array)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::parse_json;

    fn coerce(text: &str) -> Option<String> {
        let value = parse_json(text).ok()?;
        coerce_array(&value).map(|a| Value::Array(a.clone()).to_json())
    }

    #[test]
    fn arrays_are_themselves() {
        assert_eq!(coerce("[1,2]").as_deref(), Some("[1,2]"));
        assert_eq!(coerce("[]").as_deref(), Some("[]"));
    }

    #[test]
    fn wrappers_in_fixed_order() {
        assert_eq!(coerce(r#"{"results":[1]}"#).as_deref(), Some("[1]"));
        assert_eq!(
            coerce(r#"{"findings":[3],"data":[2],"items":[1]}"#).as_deref(),
            Some("[1]")
        );
        // Keys not holding an array are passed over.
        assert_eq!(
            coerce(r#"{"items":{"a":[0]},"results":null,"list":"x","data":[4]}"#).as_deref(),
            Some("[4]")
        );
        assert_eq!(coerce(r#"{"findings":[]}"#).as_deref(), Some("[]"));
    }

    #[test]
    fn others_have_no_array() {
        for text in [r#"{"Items":[1]}"#, "{}", "null", "1", r#""[1]""#, "true"] {
            assert_eq!(coerce(text), None, "{text}");
        }
    }
}
