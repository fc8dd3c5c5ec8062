//! Writing values as JSON exactly as `JSON.stringify` does, without recursion (values may be
//! nested far deeper than the call stack allows).

use super::Value;
use super::number::write_number;

/// `JSON.stringify(v)`.
pub fn write_compact(value: &Value, out: &mut String) {
    write(value, out, None);
}

/// `JSON.stringify(v, null, 2)`.
pub fn write_pretty(value: &Value, out: &mut String) {
    write(value, out, Some(2));
}

enum Frame<'a> {
    Array(std::slice::Iter<'a, Value>, bool),
    Object(indexmap::map::Iter<'a, String, Value>, bool),
}

fn write(root: &Value, out: &mut String, indent: Option<usize>) {
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut next = Some(root);
    loop {
        if let Some(value) = next.take() {
            match value {
                Value::Array(a) if !a.is_empty() => {
                    out.push('[');
                    stack.push(Frame::Array(a.iter(), true));
                }
                Value::Object(o) if !o.is_empty() => {
                    out.push('{');
                    stack.push(Frame::Object(o.iter(), true));
                }
                scalar => write_scalar(scalar, out),
            }
        }
        let depth = stack.len();
        let Some(frame) = stack.last_mut() else {
            return;
        };
        let (item, first, close) = match frame {
            Frame::Array(iter, first) => match iter.next() {
                Some(v) => (Some((None, v)), std::mem::replace(first, false), ']'),
                None => (None, false, ']'),
            },
            Frame::Object(iter, first) => match iter.next() {
                Some((k, v)) => (Some((Some(k), v)), std::mem::replace(first, false), '}'),
                None => (None, false, '}'),
            },
        };
        match item {
            Some((key, v)) => {
                if !first {
                    out.push(',');
                }
                newline(out, indent, depth);
                if let Some(k) = key {
                    write_string(k, out);
                    out.push(':');
                    if indent.is_some() {
                        out.push(' ');
                    }
                }
                next = Some(v);
            }
            None => {
                stack.pop();
                newline(out, indent, depth - 1);
                out.push(close);
            }
        }
    }
}

fn newline(out: &mut String, indent: Option<usize>, depth: usize) {
    if let Some(n) = indent {
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', n * depth));
    }
}

fn write_scalar(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) if n.is_finite() => write_number(*n, out),
        Value::Number(_) => out.push_str("null"),
        Value::String(s) => write_string(s, out),
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
}

/// A JSON string literal with `JSON.stringify`'s escapes: `\"` `\\` `\b` `\f` `\n` `\r` `\t`,
/// other control characters as `\u00XX`; `/` and non-ASCII stay literal.
pub fn write_string(s: &str, out: &mut String) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            out.push_str(&format!("\\u{b:04x}"));
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Map;

    fn obj(pairs: &[(&str, Value)]) -> Value {
        let mut m = Map::default();
        for (k, v) in pairs {
            m.insert((*k).to_owned(), v.clone());
        }
        Value::Object(m)
    }

    #[test]
    fn pretty_matches_json_stringify() {
        let v = obj(&[
            ("b", Value::Array(vec![Value::Number(1.0), Value::Null])),
            ("a", obj(&[])),
            ("c", Value::Array(vec![])),
            ("s", Value::from("q\"\\/\n\u{1}é")),
        ]);
        assert_eq!(
            v.to_pretty_json(),
            "{\n  \"b\": [\n    1,\n    null\n  ],\n  \"a\": {},\n  \"c\": [],\n  \"s\": \"q\\\"\\\\/\\n\\u0001é\"\n}"
        );
        assert_eq!(
            v.to_json(),
            "{\"b\":[1,null],\"a\":{},\"c\":[],\"s\":\"q\\\"\\\\/\\n\\u0001é\"}"
        );
        assert_eq!(Value::Number(f64::INFINITY).to_json(), "null");
    }

    #[test]
    fn deep_nesting_writes_without_overflow() {
        let mut v = Value::Null;
        for _ in 0..10_000 {
            v = Value::Array(vec![v]);
        }
        let text = v.to_pretty_json();
        assert!(text.starts_with("[\n  [\n"));
        assert_eq!(v.to_json().len(), 20_004);
    }
}
