//! The template AST: literal text and placeholders, each with its byte span in the template.
//! Grammar: `grammar/template.ebnf`.

use logos::Logos;

use super::token::Token;
use crate::source::Span;
use crate::syntax::RefPath;

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
    let mut pieces: Vec<Piece> = Vec::new();
    let mut lexer = Token::lexer(src);
    while let Some(token) = lexer.next() {
        let span = Span::from_range(lexer.span());
        match token {
            Ok(Token::Placeholder) => pieces.push(parse_placeholder(src, span)),
            // The lexer covers every byte, so an error token cannot occur; treat it as text.
            Ok(Token::Text | Token::Brace) | Err(()) => match pieces.last_mut() {
                Some(Piece::Text(prev)) => prev.end = span.end,
                _ => pieces.push(Piece::Text(span)),
            },
        }
    }
    TemplateAst { pieces }
}

/// `placeholder = "{" , path , "}" ;`
fn parse_placeholder(src: &str, span: Span) -> Piece {
    let inner = &src[span.start as usize + 1..span.end as usize - 1];
    Piece::Placeholder(span, RefPath::parse(inner))
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
        assert_eq!(shown, ["T(a )", "P({b}|b)", "T( {)", "P({c}|c)", "T(} {d.e)"]);
    }
}
