//! Writing values as JSON exactly as `JSON.stringify` does, without recursion (values may be
//! nested far deeper than the call stack allows).
//!
//! Pretty JSON indents every line by two spaces per level, so a value nested `d` deep takes
//! about `2·d²` bytes (`[` × 20,000 then `]` × 20,000, 40 KB, becomes 800 MB). Templates must
//! render it that way (SPEC §4.4); files and terminal output use [`write_readable`], which stops
//! indenting past [`READABLE_DEPTH`] and so stays linear in the value's size.

use super::number::write_number;
use super::types::Value;

/// How many levels [`write_readable`] indents; deeper containers are written compactly.
pub const READABLE_DEPTH: usize = 64;

/// `JSON.stringify(v)`.
pub fn write_compact(value: &Value, out: &mut String) {
    write(value, out, 0, 0);
}

/// `JSON.stringify(v, null, 2)`.
pub fn write_pretty(value: &Value, out: &mut String) {
    write(value, out, usize::MAX, 0);
}

/// `JSON.stringify(v, null, 2)` for the first [`READABLE_DEPTH`] levels, compact below: the
/// same text for every value of ordinary depth, and at most linear in size for any value.
pub fn write_readable(value: &Value, out: &mut String) {
    write(value, out, READABLE_DEPTH, 0);
}

/// [`write_readable`] of a value that is itself a member `depth` levels deep in a larger
/// readable value: the same text that value's writing gives for it there, so a large
/// document can be written piece by piece.
pub fn write_readable_at(value: &Value, out: &mut String, depth: usize) {
    write(value, out, READABLE_DEPTH, depth);
}

enum Frame<'a> {
    Array(std::slice::Iter<'a, Value>, bool),
    Object(indexmap::map::Iter<'a, String, Value>, bool),
}

/// Writes `root`, itself nested `base` levels deep, indenting members nested at most
/// `indented` levels deep (0: compact).
fn write(root: &Value, out: &mut String, indented: usize, base: usize) {
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
        let depth = stack.len() + base;
        let Some(frame) = stack.last_mut() else {
            return;
        };
        // The members of this frame are `depth` levels deep.
        let pretty = depth <= indented;
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
                if pretty {
                    newline(out, depth);
                }
                if let Some(k) = key {
                    write_string(k, out);
                    out.push_str(if pretty { ": " } else { ":" });
                }
                next = Some(v);
            }
            None => {
                stack.pop();
                if pretty {
                    newline(out, depth - 1);
                }
                out.push(close);
            }
        }
    }
}

/// A line break and the two-space indentation of `depth` levels.
pub(crate) fn newline(out: &mut String, depth: usize) {
    const SPACES: &str = "                                                                ";
    out.push('\n');
    let mut n = 2 * depth;
    while n > 0 {
        let run = n.min(SPACES.len());
        out.push_str(&SPACES[..run]);
        n -= run;
    }
}

/// A scalar, or an empty container (`[]`/`{}`), as JSON.
pub(crate) fn write_scalar(value: &Value, out: &mut String) {
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
    if !s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        // Nothing to escape (most keys and labels): one copy.
        out.reserve(s.len() + 2);
        out.push('"');
        out.push_str(s);
        out.push('"');
        return;
    }
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

/// The length of [`write_string`]'s text of `s`: its bytes, the quotes, and what escapes add.
pub fn string_len(s: &str) -> usize {
    let extra: usize = s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
            0..=0x1f => 5,
            _ => 0,
        })
        .sum();
    s.len() + 2 + extra
}

/// The JSON text of a value, as `JSON.stringify` writes it.
impl Value {
    /// Compact JSON (`JSON.stringify(v)`): non-finite numbers become `null`.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        write_compact(self, &mut out);
        out
    }

    /// Two-space pretty JSON for people to read (run records, `--format json` output):
    /// `JSON.stringify(v, null, 2)` down to [`READABLE_DEPTH`] levels, compact below, so that
    /// deeply nested model output cannot blow a record up quadratically. Template text uses
    /// [`write_pretty`], which indents every level as SPEC §4.4 requires.
    pub fn to_pretty_json(&self) -> String {
        let mut out = String::new();
        write_readable(self, &mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::fixtures::{DEPTH, mixed, nested_arrays, small_stack};
    use crate::value::types::Map;

    #[test]
    fn string_len_is_the_length_of_the_written_string() {
        let every_ascii: String = (0u8..128).map(char::from).collect();
        for s in [
            "",
            "plain",
            "a\"b\\c",
            "\u{0}\u{1f}\u{7f}",
            "é → ☃ 𝄞",
            &every_ascii,
        ] {
            let mut out = String::new();
            write_string(s, &mut out);
            assert_eq!(string_len(s), out.len(), "{s:?}");
        }
    }

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
        let mut text = String::new();
        write_pretty(&v, &mut text);
        assert!(text.starts_with("[\n  [\n"));
        assert_eq!(v.to_json().len(), 20_004);
    }

    fn pretty(v: &Value) -> String {
        let mut out = String::new();
        write_pretty(v, &mut out);
        out
    }

    /// Writing never recurses: compact and readable JSON of values a million levels deep, on
    /// a 256 KiB stack, in linear space.
    #[test]
    fn million_deep_values_write_on_a_small_stack() {
        small_stack(|| {
            let v = nested_arrays(DEPTH, Value::Null);
            let compact = v.to_json();
            assert_eq!(compact.len(), 2 * DEPTH + 4);
            assert!(compact.starts_with("[[[") && compact.contains("[[null]]"));
            let readable = v.to_pretty_json();
            assert!(readable.len() < compact.len() + READABLE_DEPTH * (READABLE_DEPTH + 2) * 2);
            assert_eq!(
                crate::value::parse::parse_json(&readable).ok().as_ref(),
                Some(&v)
            );

            let v = mixed(DEPTH, Value::from("end"));
            let compact = v.to_json();
            assert!(compact.starts_with(r#"{"k":[999998,{"k":[999996,"#));
            assert_eq!(
                crate::value::parse::parse_json(&compact).ok().as_ref(),
                Some(&v)
            );
            assert_eq!(
                crate::value::parse::parse_json(&v.to_pretty_json()).ok(),
                Some(v)
            );
        });
        // Full pretty JSON is quadratic in the depth (SPEC §4.4), but iterative all the same.
        small_stack(|| {
            let depth = 2_000;
            let text = pretty(&nested_arrays(depth, Value::Null));
            assert_eq!(text.len(), 2 * depth * depth + 4 * depth + 4);
        });
    }

    #[test]
    fn readable_is_pretty_down_to_its_depth_then_compact() {
        let shallow = mixed(READABLE_DEPTH - 1, Value::Null);
        assert_eq!(shallow.to_pretty_json(), pretty(&shallow));
        let deep = nested_arrays(READABLE_DEPTH + 2, Value::Number(1.0));
        let text = deep.to_pretty_json();
        let indent = " ".repeat(2 * READABLE_DEPTH);
        // The last indented line holds the compact rest; the closers are indented again.
        assert!(text.contains(&format!("\n{indent}[[1]]\n")), "{text}");
        assert!(text.ends_with("\n  ]\n]"));
        let mut m = Map::default();
        let leaf = obj(&[("a", Value::Null)]);
        m.insert("k".into(), nested_arrays(READABLE_DEPTH - 1, leaf));
        let text = Value::Object(m).to_pretty_json();
        assert!(
            text.contains(&format!("\n{indent}{{\"a\":null}}\n")),
            "{text}"
        );
    }
}
