//! The template AST: literal text and placeholders, each with its byte span in the template.
//! Grammar: `grammar/template.ebnf`.

use logos::Logos;

use super::token::Token;
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
/// template parses each distinct path once).
pub(crate) struct Pieces<'s> {
    lexer: logos::Lexer<'s, Token>,
    /// A token read past the end of a text run.
    pending: Option<RawPiece>,
}

impl<'s> Pieces<'s> {
    pub(crate) fn new(src: &'s str) -> Pieces<'s> {
        Pieces {
            lexer: Token::lexer(src),
            pending: None,
        }
    }

    fn token(&mut self) -> Option<RawPiece> {
        let token = self.lexer.next()?;
        let span = Span::from_range(self.lexer.span());
        Some(match token {
            Ok(Token::Placeholder) => RawPiece::Placeholder(span),
            // The lexer covers every byte, so an error token cannot occur; treat it as text.
            Ok(Token::Text | Token::Brace) | Err(()) => RawPiece::Text(span),
        })
    }
}

impl Iterator for Pieces<'_> {
    type Item = RawPiece;

    fn next(&mut self) -> Option<RawPiece> {
        let first = self.pending.take().or_else(|| self.token())?;
        let RawPiece::Text(mut text) = first else {
            return Some(first);
        };
        while let Some(piece) = self.token() {
            match piece {
                RawPiece::Text(more) => text.end = more.end,
                RawPiece::Placeholder(_) => {
                    self.pending = Some(piece);
                    break;
                }
            }
        }
        Some(RawPiece::Text(text))
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
    }
}
