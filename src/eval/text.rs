//! Values as template text (SPEC §4.4) and as booleans (SPEC §6).

use crate::value::js_trim;
use crate::value::{Value, write_number, write_pretty, write_scalar, write_string};

/// Append a resolved value as template text: strings as is, `null` ⇒ nothing, numbers in JS
/// format (non-finite ⇒ `null`), booleans, containers as 2-space pretty JSON.
pub fn write_text(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => out.push_str(s),
        Value::Null => {}
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) if n.is_finite() => write_number(*n, out),
        Value::Number(_) => out.push_str("null"),
        Value::Array(_) | Value::Object(_) => {
            let start = out.len();
            if !write_flat(value, out) {
                out.truncate(start);
                write_pretty(value, out);
            }
        }
    }
}

/// Pretty JSON of a container whose members are all scalars or empty containers (an args
/// object, a list of names), written in one pass; `false`, with part of it written, for any
/// other value.
fn write_flat(value: &Value, out: &mut String) -> bool {
    match value {
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Object(members) if members.is_empty() => out.push_str("{}"),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                out.push_str(if i == 0 { "\n  " } else { ",\n  " });
                if !write_leaf(item, out) {
                    return false;
                }
            }
            out.push_str("\n]");
        }
        Value::Object(members) => {
            out.push('{');
            for (i, (key, item)) in members.iter().enumerate() {
                out.push_str(if i == 0 { "\n  " } else { ",\n  " });
                write_string(key, out);
                out.push_str(": ");
                if !write_leaf(item, out) {
                    return false;
                }
            }
            out.push_str("\n}");
        }
        _ => return false,
    }
    true
}

/// A member of a flat container as JSON; `false` for a non-empty container.
fn write_leaf(value: &Value, out: &mut String) -> bool {
    match value {
        Value::Array(a) if !a.is_empty() => false,
        Value::Object(o) if !o.is_empty() => false,
        _ => {
            write_scalar(value, out);
            true
        }
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
        assert_eq!(text(&Value::Array(vec![Value::from("x")])), "[\n  \"x\"\n]");
    }

    /// The one-pass writers agree with the general ones on the values they take, and hand
    /// anything else over whole.
    #[test]
    fn fast_paths_match_the_general_writers() {
        use crate::value::Map;
        let mut nested = Map::default();
        nested.insert("a\"b".into(), Value::Number(-3.0));
        nested.insert("e".into(), Value::Array(vec![]));
        nested.insert("o".into(), Value::Object(Map::default()));
        nested.insert("deep".into(), Value::Array(vec![Value::Null]));
        let values = [
            Value::Object(nested),
            Value::Array(vec![
                Value::from("x"),
                Value::Array(vec![Value::Bool(true)]),
            ]),
            Value::Array(vec![
                Value::Number(f64::NAN),
                Value::Number(1e21),
                Value::Null,
            ]),
        ];
        for v in &values {
            let mut pretty = String::new();
            write_pretty(v, &mut pretty);
            assert_eq!(text(v), pretty);
        }
        for n in [
            1.0,
            -1.0,
            999_999_999_999_999.0,
            1e15,
            -1e15,
            0.5,
            -0.0,
            1e-7,
            123.0,
        ] {
            let mut general = String::new();
            write_number(n, &mut general);
            assert_eq!(text(&Value::Number(n)), general, "{n}");
        }
    }

    #[test]
    fn truthiness_table() {
        for s in [
            "",
            " ",
            "false",
            "FALSE",
            " 0 ",
            "no",
            "Off",
            "null",
            "\u{a0}NULL",
        ] {
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

#[cfg(test)]
mod laws {
    use super::*;
    use crate::value::strategies::{arb_value, finite_f64};
    use proptest::prelude::*;

    proptest! {
        /// Containers render as `write_pretty` writes them, numbers as `write_number` does.
        #[test]
        fn text_of_containers_and_numbers(v in arb_value(), n in finite_f64()) {
            let mut got = String::new();
            write_text(&v, &mut got);
            if matches!(v, Value::Array(_) | Value::Object(_)) {
                let mut want = String::new();
                write_pretty(&v, &mut want);
                prop_assert_eq!(got, want);
            }
            let (mut got, mut want) = (String::new(), String::new());
            write_text(&Value::Number(n), &mut got);
            write_number(n, &mut want);
            prop_assert_eq!(got, want);
        }
    }
}
