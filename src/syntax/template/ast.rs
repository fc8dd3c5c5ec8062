//! The template AST: literal text and placeholders, each with its byte span in the template.
//! Grammar: `grammar/template.ebnf`.

use crate::source::Span;
use crate::syntax::RefPath;

/// One piece of a template.
#[derive(Clone, Debug, PartialEq)]
pub enum Piece {
    /// Literal text; adjacent text (including lone braces) is merged into one piece.
    Text(Span),
    /// A placeholder; the span covers the braces, the path excludes them.
    Placeholder(Span, RefPath),
}

/// A parsed template. Parsing never fails: text that is not a placeholder is literal.
#[derive(Clone, Debug, PartialEq)]
pub struct TemplateAst {
    /// Text and placeholders in order; together their spans cover the template.
    pub pieces: Vec<Piece>,
}

impl TemplateAst {
    /// Every placeholder with its span, in order.
    pub fn placeholders(&self) -> impl Iterator<Item = (Span, &RefPath)> {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Placeholder(span, path) => Some((*span, path)),
            Piece::Text(_) => None,
        })
    }
}

/// `template = { placeholder | text } ;`
pub fn parse_template(src: &str) -> TemplateAst {
    let pieces = Pieces::new(src)
        .map(|piece| match piece {
            RawPiece::Text(span) => Piece::Text(span),
            RawPiece::Placeholder(span) => parse_placeholder(src, span),
        })
        .collect();
    TemplateAst { pieces }
}

/// `placeholder = "{" , path , "}" ;`
fn parse_placeholder(src: &str, span: Span) -> Piece {
    Piece::Placeholder(span, RefPath::parse(placeholder_path(src, span)))
}

/// The path of the placeholder at `span`, without its braces.
pub(crate) fn placeholder_path(src: &str, span: Span) -> &str {
    &src[span.start as usize + 1..span.end as usize - 1]
}

/// A piece before its path is parsed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum RawPiece {
    Text(Span),
    Placeholder(Span),
}

/// The pieces of a template in order, adjacent text merged, paths left unparsed (a compiled
/// template parses each distinct path once). A byte scanner: it reads exactly what the logos
/// tokens of `token.rs` (the grammar's reference) read, merged the same way.
pub(crate) struct Pieces<'s> {
    src: &'s [u8],
    /// Where the next piece starts.
    at: usize,
    /// The end of the placeholder that starts at `at`, when the text before it found it
    /// (so it is not scanned twice).
    next_end: Option<usize>,
}

impl<'s> Pieces<'s> {
    pub(crate) fn new(src: &'s str) -> Pieces<'s> {
        Pieces {
            src: src.as_bytes(),
            at: 0,
            next_end: None,
        }
    }
}

/// The bytes of a path segment: `[a-zA-Z0-9_-]`.
static SEGMENT: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || c == b'_' || c == b'-';
        b += 1;
    }
    table
};

/// Below this many bytes a plain loop finds a byte sooner than the vector search (which has
/// a fixed cost per call): the text after a template's last placeholder is often this short.
const SHORT: usize = 16;

/// The first `{` in `bytes`.
#[inline]
fn find_brace(bytes: &[u8]) -> Option<usize> {
    if bytes.len() < SHORT {
        bytes.iter().position(|&b| b == b'{')
    } else {
        memchr::memchr(b'{', bytes)
    }
}

/// How many `{` `bytes` holds.
pub(crate) fn count_braces(bytes: &[u8]) -> usize {
    if bytes.len() < SHORT {
        bytes.iter().filter(|&&b| b == b'{').count()
    } else {
        memchr::memchr_iter(b'{', bytes).count()
    }
}

/// The end of the placeholder `{seg(.seg)*}` (a segment is one or more of `[a-zA-Z0-9_-]`)
/// that starts at `open` (a `{`), if one does.
fn placeholder_end(bytes: &[u8], open: usize) -> Option<usize> {
    let mut i = open + 1;
    loop {
        let start = i;
        while let Some(&b) = bytes.get(i)
            && SEGMENT[b as usize]
        {
            i += 1;
        }
        if i == start {
            return None;
        }
        match bytes.get(i) {
            Some(b'.') => i += 1,
            Some(b'}') => return Some(i + 1),
            _ => return None,
        }
    }
}

impl Iterator for Pieces<'_> {
    type Item = RawPiece;

    // One caller (the template builder), on every text of every phase: kept inlined there
    // whatever the codegen units' split.
    #[inline]
    fn next(&mut self) -> Option<RawPiece> {
        let start = self.at;
        let bytes = self.src;
        if start >= bytes.len() {
            return None;
        }
        if let Some(end) = self.next_end.take() {
            self.at = end;
            return Some(RawPiece::Placeholder(Span::from_range(start..end)));
        }
        // Text runs to the next `{` that opens a placeholder (a `{` that does not is text).
        let mut from = start;
        while let Some(k) = find_brace(bytes.get(from..).unwrap_or_default()) {
            let open = from + k;
            if let Some(end) = placeholder_end(bytes, open) {
                if open == start {
                    self.at = end;
                    return Some(RawPiece::Placeholder(Span::from_range(start..end)));
                }
                self.at = open;
                self.next_end = Some(end);
                return Some(RawPiece::Text(Span::from_range(start..open)));
            }
            from = open + 1;
        }
        self.at = bytes.len();
        Some(RawPiece::Text(Span::from_range(start..bytes.len())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_text_and_spans_placeholders() {
        let src = "a {b} {{c}} {d.e";
        let ast = parse_template(src);
        let shown: Vec<String> = ast
            .pieces
            .iter()
            .map(|p| match p {
                Piece::Text(s) => format!("T({})", &src[s.range()]),
                Piece::Placeholder(s, path) => format!("P({}|{})", &src[s.range()], path.text),
            })
            .collect();
        assert_eq!(
            shown,
            ["T(a )", "P({b}|b)", "T( {)", "P({c}|c)", "T(} {d.e)"]
        );
    }
}

#[cfg(test)]
mod laws {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Spans are inside the input, ordered, and cover it exactly.
        #[test]
        fn pieces_tile_the_input(s in "\\PC*") {
            let ast = parse_template(&s);
            let mut at = 0;
            for piece in &ast.pieces {
                let span = match piece { Piece::Text(sp) | Piece::Placeholder(sp, _) => *sp };
                prop_assert_eq!(span.start as usize, at);
                prop_assert!(span.end > span.start);
                at = span.end as usize;
            }
            prop_assert_eq!(at, s.len());
        }

        /// The scanner reads what the logos tokens read, adjacent text merged.
        #[test]
        fn pieces_are_the_tokens_merged(s in "([a-c.{}_ -]|\\PC)*") {
            use super::super::token::Token;
            use logos::Logos;
            let mut want: Vec<RawPiece> = Vec::new();
            let mut lexer = Token::lexer(&s);
            while let Some(token) = lexer.next() {
                let span = Span::from_range(lexer.span());
                match (token, want.last_mut()) {
                    (Ok(Token::Placeholder), _) => want.push(RawPiece::Placeholder(span)),
                    (_, Some(RawPiece::Text(text))) => text.end = span.end,
                    _ => want.push(RawPiece::Text(span)),
                }
            }
            prop_assert_eq!(Pieces::new(&s).collect::<Vec<_>>(), want);
        }
    }
}
