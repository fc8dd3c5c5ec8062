//! The JSONC parser: recursive descent over the lexer's tokens, one function per production.
//!
//! ```text
//! document = value EOF
//! value    = object | array | string | number | "true" | "false" | "null"
//! object   = "{" ( member ( "," member )* ","? )? "}"
//! member   = string ":" value
//! array    = "[" ( value ( "," value )* ","? )? "]"
//! ```
//!
//! Vocabulary: `at` looks at the current token, `eat` consumes it if it is the one asked for,
//! `expected` builds the "expected X, found Y" diagnostic, `close` consumes a container's end.
//!
//! Recovery: an error that leaves the parser lost ([`Parser::error`]) starts panic mode; until
//! the next `,`, `:` or matching closing bracket is consumed, further errors are dropped, so one
//! mistake gives one diagnostic. Errors that leave it in step (a missing comma, an unquoted key,
//! a bad number, [`Parser::local_error`]) are reported and parsing simply goes on.

use super::lexer::{Lexer, Token};
use super::string::Str;
use super::tree::{Kind, Member, Node};
use super::{number, string};
use crate::diag::{Code, Diagnostic};
use crate::source::Span;
use crate::value::Value;
use std::collections::HashMap;
use std::collections::hash_map::Entry;

/// How many arrays and objects may be open at once.
pub(super) const MAX_DEPTH: usize = 256;

pub(super) struct Parser<'a, 's> {
    text: &'a str,
    /// The current token and its span are the lexer's ([`Parser::tok`], [`Parser::span`]).
    lexer: Lexer<'a>,
    /// End of the last consumed token.
    prev_end: u32,
    /// Open arrays and objects.
    depth: usize,
    /// Panic mode: drop errors until the parser is back in step.
    recovering: bool,
    diagnostics: Vec<Diagnostic>,
    /// The elements and members of the open containers, innermost last: a container's
    /// entries are collected here and moved into a vector of exactly their number when it
    /// closes, so no container's vector grows (and copies itself) entry by entry.
    items: Vec<Node>,
    members: Vec<Member>,
    /// Where the elements of one array go as they are read, instead of into the tree.
    stream: Option<Stream<'s>>,
}

/// The array whose elements are handed out as they are read: the document itself when it is
/// an array, else the value of the root object's first member named `key` when that is one.
pub(super) struct Stream<'s> {
    key: &'s str,
    sink: &'s mut dyn FnMut(Node),
    /// The root object's member named `key` has been read (only the first one counts).
    key_seen: bool,
    /// The next array opened is the streamed one.
    armed: bool,
    /// The streamed array's span, once it is read (its node in the tree is left empty).
    span: Option<Span>,
}

impl<'a, 's> Parser<'a, 's> {
    pub fn new(text: &'a str) -> Parser<'a, 's> {
        let mut lexer = Lexer::new(text);
        lexer.advance();
        let mut parser = Parser {
            text,
            lexer,
            prev_end: 0,
            depth: 0,
            recovering: false,
            diagnostics: Vec::new(),
            items: Vec::new(),
            members: Vec::new(),
            stream: None,
        };
        parser.lexical_error();
        parser
    }

    /// A parser that hands the elements of the document's phases-like array to `sink` as soon
    /// as each is read (see [`Stream`]); [`Parser::streamed`] then gives that array's span.
    pub fn streaming(text: &'a str, key: &'s str, sink: &'s mut dyn FnMut(Node)) -> Parser<'a, 's> {
        let mut parser = Parser::new(text);
        parser.stream = Some(Stream {
            key,
            sink,
            key_seen: false,
            armed: true,
            span: None,
        });
        parser
    }

    /// [`Parser::document`], and the span of the array whose elements went to the sink (none
    /// when there was no such array).
    pub fn document_streamed(mut self) -> (Option<Node>, Vec<Diagnostic>, Option<Span>) {
        let root = self.value("a value");
        self.trailing();
        let span = self.stream.as_ref().and_then(|s| s.span);
        (root, self.diagnostics, span)
    }

    /// `document = value EOF`
    pub fn document(mut self) -> (Option<Node>, Vec<Diagnostic>) {
        let root = self.value("a value");
        self.trailing();
        (root, self.diagnostics)
    }

    /// Anything after the document's value is an error.
    fn trailing(&mut self) {
        if !self.at(Token::Eof) {
            let diag =
                Diagnostic::new(Code::JsonSyntax, "trailing characters after the JSON value")
                    .at(self.span())
                    .with_label("expected the end of the file")
                    .help("a flow file holds exactly one JSON value");
            self.error(diag);
        }
    }

    /// `value = object | array | string | number | "true" | "false" | "null"`; `what` names
    /// what may stand here, for the message when nothing does.
    #[inline(never)]
    fn value(&mut self, what: &str) -> Option<Node> {
        let span = self.span();
        let kind = match self.tok() {
            Token::LBrace => return self.object(),
            Token::LBracket => return self.array(),
            Token::Number => return self.number(),
            Token::String => Kind::String(self.string()),
            Token::True | Token::False | Token::Null => {
                let tok = self.tok();
                self.bump();
                match tok {
                    Token::True => Kind::Bool(true),
                    Token::False => Kind::Bool(false),
                    _ => Kind::Null,
                }
            }
            _ => return self.odd_value(what),
        };
        Some(Node { span, kind })
    }

    /// The current token as a value when it is a plain string (no escapes, the common case),
    /// else none; the caller stores it, then moves on with [`Parser::bump`]. Inlined where the
    /// value is stored, so that the string is built in place: a value returned from
    /// [`Parser::value`] (or kept across the next token's scan) is copied out of a temporary
    /// just written, which the processor cannot forward from its store buffer and stalls on.
    #[inline(always)]
    fn plain_value(&self) -> Option<Node> {
        if self.tok() != Token::String || !self.lexer.plain() {
            return None;
        }
        let span = self.span();
        let value = string::plain(self.text, span);
        Some(Node {
            span,
            kind: Kind::String(value),
        })
    }

    /// [`Parser::value`] for the tokens that are not well-formed values: strings that are
    /// read anyway (unterminated or single-quoted), reported mistakes, and what is left to the
    /// caller's recovery. Kept apart so the common case stays small.
    #[cold]
    #[inline(never)]
    fn odd_value(&mut self, what: &str) -> Option<Node> {
        let span = self.span();
        let kind = match self.tok() {
            Token::UnterminatedString => Kind::String(self.string()),
            Token::SingleQuoted => {
                self.single_quoted();
                Kind::String(self.string())
            }
            Token::Word => {
                let help = word_help(self.slice());
                let diag = self.expected(what).help(help);
                self.error(diag);
                self.bump();
                return None;
            }
            Token::Unexpected => {
                let diag = self.expected(what);
                self.error(diag);
                self.bump();
                return None;
            }
            // Punctuation and the end of the file are left to the caller's recovery.
            _ => {
                let diag = self.expected(what);
                self.error(diag);
                return None;
            }
        };
        Some(Node { span, kind })
    }

    /// `object = "{" ( member ( "," member )* ","? )? "}"`
    fn object(&mut self) -> Option<Node> {
        let open = self.span();
        if let Some(stream) = &mut self.stream {
            stream.armed = false;
        }
        if !self.enter() {
            return None;
        }
        self.bump();
        let base = self.members.len();
        // Whether the last separator was a missing comma: the next one missing too is the
        // same mistake (`"a": 1 "b": 2 "c": 3`), reported once.
        let mut comma_missing = false;
        loop {
            if self.close(Token::RBrace, open, "a string key or '}'") {
                break;
            }
            // The key is read here and handed to `member` from each branch, so that a plain
            // one is not copied out of a temporary shared with the others.
            if self.tok() == Token::String && self.lexer.plain() {
                let key = string::plain(self.text, self.span());
                self.bump();
                self.member(key);
            } else if let Some(key) = self.key() {
                self.member(key);
            }
            if self.eat(Token::Comma) {
                comma_missing = false;
                continue;
            }
            if self.close(Token::RBrace, open, "',' or '}' after object member") {
                break;
            }
            self.no_comma_after(true, &mut comma_missing);
        }
        self.depth -= 1;
        let members = entries(&mut self.members, base);
        self.duplicates(&members);
        Some(Node {
            span: Span::new(open.start, self.prev_end),
            kind: Kind::Object(members),
        })
    }

    /// After a container's entry, neither `,` nor its end: a missing comma when another entry
    /// follows (reported once for a run of them), else an error and a skip past the next `,`.
    /// `in_object` tells an object's members from an array's elements.
    #[cold]
    #[inline(never)]
    fn no_comma_after(&mut self, in_object: bool, comma_missing: &mut bool) {
        let (what, next_follows) = if in_object {
            ("',' or '}' after object member", self.tok().starts_member())
        } else {
            ("',' or ']' after array element", self.tok().starts_value())
        };
        if next_follows {
            if !std::mem::replace(comma_missing, true) {
                let diag = self.expected(what).help(if in_object {
                    "add a ',' after the previous member"
                } else {
                    "add a ',' after the previous element"
                });
                self.local_error(diag);
            }
            return;
        }
        let diag = self.expected(what);
        self.error(diag);
        self.skip();
        self.eat(Token::Comma);
    }

    /// `member = string ":" value` after its `key`, added to the open object's members when it could be read.
    #[inline(never)]
    fn member(&mut self, key: Str) {
        if !self.eat(Token::Colon) && !self.no_colon() {
            return;
        }
        // The root object's first member named as the streamed array arms the stream for its
        // value (which streams only if it is an array).
        let arm = self.depth == 1
            && self
                .stream
                .as_mut()
                .is_some_and(|s| !s.key_seen && key.value == s.key);
        if arm && let Some(stream) = &mut self.stream {
            stream.key_seen = true;
            stream.armed = true;
        } else if let Some(value) = self.plain_value() {
            self.members.push(Member { key, value });
            self.bump();
            return;
        }
        let value = self.value("a value");
        if arm && let Some(stream) = &mut self.stream {
            stream.armed = false;
        }
        match value {
            Some(value) => self.members.push(Member { key, value }),
            None => self.skip(),
        }
    }

    /// After an object key, no `:`: reported; returns whether the value can still be read
    /// (after a `=` in its place, or when a value follows), else skips the member.
    #[cold]
    #[inline(never)]
    fn no_colon(&mut self) -> bool {
        let diag = self.expected("':' after object key");
        if self.at(Token::Unexpected) && self.slice() == "=" {
            self.local_error(diag.help("use ':' between a key and its value"));
            self.bump();
        } else if self.tok().starts_value() {
            self.local_error(diag.help("add a ':' after the key"));
        } else {
            self.error(diag);
            self.skip();
            return false;
        }
        true
    }

    /// The key of a member: a string, or (reported, then read as a key) a bare word, number or
    /// single-quoted string. [`Parser::object`] reads plain strings itself.
    #[inline(never)]
    fn key(&mut self) -> Option<Str> {
        match self.tok() {
            Token::String | Token::UnterminatedString => Some(self.string()),
            Token::SingleQuoted => {
                self.single_quoted();
                Some(self.string())
            }
            Token::Word | Token::Number | Token::True | Token::False | Token::Null => {
                let text = self.slice();
                let quoted = Value::from(text).to_json();
                let diag = self
                    .expected("a string key")
                    .help(format!("object keys must be in double quotes: {quoted}"));
                self.local_error(diag);
                let key = Str::verbatim(text, self.span());
                self.bump();
                Some(key)
            }
            _ => {
                let diag = self.expected("a string key or '}'");
                self.error(diag);
                self.skip();
                None
            }
        }
    }

    /// `array = "[" ( value ( "," value )* ","? )? "]"`
    fn array(&mut self) -> Option<Node> {
        let open = self.span();
        let streamed = self
            .stream
            .as_mut()
            .is_some_and(|s| std::mem::replace(&mut s.armed, false));
        if !self.enter() {
            return None;
        }
        self.bump();
        let base = self.items.len();
        // As in `object`: consecutive missing commas are one mistake.
        let mut comma_missing = false;
        loop {
            if self.close(Token::RBracket, open, "a value or ']'") {
                break;
            }
            if let Some(item) = self.plain_value() {
                match &mut self.stream {
                    Some(stream) if streamed => (stream.sink)(item),
                    _ => self.items.push(item),
                }
                self.bump();
            } else {
                match self.value("a value or ']'") {
                    Some(item) => match &mut self.stream {
                        Some(stream) if streamed => (stream.sink)(item),
                        _ => self.items.push(item),
                    },
                    None => self.skip(),
                }
            }
            if self.eat(Token::Comma) {
                comma_missing = false;
                continue;
            }
            if self.close(Token::RBracket, open, "',' or ']' after array element") {
                break;
            }
            self.no_comma_after(false, &mut comma_missing);
        }
        self.depth -= 1;
        let items = entries(&mut self.items, base);
        let span = Span::new(open.start, self.prev_end);
        if streamed && let Some(stream) = &mut self.stream {
            stream.span = Some(span);
        }
        Some(Node {
            span,
            kind: Kind::Array(items),
        })
    }

    /// A number token, checked against the JSON grammar. A bad one is reported and still read
    /// when Rust can make sense of it (`01`, `+1`, `1.`).
    fn number(&mut self) -> Option<Node> {
        let text = self.slice();
        let span = self.span();
        if let Err(bad) = number::check(text) {
            self.bad_number(text, bad);
        }
        self.bump();
        // Rust's grammar is a superset of JSON's; out-of-range values become ±∞.
        let value = text.parse::<f64>().ok()?;
        Some(Node {
            span,
            kind: Kind::Number(value),
        })
    }

    /// Reports the current token, `text`, as a number JSON does not allow.
    #[cold]
    #[inline(never)]
    fn bad_number(&mut self, text: &str, bad: number::BadNumber) {
        let mut diag = Diagnostic::new(
            Code::JsonSyntax,
            format!("invalid number '{}': {}", shorten(text), bad.problem),
        )
        .at(self.span())
        .with_label("not a JSON number");
        if let Some(help) = bad.help {
            diag = diag.help(help);
        }
        self.local_error(diag);
    }

    /// The current (double- or single-quoted, maybe unterminated) string token, decoded.
    #[inline(always)]
    fn string(&mut self) -> Str {
        let decoded = if self.lexer.plain() {
            string::plain(self.text, self.span())
        } else {
            self.decode()
        };
        self.bump();
        decoded
    }

    /// The current string token, when it is not plain: escapes, control characters or no
    /// closing quote.
    #[inline(never)]
    fn decode(&mut self) -> Str {
        let closed = self.tok() != Token::UnterminatedString;
        // Only well-formed literals get their content checked; the others are reported already.
        let report = self.tok() == Token::String;
        let text = self.slice();
        string::decode(
            text,
            self.span().start,
            closed,
            report,
            &mut self.diagnostics,
        )
    }

    /// Reports a single-quoted string (the caller still reads it).
    fn single_quoted(&mut self) {
        let mut silent = Vec::new();
        let value = string::decode(self.slice(), self.span().start, true, false, &mut silent).value;
        let diag = self.expected("a double-quoted string").help(format!(
            "use double quotes: {}",
            Value::String(value).to_json()
        ));
        self.local_error(diag);
    }

    /// Consumes `close`, the end of the container opened at `open`, and returns true; on the end
    /// of the file or the other closing bracket, reports it (the other bracket is read as this
    /// container's end) and returns true too. `what` is what was expected here.
    #[inline(always)]
    fn close(&mut self, close: Token, open: Span, what: &str) -> bool {
        if self.at(close) {
            self.recovering = false;
            self.bump();
            return true;
        }
        if !self.at(Token::Eof) && !self.tok().is_closer() {
            return false;
        }
        self.unclosed(close, open, what);
        true
    }

    /// The end of the file or the wrong closing bracket where `close` was expected: see
    /// [`Parser::close`].
    #[cold]
    #[inline(never)]
    fn unclosed(&mut self, close: Token, open: Span, what: &str) {
        let name = if close == Token::RBrace {
            "object"
        } else {
            "array"
        };
        let diag = self
            .expected(what)
            .label(open, format!("this {name} is not closed"))
            .help(format!("close the {name} with {}", close.name()));
        self.error(diag);
        if self.tok().is_closer() {
            self.bump();
        }
    }

    /// Opens a container; past [`MAX_DEPTH`], reports it, skips the whole container and
    /// returns false.
    fn enter(&mut self) -> bool {
        if self.depth < MAX_DEPTH {
            self.depth += 1;
            return true;
        }
        let diag = Diagnostic::new(
            Code::JsonSyntax,
            format!("nesting too deep (limit {MAX_DEPTH})"),
        )
        .at(self.span())
        .with_label(format!(
            "more than {MAX_DEPTH} arrays and objects are open here"
        ))
        .help("flatten the structure");
        self.error(diag);
        let mut nested = 0usize;
        loop {
            match self.tok() {
                Token::Eof => return false,
                t if t.is_opener() => nested += 1,
                t if t.is_closer() => {
                    nested = nested.saturating_sub(1);
                    if nested == 0 {
                        self.bump();
                        return false;
                    }
                }
                _ => {}
            }
            self.bump();
        }
    }

    /// Skips to the next `,` or closing bracket of the current container, or the end of the
    /// file, stepping over nested containers.
    fn skip(&mut self) {
        let mut nested = 0usize;
        loop {
            match self.tok() {
                Token::Eof => return,
                Token::Comma | Token::RBrace | Token::RBracket if nested == 0 => return,
                t if t.is_opener() => nested += 1,
                t if t.is_closer() => nested -= 1,
                _ => {}
            }
            self.bump();
        }
    }

    /// E0002 for every key that repeats an earlier one of the same object.
    fn duplicates(&mut self, members: &[Member]) {
        if members.len() < 2 {
            return;
        }
        // Small objects (nearly all of them) are cheaper to scan than to hash, and need no map.
        if members.len() <= 8 {
            for (i, member) in members.iter().enumerate().skip(1) {
                let key = member.key.value.as_str();
                let earlier = members.get(..i).unwrap_or_default();
                if let Some(first) = earlier.iter().find(|m| m.key.value == key) {
                    self.duplicate(member, &first.key);
                }
            }
            return;
        }
        let mut seen: HashMap<&str, &Str> = HashMap::with_capacity(members.len());
        for member in members {
            match seen.entry(member.key.value.as_str()) {
                Entry::Occupied(first) => self.duplicate(member, first.get()),
                Entry::Vacant(slot) => {
                    slot.insert(&member.key);
                }
            }
        }
    }

    /// E0002 for `member`, whose key repeats `first`.
    #[cold]
    #[inline(never)]
    fn duplicate(&mut self, member: &Member, first: &Str) {
        let shown = shorten(&member.key.value);
        let diag = Diagnostic::new(Code::DuplicateKey, format!("duplicate key '{shown}'"))
            .at(member.key.span)
            .with_label("defined again here")
            .label(first.span, "first defined here")
            .help(format!("remove one of the '{shown}' members"));
        self.diagnostics.push(diag);
    }

    // The vocabulary.

    /// The current token.
    #[inline(always)]
    fn tok(&self) -> Token {
        self.lexer.token()
    }

    /// The current token's span.
    #[inline(always)]
    fn span(&self) -> Span {
        self.lexer.span()
    }

    #[inline(always)]
    fn at(&self, tok: Token) -> bool {
        self.tok() == tok
    }

    /// Consumes `tok` if it is the current token. `,` and `:` are the points where the parser
    /// is back in step after an error.
    #[inline(always)]
    fn eat(&mut self, tok: Token) -> bool {
        if !self.at(tok) {
            return false;
        }
        self.recovering = false;
        self.bump();
        true
    }

    #[inline(always)]
    fn bump(&mut self) {
        self.prev_end = self.lexer.span().end;
        self.lexer.advance();
        if matches!(
            self.tok(),
            Token::UnterminatedString | Token::UnterminatedComment
        ) {
            self.lexical_error();
        }
    }

    /// Reports an unterminated string or comment as soon as it becomes the current token. The
    /// string stays (it is read as a string); the comment hides the rest of the file.
    #[cold]
    fn lexical_error(&mut self) {
        match self.tok() {
            Token::UnterminatedString => {
                let line_end = self
                    .slice()
                    .find(['\n', '\r'])
                    .map_or(self.span().end, |at| self.span().start + at as u32);
                let diag = Diagnostic::new(Code::JsonSyntax, "unterminated string")
                    .at(Span::new(self.span().start, line_end))
                    .with_label("this string is never closed")
                    .help("add the closing '\"'");
                self.error(diag);
            }
            Token::UnterminatedComment => {
                let diag = Diagnostic::new(Code::JsonSyntax, "unterminated block comment")
                    .at(Span::new(self.span().start, self.span().start + 2))
                    .with_label("this comment is never closed")
                    .help("close it with */");
                self.error(diag);
                self.lexer.end_here();
            }
            _ => {}
        }
    }

    /// "expected `what`, found …" at the current token.
    fn expected(&self, what: &str) -> Diagnostic {
        let message = if self.at(Token::Eof) {
            format!("unexpected end of file: expected {what}")
        } else {
            format!("expected {what}, found {}", self.found())
        };
        Diagnostic::new(Code::JsonSyntax, message)
            .at(self.span())
            .with_label(format!("expected {what}"))
    }

    /// The current token as a message shows it: what starts at its first byte, or its text
    /// for numbers and words.
    fn found(&self) -> String {
        match self.tok() {
            Token::String | Token::UnterminatedString => "'\"'".to_owned(),
            Token::SingleQuoted => "\"'\"".to_owned(),
            Token::Number | Token::Word => format!("'{}'", shorten(self.slice())),
            Token::Unexpected => match self.slice().chars().next() {
                Some('\'') => "\"'\"".to_owned(),
                Some(c) if c.is_control() || c.is_whitespace() || !c.is_ascii() => {
                    format!("U+{:04X}", c as u32)
                }
                Some(c) => format!("'{c}'"),
                None => Token::Unexpected.name().to_owned(),
            },
            tok => tok.name().to_owned(),
        }
    }

    fn slice(&self) -> &'a str {
        self.text.get(self.span().range()).unwrap_or("")
    }

    /// An error that leaves the parser lost: reported unless already recovering, and starts
    /// recovery.
    fn error(&mut self, diag: Diagnostic) {
        if !self.recovering {
            self.diagnostics.push(diag);
        }
        self.recovering = true;
    }

    /// An error after which the parser is still in step.
    fn local_error(&mut self, diag: Diagnostic) {
        if !self.recovering {
            self.diagnostics.push(diag);
        }
    }
}

/// The entries of the container that just closed, `stack[base..]`, in a vector of exactly
/// their number: moved with one copy, or, for a large container that was the only one open on
/// the stack, the stack's own buffer trimmed (which the allocator mostly does in place, while
/// a copy would move every entry once more); the next container grows a new one.
fn entries<T>(stack: &mut Vec<T>, base: usize) -> Vec<T> {
    if base == 0 && stack.len() >= 256 {
        let mut all = std::mem::take(stack);
        all.shrink_to_fit();
        return all;
    }
    stack.split_off(base)
}

/// The help for a bare word where a value should be.
fn word_help(word: &str) -> String {
    match word {
        "True" | "TRUE" => "JSON literals are lowercase: true".to_owned(),
        "False" | "FALSE" => "JSON literals are lowercase: false".to_owned(),
        "Null" | "NULL" | "None" | "nil" | "undefined" => "use null".to_owned(),
        "NaN" | "Infinity" => "JSON has no NaN or Infinity; use null or a string".to_owned(),
        _ => format!(
            "strings must be in double quotes: {}",
            Value::from(word).to_json()
        ),
    }
}

/// `text` for a message: control characters escaped, cut after 40 chars.
fn shorten(text: &str) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == 40 {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}
