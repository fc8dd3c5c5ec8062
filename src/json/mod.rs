//! A span-keeping JSON/JSONC reader: the front end of `tfc check`.
//!
//! [`parse`] reads strict JSON (RFC 8259) plus JSONC's `//` and `/* */` comments and trailing
//! commas into a [`Node`] tree in which every value knows its byte [`Span`] and every string
//! ([`Str`]) can map an offset in its decoded text back to the file, escapes and all:
//!
//! ```
//! use tfc::json::parse;
//!
//! let text = r#"{"task": "Review \"{steps.scan.output}\"\n", /* ok */ }"#;
//! let parsed = parse(text);
//! assert!(parsed.diagnostics.is_empty());
//! let task = parsed.root.unwrap().get("task").unwrap().as_str().unwrap().clone();
//! let at = task.value.find('{').unwrap();
//! let end = task.value.find('}').unwrap() + 1;
//! assert_eq!(&text[task.file_span(at..end).range()], "{steps.scan.output}");
//! ```
//!
//! Problems are [`Diagnostic`]s: E0001 (json-syntax) with "expected X, found Y" at the offending
//! token, E0002 (duplicate-key) with a label on the first occurrence. The reader never panics,
//! recovers after most errors to report several at once, and returns the best tree it could
//! read (values it could not read are left out), so later stages can keep checking.
//!
//! Every message, with an input that triggers it (all E0001 but the last):
//!
//! | message | input |
//! |---|---|
//! | `unexpected end of file: expected a value` | (empty) |
//! | `trailing characters after the JSON value` | `{} x` |
//! | `expected ',' or '}' after object member, found '"'` | `{"a": 1 "b": 2}` |
//! | `expected ',' or ']' after array element, found '2'` | `[1 2]` |
//! | `expected ':' after object key, found '1'` | `{"a" 1}` |
//! | `expected a value, found '}'` | `{"a": }` |
//! | `expected a value, found 'True'` (help: lowercase) | `True` |
//! | `expected a value or ']', found '@'` | `[@]` |
//! | `expected a string key, found 'name'` (help: quote it) | `{name: 1}` |
//! | `expected a string key or '}', found ','` | `{,}` |
//! | `expected a double-quoted string, found "'"` | `['a']` |
//! | `unexpected end of file: expected ',' or ']' after array element` | `[1` |
//! | `expected ',' or ']' after array element, found '}'` | `[1}` |
//! | `unterminated string` | `"abc` |
//! | `unterminated block comment` | `[/* x` |
//! | `invalid number '01': leading zeros are not allowed` (also `+1`, `1.`, `.5`, `1e`, `0x1`) | `01` |
//! | `invalid escape '\q'` | `"\q"` |
//! | `invalid unicode escape '\u12': expected 4 hex digits` | `"\u12"` |
//! | `control character U+000A in string: use \n` | a line break inside a string |
//! | `nesting too deep (limit 256)` | 257 × `[` |
//! | `invalid UTF-8: byte 0xFF at offset 0` ([`parse_bytes`]) | the byte `FF` |
//! | `file too large (limit 4 GiB)` | 4 GiB of anything |
//! | E0002 `duplicate key 'a'`, labelled `first defined here` | `{"a": 1, "a": 2}` |
//!
//! Layout: `lexer.rs` (logos tokens) → `parser.rs` (recursive descent) → the tree in `tree.rs`,
//! strings and their offset maps in `string.rs`.

mod lexer;
mod number;
mod parser;
mod string;
mod tree;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tree_tests;

pub use string::{Str, StrAt};
pub use tree::{Kind, Member, Node};

use crate::diag::{Code, Diagnostic};
use crate::source::Span;

/// The result of reading a file: the tree (when there was a value to read) and every problem.
#[derive(Clone, Debug)]
pub struct Parsed {
    /// The document's value; best-effort when `diagnostics` has errors.
    pub root: Option<Node>,
    /// Problems in file order.
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads JSON/JSONC text.
pub fn parse(text: &str) -> Parsed {
    if u32::try_from(text.len()).is_err() {
        return too_large();
    }
    let (root, mut diagnostics) = parser::Parser::new(text).document();
    diagnostics.sort_by_key(|d| d.span.map(|s| s.start));
    Parsed { root, diagnostics }
}

/// [`parse`], handing the elements of one array to `sink` as soon as each is read instead of
/// keeping them in the tree: the document itself when it is an array, else the value of the
/// root object's first member named `key` when that is an array. That array is left empty in
/// the tree; its span is returned (none when there was no such array). Its elements are
/// exactly those [`parse`] would keep, in order; a reader can so handle (and drop) each one
/// while the rest of the file is still being read, and the whole tree never is in memory.
pub fn parse_streaming(
    text: &str,
    key: &str,
    sink: &mut dyn FnMut(Node),
) -> (Parsed, Option<Span>) {
    if u32::try_from(text.len()).is_err() {
        return (too_large(), None);
    }
    let (root, mut diagnostics, span) =
        parser::Parser::streaming(text, key, sink).document_streamed();
    diagnostics.sort_by_key(|d| d.span.map(|s| s.start));
    (Parsed { root, diagnostics }, span)
}

/// Reads JSON/JSONC bytes: invalid UTF-8 is an E0001 at the first offending byte (and no tree).
pub fn parse_bytes(bytes: &[u8]) -> Parsed {
    if u32::try_from(bytes.len()).is_err() {
        return too_large();
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => parse(text),
        Err(error) => {
            let at = error.valid_up_to();
            let len = error.error_len().unwrap_or(bytes.len() - at);
            let byte = bytes.get(at).copied().unwrap_or_default();
            let diag = Diagnostic::new(
                Code::JsonSyntax,
                format!("invalid UTF-8: byte 0x{byte:02X} at offset {at}"),
            )
            .at(Span::from_range(at..at + len))
            .with_label("not UTF-8")
            .help("save the file as UTF-8");
            Parsed {
                root: None,
                diagnostics: vec![diag],
            }
        }
    }
}

fn too_large() -> Parsed {
    let diag = Diagnostic::new(Code::JsonSyntax, "file too large (limit 4 GiB)");
    Parsed {
        root: None,
        diagnostics: vec![diag],
    }
}
