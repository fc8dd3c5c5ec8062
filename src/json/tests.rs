//! Tests of the reader as a whole: every error path, recovery, spans, the offset map under
//! random strings, agreement with serde_json, depth and size limits.

use super::*;
use crate::diag::Severity;
use crate::value::Value;
use proptest::prelude::*;

/// Checks the invariants every parse must keep: diagnostic and node spans inside the input, on
/// char boundaries, children inside their parents and in order, string maps inside their
/// literals.
fn check_invariants(text: &str, parsed: &Parsed) {
    let inside = |span: Span, what: &str| {
        assert!(
            span.start <= span.end && span.range().end <= text.len(),
            "{what} {span:?} outside input of {} bytes",
            text.len()
        );
        assert!(
            text.is_char_boundary(span.start as usize) && text.is_char_boundary(span.end as usize),
            "{what} {span:?} not on char boundaries"
        );
    };
    for diag in &parsed.diagnostics {
        inside(
            diag.span.expect("every diagnostic has a span"),
            &diag.message,
        );
        for label in &diag.labels {
            inside(label.span, &label.message);
        }
        assert!(matches!(diag.code, Code::JsonSyntax | Code::DuplicateKey));
        assert_eq!(diag.severity, Severity::Error);
    }
    let check_str = |s: &Str| {
        inside(s.span, "string");
        let full = s.file_span(0..s.value.len());
        assert!(
            s.span.start <= full.start && full.end <= s.span.end,
            "{full:?} outside {:?}",
            s.span
        );
        inside(full, "decoded string");
    };
    let mut stack: Vec<&Node> = parsed.root.iter().collect();
    while let Some(node) = stack.pop() {
        inside(node.span, node.type_name());
        let mut previous_end = node.span.start;
        let mut child = |span: Span| {
            assert!(node.span.start <= span.start && span.end <= node.span.end);
            assert!(previous_end <= span.start, "children out of order");
            previous_end = span.end;
        };
        match &node.kind {
            Kind::String(s) => {
                assert_eq!(s.span, node.span);
                check_str(s);
            }
            Kind::Array(items) => {
                for item in items {
                    child(item.span);
                    stack.push(item);
                }
            }
            Kind::Object(members) => {
                for member in members {
                    check_str(&member.key);
                    child(member.key.span);
                    child(member.value.span);
                    stack.push(&member.value);
                }
            }
            _ => {}
        }
    }
}

fn parsed(text: &str) -> Parsed {
    let parsed = parse(text);
    check_invariants(text, &parsed);
    parsed
}

/// The diagnostics of `text` as (message, spanned text).
fn errors(text: &str) -> Vec<(String, &str)> {
    parsed(text)
        .diagnostics
        .into_iter()
        .map(|d| {
            let span = d.span.unwrap_or_default();
            (d.message, &text[span.range()])
        })
        .collect()
}

/// The one diagnostic of `text`.
fn error(text: &str) -> Diagnostic {
    let mut diagnostics = parsed(text).diagnostics;
    assert_eq!(diagnostics.len(), 1, "{text:?}: {diagnostics:#?}");
    diagnostics.remove(0)
}

fn message(text: &str) -> String {
    error(text).message
}

fn value(text: &str) -> Value {
    let parsed = parsed(text);
    assert!(parsed.diagnostics.is_empty(), "{:#?}", parsed.diagnostics);
    parsed.root.expect("a root").to_value()
}

fn json(text: &str) -> String {
    value(text).to_json()
}

// Valid input.

#[test]
fn reads_every_kind_of_value() {
    assert_eq!(
        json(r#"{"a": [null, true, false, 0, -1.5e2, "s"], "b": {}}"#),
        r#"{"a":[null,true,false,0,-150,"s"],"b":{}}"#
    );
    assert_eq!(json(" 7 "), "7");
    assert_eq!(json("\"\""), "\"\"");
}

#[test]
fn jsonc_comments_and_trailing_commas() {
    let text =
        "// head\n{ /* a */ \"a\" /* b */ : /* c */ [1, 2, /* d */ ], // e\n \"b\": 3, } // tail";
    assert_eq!(json(text), r#"{"a":[1,2],"b":3}"#);
    assert_eq!(json("/**/[/***/]/* * / */"), "[]");
    assert_eq!(
        json("[\"//not a comment\", \"/*nor this*/\"]"),
        r#"["//not a comment","/*nor this*/"]"#
    );
}

#[test]
fn byte_order_mark_is_skipped() {
    assert_eq!(json("\u{feff}{\"a\": 1}"), r#"{"a":1}"#);
    let root = parsed("\u{feff}[]").root.unwrap();
    assert_eq!(root.span, Span::new(3, 5));
}

#[test]
fn numbers_parse_to_doubles() {
    assert_eq!(value("1e400"), Value::Number(f64::INFINITY));
    assert_eq!(value("-1e400"), Value::Number(f64::NEG_INFINITY));
    assert_eq!(value("0.1"), Value::Number(0.1));
    assert_eq!(value("-0"), Value::Number(-0.0));
    assert_eq!(
        value("123456789012345678901234567890"),
        Value::Number(1.2345678901234568e29)
    );
    assert_eq!(value("1E-400"), Value::Number(0.0));
}

#[test]
fn node_spans_cover_their_text() {
    let text = "{\"a\": [1, \"x\", {\"b\": null}], \"c\": true}";
    let root = parsed(text).root.unwrap();
    let at = |node: &Node| &text[node.span.range()];
    assert_eq!(at(&root), text);
    let a = root.get("a").unwrap();
    assert_eq!(at(a), "[1, \"x\", {\"b\": null}]");
    let Kind::Array(items) = &a.kind else {
        panic!("not an array")
    };
    assert_eq!(
        items.iter().map(at).collect::<Vec<_>>(),
        ["1", "\"x\"", "{\"b\": null}"]
    );
    assert_eq!(at(items[2].get("b").unwrap()), "null");
    assert_eq!(at(root.get("c").unwrap()), "true");
    let Kind::Object(members) = &root.kind else {
        panic!("not an object")
    };
    assert_eq!(&text[members[1].key.span.range()], "\"c\"");
}

#[test]
fn crlf_gives_the_same_tree() {
    let lf = "{\n  \"a\": [1,\n    2], // c\n  \"b\": \"x\\ny\"\n}\n";
    let crlf = lf.replace('\n', "\r\n");
    let (lf_root, crlf_root) = (parsed(lf).root.unwrap(), parsed(&crlf).root.unwrap());
    assert_eq!(lf_root.to_value(), crlf_root.to_value());
    let shape = |root: &Node| {
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            out.push(node.type_name());
            match &node.kind {
                Kind::Array(items) => stack.extend(items),
                Kind::Object(members) => stack.extend(members.iter().map(|m| &m.value)),
                _ => {}
            }
        }
        out
    };
    assert_eq!(shape(&lf_root), shape(&crlf_root));
    // The same errors, too.
    let bad = "{\n  \"a\": 1\n  \"b\": 2,\n}";
    let lf_errors: Vec<_> = errors(bad).into_iter().map(|e| e.0).collect();
    let crlf_bad = bad.replace('\n', "\r\n");
    let crlf_errors: Vec<_> = errors(&crlf_bad).into_iter().map(|e| e.0).collect();
    assert_eq!(lf_errors, crlf_errors);
}

#[test]
fn placeholder_in_a_task_maps_to_the_file() {
    let text = "{\"task\": \"Review \\\"{steps.scan.output}\\\"\\n\u{e9}t\u{e9} {x}\"}";
    let root = parsed(text).root.unwrap();
    let task = root.get("task").and_then(Node::as_str).unwrap();
    assert_eq!(task.value, "Review \"{steps.scan.output}\"\nété {x}");
    for name in ["{steps.scan.output}", "{x}"] {
        let at = task.value.find(name).unwrap();
        assert_eq!(&text[task.file_span(at..at + name.len()).range()], name);
    }
}

// Errors, one test per path.

/// The table in the module documentation.
#[test]
fn documented_messages() {
    let deep = "[".repeat(257);
    let table = [
        ("", "unexpected end of file: expected a value"),
        ("{} x", "trailing characters after the JSON value"),
        (
            "{\"a\": 1 \"b\": 2}",
            "expected ',' or '}' after object member, found '\"'",
        ),
        (
            "[1 2]",
            "expected ',' or ']' after array element, found '2'",
        ),
        ("{\"a\" 1}", "expected ':' after object key, found '1'"),
        ("{\"a\": }", "expected a value, found '}'"),
        ("True", "expected a value, found 'True'"),
        ("[@]", "expected a value or ']', found '@'"),
        ("{name: 1}", "expected a string key, found 'name'"),
        ("{,}", "expected a string key or '}', found ','"),
        ("['a']", "expected a double-quoted string, found \"'\""),
        (
            "[1",
            "unexpected end of file: expected ',' or ']' after array element",
        ),
        ("[1}", "expected ',' or ']' after array element, found '}'"),
        ("\"abc", "unterminated string"),
        ("[/* x", "unterminated block comment"),
        ("01", "invalid number '01': leading zeros are not allowed"),
        ("\"\\q\"", "invalid escape '\\q'"),
        (
            "\"\\u12\"",
            "invalid unicode escape '\\u12': expected 4 hex digits",
        ),
        ("\"a\nb\"", "control character U+000A in string: use \\n"),
        (&deep, "nesting too deep (limit 256)"),
        ("{\"a\": 1, \"a\": 2}", "duplicate key 'a'"),
    ];
    for (input, expected) in table {
        assert_eq!(message(input), expected, "{input:?}");
    }
    assert_eq!(
        parse_bytes(b"\xff").diagnostics[0].message,
        "invalid UTF-8: byte 0xFF at offset 0"
    );
}

#[test]
fn empty_input() {
    let diag = error("");
    assert_eq!(diag.message, "unexpected end of file: expected a value");
    assert_eq!(diag.span, Some(Span::new(0, 0)));
    assert_eq!(diag.code, Code::JsonSyntax);
    assert_eq!(
        message("  // nothing\n"),
        "unexpected end of file: expected a value"
    );
    assert!(parse("").root.is_none());
}

#[test]
fn trailing_characters() {
    let diag = error("{} x");
    assert_eq!(diag.message, "trailing characters after the JSON value");
    assert_eq!(diag.span, Some(Span::new(3, 4)));
    assert_eq!(
        errors("[1] [2]"),
        [("trailing characters after the JSON value".into(), "[")]
    );
    assert_eq!(errors("{}}")[0].1, "}");
    assert!(parse("{} x").root.is_some());
}

#[test]
fn missing_comma_between_members() {
    let text = "{\"a\": 1 \"b\": 2, \"c\": 3 \"d\": 4}";
    let parsed = parsed(text);
    let messages: Vec<_> = parsed
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(
        messages,
        [
            "expected ',' or '}' after object member, found '\"'",
            "expected ',' or '}' after object member, found '\"'",
        ]
    );
    assert_eq!(&text[parsed.diagnostics[0].span.unwrap().range()], "\"b\"");
    assert_eq!(
        parsed.diagnostics[0].help.as_deref(),
        Some("add a ',' after the previous member")
    );
    // Parsing went on: every member is there.
    assert_eq!(
        parsed.root.unwrap().to_value().to_json(),
        r#"{"a":1,"b":2,"c":3,"d":4}"#
    );
    // Commas left out throughout are one mistake.
    assert_eq!(errors("{\"a\": 1\n\"b\": 2\n\"c\": 3}").len(), 1);
}

#[test]
fn missing_comma_between_elements() {
    let text = "[1 2, {} \"x\" 3]";
    let parsed = parsed(text);
    assert_eq!(parsed.diagnostics.len(), 2);
    assert_eq!(
        parsed.diagnostics[0].message,
        "expected ',' or ']' after array element, found '2'"
    );
    assert_eq!(
        parsed.diagnostics[1].message,
        "expected ',' or ']' after array element, found '\"'"
    );
    assert_eq!(
        parsed.root.unwrap().to_value().to_json(),
        r#"[1,2,{},"x",3]"#
    );
}

#[test]
fn junk_after_a_member() {
    let diag = error("{\"a\": 1 : 2, \"b\": 3}");
    assert_eq!(
        diag.message,
        "expected ',' or '}' after object member, found ':'"
    );
    assert_eq!(
        json_of_partial("{\"a\": 1 : 2, \"b\": 3}"),
        r#"{"a":1,"b":3}"#
    );
    assert_eq!(
        message("[1 : 2, 3]"),
        "expected ',' or ']' after array element, found ':'"
    );
    assert_eq!(json_of_partial("[1 : 2, 3]"), "[1,3]");
}

fn json_of_partial(text: &str) -> String {
    parsed(text).root.unwrap().to_value().to_json()
}

#[test]
fn missing_colon() {
    let diag = error("{\"a\" 1}");
    assert_eq!(diag.message, "expected ':' after object key, found '1'");
    assert_eq!(diag.help.as_deref(), Some("add a ':' after the key"));
    assert_eq!(json_of_partial("{\"a\" 1}"), r#"{"a":1}"#);
    let diag = error("{\"a\" = 1}");
    assert_eq!(diag.message, "expected ':' after object key, found '='");
    assert_eq!(
        diag.help.as_deref(),
        Some("use ':' between a key and its value")
    );
    assert_eq!(json_of_partial("{\"a\" = 1}"), r#"{"a":1}"#);
    assert_eq!(
        message("{\"a\"}"),
        "expected ':' after object key, found '}'"
    );
    assert_eq!(
        message("{\"a\""),
        "unexpected end of file: expected ':' after object key"
    );
}

#[test]
fn missing_value() {
    let diag = error("{\"a\": }");
    assert_eq!(diag.message, "expected a value, found '}'");
    assert_eq!(diag.span, Some(Span::new(6, 7)));
    assert_eq!(
        message("{\"a\":"),
        "unexpected end of file: expected a value"
    );
    assert_eq!(
        message("{\"a\": , \"b\": 1}"),
        "expected a value, found ','"
    );
    assert_eq!(json_of_partial("{\"a\": , \"b\": 1}"), r#"{"b":1}"#);
    assert_eq!(message("[1,,2]"), "expected a value or ']', found ','");
    assert_eq!(json_of_partial("[1,,2]"), "[1,2]");
    assert_eq!(message("[,]"), "expected a value or ']', found ','");
    assert_eq!(message("]"), "expected a value, found ']'");
    assert!(parse("]").root.is_none());
    assert_eq!(message(":"), "expected a value, found ':'");
}

#[test]
fn bad_keys() {
    let diag = error("{name: 1}");
    assert_eq!(diag.message, "expected a string key, found 'name'");
    assert_eq!(
        diag.help.as_deref(),
        Some("object keys must be in double quotes: \"name\"")
    );
    assert_eq!(diag.span, Some(Span::new(1, 5)));
    let root = parsed("{name: 1}").root.unwrap();
    let Kind::Object(members) = &root.kind else {
        panic!("not an object")
    };
    assert_eq!(members[0].key.value, "name");
    assert_eq!(members[0].key.file_span(1..3), Span::new(2, 4));
    assert_eq!(message("{1: 2}"), "expected a string key, found '1'");
    assert_eq!(message("{,}"), "expected a string key or '}', found ','");
    assert_eq!(
        message("{\"a\": 1,,}"),
        "expected a string key or '}', found ','"
    );
    assert_eq!(
        message("{[]: 1}"),
        "expected a string key or '}', found '['"
    );
    assert_eq!(json_of_partial("{[]: 1, \"b\": 2}"), r#"{"b":2}"#);
}

#[test]
fn single_quotes() {
    let text = "{'a': 'it\\'s \"x\"'}";
    let parsed = parsed(text);
    assert_eq!(parsed.diagnostics.len(), 2);
    let diag = &parsed.diagnostics[1];
    assert_eq!(diag.message, "expected a double-quoted string, found \"'\"");
    assert_eq!(
        diag.help.as_deref(),
        Some(r#"use double quotes: "it's \"x\"""#)
    );
    assert_eq!(&text[diag.span.unwrap().range()], "'it\\'s \"x\"'");
    assert_eq!(
        parsed.root.unwrap().to_value().to_json(),
        r#"{"a":"it's \"x\""}"#
    );
    // Without a closing quote on its line, the quote is a stray character.
    assert_eq!(message("['abc\n]"), "expected a value or ']', found \"'\"");
}

#[test]
fn bare_words() {
    let cases = [
        ("True", "JSON literals are lowercase: true"),
        ("FALSE", "JSON literals are lowercase: false"),
        ("None", "use null"),
        ("undefined", "use null"),
        ("NaN", "JSON has no NaN or Infinity; use null or a string"),
        ("hello", "strings must be in double quotes: \"hello\""),
    ];
    for (word, help) in cases {
        let text = format!("{{\"a\": {word}}}");
        let diag = error(&text);
        assert_eq!(diag.message, format!("expected a value, found '{word}'"));
        assert_eq!(diag.help.as_deref(), Some(help));
        assert_eq!(&text[diag.span.unwrap().range()], word);
    }
    assert_eq!(json_of_partial("{\"a\": True, \"b\": 1}"), r#"{"b":1}"#);
}

#[test]
fn unexpected_characters() {
    assert_eq!(message("[@]"), "expected a value or ']', found '@'");
    assert_eq!(message("[-Infinity]"), "expected a value or ']', found '-'");
    assert_eq!(
        message("{\"a\": 1 # c\n}"),
        "expected ',' or '}' after object member, found '#'"
    );
    assert_eq!(
        message("[\u{a0}1]"),
        "expected a value or ']', found U+00A0"
    );
    assert_eq!(message("[/ 1]"), "expected a value or ']', found '/'");
}

#[test]
fn unclosed_containers() {
    let text = "{\"a\": [1, 2";
    let diag = error(text);
    assert_eq!(
        diag.message,
        "unexpected end of file: expected ',' or ']' after array element"
    );
    assert_eq!(diag.labels[0].message, "this array is not closed");
    assert_eq!(&text[diag.labels[0].span.range()], "[");
    assert_eq!(diag.help.as_deref(), Some("close the array with ']'"));
    assert_eq!(json_of_partial(text), r#"{"a":[1,2]}"#);
    assert_eq!(
        message("["),
        "unexpected end of file: expected a value or ']'"
    );
    assert_eq!(
        message("{"),
        "unexpected end of file: expected a string key or '}'"
    );
    assert_eq!(
        message("{\"a\": 1,"),
        "unexpected end of file: expected a string key or '}'"
    );
    assert_eq!(
        message("[["),
        "unexpected end of file: expected a value or ']'"
    );
}

#[test]
fn mismatched_brackets() {
    let text = "{\"a\": [1, 2}, \"b\": 3}";
    let diag = error(text);
    assert_eq!(
        diag.message,
        "expected ',' or ']' after array element, found '}'"
    );
    assert_eq!(&text[diag.labels[0].span.range()], "[");
    assert_eq!(json_of_partial(text), r#"{"a":[1,2],"b":3}"#);
    assert_eq!(
        message("{\"a\": 1]"),
        "expected ',' or '}' after object member, found ']'"
    );
    assert_eq!(message("[}"), "expected a value or ']', found '}'");
    assert_eq!(
        message("{\"a\": [1]]}"),
        "expected ',' or '}' after object member, found ']'"
    );
}

#[test]
fn unterminated_string() {
    let text = "{\"a\": \"abc";
    let diag = error(text);
    assert_eq!(diag.message, "unterminated string");
    assert_eq!(&text[diag.span.unwrap().range()], "\"abc");
    assert_eq!(json_of_partial(text), r#"{"a":"abc"}"#);
    // The span stops at the end of the line the string starts on.
    let text = "[\"abc\r\n, 1]";
    assert_eq!(errors(text), [("unterminated string".into(), "\"abc")]);
    let text = "{\"abc";
    assert_eq!(errors(text), [("unterminated string".into(), "\"abc")]);
}

#[test]
fn unterminated_comment() {
    let text = "[1, /* 2, 3]";
    let diag = error(text);
    assert_eq!(diag.message, "unterminated block comment");
    assert_eq!(&text[diag.span.unwrap().range()], "/*");
    assert_eq!(json_of_partial(text), "[1]");
    assert_eq!(message("/*"), "unterminated block comment");
}

#[test]
fn invalid_numbers() {
    let cases = [
        (
            "01",
            "invalid number '01': leading zeros are not allowed",
            Some(1.0),
        ),
        (
            "+1",
            "invalid number '+1': a leading '+' is not allowed",
            Some(1.0),
        ),
        (
            "1.",
            "invalid number '1.': expected a digit after '.'",
            Some(1.0),
        ),
        (
            ".5",
            "invalid number '.5': expected a digit before '.'",
            Some(0.5),
        ),
        (
            "1e",
            "invalid number '1e': expected a digit in the exponent",
            None,
        ),
        (
            "0x1F",
            "invalid number '0x1F': unexpected 'x' in a number",
            None,
        ),
    ];
    for (number, expected, read) in cases {
        let text = format!("[{number}, 7]");
        let parsed = parsed(&text);
        assert_eq!(parsed.diagnostics.len(), 1, "{number}");
        assert_eq!(parsed.diagnostics[0].message, expected);
        assert_eq!(&text[parsed.diagnostics[0].span.unwrap().range()], number);
        let mut values = vec![];
        values.extend(read.map(Value::Number));
        values.push(Value::Number(7.0));
        assert_eq!(parsed.root.unwrap().to_value(), Value::Array(values));
    }
    assert_eq!(error("+1").help.as_deref(), Some("write 1"));
}

#[test]
fn string_content_errors() {
    let text = "{\"a\": \"x\\qy\", \"b\": \"1\n2\", \"c\": \"\\u12\"}";
    let found = errors(text);
    assert_eq!(
        found,
        [
            ("invalid escape '\\q'".into(), "\\q"),
            ("control character U+000A in string: use \\n".into(), "\n"),
            (
                "invalid unicode escape '\\u12': expected 4 hex digits".into(),
                "\\u12"
            ),
        ]
    );
    // Content errors do not disturb the structure.
    assert_eq!(json_of_partial(text), r#"{"a":"x\\qy","b":"1\n2","c":"�"}"#);
}

#[test]
fn duplicate_keys() {
    let text = "{\"a\": 1, \"b\": 2, \"a\": 3}";
    let diag = error(text);
    assert_eq!(diag.code, Code::DuplicateKey);
    assert_eq!(diag.message, "duplicate key 'a'");
    assert_eq!(diag.span, Some(Span::new(17, 20)));
    assert_eq!(diag.labels.len(), 1);
    assert_eq!(diag.labels[0].message, "first defined here");
    assert_eq!(diag.labels[0].span, Span::new(1, 4));
    assert_eq!(diag.help.as_deref(), Some("remove one of the 'a' members"));
    // Both members are kept, in order.
    let root = parsed(text).root.unwrap();
    let Kind::Object(members) = &root.kind else {
        panic!("not an object")
    };
    assert_eq!(members.len(), 3);
}

#[test]
fn duplicate_keys_compare_decoded_text() {
    let diag = error("{\"\\u0061\": 1, \"a\": 2}");
    assert_eq!(diag.message, "duplicate key 'a'");
}

#[test]
fn duplicate_keys_in_large_objects_and_thrice() {
    let mut text = String::from("{");
    for i in 0..20 {
        text.push_str(&format!("\"k{i}\": {i}, "));
    }
    text.push_str("\"k3\": 0, \"k3\": 1, \"k19\": 2}");
    let parsed = parsed(&text);
    let found: Vec<_> = parsed
        .diagnostics
        .iter()
        .map(|d| (d.message.as_str(), &text[d.labels[0].span.range()]))
        .collect();
    assert_eq!(
        found,
        [
            ("duplicate key 'k3'", "\"k3\""),
            ("duplicate key 'k3'", "\"k3\""),
            ("duplicate key 'k19'", "\"k19\""),
        ]
    );
    // Every duplicate points at the first occurrence.
    assert_eq!(
        parsed.diagnostics[0].labels[0].span,
        parsed.diagnostics[1].labels[0].span
    );
}

#[test]
fn keys_in_different_objects_are_independent() {
    assert!(
        parse("{\"a\": {\"a\": 1}, \"b\": [{\"a\": 1}, {\"a\": 2}]}")
            .diagnostics
            .is_empty()
    );
}

#[test]
fn duplicate_key_message_escapes_control_characters() {
    assert_eq!(
        message("{\"a\\n\": 1, \"a\\n\": 2}"),
        "duplicate key 'a\\n'"
    );
}

#[test]
fn nesting_limit() {
    let ok = format!("{}{}", "[".repeat(256), "]".repeat(256));
    assert!(parse(&ok).diagnostics.is_empty());
    let deep = format!("{}{}", "[".repeat(257), "]".repeat(257));
    let diag = error(&deep);
    assert_eq!(diag.message, "nesting too deep (limit 256)");
    assert_eq!(diag.span, Some(Span::new(256, 257)));
    // The too-deep part is skipped; the rest reads on.
    let text = format!(
        "{{\"a\": {}{}, \"b\": 1}}",
        "{\"x\": ".repeat(300),
        "}".repeat(300)
    );
    let parsed = parsed(&text);
    assert_eq!(parsed.diagnostics.len(), 1);
    assert_eq!(
        parsed.root.unwrap().get("b").unwrap().kind,
        Kind::Number(1.0)
    );
}

#[test]
fn a_million_open_brackets() {
    let text = "[".repeat(1_000_000);
    let parsed = parsed(&text);
    assert_eq!(parsed.diagnostics.len(), 1);
    assert_eq!(
        parsed.diagnostics[0].message,
        "nesting too deep (limit 256)"
    );
    let text = "{\"a\":".repeat(1_000_000);
    assert_eq!(errors(&text).len(), 1);
}

#[test]
fn invalid_utf8() {
    let parsed = parse_bytes(b"[\"a\xff\"]");
    assert!(parsed.root.is_none());
    assert_eq!(parsed.diagnostics.len(), 1);
    let diag = &parsed.diagnostics[0];
    assert_eq!(diag.code, Code::JsonSyntax);
    assert_eq!(diag.message, "invalid UTF-8: byte 0xFF at offset 3");
    assert_eq!(diag.span, Some(Span::new(3, 4)));
    // A sequence cut off by the end of the input.
    let parsed = parse_bytes(b"[\"\xe2\x82");
    assert_eq!(parsed.diagnostics[0].span, Some(Span::new(2, 4)));
    // Valid bytes read as text.
    assert_eq!(
        parse_bytes(b"[1]").root.unwrap().to_value(),
        parse("[1]").root.unwrap().to_value()
    );
}

// Recovery.

#[test]
fn independent_errors_are_all_reported() {
    let text = "{\n  \"a\": tru,\n  \"b\": [1 2],\n  \"c\": 'x',\n  \"d\": 01\n}";
    let messages: Vec<_> = errors(text).into_iter().map(|e| e.0).collect();
    assert_eq!(
        messages,
        [
            "expected a value, found 'tru'",
            "expected ',' or ']' after array element, found '2'",
            "expected a double-quoted string, found \"'\"",
            "invalid number '01': leading zeros are not allowed",
        ]
    );
}

#[test]
fn one_mistake_one_diagnostic() {
    let cases = [
        "{\"a\": [1, {\"b\": }]}",
        "{\"a\": @@@ [1, 2] @@@, \"b\": 2}",
        "[{\"a\": 1, ]",
        "{\"a\": {\"b\": {\"c\": ",
        "[1, 2, 3, {",
        "{\"a\": 1 \"b\"}",
        "{\"a\" [1, 2]}",
        "[1, 2 3 4 5]}",
    ];
    for text in cases {
        let found = errors(text);
        assert!(found.len() <= 2, "{text:?}: {found:#?}");
        assert!(!found.is_empty(), "{text:?}");
    }
    for text in [
        "{\"a\": {\"b\": {\"c\": ",
        "[1, 2, 3, {",
        "{\"a\": [1, {\"b\": }]}",
    ] {
        assert_eq!(errors(text).len(), 1, "{text:?}");
    }
}

#[test]
fn diagnostics_are_in_file_order() {
    let text = "{\"a\": 1, \"a\": {\"x\": 01}}";
    let starts: Vec<_> = parse(text)
        .diagnostics
        .iter()
        .map(|d| d.span.unwrap().start)
        .collect();
    assert_eq!(starts.len(), 2);
    assert!(starts.is_sorted());
}

#[test]
fn renders_with_ariadne() {
    use crate::diag::render::render;
    use crate::source::Source;
    let text = "{\n  \"a\": 1\n  \"b\": 2\n}\n";
    let source = Source::new("flow.json", text);
    let out = render(&error(text), &source, false);
    assert!(out.contains("E0001"), "{out}");
    assert!(
        out.contains("expected ',' or '}' after object member, found '\"'"),
        "{out}"
    );
    assert!(out.contains("flow.json:3:3"), "{out}");
}

// Size.

/// A flow of about `bytes` bytes: phases with escaped, placeholder-laden tasks and comments.
fn generated_flow(bytes: usize) -> String {
    let mut text = String::from(
        "{\n  \"$schema\": \"./flow.schema.json\",\n  \"name\": \"big\",\n  // phases\n  \"phases\": [\n",
    );
    let mut i = 0usize;
    while text.len() < bytes {
        text.push_str(&format!(
            "    {{\"id\": \"phase-{i}\", \"agent\": \"coder\", /* p{i} */ \"dependsOn\": [\"phase-{}\"], \
             \"task\": \"Review \\\"{{steps.phase-{}.output}}\\\"\\n\\tand fix \\u00e9t\u{e9} issues, {{args.mode}}\", \
             \"retry\": {{\"max\": 3, \"backoff\": 1.5e3}}, \"final\": false, \"cache\": null}},\n",
            i.saturating_sub(1),
            i.saturating_sub(1),
        ));
        i += 1;
    }
    text.push_str("  ],\n}\n");
    text
}

#[test]
fn a_megabyte_flow_parses_quickly() {
    let text = generated_flow(1 << 20);
    let start = std::time::Instant::now();
    let parsed = parse(&text);
    let elapsed = start.elapsed();
    assert!(
        parsed.diagnostics.is_empty(),
        "{:?}",
        parsed.diagnostics.first()
    );
    check_invariants(&text, &parsed);
    // Generous, for unoptimised builds on a busy machine; a release build takes a few ms.
    assert!(elapsed.as_secs_f64() < 3.0, "{elapsed:?}");
}

/// `cargo test --release --lib json::tests::time_a_megabyte -- --ignored --nocapture`
#[test]
#[ignore = "timing; run by hand in release mode"]
fn time_a_megabyte() {
    let text = generated_flow(1 << 20);
    let runs = 50;
    let mut best = std::time::Duration::MAX;
    for _ in 0..runs {
        let start = std::time::Instant::now();
        let parsed = std::hint::black_box(parse(std::hint::black_box(&text)));
        best = best.min(start.elapsed());
        assert!(parsed.diagnostics.is_empty());
    }
    println!("{} bytes: best of {runs} parses {best:?}", text.len());
}

// Properties.

/// One decoded char and how it may be spelled in a literal.
fn piece() -> impl Strategy<Value = (String, char)> {
    prop_oneof![
        // Plain ASCII (no quote, backslash or control character).
        (0x20u8..0x7f)
            .prop_filter("not special", |b| *b != b'"' && *b != b'\\')
            .prop_map(|b| ((b as char).to_string(), b as char)),
        // Raw multi-byte chars.
        prop::sample::select(vec!['é', 'ß', '中', '😀', '\u{7ff}', '\u{10ffff}'])
            .prop_map(|c| (c.to_string(), c)),
        // Short escapes.
        prop::sample::select(vec![
            ("\\\"", '"'),
            ("\\\\", '\\'),
            ("\\/", '/'),
            ("\\b", '\u{8}'),
            ("\\f", '\u{c}'),
            ("\\n", '\n'),
            ("\\r", '\r'),
            ("\\t", '\t'),
        ])
        .prop_map(|(s, c)| (s.to_owned(), c)),
        // \uXXXX for any non-surrogate BMP char, in either case.
        (
            any::<char>().prop_filter("BMP", |c| (*c as u32) < 0x10000),
            any::<bool>()
        )
            .prop_map(|(c, upper)| {
                let s = format!("\\u{:04x}", c as u32);
                (
                    if upper {
                        s.to_uppercase().replace("\\U", "\\u")
                    } else {
                        s
                    },
                    c,
                )
            }),
        // Surrogate pairs for astral chars.
        any::<char>()
            .prop_filter("astral", |c| (*c as u32) >= 0x10000)
            .prop_map(|c| {
                let mut units = [0u16; 2];
                c.encode_utf16(&mut units);
                (format!("\\u{:04x}\\u{:04X}", units[0], units[1]), c)
            }),
        // Lone surrogates.
        (0xd800u32..0xe000).prop_map(|u| (format!("\\u{u:04x}"), '\u{fffd}')),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// For any string built from random pieces, each decoded char's file span slices the file to
    /// exactly its spelling, and every range maps inside the literal.
    #[test]
    fn each_decoded_char_maps_to_its_spelling(
        raw in prop::collection::vec(piece(), 0..24),
        prefix in "[ \n]{0,3}(// c\n)?",
        a in 0usize..200,
        b in 0usize..200,
    ) {
        // A lone high surrogate followed by a low one would pair up: separate them.
        let mut pieces: Vec<(String, char)> = Vec::new();
        for (spelling, c) in raw {
            let lone_low = spelling.len() == 6 && (0xdc00..0xe000).contains(
                &u32::from_str_radix(spelling.get(2..).unwrap_or(""), 16).unwrap_or(0));
            let after_lone_high = pieces.last().is_some_and(|(s, _)| s.len() == 6
                && (0xd800..0xdc00).contains(&u32::from_str_radix(s.get(2..).unwrap_or(""), 16).unwrap_or(0)));
            if lone_low && after_lone_high {
                pieces.push(("x".into(), 'x'));
            }
            pieces.push((spelling, c));
        }
        let literal: String = pieces.iter().map(|(s, _)| s.as_str()).collect();
        let text = format!("{prefix}{{\"k\": [\"{literal}\"]}}");
        let parsed = parse(&text);
        check_invariants(&text, &parsed);
        prop_assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let root = parsed.root.unwrap();
        let Kind::Array(items) = &root.get("k").unwrap().kind else { panic!("not an array") };
        let s = items[0].as_str().unwrap();
        let expected: String = pieces.iter().map(|(_, c)| *c).collect();
        prop_assert_eq!(&s.value, &expected);
        let mut at = 0;
        for (spelling, c) in &pieces {
            let span = s.file_span(at..at + c.len_utf8());
            prop_assert_eq!(&text[span.range()], spelling.as_str());
            at += c.len_utf8();
        }
        // The whole value maps to the whole content; any range lies inside it.
        prop_assert_eq!(&text[s.file_span(0..s.value.len()).range()], literal.as_str());
        let span = s.file_span(a.min(b)..a.max(b));
        prop_assert!(s.span.start < span.start && span.end < s.span.end);
    }

    /// Any text: no panic, and the invariants hold.
    #[test]
    fn any_text_keeps_the_invariants(text in "\\PC{0,64}") {
        let parsed = parse(&text);
        check_invariants(&text, &parsed);
    }

    /// Text from JSON's own alphabet reaches far more of the parser.
    #[test]
    fn json_like_text_keeps_the_invariants(
        tokens in prop::collection::vec(prop::sample::select(vec![
            "{", "}", "[", "]", ":", ",", "\"a\"", "\"b\\n\"", "\"\\u00e9\"", "\"\\q\"", "\"",
            "'x'", "'", "1", "-0.5e3", "01", "1.", "true", "True", "null", "x", "/*", "*/",
            "//", "\n", " ", "\r\n", "\\", "é", "@", "\u{0}",
        ]), 0..40)
    ) {
        let text = tokens.concat();
        let parsed = parse(&text);
        check_invariants(&text, &parsed);
        // Errors never pile up: a token causes at most a structural and a content error.
        prop_assert!(parsed.diagnostics.len() <= 2 * tokens.len() + 1);
    }

    /// Whatever serde_json reads, we read the same way and without complaint.
    #[test]
    fn agrees_with_serde_json(value in json_value(), pretty in any::<bool>()) {
        let text = if pretty {
            serde_json::to_string_pretty(&value)
        } else {
            serde_json::to_string(&value)
        }.unwrap();
        let parsed = parse(&text);
        check_invariants(&text, &parsed);
        prop_assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        prop_assert_eq!(parsed.root.unwrap().to_value(), Value::from(&value));
    }
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value as J;
    let leaf = prop_oneof![
        Just(J::Null),
        any::<bool>().prop_map(J::Bool),
        any::<i64>().prop_map(J::from),
        (-1_000_000i32..1_000_000, 0u32..4)
            .prop_map(|(m, e)| J::from(m as f64 / 10f64.powi(e as i32))),
        "\\PC{0,12}".prop_map(J::String),
        any::<String>().prop_map(J::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(J::Array),
            prop::collection::vec(("\\PC{0,6}", inner), 0..6)
                .prop_map(|members| J::Object(members.into_iter().collect())),
        ]
    })
}

/// `text` read by [`parse_streaming`] with the streamed elements put back into their array:
/// the tree, diagnostics and elements must be those of [`parse`].
fn streamed_back(text: &str) -> (Parsed, usize) {
    let mut items = Vec::new();
    let (mut parsed, span) = parse_streaming(text, "phases", &mut |n| items.push(n));
    let n = items.len();
    let array = match parsed.root.as_mut() {
        Some(root) if root.span == span.unwrap_or_default() => Some(root),
        Some(Node {
            kind: Kind::Object(members),
            ..
        }) => members
            .iter_mut()
            .map(|m| &mut m.value)
            .find(|v| Some(v.span) == span),
        _ => None,
    };
    match array {
        Some(Node {
            kind: Kind::Array(kept),
            ..
        }) => {
            assert!(kept.is_empty(), "{text}");
            *kept = items;
        }
        _ => assert!(span.is_none() && items.is_empty(), "{text}"),
    }
    (parsed, n)
}

#[test]
fn streaming_hands_out_the_phases_array_and_nothing_else() {
    let cases = [
        (r#"[1, {"a": [2]}, [3]]"#, 3),
        (r#"{"x": [1], "phases": [{"phases": [1]}, 2], "y": [3]}"#, 2),
        (r#"{"phases": [1], "phases": [2, 3]}"#, 1),
        (r#"{"phases": {"phases": [1]}, "z": [4]}"#, 0),
        (r#"{"pha\u0073es": [1, 2]}"#, 2),
        (r#"{"a": {"phases": [1]}}"#, 0),
        (r#"[1, @, 2"#, 2),
        (r#""phases""#, 0),
        ("[]", 0),
    ];
    for (text, n) in cases {
        let plain = parse(text);
        let (streamed, got) = streamed_back(text);
        assert_eq!(got, n, "{text}");
        assert_eq!(streamed.root, plain.root, "{text}");
        assert_eq!(streamed.diagnostics, plain.diagnostics, "{text}");
    }
}

proptest! {
    #[test]
    fn streaming_reads_what_parse_reads(value in json_value(), noise in "[\\[\\]{},:\"a-z0-9 ]{0,24}") {
        let wrapped = serde_json::json!({"name": "x", "phases": value, "more": [1]});
        for text in [serde_json::to_string(&wrapped).unwrap(), serde_json::to_string(&value).unwrap(), noise] {
            let plain = parse(&text);
            let (streamed, _) = streamed_back(&text);
            prop_assert_eq!(&streamed.root, &plain.root);
            prop_assert_eq!(&streamed.diagnostics, &plain.diagnostics);
        }
    }
}
