//! Decoded strings that remember where each byte came from.
//!
//! A string without escapes maps decoded offset `d` to file offset `content + d`: one number,
//! no allocation. Each escape sequence adds one [`Escape`] record; between escapes the mapping
//! is again a plain shift, so a lookup is a binary search over the escapes (O(log k)).

use crate::diag::{Code, Diagnostic};
use crate::source::Span;
use std::ops::Range;

/// One escape sequence: `file_len` bytes of source at `file` decode to `dec_len` bytes of text
/// at `dec`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Escape {
    dec: u32,
    file: u32,
    dec_len: u8,
    file_len: u8,
}

/// A decoded JSON string with its span and the map from decoded offsets back to the file.
#[derive(Clone, Debug, PartialEq)]
pub struct Str {
    /// The decoded text.
    pub value: String,
    /// The whole literal, quotes included (a bare-word key, read to recover from an error,
    /// has none).
    pub span: Span,
    /// The map back to the file when it is more than a shift by one past the literal's start
    /// (the opening quote): none for most strings, which keeps a `Str` small.
    map: Option<Box<Map>>,
}

/// How a string with escapes (or without an opening quote) maps back to the file.
#[derive(Clone, Debug, PartialEq)]
struct Map {
    /// File offset of decoded byte 0.
    content: u32,
    /// The escape sequences, in order.
    escapes: Box<[Escape]>,
}

/// The map of a literal spanning `span` whose decoded byte 0 is at file offset `content`:
/// none in the usual case (`content` just after the opening quote, no escapes), so that two
/// strings that map alike compare equal.
fn map_of(span: Span, content: u32, escapes: Box<[Escape]>) -> Option<Box<Map>> {
    if escapes.is_empty() && Some(content) == span.start.checked_add(1) {
        None
    } else {
        Some(Box::new(Map { content, escapes }))
    }
}

/// The file offset of decoded byte 0 and the escapes of a literal spanning `span`.
fn parts(span: Span, map: Option<&Map>) -> (u32, &[Escape]) {
    match map {
        Some(map) => (map.content, &map.escapes),
        None => (span.start.wrapping_add(1), &[]),
    }
}

impl Default for Str {
    /// The empty string at offset 0.
    fn default() -> Str {
        Str::verbatim("", Span::default())
    }
}

/// Where a decoded string lies in the file, without the text itself: for an owner that keeps
/// the text elsewhere (a template keeps it) and still maps decoded offsets back to the file.
#[derive(Clone, Debug, PartialEq)]
pub struct StrAt {
    /// The whole literal, quotes included.
    pub span: Span,
    /// As in [`Str`].
    map: Option<Box<Map>>,
}

impl StrAt {
    /// [`Str::file_span`] for the decoded text `value` this place was split from.
    pub fn file_span(&self, value: &str, decoded: Range<usize>) -> Span {
        let (content, escapes) = parts(self.span, self.map.as_deref());
        span_in(value, content, escapes, decoded)
    }
}

/// File span of a byte range of `value`, decoded from a literal whose byte 0 is at file offset
/// `content` through `escapes` (see [`Str::file_span`]).
fn span_in(value: &str, content: u32, escapes: &[Escape], decoded: Range<usize>) -> Span {
    let len = value.len();
    let mut start = decoded.start.min(len);
    let mut end = decoded.end.clamp(start, len);
    while !value.is_char_boundary(start) {
        start -= 1;
    }
    while !value.is_char_boundary(end) {
        end += 1;
    }
    Span::new(
        file_offset(content, escapes, start, false),
        file_offset(content, escapes, end, true),
    )
}

/// File offset of decoded offset `d`; inside an escape's expansion it is the escape's start,
/// or its end when `end` is set.
fn file_offset(content: u32, escapes: &[Escape], d: usize, end: bool) -> u32 {
    let d = d as u32;
    let i = escapes.partition_point(|e| e.dec <= d);
    let Some(e) = i.checked_sub(1).and_then(|i| escapes.get(i)) else {
        return content + d;
    };
    let (dec_end, file_end) = (e.dec + e.dec_len as u32, e.file + e.file_len as u32);
    if d == e.dec {
        e.file
    } else if d < dec_end {
        if end { file_end } else { e.file }
    } else {
        file_end + (d - dec_end)
    }
}

impl Str {
    /// Split into the decoded text and its place in the file (no copy of the text).
    pub fn into_parts(self) -> (String, StrAt) {
        let at = StrAt {
            span: self.span,
            map: self.map,
        };
        (self.value, at)
    }

    /// File span of a byte range of the decoded [`value`](Str::value) (e.g. a placeholder found
    /// in the text). A range that starts or ends inside the expansion of an escape covers the
    /// whole escape sequence; offsets past the end are clamped and offsets inside a char are
    /// widened to the char, so the result always lies inside the literal on char boundaries.
    pub fn file_span(&self, decoded: Range<usize>) -> Span {
        let (content, escapes) = parts(self.span, self.map.as_deref());
        span_in(&self.value, content, escapes, decoded)
    }

    /// A string that is spelled exactly as its value, e.g. an unquoted key read to recover.
    pub(super) fn verbatim(value: &str, span: Span) -> Str {
        Str {
            value: value.to_owned(),
            span,
            map: Some(Box::new(Map {
                content: span.start,
                escapes: Box::default(),
            })),
        }
    }
}

/// The closed double-quoted literal of `text` at `span`, known to hold no escape and no
/// control character (the lexer saw its content through to the closing quote): its content
/// is its value.
#[inline]
pub(super) fn plain(text: &str, span: Span) -> Str {
    let content = text
        .get(span.start as usize + 1..(span.end as usize).saturating_sub(1))
        .unwrap_or("");
    Str {
        value: content.to_owned(),
        span,
        map: None,
    }
}

/// Decodes a string literal. `literal` is the token text (opening quote included; the closing
/// quote too when `closed`) and `at` its file offset. Problems in the content (bad escapes,
/// raw control characters; the first of each kind per string) go to `diagnostics` when
/// `report` is set.
pub(super) fn decode(
    literal: &str,
    at: u32,
    closed: bool,
    report: bool,
    diagnostics: &mut Vec<Diagnostic>,
) -> Str {
    let span = Span::new(at, at + literal.len() as u32);
    let content_end = literal.len().saturating_sub(closed as usize).max(1);
    let content = literal.get(1..content_end).unwrap_or("");
    let quote = literal.chars().next().unwrap_or('"');
    let start = at + 1;
    // The common case: nothing to decode.
    if super::lexer::plain_len(content.as_bytes(), b'\\') == content.len() {
        return Str {
            value: content.to_owned(),
            span,
            map: map_of(span, start, Box::default()),
        };
    }
    let mut decoder = Decoder {
        content,
        start,
        value: String::with_capacity(content.len()),
        // One escape is the common case: room for it, so the box needs no shrinking.
        escapes: Vec::with_capacity(1),
        report,
        bad_escape_reported: false,
        control_reported: false,
        diagnostics,
    };
    decoder.run(quote);
    Str {
        value: decoder.value,
        span,
        map: map_of(span, start, decoder.escapes.into_boxed_slice()),
    }
}

struct Decoder<'a, 'd> {
    content: &'a str,
    /// File offset of `content`.
    start: u32,
    value: String,
    escapes: Vec<Escape>,
    report: bool,
    bad_escape_reported: bool,
    control_reported: bool,
    diagnostics: &'d mut Vec<Diagnostic>,
}

impl Decoder<'_, '_> {
    fn run(&mut self, quote: char) {
        let bytes = self.content.as_bytes();
        let mut run = 0; // start of the pending run of plain text
        let mut i = 0;
        loop {
            // Step over plain bytes (a quote in the content is one) 8 at a time.
            i += super::lexer::plain_len(bytes.get(i..).unwrap_or_default(), b'\\');
            let Some(&b) = bytes.get(i) else { break };
            if b < 0x20 {
                self.control(i, b);
                i += 1;
            } else {
                self.value.push_str(self.content.get(run..i).unwrap_or(""));
                i = self.escape(i, quote);
                run = i;
            }
        }
        self.value.push_str(self.content.get(run..).unwrap_or(""));
    }

    /// Decodes the escape at `i` (a backslash); returns the offset just after it.
    fn escape(&mut self, i: usize, quote: char) -> usize {
        let rest = self.content.get(i + 1..).unwrap_or("");
        let Some(c) = rest.chars().next() else {
            // A backslash at the very end of an unterminated string: keep it.
            self.value.push('\\');
            return i + 1;
        };
        let simple = match c {
            '"' | '\\' | '/' => Some(c),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            _ if c == quote => Some(c),
            _ => None,
        };
        if let Some(decoded) = simple {
            self.push_escape(i, 2, decoded);
            return i + 2;
        }
        if c != 'u' {
            // Not an escape: keep the text as written, report it.
            self.bad_escape(i, 1 + c.len_utf8(), c);
            self.value.push('\\');
            self.value.push(c);
            return i + 1 + c.len_utf8();
        }
        let (unit, digits) = hex4(rest.get(1..).unwrap_or(""));
        if digits < 4 {
            self.bad_unicode(i, 2 + digits);
            self.push_escape(i, 2 + digits, char::REPLACEMENT_CHARACTER);
            return i + 2 + digits;
        }
        if (0xD800..0xDC00).contains(&unit) {
            // A high surrogate: combine it with a following `\uDC00`..`\uDFFF`.
            let next = rest.get(5..).unwrap_or("");
            if let Some(low_hex) = next.strip_prefix("\\u") {
                let (low, low_digits) = hex4(low_hex);
                if low_digits == 4 && (0xDC00..0xE000).contains(&low) {
                    let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    let decoded = char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER);
                    self.push_escape(i, 12, decoded);
                    return i + 12;
                }
            }
        }
        // Lone surrogates decode to U+FFFD.
        let decoded = char::from_u32(unit).unwrap_or(char::REPLACEMENT_CHARACTER);
        self.push_escape(i, 6, decoded);
        i + 6
    }

    fn push_escape(&mut self, i: usize, file_len: usize, decoded: char) {
        self.escapes.push(Escape {
            dec: self.value.len() as u32,
            file: self.start + i as u32,
            dec_len: decoded.len_utf8() as u8,
            file_len: file_len as u8,
        });
        self.value.push(decoded);
    }

    fn span(&self, i: usize, len: usize) -> Span {
        let start = self.start + i as u32;
        Span::new(start, start + len as u32)
    }

    fn bad_escape(&mut self, i: usize, len: usize, c: char) {
        if !self.report || std::mem::replace(&mut self.bad_escape_reported, true) {
            return;
        }
        let message = if c.is_control() {
            format!("invalid escape: '\\' followed by U+{:04X}", c as u32)
        } else {
            format!("invalid escape '\\{c}'")
        };
        let diag = Diagnostic::new(Code::JsonSyntax, message)
            .at(self.span(i, len))
            .with_label("not a JSON escape")
            .help(r#"valid escapes are \" \\ \/ \b \f \n \r \t \uXXXX; write \\ for a backslash"#);
        self.diagnostics.push(diag);
    }

    fn bad_unicode(&mut self, i: usize, len: usize) {
        if !self.report || std::mem::replace(&mut self.bad_escape_reported, true) {
            return;
        }
        let text = self.content.get(i..i + len).unwrap_or("\\u");
        let diag = Diagnostic::new(
            Code::JsonSyntax,
            format!("invalid unicode escape '{text}': expected 4 hex digits"),
        )
        .at(self.span(i, len))
        .with_label("expected 4 hex digits after \\u")
        .help(r"write a code unit as \u followed by exactly 4 hex digits, e.g. \u00e9");
        self.diagnostics.push(diag);
    }

    fn control(&mut self, i: usize, b: u8) {
        if !self.report || std::mem::replace(&mut self.control_reported, true) {
            return;
        }
        let escape = match b {
            b'\n' => "\\n".to_owned(),
            b'\r' => "\\r".to_owned(),
            b'\t' => "\\t".to_owned(),
            0x08 => "\\b".to_owned(),
            0x0c => "\\f".to_owned(),
            _ => format!("\\u{b:04X}"),
        };
        let mut diag = Diagnostic::new(
            Code::JsonSyntax,
            format!("control character U+{b:04X} in string: use {escape}"),
        )
        .at(self.span(i, 1))
        .with_label(format!("write {escape} here"));
        if b == b'\n' {
            diag = diag.help(
                "JSON strings cannot span lines; write \\n for a line break \
                 (or check for a missing closing quote)",
            );
        }
        self.diagnostics.push(diag);
    }
}

/// The value of up to 4 leading hex digits of `text`, and how many there were.
fn hex4(text: &str) -> (u32, usize) {
    let mut value = 0;
    let mut digits = 0;
    for c in text.chars().take(4) {
        let Some(d) = c.to_digit(16) else { break };
        value = value * 16 + d;
        digits += 1;
    }
    (value, digits)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes `literal` placed after `prefix` in a file; returns the file and the string.
    fn decoded(prefix: &str, literal: &str) -> (String, Str, Vec<Diagnostic>) {
        let file = format!("{prefix}{literal}");
        let mut diags = Vec::new();
        let closed = literal.len() > 1 && literal.ends_with('"');
        let s = decode(literal, prefix.len() as u32, closed, true, &mut diags);
        (file, s, diags)
    }

    fn slice(file: &str, span: Span) -> &str {
        &file[span.range()]
    }

    #[test]
    fn plain_strings_are_one_offset() {
        let (file, s, diags) = decoded("  ", r#""héllo""#);
        assert!(diags.is_empty());
        assert_eq!(s.value, "héllo");
        assert!(s.map.is_none());
        assert_eq!(slice(&file, s.span), r#""héllo""#);
        assert_eq!(slice(&file, s.file_span(1..3)), "é");
        assert_eq!(slice(&file, s.file_span(0..s.value.len())), "héllo");
    }

    #[test]
    fn simple_escapes_decode_and_map() {
        let (file, s, diags) = decoded("x: ", r#""a\"b\\c\/d\b\f\n\r\t""#);
        assert!(diags.is_empty());
        assert_eq!(s.value, "a\"b\\c/d\u{8}\u{c}\n\r\t");
        assert_eq!(slice(&file, s.file_span(1..2)), r#"\""#);
        assert_eq!(slice(&file, s.file_span(2..3)), "b");
        assert_eq!(slice(&file, s.file_span(0..4)), r#"a\"b\\"#);
        assert_eq!(slice(&file, s.file_span(7..10)), r"\b\f\n");
        assert_eq!(
            slice(&file, s.file_span(0..s.value.len())),
            &file[4..file.len() - 1]
        );
    }

    #[test]
    fn unicode_escapes_and_surrogate_pairs() {
        let (file, s, diags) = decoded("", r#""\u00e9x\ud83d\ude00y\u4E2D""#);
        assert!(diags.is_empty());
        assert_eq!(s.value, "éx😀y中");
        assert_eq!(slice(&file, s.file_span(0..2)), r"\u00e9");
        assert_eq!(slice(&file, s.file_span(2..3)), "x");
        assert_eq!(slice(&file, s.file_span(3..7)), r"\ud83d\ude00");
        assert_eq!(slice(&file, s.file_span(7..8)), "y");
        assert_eq!(slice(&file, s.file_span(8..11)), r"\u4E2D");
    }

    #[test]
    fn ranges_inside_an_expansion_cover_the_escape() {
        let (file, s, _) = decoded("", r#""a\u00e9b""#);
        // Byte 2 is inside the two-byte expansion of \u00e9; widened to the whole char.
        assert_eq!(slice(&file, s.file_span(2..2)), r"\u00e9");
        assert_eq!(slice(&file, s.file_span(0..2)), r"a\u00e9");
        assert_eq!(slice(&file, s.file_span(2..4)), r"\u00e9b");
        assert_eq!(slice(&file, s.file_span(1..1)), "");
        assert_eq!(s.file_span(1..1), Span::new(2, 2));
        assert_eq!(s.file_span(3..3), Span::new(8, 8));
    }

    #[test]
    fn out_of_range_offsets_are_clamped() {
        let (_, s, _) = decoded("", r#""ab\n""#);
        assert_eq!(s.file_span(2..99), Span::new(3, 5));
        assert_eq!(s.file_span(50..60), Span::new(5, 5));
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = s.file_span(2..1);
        assert_eq!(reversed, Span::new(3, 3));
    }

    #[test]
    fn placeholder_in_an_escaped_task_maps_back() {
        let prefix = r#"{"task": "#;
        let (file, s, _) = decoded(prefix, r#""Review \"{steps.scan.output}\"\nthen é""#);
        let at = s.value.find('{').unwrap();
        let end = s.value.find('}').unwrap() + 1;
        assert_eq!(slice(&file, s.file_span(at..end)), "{steps.scan.output}");
        let e = s.value.find('é').unwrap();
        assert_eq!(slice(&file, s.file_span(e..e + 2)), "é");
    }

    #[test]
    fn lone_surrogates_become_replacement_chars() {
        let (file, s, diags) = decoded("", r#""\ud800x\udc00\ud800\u0041""#);
        assert!(diags.is_empty());
        assert_eq!(s.value, "\u{fffd}x\u{fffd}\u{fffd}A");
        assert_eq!(slice(&file, s.file_span(0..3)), r"\ud800");
        assert_eq!(slice(&file, s.file_span(4..7)), r"\udc00");
        assert_eq!(slice(&file, s.file_span(7..10)), r"\ud800");
        assert_eq!(slice(&file, s.file_span(10..11)), r"\u0041");
    }

    #[test]
    fn invalid_escape_is_kept_and_reported_once() {
        let (file, s, diags) = decoded("", r#""C:\path\dir""#);
        assert_eq!(s.value, r"C:\path\dir");
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].message, r"invalid escape '\p'");
        assert_eq!(slice(&file, diags[0].span.unwrap()), r"\p");
        assert!(diags[0].help.as_deref().unwrap().contains(r"\\"));
        assert_eq!(slice(&file, s.file_span(2..4)), r"\p");
    }

    #[test]
    fn invalid_escape_of_a_multibyte_char() {
        let (file, s, diags) = decoded("", "\"\\é\"");
        assert_eq!(s.value, "\\é");
        assert_eq!(diags[0].message, "invalid escape '\\é'");
        assert_eq!(slice(&file, diags[0].span.unwrap()), "\\é");
    }

    #[test]
    fn escaped_line_break_is_invalid() {
        let (_, _, diags) = decoded("", "\"a\\\nb\"");
        assert_eq!(diags[0].message, "invalid escape: '\\' followed by U+000A");
    }

    #[test]
    fn short_unicode_escape() {
        let (file, s, diags) = decoded("", r#""\u12G4""#);
        assert_eq!(s.value, "\u{fffd}G4");
        assert_eq!(diags.len(), 1);
        assert_eq!(
            diags[0].message,
            r"invalid unicode escape '\u12': expected 4 hex digits"
        );
        assert_eq!(slice(&file, diags[0].span.unwrap()), r"\u12");
        assert_eq!(slice(&file, s.file_span(0..3)), r"\u12");
    }

    #[test]
    fn control_characters_reported_once_per_string() {
        let (file, s, diags) = decoded("", "\"a\nb\nc\tq\"");
        assert_eq!(s.value, "a\nb\nc\tq");
        assert_eq!(diags.len(), 1);
        assert_eq!(
            diags[0].message,
            r"control character U+000A in string: use \n"
        );
        assert_eq!(diags[0].span, Some(Span::new(2, 3)));
        assert_eq!(slice(&file, s.file_span(1..2)), "\n");
        let (_, _, diags) = decoded("", "\"\u{1}\"");
        assert_eq!(
            diags[0].message,
            r"control character U+0001 in string: use \u0001"
        );
    }

    #[test]
    fn unterminated_string_keeps_its_content() {
        let (file, s, _) = decoded("", "\"ab\\");
        assert_eq!(s.value, "ab\\");
        assert_eq!(s.span, Span::new(0, 4));
        assert_eq!(slice(&file, s.file_span(0..3)), "ab\\");
        let (_, s, _) = decoded("", "\"");
        assert_eq!(s.value, "");
        assert_eq!(s.file_span(0..0), Span::new(1, 1));
    }

    #[test]
    fn single_quoted_strings_accept_escaped_single_quotes() {
        let mut diags = Vec::new();
        let s = decode(r"'it\'s'", 0, true, true, &mut diags);
        assert_eq!(s.value, "it's");
        assert!(diags.is_empty());
    }

    #[test]
    fn silent_decoding_reports_nothing() {
        let mut diags = Vec::new();
        let s = decode("'\\q\n'", 0, true, false, &mut diags);
        assert_eq!(s.value, "\\q\n");
        assert!(diags.is_empty());
    }

    #[test]
    fn strings_that_map_alike_compare_equal() {
        let text = r#"  "abc" "#;
        let span = Span::new(2, 7);
        let mut diags = Vec::new();
        let decoded = decode(&text[span.range()], span.start, true, true, &mut diags);
        assert_eq!(plain(text, span), decoded);
        assert!(decoded.map.is_none());
        // An unquoted key maps from its first byte, the default string from offset 0.
        let word = Str::verbatim("abc", Span::new(2, 5));
        assert_eq!(word.file_span(1..2), Span::new(3, 4));
        assert_eq!(Str::default().file_span(0..0), Span::new(0, 0));
        let (value, at) = word.into_parts();
        assert_eq!(at.file_span(&value, 0..3), Span::new(2, 5));
    }
}
