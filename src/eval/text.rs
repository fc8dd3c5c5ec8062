//! Values as template text (SPEC §4.4) and as booleans (SPEC §6).

use super::js_trim;
use crate::value::{Value, write_pretty};

/// Append a resolved value as template text: strings as is, `null` ⇒ nothing, numbers in JS
/// format (non-finite ⇒ `null`), booleans, containers as 2-space pretty JSON.
pub fn write_text(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => out.push_str(s),
        Value::Null => {}
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) if n.is_finite() => crate::value::write_number(*n, out),
        Value::Number(_) => out.push_str("null"),
        Value::Array(_) | Value::Object(_) => write_pretty(value, out),
    }
}

/// Truthiness of an operand (`None` is undefined): strings are false iff their lowercased
/// JS-trim is one of `""`, `false`, `0`, `no`, `off`, `null`.
pub fn truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => *n != 0.0 && !n.is_nan(),
        Some(Value::String(s)) => {
            let t = js_trim(s);
            !(t.is_empty()
                || ["false", "0", "no", "off", "null"]
                    .iter()
                    .any(|f| t.eq_ignore_ascii_case(f)))
        }
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: &Value) -> String {
        let mut s = String::new();
        write_text(v, &mut s);
        s
    }

    #[test]
    fn text_mode() {
        assert_eq!(text(&Value::from("a\"b")), "a\"b");
        assert_eq!(text(&Value::Null), "");
        assert_eq!(text(&Value::Number(3.0)), "3");
        assert_eq!(text(&Value::Number(f64::INFINITY)), "null");
        assert_eq!(text(&Value::Bool(false)), "false");
        assert_eq!(text(&Value::Array(vec![])), "[]");
        assert_eq!(
            text(&Value::Array(vec![Value::from("x")])),
            "[\n  \"x\"\n]"
        );
    }

    #[test]
    fn truthiness_table() {
        for s in ["", " ", "false", "FALSE", " 0 ", "no", "Off", "null", "\u{a0}NULL"] {
            assert!(!truthy(Some(&Value::from(s))), "{s:?}");
        }
        for s in ["true", "1", "yes", "0.0", "nope", "x"] {
            assert!(truthy(Some(&Value::from(s))), "{s:?}");
        }
        assert!(!truthy(None));
        assert!(!truthy(Some(&Value::Null)));
        assert!(!truthy(Some(&Value::Number(0.0))));
        assert!(!truthy(Some(&Value::Number(f64::NAN))));
        assert!(truthy(Some(&Value::Number(-1.0))));
        assert!(!truthy(Some(&Value::Array(vec![]))));
        assert!(truthy(Some(&Value::Array(vec![Value::Null]))));
        assert!(!truthy(Some(&Value::Object(Default::default()))));
    }
}
