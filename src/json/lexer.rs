//! The JSONC lexer: a logos token enum plus a thin wrapper that turns lexing errors into tokens
//! and adds an end-of-file token, so the parser only ever looks at one `(Token, Span)` pair.
//!
//! Whitespace (`' '`, `\t`, `\r`, `\n`), `// line` and `/* block */` comments are skipped. Strings
//! are lexed as a whole (the parser decodes them); numbers and bare words are lexed loosely so
//! that `01`, `1.`, `+1` or `True` arrive as one token and get one precise message.

use crate::source::Span;
use logos::{FilterResult, Logos};

/// Lexing failures. logos reports them as errors; [`Lexer::advance`] turns them into the
/// tokens of the same name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LexError {
    /// `@`, `=`, a lone `-`, a `'` with no closing quote on its line, a non-ASCII space…
    #[default]
    UnexpectedChar,
    /// `"abc` with no closing quote before the end of the file.
    UnterminatedString,
    /// `/* abc` with no `*/` before the end of the file.
    UnterminatedComment,
}

/// A JSONC token. Every kind has a human [`name`](Token::name) for "expected X, found Y".
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
#[logos(error = LexError)]
#[logos(skip r"[ \t\r\n]+")]
// A line comment ends at the line break, so the greedy class reads one line, not the input.
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
pub enum Token {
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token(":")]
    Colon,
    #[token(",")]
    Comma,
    #[token("true")]
    True,
    #[token("false")]
    False,
    #[token("null")]
    Null,
    /// A double-quoted string, quotes included, escapes not yet checked.
    #[token("\"", string)]
    String,
    /// `'abc'`: not JSON, lexed so the message can say "use double quotes".
    #[token("'", single_quoted)]
    SingleQuoted,
    /// Anything number-like (`12`, `-0.5e3`, but also `01`, `1.`, `.5`, `+1`, `0x1F`); the
    /// parser checks it against the JSON number grammar.
    #[regex(r"[-+]?\.?[0-9]([0-9A-Za-z_.]|[eE][+-])*")]
    Number,
    /// A bare word: `True`, `undefined`, an unquoted key.
    #[regex(r"[A-Za-z_$][A-Za-z0-9_$]*")]
    Word,
    /// A `/* … */` comment; skipped, never produced.
    #[token("/*", block_comment)]
    BlockComment,
    /// The end of the input (made by [`Lexer::advance`]).
    Eof,
    /// A character that starts no token ([`LexError::UnexpectedChar`]).
    Unexpected,
    /// A string that runs to the end of the file ([`LexError::UnterminatedString`]).
    UnterminatedString,
    /// A block comment that runs to the end of the file ([`LexError::UnterminatedComment`]).
    UnterminatedComment,
}

impl Token {
    /// The human name of the token kind, as used in messages.
    pub fn name(self) -> &'static str {
        match self {
            Token::LBrace => "'{'",
            Token::RBrace => "'}'",
            Token::LBracket => "'['",
            Token::RBracket => "']'",
            Token::Colon => "':'",
            Token::Comma => "','",
            Token::True => "'true'",
            Token::False => "'false'",
            Token::Null => "'null'",
            Token::String => "string",
            Token::SingleQuoted => "single-quoted string",
            Token::Number => "number",
            Token::Word => "word",
            Token::BlockComment => "comment",
            Token::Eof => "end of file",
            Token::Unexpected => "character",
            Token::UnterminatedString => "unterminated string",
            Token::UnterminatedComment => "unterminated comment",
        }
    }

    /// Whether a JSON value (or something the parser reads as one to recover) starts here.
    pub fn starts_value(self) -> bool {
        matches!(
            self,
            Token::LBrace
                | Token::LBracket
                | Token::True
                | Token::False
                | Token::Null
                | Token::String
                | Token::SingleQuoted
                | Token::Number
                | Token::UnterminatedString
        )
    }

    /// Whether an object member (or a key the parser accepts to recover) starts here.
    pub fn starts_member(self) -> bool {
        matches!(
            self,
            Token::String | Token::SingleQuoted | Token::Word | Token::UnterminatedString
        )
    }

    pub fn is_opener(self) -> bool {
        matches!(self, Token::LBrace | Token::LBracket)
    }

    pub fn is_closer(self) -> bool {
        matches!(self, Token::RBrace | Token::RBracket)
    }
}

/// Rest of a double-quoted string: up to the closing `"` (a raw line break does not end it; the
/// parser reports it as a control character), or an error at the end of the file.
fn string(lex: &mut logos::Lexer<'_, Token>) -> Result<(), LexError> {
    match closing_quote(lex.remainder().as_bytes(), b'"', false) {
        Some(len) => {
            lex.bump(len);
            Ok(())
        }
        None => {
            lex.bump(lex.remainder().len());
            Err(LexError::UnterminatedString)
        }
    }
}

/// Rest of a single-quoted string, which must close on its own line; otherwise the `'` alone
/// is an unexpected character.
fn single_quoted(lex: &mut logos::Lexer<'_, Token>) -> Result<(), LexError> {
    let len =
        closing_quote(lex.remainder().as_bytes(), b'\'', true).ok_or(LexError::UnexpectedChar)?;
    lex.bump(len);
    Ok(())
}

/// Length up to and including the closing `quote`, skipping backslash escapes; `None` when the
/// input (or, with `one_line`, the line) ends first. Every returned length ends just after an
/// ASCII byte, so it is a char boundary.
fn closing_quote(rest: &[u8], quote: u8, one_line: bool) -> Option<usize> {
    let mut i = 0;
    loop {
        i += plain_len(rest.get(i..).unwrap_or_default(), quote);
        let &b = rest.get(i)?;
        if b == quote {
            return Some(i + 1);
        } else if b == b'\\' {
            i += 2;
        } else if one_line && b == b'\n' {
            return None;
        } else {
            i += 1;
        }
    }
}

/// The length of the run at the start of `bytes` with no `quote`, no `\\` and no control
/// character (< 0x20): the bytes a string scan can step over. Looks at 8 bytes at a time.
#[inline]
pub(super) fn plain_len(bytes: &[u8], quote: u8) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // A high bit for each zero byte of `v` (exact up to the first one, which is all we use).
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let mut i = 0;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let Ok(chunk) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let v = u64::from_le_bytes(chunk);
        let found = zero(v ^ (ONES * u64::from(quote)))
            | zero(v ^ (ONES * u64::from(b'\\')))
            // Bytes below 0x20 (exact up to the first one, as for `zero`).
            | (v.wrapping_sub(ONES * 0x20) & !v & HIGHS);
        if found != 0 {
            return i + (found.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&b) = bytes.get(i) {
        if b == quote || b == b'\\' || b < 0x20 {
            break;
        }
        i += 1;
    }
    i
}

/// Rest of a `/* … */` comment: skipped when closed, an error to the end of the file otherwise.
fn block_comment(lex: &mut logos::Lexer<'_, Token>) -> FilterResult<(), LexError> {
    match lex.remainder().find("*/") {
        Some(at) => {
            lex.bump(at + 2);
            FilterResult::Skip
        }
        None => {
            lex.bump(lex.remainder().len());
            FilterResult::Error(LexError::UnterminatedComment)
        }
    }
}

/// Tokens with their spans, errors folded into tokens, then [`Token::Eof`] forever.
///
/// The tokens nearly every document is made of (punctuation and double-quoted strings, after
/// plain whitespace) are read here directly; everything else goes through the logos lexer,
/// which reads them the same way.
///
/// The current token is kept in the lexer (read with [`Lexer::token`] and [`Lexer::span`])
/// rather than returned: each part is then stored once and read back at the same width,
/// which the processor forwards from its store buffer at once (a returned pair went through
/// a temporary and stalled every token).
pub struct Lexer<'a> {
    bytes: &'a [u8],
    inner: logos::Lexer<'a, Token>,
    /// The current token.
    token: Token,
    /// Its span; the next token is looked for from `end` (the logos lexer is moved up to
    /// there when it is needed).
    start: u32,
    end: u32,
    /// Whether the current token is a closed double-quoted string with nothing to decode.
    plain: bool,
}

impl<'a> Lexer<'a> {
    /// A lexer over `text`, skipping a leading byte-order mark.
    pub fn new(text: &'a str) -> Lexer<'a> {
        let at = if text.starts_with('\u{feff}') {
            '\u{feff}'.len_utf8()
        } else {
            0
        };
        // Texts are limited to 4 GiB (checked before they are read), so offsets fit a u32.
        let at = at as u32;
        Lexer {
            bytes: text.as_bytes(),
            inner: Token::lexer(text),
            token: Token::Eof,
            start: at,
            end: at,
            plain: false,
        }
    }

    /// The current token (before the first [`Lexer::advance`], an end of file at the start).
    #[inline(always)]
    pub fn token(&self) -> Token {
        self.token
    }

    /// The current token's span.
    #[inline(always)]
    pub fn span(&self) -> Span {
        Span::new(self.start, self.end)
    }

    /// Makes the current token an end of file where it ends (after an unterminated comment,
    /// which hides the rest of the file).
    pub fn end_here(&mut self) {
        self.token = Token::Eof;
        self.start = self.end;
    }

    #[inline(always)]
    fn set(&mut self, token: Token, start: usize, end: usize) {
        self.token = token;
        self.start = start as u32;
        self.end = end as u32;
    }

    /// Whether the last token is a closed double-quoted string without escapes or control
    /// characters: its content is its value.
    pub fn plain(&self) -> bool {
        self.plain
    }

    /// Moves to the next token. Always inlined: it is the parser's inner loop, and a call per
    /// token costs more than the few bytes it looks at.
    #[inline(always)]
    pub fn advance(&mut self) {
        self.plain = false;
        let bytes = self.bytes;
        let mut start = self.end as usize;
        while let Some(b' ' | b'\t' | b'\r' | b'\n') = bytes.get(start) {
            start += 1;
        }
        let (token, len) = match bytes.get(start) {
            Some(b'{') => (Token::LBrace, 1),
            Some(b'}') => (Token::RBrace, 1),
            Some(b'[') => (Token::LBracket, 1),
            Some(b']') => (Token::RBracket, 1),
            Some(b':') => (Token::Colon, 1),
            Some(b',') => (Token::Comma, 1),
            Some(b'"') => return self.string(start),
            _ => return self.slow(start),
        };
        self.set(token, start, start + len);
    }

    /// [`Lexer::next_token`] for a double-quoted string at `start`. Out of line, so that the
    /// inlined part stays small: the scan needs more registers than punctuation does.
    #[inline(never)]
    fn string(&mut self, start: usize) {
        let content = self.bytes.get(start + 1..).unwrap_or_default();
        let run = plain_len(content, b'"');
        if content.get(run) != Some(&b'"') {
            return self.slow(start);
        }
        self.plain = true;
        self.set(Token::String, start, start + run + 2);
    }

    /// [`Lexer::advance`] for all but punctuation and plain strings: a string with escapes,
    /// control characters or no closing quote, and everything the logos lexer reads, from
    /// `start` (after the blanks, which the logos lexer would skip the same way).
    #[inline(never)]
    fn slow(&mut self, start: usize) {
        if self.bytes.get(start) == Some(&b'"')
            && let Some(len) =
                closing_quote(self.bytes.get(start + 1..).unwrap_or_default(), b'"', false)
        {
            return self.set(Token::String, start, start + len + 1);
        }
        // Move the logos lexer up to `start` (it only ever lags behind: `start` follows an
        // ASCII byte, so it is a char boundary).
        let behind = self.bytes.len() - self.inner.remainder().len();
        self.inner.bump(start - behind);
        let token = match self.inner.next() {
            None => {
                let end = self.bytes.len();
                return self.set(Token::Eof, end, end);
            }
            Some(Ok(token)) => token,
            Some(Err(LexError::UnexpectedChar)) => Token::Unexpected,
            Some(Err(LexError::UnterminatedString)) => Token::UnterminatedString,
            Some(Err(LexError::UnterminatedComment)) => Token::UnterminatedComment,
        };
        let span = self.inner.span();
        self.set(token, span.start, span.end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex(text: &str) -> Vec<(Token, &str)> {
        let mut lexer = Lexer::new(text);
        let mut out = Vec::new();
        loop {
            lexer.advance();
            let (token, span) = (lexer.token(), lexer.span());
            if token == Token::Eof {
                assert_eq!(span.range(), text.len()..text.len());
                return out;
            }
            out.push((token, &text[span.range()]));
        }
    }

    #[test]
    fn plain_runs_stop_at_quotes_backslashes_and_control_characters() {
        let naive = |bytes: &[u8], quote: u8| {
            bytes
                .iter()
                .position(|&b| b == quote || b == b'\\' || b < 0x20)
                .unwrap_or(bytes.len())
        };
        let texts: [&[u8]; 8] = [
            b"",
            b"abc",
            b"abcdefgh\"",
            b"0123456789abcdef\\n",
            "h\u{e9}llo w\u{f6}rld, \u{1F600} and more text".as_bytes(),
            b"tab\there and more",
            b"\x7f\x80\xff\x1f after",
            b"eight!!!sixteen!!'quote'",
        ];
        for text in texts {
            for start in 0..text.len() {
                for quote in [b'"', b'\''] {
                    let rest = &text[start..];
                    assert_eq!(plain_len(rest, quote), naive(rest, quote), "{rest:?}");
                }
            }
        }
    }

    #[test]
    fn punctuation_literals_and_comments() {
        use Token::*;
        assert_eq!(
            lex("{ // c\n\"a\" /* x\n*/ : [true,false,null]}"),
            [
                (LBrace, "{"),
                (String, "\"a\""),
                (Colon, ":"),
                (LBracket, "["),
                (True, "true"),
                (Comma, ","),
                (False, "false"),
                (Comma, ","),
                (Null, "null"),
                (RBracket, "]"),
                (RBrace, "}"),
            ]
        );
    }

    #[test]
    fn strings_keep_escapes_and_line_breaks() {
        assert_eq!(lex(r#""a\"b""#), [(Token::String, r#""a\"b""#)]);
        assert_eq!(lex("\"a\nb\""), [(Token::String, "\"a\nb\"")]);
        assert_eq!(lex("\"\\\\\""), [(Token::String, "\"\\\\\"")]);
        assert_eq!(lex("\"é😀\""), [(Token::String, "\"é😀\"")]);
    }

    #[test]
    fn numbers_and_words_are_loose() {
        use Token::*;
        for n in [
            "0", "-1.5e+3", "01", "1.", ".5", "+1", "0x1F", "1e", "-0.0E-0",
        ] {
            assert_eq!(lex(n), [(Number, n)], "{n}");
        }
        assert_eq!(lex("1,-2"), [(Number, "1"), (Comma, ","), (Number, "-2")]);
        assert_eq!(lex("True"), [(Word, "True")]);
        assert_eq!(lex("trueish"), [(Word, "trueish")]);
        assert_eq!(lex("-Infinity"), [(Unexpected, "-"), (Word, "Infinity")]);
    }

    #[test]
    fn errors_become_tokens() {
        use Token::*;
        assert_eq!(lex("\"abc"), [(UnterminatedString, "\"abc")]);
        assert_eq!(lex("\"abc\\\""), [(UnterminatedString, "\"abc\\\"")]);
        assert_eq!(
            lex("1 /* x"),
            [(Number, "1"), (UnterminatedComment, "/* x")]
        );
        assert_eq!(lex("@"), [(Unexpected, "@")]);
        assert_eq!(lex("\u{a0}"), [(Unexpected, "\u{a0}")]);
        assert_eq!(lex("'a'"), [(SingleQuoted, "'a'")]);
        assert_eq!(
            lex("'a\n'"),
            [(Unexpected, "'"), (Word, "a"), (Unexpected, "'")]
        );
        assert_eq!(lex("/"), [(Unexpected, "/")]);
    }

    #[test]
    fn byte_order_mark_and_crlf_are_whitespace() {
        assert_eq!(lex("\u{feff}[\r\n1]").len(), 3);
        assert_eq!(lex("// x\r\n1"), [(Token::Number, "1")]);
    }
}
