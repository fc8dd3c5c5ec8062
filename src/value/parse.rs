//! A strict RFC 8259 JSON parser into [`Value`] (SPEC §5.1).
//!
//! * No extensions: no comments, trailing commas, single quotes, raw control characters in
//!   strings, leading `+`/`.`, hex, `NaN`/`Infinity`. Whitespace is only space, tab, LF, CR.
//! * Numbers are doubles, correctly rounded; overflow gives ±∞ and underflow 0 (`1e400` is `+∞`).
//! * Duplicate keys: the last value wins, kept at the first key's position.
//! * A lone surrogate escape (`\ud800`) decodes to U+FFFD.
//! * It never recurses: containers under construction live on explicit stacks, so nesting depth
//!   is bounded by memory only. Work is linear in the input length; a failure costs at most the
//!   bytes read up to the error.

use super::types::{Map, Value};

/// Why and where (byte offset into the input) parsing failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The byte offset of the error in the input.
    pub offset: usize,
    /// What went wrong.
    pub message: &'static str,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)
    }
}

impl std::error::Error for ParseError {}

/// Parses `text` as exactly one JSON value, optionally surrounded by JSON whitespace.
pub fn parse_json(text: &str) -> Result<Value, ParseError> {
    Parser::new(text).parse()
}

/// Parses the one JSON value at the start of `text` (after any JSON whitespace), and where it
/// ends: the text after it is not looked at.
pub(crate) fn parse_json_prefix(text: &str) -> Result<(Value, usize), ParseError> {
    Parser::new(text).parse_prefix()
}

const EOF: &str = "unexpected end of input";

/// One open container: where its members start on the shared value stack (and, for objects,
/// on the key stack).
#[derive(Clone, Copy)]
enum Open {
    Array { values: usize },
    Object { values: usize, keys: usize },
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    /// Members of every open container, innermost last.
    values: Vec<Value>,
    /// Keys of every open object, innermost last; parallel to their members in `values`.
    keys: Vec<String>,
    open: Vec<Open>,
}

/// What follows a finished value.
enum Next {
    /// Parse another value (an array element or an object member's value).
    Value,
    /// The whole document is done.
    Done(Value),
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Parser {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            values: Vec::new(),
            keys: Vec::new(),
            open: Vec::new(),
        }
    }

    /// The whole input is one JSON value (whitespace around it allowed).
    fn parse(mut self) -> Result<Value, ParseError> {
        let root = self.root()?;
        self.skip_ws();
        if self.pos != self.bytes.len() {
            return Err(self.err("trailing characters after the JSON value"));
        }
        Ok(root)
    }

    /// The value at the start of the input and where it ends.
    fn parse_prefix(mut self) -> Result<(Value, usize), ParseError> {
        let root = self.root()?;
        Ok((root, self.pos))
    }

    /// The driver: parse values until the root is complete.
    fn root(&mut self) -> Result<Value, ParseError> {
        self.skip_ws();
        loop {
            let Some(value) = self.value_or_open()? else {
                continue;
            };
            if let Next::Done(root) = self.finish(value)? {
                return Ok(root);
            }
        }
    }

    /// Parses the value at `pos`. A non-empty container is opened instead (`None`): its first
    /// member is parsed next.
    fn value_or_open(&mut self) -> Result<Option<Value>, ParseError> {
        let Some(&b) = self.bytes.get(self.pos) else {
            return Err(self.err(EOF));
        };
        let value = match b {
            b'[' => {
                self.pos += 1;
                self.skip_ws();
                if self.eat(b']') {
                    Value::Array(Vec::new())
                } else {
                    self.open.push(Open::Array {
                        values: self.values.len(),
                    });
                    return Ok(None);
                }
            }
            b'{' => {
                self.pos += 1;
                self.skip_ws();
                if self.eat(b'}') {
                    Value::Object(Map::default())
                } else {
                    self.open.push(Open::Object {
                        values: self.values.len(),
                        keys: self.keys.len(),
                    });
                    self.key()?;
                    return Ok(None);
                }
            }
            b'"' => {
                self.pos += 1;
                Value::String(self.string()?)
            }
            b'-' | b'0'..=b'9' => Value::Number(self.number()?),
            b't' => self.literal("true", Value::Bool(true))?,
            b'f' => self.literal("false", Value::Bool(false))?,
            b'n' => self.literal("null", Value::Null)?,
            _ => return Err(self.err("expected a JSON value")),
        };
        Ok(Some(value))
    }

    /// Attaches a finished value to its container, closing every container that ends right
    /// after it; stops when another value must be parsed or the root is complete.
    fn finish(&mut self, mut value: Value) -> Result<Next, ParseError> {
        loop {
            let Some(&open) = self.open.last() else {
                return Ok(Next::Done(value));
            };
            self.values.push(value);
            self.skip_ws();
            let (closer, message) = match open {
                Open::Array { .. } => (b']', "expected ',' or ']'"),
                Open::Object { .. } => (b'}', "expected ',' or '}'"),
            };
            match self.bytes.get(self.pos) {
                Some(b',') => {
                    self.pos += 1;
                    self.skip_ws();
                    if let Open::Object { .. } = open {
                        self.key()?;
                    }
                    return Ok(Next::Value);
                }
                Some(&b) if b == closer => {
                    self.pos += 1;
                    self.open.pop();
                    value = self.close(open);
                }
                Some(_) => return Err(self.err(message)),
                None => return Err(self.err(EOF)),
            }
        }
    }

    /// Builds the container whose members are on top of the stacks.
    fn close(&mut self, open: Open) -> Value {
        match open {
            // The outermost container takes the whole stack rather than copying it.
            Open::Array { values: 0 } => Value::Array(std::mem::take(&mut self.values)),
            Open::Array { values } => Value::Array(self.values.split_off(values)),
            Open::Object { values, keys } => {
                let n = self.values.len().saturating_sub(values);
                let mut map = Map::with_capacity_and_hasher(n, Default::default());
                let members = self.keys.drain(keys..).zip(self.values.drain(values..));
                for (k, v) in members {
                    // `insert` keeps an existing key's position and replaces its value.
                    map.insert(k, v);
                }
                Value::Object(map)
            }
        }
    }

    /// An object key and its colon; leaves `pos` at the member's value.
    fn key(&mut self) -> Result<(), ParseError> {
        if !self.eat(b'"') {
            return Err(self.err("expected a string key"));
        }
        let key = self.string()?;
        self.keys.push(key);
        self.skip_ws();
        if !self.eat(b':') {
            return Err(self.err("expected ':'"));
        }
        self.skip_ws();
        Ok(())
    }

    /// The rest of a string whose opening quote was consumed. Runs without escapes are copied
    /// in bulk.
    fn string(&mut self) -> Result<String, ParseError> {
        let start = self.pos;
        let end = self.scan_plain(start);
        match self.bytes.get(end) {
            Some(b'"') => {
                self.pos = end + 1;
                Ok(self.text[start..end].to_owned())
            }
            Some(b'\\') => {
                let mut out = String::with_capacity(end - start + 16);
                out.push_str(&self.text[start..end]);
                self.pos = end;
                self.string_with_escapes(out)
            }
            Some(_) => Err(self.err_at(end, "control character in string")),
            None => Err(self.err_at(end, EOF)),
        }
    }

    /// Continues a string at a backslash, appending to `out`.
    fn string_with_escapes(&mut self, mut out: String) -> Result<String, ParseError> {
        loop {
            match self.bytes.get(self.pos) {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    self.escape(&mut out)?;
                }
                Some(_) => return Err(self.err("control character in string")),
                None => return Err(self.err(EOF)),
            }
            let start = self.pos;
            let end = self.scan_plain(start);
            out.push_str(&self.text[start..end]);
            self.pos = end;
        }
    }

    /// The first index at or after `from` holding `"`, `\` or a control byte (or the end).
    /// Such bytes are ASCII, so the run before it is whole UTF-8.
    ///
    /// Eight bytes per step (most strings in model output are short keys and words, too short
    /// for a block scan to pay off), then byte by byte for the last few.
    fn scan_plain(&self, from: usize) -> usize {
        let bytes = self.bytes;
        let mut i = from;
        while let Some(word) = bytes.get(i..i + 8) {
            let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
            let hits = special_bytes(word);
            if hits != 0 {
                return i + (hits.trailing_zeros() / 8) as usize;
            }
            i += 8;
        }
        while let Some(&b) = bytes.get(i) {
            if (b < 0x20) | (b == b'"') | (b == b'\\') {
                return i;
            }
            i += 1;
        }
        bytes.len()
    }

    /// One escape after its backslash.
    fn escape(&mut self, out: &mut String) -> Result<(), ParseError> {
        let Some(&b) = self.bytes.get(self.pos) else {
            return Err(self.err(EOF));
        };
        self.pos += 1;
        let c = match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => self.unicode_escape()?,
            _ => return Err(self.err_at(self.pos - 1, "invalid escape")),
        };
        out.push(c);
        Ok(())
    }

    /// The character of a `\uXXXX` escape (after the `u`), joining a surrogate pair written as
    /// two escapes; an unpaired surrogate becomes U+FFFD.
    fn unicode_escape(&mut self) -> Result<char, ParseError> {
        let hi = self.hex4()?;
        if !(0xD800..0xDC00).contains(&hi) {
            return Ok(char::from_u32(hi).unwrap_or('\u{FFFD}'));
        }
        let pair = self.bytes.get(self.pos..self.pos + 2) == Some(b"\\u");
        if pair {
            let save = self.pos;
            self.pos += 2;
            let lo = self.hex4()?;
            if (0xDC00..0xE000).contains(&lo) {
                let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                return Ok(char::from_u32(c).unwrap_or('\u{FFFD}'));
            }
            // Not a low surrogate: it is decoded on its own next.
            self.pos = save;
        }
        Ok('\u{FFFD}')
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let mut n = 0;
        for _ in 0..4 {
            let Some(&b) = self.bytes.get(self.pos) else {
                return Err(self.err(EOF));
            };
            let d = match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                b'A'..=b'F' => b - b'A' + 10,
                _ => return Err(self.err("invalid \\u escape")),
            };
            n = n * 16 + u32::from(d);
            self.pos += 1;
        }
        Ok(n)
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, converted with correct rounding.
    fn number(&mut self) -> Result<f64, ParseError> {
        let start = self.pos;
        let negative = self.eat(b'-');
        let int_start = self.pos;
        // The digits (integer and fraction) as one integer; exact while there are at most 19.
        let mut mantissa = 0u64;
        match self.bytes.get(self.pos) {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => mantissa = self.digits(mantissa),
            _ => return Err(self.err("invalid number")),
        }
        let mut digits = self.pos - int_start;
        let mut frac_digits = 0;
        if self.eat(b'.') {
            let frac_start = self.pos;
            mantissa = self.digits(mantissa);
            frac_digits = self.pos - frac_start;
            if frac_digits == 0 {
                return Err(self.err("invalid number: expected a digit after '.'"));
            }
            digits += frac_digits;
        }
        let mut exponent = 0i64;
        if matches!(self.bytes.get(self.pos), Some(b'e' | b'E')) {
            self.pos += 1;
            let negative_exponent = self.eat(b'-');
            if !negative_exponent {
                self.eat(b'+');
            }
            let exp_start = self.pos;
            while let Some(&d @ b'0'..=b'9') = self.bytes.get(self.pos) {
                // Saturates far beyond any exponent the fast path takes.
                exponent = (exponent * 10 + i64::from(d - b'0')).min(1 << 32);
                self.pos += 1;
            }
            if self.pos == exp_start {
                return Err(self.err("invalid number: expected an exponent digit"));
            }
            if negative_exponent {
                exponent = -exponent;
            }
        }
        // Clinger's fast path: a mantissa below 2^53 and a power of ten up to 10^22 are both
        // exact doubles, so one multiplication or division rounds correctly. Everything else
        // goes through the standard library's correctly rounded conversion (which overflows to
        // ±∞ and underflows to 0).
        let scale = exponent - frac_digits as i64;
        if digits <= 19 && mantissa <= 1 << 53 && (-22..=22).contains(&scale) {
            let m = mantissa as f64;
            let x = if scale >= 0 {
                m * POW10[scale as usize]
            } else {
                m / POW10[(-scale) as usize]
            };
            return Ok(if negative { -x } else { x });
        }
        self.text[start..self.pos]
            .parse::<f64>()
            .map_err(|_| self.err_at(start, "invalid number"))
    }

    /// Skips ASCII digits, appending them to `n` (wrapping; the caller counts the digits).
    fn digits(&mut self, mut n: u64) -> u64 {
        while let Some(&d @ b'0'..=b'9') = self.bytes.get(self.pos) {
            n = n.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
            self.pos += 1;
        }
        n
    }

    fn literal(&mut self, word: &'static str, value: Value) -> Result<Value, ParseError> {
        let rest = self.bytes.get(self.pos..).unwrap_or_default();
        if rest.starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.err("invalid literal"))
        }
    }

    fn skip_ws(&mut self) {
        while matches!(self.bytes.get(self.pos), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        let hit = self.bytes.get(self.pos) == Some(&b);
        if hit {
            self.pos += 1;
        }
        hit
    }

    fn err(&self, message: &'static str) -> ParseError {
        self.err_at(self.pos, message)
    }

    fn err_at(&self, offset: usize, message: &'static str) -> ParseError {
        ParseError { offset, message }
    }
}

/// The powers of ten that are exact doubles.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

const ONES: u64 = 0x0101_0101_0101_0101;

/// For the eight bytes of `word` (little-endian), the high bit of each byte that is `"`, `\`
/// or a control character. Only the lowest set bit is exact: a borrow out of a hit may also
/// mark bytes above it, never below.
#[inline(always)]
fn special_bytes(word: u64) -> u64 {
    let zero = |x: u64| x.wrapping_sub(ONES) & !x;
    let quote = zero(word ^ (ONES * u64::from(b'"')));
    let backslash = zero(word ^ (ONES * u64::from(b'\\')));
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    (quote | backslash | control) & (ONES * 0x80)
}

/// The index of the first byte at or after `from` for which `hit` holds.
///
/// Works on 32-byte blocks with a branch-free inner loop (the compiler turns it into vector
/// compares and a bit mask), so long runs of uninteresting bytes are skipped quickly. Keep `hit`
/// branch-free (`|`, not `||` or `matches!`) or it stays scalar.
#[inline(always)]
pub(crate) fn find_byte(bytes: &[u8], from: usize, hit: impl Fn(u8) -> bool) -> Option<usize> {
    let rest = bytes.get(from..)?;
    let (blocks, tail) = rest.as_chunks::<32>();
    let mut base = from;
    for block in blocks {
        let mut mask = 0u32;
        for (k, &b) in block.iter().enumerate() {
            mask |= u32::from(hit(b)) << k;
        }
        if mask != 0 {
            return Some(base + mask.trailing_zeros() as usize);
        }
        base += 32;
    }
    tail.iter().position(|&b| hit(b)).map(|n| base + n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Value {
        match parse_json(text) {
            Ok(v) => v,
            Err(e) => panic!("{text:?} failed: {e}"),
        }
    }

    fn bad(text: &str) -> ParseError {
        match parse_json(text) {
            Ok(v) => panic!("{text:?} parsed as {v:?}"),
            Err(e) => e,
        }
    }

    fn obj(pairs: &[(&str, Value)]) -> Value {
        Value::Object(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn a_prefix_is_parsed_up_to_its_end() {
        let text = r#" {"a": [1, "}]"], "b": {}} , "rest": 2}"#;
        let (v, end) = parse_json_prefix(text).expect("parses");
        assert_eq!(v, ok(&text[..end]));
        assert_eq!(&text[end..], " , \"rest\": 2}");
        assert_eq!(parse_json_prefix("1.5,").map(|(_, n)| n), Ok(3));
        assert_eq!(parse_json_prefix("\"x\"y").map(|(_, n)| n), Ok(3));
        assert!(parse_json_prefix("[1,").is_err());
        assert!(parse_json_prefix("").is_err());
    }

    #[test]
    fn scalars() {
        assert_eq!(ok("null"), Value::Null);
        assert_eq!(ok("true"), Value::Bool(true));
        assert_eq!(ok(" \t\r\nfalse \n"), Value::Bool(false));
        assert_eq!(ok("\"hi\""), Value::from("hi"));
        assert_eq!(ok("0"), Value::Number(0.0));
        assert_eq!(ok("-12"), Value::Number(-12.0));
    }

    #[test]
    fn containers_and_order() {
        assert_eq!(ok("[]"), Value::Array(vec![]));
        assert_eq!(ok("{}"), obj(&[]));
        assert_eq!(ok(" [ 1 , [ ] , { } ] "), {
            Value::Array(vec![Value::Number(1.0), Value::Array(vec![]), obj(&[])])
        });
        let v = ok(r#"{"b":1,"a":{"c":[true,null]}}"#);
        assert_eq!(
            v,
            obj(&[
                ("b", Value::Number(1.0)),
                (
                    "a",
                    obj(&[("c", Value::Array(vec![Value::Bool(true), Value::Null]))])
                ),
            ])
        );
        let keys: Vec<_> = v
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        assert_eq!(keys, ["b", "a"]);
    }

    #[test]
    fn duplicate_keys_keep_first_position_last_value() {
        let v = ok(r#"{"a":1,"b":2,"a":3}"#);
        let pairs: Vec<_> = v
            .as_object()
            .map(|o| o.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        assert_eq!(
            pairs,
            [
                ("a".to_owned(), Value::Number(3.0)),
                ("b".to_owned(), Value::Number(2.0))
            ]
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(ok("1e400"), Value::Number(f64::INFINITY));
        assert_eq!(ok("-1e400"), Value::Number(f64::NEG_INFINITY));
        assert_eq!(ok("1e-400"), Value::Number(0.0));
        assert_eq!(ok("0.1"), Value::Number(0.1));
        assert_eq!(ok("2.5E+3"), Value::Number(2500.0));
        assert_eq!(ok("1e-2"), Value::Number(0.01));
        assert_eq!(
            ok("123456789012345678901"),
            Value::Number(123456789012345678901.0)
        );
        assert_eq!(ok("9007199254740993"), Value::Number(9007199254740992.0));
        assert_eq!(ok("999999999999999"), Value::Number(999999999999999.0));
        assert_eq!(ok("1.7976931348623157e308"), Value::Number(f64::MAX));
        assert_eq!(ok("5e-324"), Value::Number(5e-324));
        match ok("-0") {
            Value::Number(x) => assert!(x == 0.0 && x.is_sign_negative()),
            v => panic!("{v:?}"),
        }
        for text in [
            ".5", "+1", "0x10", "NaN", "Infinity", "-", "01", "1.", "1.e1", "1e", "1e+", "-a",
            "--1", "1 2", "00",
        ] {
            bad(text);
        }
    }

    #[test]
    fn strings_and_escapes() {
        assert_eq!(
            ok(r#""a\"b\\c\/d\b\f\n\r\t""#),
            Value::from("a\"b\\c/d\u{8}\u{c}\n\r\t")
        );
        assert_eq!(ok(r#""\u00e9\u4E2D""#), Value::from("é中"));
        assert_eq!(ok(r#""\ud83d\ude00""#), Value::from("😀"));
        assert_eq!(ok(r#""x\ud800y""#), Value::from("x\u{FFFD}y"));
        assert_eq!(ok(r#""\udc00""#), Value::from("\u{FFFD}"));
        assert_eq!(ok(r#""\ud800\u0041""#), Value::from("\u{FFFD}A"));
        assert_eq!(ok(r#""\ud800\ud83d\ude00""#), Value::from("\u{FFFD}😀"));
        assert_eq!(ok(r#""\ud800""#), Value::from("\u{FFFD}"));
        assert_eq!(ok("\"é 中 😀\""), Value::from("é 中 😀"));
        assert_eq!(ok("\"\u{7f}\""), Value::from("\u{7f}"));
        for text in [
            "\"a\nb\"",
            "\"\t\"",
            "\"\u{0}\"",
            r#""\x""#,
            r#""\u12""#,
            r#""\u12g4""#,
            "\"abc",
            r#""\"#,
            "'a'",
            r#""\ud800\u12""#,
        ] {
            bad(text);
        }
    }

    #[test]
    fn rejects_extensions() {
        for text in [
            "",
            " ",
            "[1,]",
            "{\"a\":1,}",
            "[1 2]",
            "{\"a\" 1}",
            "{a:1}",
            "{'a':1}",
            "// c\n1",
            "/* c */ 1",
            "[1]]",
            "[1",
            "{\"a\":1",
            "{\"a\":",
            "{\"a\"",
            "{\"a\":1 \"b\":2}",
            "tru",
            "nul",
            "truex",
            "\u{a0}1",
            "\u{feff}1",
            "1\u{b}",
            "[,1]",
            "{,}",
            "]",
        ] {
            bad(text);
        }
    }

    /// The word-at-a-time string scan stops at the first special byte wherever it falls in a
    /// word, and never at a UTF-8 byte (0x80 and up) or DEL.
    #[test]
    fn string_scan_finds_every_position() {
        for run in ["a", "é", "\u{7f}", "😀", " "] {
            for k in 0..24 {
                let plain = run.repeat(k);
                assert_eq!(ok(&format!("\"{plain}\"")), Value::from(plain.as_str()));
                assert_eq!(
                    ok(&format!("\"{plain}\\n{plain}\"")),
                    Value::from(format!("{plain}\n{plain}").as_str())
                );
                assert_eq!(
                    ok(&format!("[\"{plain}\\\"\",1]")),
                    Value::Array(vec![
                        Value::from(format!("{plain}\"").as_str()),
                        Value::Number(1.0)
                    ])
                );
                for control in ['\u{0}', '\u{1f}', '\n'] {
                    let e = bad(&format!("\"{plain}{control}{plain}\""));
                    assert_eq!(e.offset, 1 + plain.len(), "{run:?} x {k}, {control:?}");
                }
                assert_eq!(bad(&format!("\"{plain}")).message, EOF);
            }
        }
    }

    /// Every number the fast path takes converts exactly as the standard library's correctly
    /// rounded parser does, as do the ones at and just beyond its limits.
    #[test]
    fn number_fast_path_is_correctly_rounded() {
        let mut texts: Vec<String> = [
            "0",
            "0.0",
            "0e400",
            "9.2",
            "0.1",
            "0.3",
            "4.35",
            "1e22",
            "1e23",
            "1e-22",
            "1e-23",
            "123.456e-5",
            "9007199254740992",
            "9007199254740993",
            "9007199254740992e22",
            "9007199254740993e1",
            "9007199254740991.5",
            "1234567890123456789",
            "12345678901234567890",
            "0.0000000000000000000001",
            "18446744073709551615",
            "18446744073709551616e-3",
            "7.2057594037927933e16",
            "2.2250738585072014e-308",
            "1E+2",
            "1e-0",
            "100000000000000000000000e-2",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        // Pseudo-random decimals of every shape the fast path sees.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for _ in 0..20_000 {
            let width = 1 + next(18) as u32;
            let int = next(10u64.pow(width));
            let frac_len = next(12) as usize;
            let frac: String = (0..frac_len)
                .map(|_| char::from(b'0' + next(10) as u8))
                .collect();
            let mut t = int.to_string();
            if frac_len > 0 {
                t = format!("{t}.{frac}");
            }
            if next(3) == 0 {
                t = format!("{t}e{}", next(60) as i64 - 30);
            }
            texts.push(t);
        }
        for t in &texts {
            let want: f64 = t.parse().unwrap_or(f64::NAN);
            for (text, want) in [(t.clone(), want), (format!("-{t}"), -want)] {
                match ok(&text) {
                    Value::Number(x) => assert_eq!(x.to_bits(), want.to_bits(), "{text}"),
                    v => panic!("{text}: {v:?}"),
                }
            }
        }
    }

    #[test]
    fn error_offsets() {
        assert_eq!(bad("[1,]").offset, 3);
        assert_eq!(bad("  x").offset, 2);
        assert_eq!(bad("\"ab\ncd\"").offset, 3);
        assert_eq!(
            bad("[1] x").message,
            "trailing characters after the JSON value"
        );
        assert_eq!(bad("[1").message, EOF);
    }

    #[test]
    fn deep_nesting_parses_without_recursion() {
        let depth = 10_000;
        let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let v = ok(&text);
        let mut cur = &v;
        let mut seen = 0;
        while let Value::Array(a) = cur {
            seen += 1;
            match a.first() {
                Some(inner) => cur = inner,
                None => break,
            }
        }
        assert_eq!(seen, depth);
        let text = format!("{}1{}", "{\"k\":[".repeat(depth), "]}".repeat(depth));
        assert!(parse_json(&text).is_ok());
    }

    /// A million levels parse (and the value drops) on a 256 KiB stack.
    #[test]
    fn million_deep_documents_parse_on_a_small_stack() {
        use crate::value::fixtures::{DEPTH, mixed, small_stack};
        small_stack(|| {
            let text = format!("{}{}", "[".repeat(DEPTH), "]".repeat(DEPTH));
            let v = ok(&text);
            assert_eq!(v.to_json(), text);
            let expected = mixed(DEPTH, Value::from("end"));
            assert!(ok(&expected.to_json()) == expected);
            let cut = format!(
                "{}{}",
                "{\"k\":[1,".repeat(DEPTH / 2),
                "]}".repeat(DEPTH / 2)
            );
            // A trailing comma a million levels down.
            assert_eq!(bad(&cut).message, "expected a JSON value");
        });
    }

    #[test]
    fn million_open_brackets_fail_cleanly() {
        let text = "[".repeat(1_000_000);
        assert_eq!(bad(&text).offset, 1_000_000);
        let text = format!("{}1", "[{\"a\":".repeat(500_000));
        assert_eq!(bad(&text).message, EOF);
    }

    /// Structural equality allowing numbers a couple of ulps apart (serde_json's default float
    /// parsing is not always correctly rounded, notably for subnormals).
    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => {
                x == y || (x.signum() == y.signum() && x.to_bits().abs_diff(y.to_bits()) <= 2)
            }
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
            }
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(y)
                        .all(|((ka, a), (kb, b))| ka == kb && same(a, b))
            }
            _ => a == b,
        }
    }

    mod props {
        use super::*;
        use crate::value::strategies::arb_value;
        use proptest::prelude::*;
        use proptest::sample::Index;

        /// The JSON of a value with up to three single-character edits.
        fn near_json() -> impl Strategy<Value = String> {
            let edit = (any::<Index>(), 0..3u8, r#"[\[\]{}",:0-9eE.+\- \\ntu]"#);
            (arb_value(), prop::collection::vec(edit, 0..4)).prop_map(|(v, edits)| {
                let mut chars: Vec<char> = v.to_json().chars().collect();
                for (at, kind, c) in edits {
                    let i = at.index(chars.len() + 1);
                    let c = c.chars().next().unwrap_or(' ');
                    match kind {
                        0 => chars.insert(i, c),
                        1 if i < chars.len() => {
                            chars.remove(i);
                        }
                        _ if i < chars.len() => chars[i] = c,
                        _ => {}
                    }
                }
                chars.into_iter().collect()
            })
        }

        proptest! {
            #[test]
            fn compact_json_round_trips(v in arb_value()) {
                let text = v.to_json();
                prop_assert_eq!(parse_json(&text), Ok(v.clone()), "{}", text);
                let pretty = v.to_pretty_json();
                prop_assert_eq!(parse_json(&pretty), Ok(v), "{}", pretty);
            }

            /// On valid JSON and lightly edited JSON we agree with serde_json (also strict), except
            /// where SPEC §5.1 differs: lone surrogates (U+FFFD) and overflow (±∞).
            #[test]
            fn agrees_with_serde_json(text in near_json()) {
                let ours = parse_json(&text);
                match serde_json::from_str::<serde_json::Value>(&text) {
                    Ok(theirs) => prop_assert!(
                        ours.as_ref().is_ok_and(|v| same(v, &Value::from(&theirs))),
                        "{:?}: {:?} vs {:?}", text, ours, theirs
                    ),
                    Err(e) => {
                        let e = e.to_string();
                        prop_assert!(
                            ours.is_err() || e.contains("surrogate") || e.contains("out of range"),
                            "{:?}: we accept {:?}, serde_json says {}", text, ours, e
                        );
                    }
                }
            }

            #[test]
            fn never_panics(text in any::<String>()) {
                let _ = parse_json(&text);
            }

            /// Valid documents cut short or extended by junk fail cleanly.
            #[test]
            fn truncations_fail_cleanly(v in arb_value(), cut in any::<prop::sample::Index>()) {
                let text = v.to_json();
                let end = cut.index(text.len() + 1);
                if let Some(prefix) = text.get(..end) {
                    let _ = parse_json(prefix);
                }
                let extended = format!("{text} x");
                prop_assert!(parse_json(&extended).is_err());
            }
        }
    }
}
