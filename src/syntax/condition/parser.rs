//! Recursive-descent parser for conditions. Each `parse_*` function is the production of the
//! same name in `grammar/condition.ebnf`.
//!
//! The whole text is tokenized first (so a lexing error anywhere wins over a parse error), then
//! parsed. Precedence, loosest first: `||`, `&&`, `!`, comparison, `( )`. `!` binds looser
//! than a comparison (`!{a} == b` is `!({a} == b)`), a comparison operand is a primary (so
//! `a == !b` is `unexpected operator '!'`), and comparisons do not chain (`a == b == c` leaves
//! `== c` as `trailing tokens`).
//!
//! Every `(` and `!` counts one nesting level and more than [`MAX_DEPTH`] is `nesting too
//! deep`. The parser itself never recurses: the productions waiting for an operand are kept on
//! an explicit stack of `Frame`s (a `(` pushes frames instead of calling `parse_or_expr`
//! again), so no input can overflow the native stack.

use std::fmt;

use super::ast::{CmpOp, Cond, Expr, Node, Operand};
use super::token::{LexError, Token, lexer, unescape};
use crate::source::{Span, Spanned};
use crate::syntax::RefPath;
use crate::value::js_trim;

/// How deep `(` and `!` may nest.
pub const MAX_DEPTH: usize = 256;

/// What went wrong, without a position. Each variant names an input that triggers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// `{args.x == 1`
    UnterminatedPlaceholder,
    /// `{a} == "high`
    UnterminatedString,
    /// `a = b`, `a & b`, `a }`
    UnexpectedChar(char),
    /// `a b`, `a == b == c`, `3px`, `a)`
    TrailingTokens,
    /// `(a == b`, `(a b)`
    MissingParen,
    /// `a ==`, `!`, `(`, `a &&`
    UnexpectedEnd,
    /// `a == !b`, `&& a`, `()`, `a || || b`
    UnexpectedOperator(&'static str),
    /// 257 `(` or `!` in a row
    NestingTooDeep,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::UnterminatedPlaceholder => f.write_str("unterminated placeholder"),
            ErrorKind::UnterminatedString => f.write_str("unterminated string"),
            ErrorKind::UnexpectedChar(c) => write!(f, "unexpected char '{c}'"),
            ErrorKind::TrailingTokens => f.write_str("trailing tokens"),
            ErrorKind::MissingParen => f.write_str("missing )"),
            ErrorKind::UnexpectedEnd => f.write_str("unexpected end"),
            ErrorKind::UnexpectedOperator(op) => write!(f, "unexpected operator '{op}'"),
            ErrorKind::NestingTooDeep => f.write_str("nesting too deep"),
        }
    }
}

impl ErrorKind {
    /// Attach the span (relative to the condition text).
    pub fn at(self, span: Span) -> ConditionError {
        ConditionError {
            message: self.to_string(),
            span,
        }
    }
}

/// A condition that does not parse: the exact SPEC §6 message and where, relative to the
/// condition text.
///
/// Spans: the offending token for `unexpected char` (that char), `trailing tokens` (the first
/// token left over), `missing )` (the token found instead; at the end of input an empty span
/// there), `unexpected operator` and `nesting too deep` (the `(`/`!` one level too deep);
/// `unterminated placeholder`/`string` from the opening `{`/quote to the end of the input;
/// `unexpected end` an empty span at the end of the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConditionError {
    /// What is wrong (`unexpected end`, `missing )`, …).
    pub message: String,
    /// Where, relative to the condition text (see above).
    pub span: Span,
}

impl fmt::Display for ConditionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConditionError {}

/// Lex the whole condition (JS-trimmed first), stopping at the first error: the tokens before
/// it, and the error.
fn tokenize(src: &str) -> (Vec<Spanned<Token>>, Option<ConditionError>) {
    let mut lexer = lexer(src);
    // A token is at least one byte; most are several, with a space between.
    let mut tokens = Vec::with_capacity(src.len() / 4 + 4);
    while let Some(token) = lexer.next() {
        let span = Span::from_range(lexer.span());
        match token {
            Ok(token) => tokens.push(Spanned::new(token, span)),
            Err(error) => {
                let error = match error {
                    LexError::UnterminatedPlaceholder => {
                        ErrorKind::UnterminatedPlaceholder.at(span)
                    }
                    LexError::UnterminatedString => ErrorKind::UnterminatedString.at(span),
                    LexError::UnexpectedChar => {
                        let c = src
                            .get(span.range().start..)
                            .and_then(|rest| rest.chars().next())
                            .unwrap_or(char::REPLACEMENT_CHARACTER);
                        let start = span.start;
                        ErrorKind::UnexpectedChar(c)
                            .at(Span::new(start, start + c.len_utf8() as u32))
                    }
                };
                return (tokens, Some(error));
            }
        }
    }
    (tokens, None)
}

/// The path of a REF lexeme (`{ steps.a.output }`): its content, JS-trimmed.
fn ref_path(lexeme: &str) -> RefPath {
    RefPath::parse(ref_text(lexeme))
}

/// The path text of a REF lexeme (`{ steps.a.output }` ⇒ `steps.a.output`): its content,
/// JS-trimmed.
pub(crate) fn ref_text(lexeme: &str) -> &str {
    let inner = lexeme.get(1..lexeme.len().saturating_sub(1)).unwrap_or("");
    match (inner.as_bytes().first(), inner.as_bytes().last()) {
        // Visible ASCII at both ends (the usual `{steps.a.output}`): nothing to trim.
        (Some(a), Some(z)) if a.is_ascii_graphic() && z.is_ascii_graphic() => inner,
        _ => js_trim(inner),
    }
}

/// The placeholders of a condition that does not parse which come before its error, in order
/// (repeats included): the operands read before the parse failed. The whole expression is
/// tokenized before any operand is resolved (SPEC §6), so a *tokenizer* error (`unterminated
/// placeholder`, `unterminated string`, `unexpected char`) reads nothing; a *parser* error
/// keeps the operands resolved before it, as the seeds' implementation does, which resolves
/// each operand as it parses it.
pub(crate) fn refs_before_error(src: &str, error: &ConditionError) -> Vec<RefPath> {
    let (tokens, lex_error) = tokenize(src);
    if lex_error.is_some() {
        return Vec::new();
    }
    tokens
        .iter()
        .take_while(|t| t.span.end <= error.span.start)
        .filter(|t| t.node == Token::Ref)
        .map(|t| ref_path(src.get(t.span.range()).unwrap_or("")))
        .collect()
}

/// `cond = [ or_expr ] ;` — parse a whole condition.
pub fn parse_cond(src: &str) -> Result<Cond, ConditionError> {
    parse_counting_tokens(src).map(|(cond, _)| cond)
}

/// [`parse_cond`], with the number of tokens (which bounds the size of the compiled program).
pub(crate) fn parse_counting_tokens(src: &str) -> Result<(Cond, usize), ConditionError> {
    let (tokens, error) = tokenize(src);
    if let Some(error) = error {
        return Err(error);
    }
    let count = tokens.len();
    if tokens.is_empty() {
        return Ok((Cond { expr: None }, count));
    }
    let mut p = Parser {
        src,
        tokens,
        pos: 0,
        depth: 0,
        stack: Vec::with_capacity(16),
    };
    let expr = p.parse_or_expr()?;
    match p.peek() {
        Some(extra) => Err(ErrorKind::TrailingTokens.at(extra.span)),
        None => Ok((Cond { expr: Some(expr) }, count)),
    }
}

/// A production that has started and waits for its next operand: the parser's explicit stack.
///
/// Recursive descent would keep these in native stack frames; a `(` 256 levels deep costs
/// over a megabyte of stack in a debug build that way. Here the frames live in a `Vec` and
/// the parser never recurses, whatever the input.
enum Frame {
    /// `or_expr`: the `and_expr`s read so far.
    Or(Vec<Node>),
    /// `and_expr`: the `not_expr`s read so far.
    And(Vec<Node>),
    /// `not_expr` after a `!` starting at this offset.
    Not(u32),
    /// `comparison` waiting for its first `primary`.
    Comparison,
    /// `comparison` after `primary cmp_op`, waiting for the second `primary`.
    CompareRight(Node, Spanned<CmpOp>),
    /// `primary` after `(` (this span), waiting for the `or_expr`.
    Group(Span),
}

/// The production a descent starts with; each includes the ones after it.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Production {
    OrExpr,
    AndExpr,
    NotExpr,
    Primary,
}

/// What a finished node leads to.
enum Next {
    /// The enclosing production is complete too: hand the node up.
    Up(Node),
    /// The enclosing production needs another operand: descend into this one.
    Down(Production),
}

/// What a `primary` starts with.
enum Primary {
    Leaf(Node),
    /// `(` at this span: an `or_expr` follows.
    Group(Span),
}

struct Parser<'s> {
    src: &'s str,
    tokens: Vec<Spanned<Token>>,
    pos: usize,
    /// `Not` and `Group` frames on the stack: the `(`/`!` nesting.
    depth: usize,
    stack: Vec<Frame>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<Spanned<Token>> {
        self.tokens.get(self.pos).cloned()
    }

    /// Is the next token `token`? (Nothing is consumed.)
    fn next_is(&self, token: Token) -> bool {
        self.tokens.get(self.pos).is_some_and(|t| t.node == token)
    }

    /// Consume the next token if it is `token`.
    fn eat_if(&mut self, token: Token) -> Option<Span> {
        let t = self.tokens.get(self.pos)?;
        (t.node == token).then(|| {
            self.pos += 1;
            t.span
        })
    }

    /// An empty span at the end of the input.
    fn end(&self) -> Span {
        let len = self.src.len() as u32;
        Span::new(len, len)
    }

    fn lexeme(&self, span: Span) -> &str {
        self.src.get(span.range()).unwrap_or("")
    }

    /// Open one `(`/`!` level for the token at `span`.
    fn enter(&mut self, span: Span) -> Result<(), ConditionError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ErrorKind::NestingTooDeep.at(span));
        }
        Ok(())
    }

    /// `or_expr = and_expr , { "||" , and_expr } ;`
    ///
    /// Drives the whole parse: descend through the productions to a leaf, then hand finished
    /// nodes up the frame stack until some production wants another operand.
    fn parse_or_expr(&mut self) -> Result<Node, ConditionError> {
        let mut from = Production::OrExpr;
        loop {
            let mut node = self.descend(from)?;
            loop {
                let Some(frame) = self.stack.pop() else {
                    return Ok(node);
                };
                match self.ascend(frame, node)? {
                    Next::Up(up) => node = up,
                    Next::Down(production) => {
                        from = production;
                        break;
                    }
                }
            }
        }
    }

    /// Start the productions from `from` down to a leaf `primary`, pushing a frame for each;
    /// a `(` starts over at `or_expr`.
    fn descend(&mut self, mut from: Production) -> Result<Node, ConditionError> {
        loop {
            if from <= Production::OrExpr {
                self.stack.push(Frame::Or(Vec::new()));
            }
            if from <= Production::AndExpr {
                self.stack.push(Frame::And(Vec::new()));
            }
            if from <= Production::NotExpr {
                self.parse_not_expr()?;
            }
            match self.parse_primary()? {
                Primary::Leaf(node) => return Ok(node),
                Primary::Group(open) => {
                    self.enter(open)?;
                    self.stack.push(Frame::Group(open));
                    from = Production::OrExpr;
                }
            }
        }
    }

    /// `node` completes the operand `frame` was waiting for.
    fn ascend(&mut self, frame: Frame, node: Node) -> Result<Next, ConditionError> {
        Ok(match frame {
            // `or_expr = and_expr , { "||" , and_expr } ;`
            // A lone operand is handed up as it is, without a list.
            Frame::Or(items) if items.is_empty() && !self.next_is(Token::OrOr) => Next::Up(node),
            Frame::Or(mut items) => {
                items.push(node);
                if self.eat_if(Token::OrOr).is_some() {
                    self.stack.push(Frame::Or(items));
                    Next::Down(Production::AndExpr)
                } else {
                    Next::Up(n_ary(Expr::Or, items))
                }
            }
            // `and_expr = not_expr , { "&&" , not_expr } ;`
            Frame::And(items) if items.is_empty() && !self.next_is(Token::AndAnd) => Next::Up(node),
            Frame::And(mut items) => {
                items.push(node);
                if self.eat_if(Token::AndAnd).is_some() {
                    self.stack.push(Frame::And(items));
                    Next::Down(Production::NotExpr)
                } else {
                    Next::Up(n_ary(Expr::And, items))
                }
            }
            // `not_expr = "!" , not_expr | … ;`
            Frame::Not(start) => {
                self.depth -= 1;
                let span = Span::new(start, node.span.end);
                Next::Up(Spanned::new(Expr::Not(Box::new(node)), span))
            }
            // `comparison = primary , [ cmp_op , primary ] ;`
            Frame::Comparison => match self.parse_cmp_op() {
                Some(op) => {
                    self.stack.push(Frame::CompareRight(node, op));
                    Next::Down(Production::Primary)
                }
                None => Next::Up(node),
            },
            Frame::CompareRight(left, op) => {
                let span = left.span.to(node.span);
                Next::Up(Spanned::new(
                    Expr::Compare(Box::new(left), op, Box::new(node)),
                    span,
                ))
            }
            // `primary = "(" , or_expr , ")" | … ;`
            Frame::Group(open) => {
                let Some(close) = self.eat_if(Token::RParen) else {
                    let at = self.peek().map_or(self.end(), |t| t.span);
                    return Err(ErrorKind::MissingParen.at(at));
                };
                self.depth -= 1;
                Next::Up(Spanned::new(Expr::Paren(Box::new(node)), open.to(close)))
            }
        })
    }

    /// `not_expr = "!" , not_expr | comparison ;` — push a frame per `!`, then the
    /// `comparison`'s.
    fn parse_not_expr(&mut self) -> Result<(), ConditionError> {
        while let Some(bang) = self.eat_if(Token::Bang) {
            self.enter(bang)?;
            self.stack.push(Frame::Not(bang.start));
        }
        self.stack.push(Frame::Comparison);
        Ok(())
    }

    /// `cmp_op = "==" | "!=" | ">=" | "<=" | ">" | "<" ;`
    fn parse_cmp_op(&mut self) -> Option<Spanned<CmpOp>> {
        let t = self.tokens.get(self.pos)?;
        let op = match t.node {
            Token::EqEq => CmpOp::Eq,
            Token::NotEq => CmpOp::Ne,
            Token::GtEq => CmpOp::Ge,
            Token::LtEq => CmpOp::Le,
            Token::Gt => CmpOp::Gt,
            Token::Lt => CmpOp::Lt,
            _ => return None,
        };
        self.pos += 1;
        Some(Spanned::new(op, t.span))
    }

    /// `primary = "(" , or_expr , ")" | REF | STRING | NUMBER | "true" | "false" | "null"
    /// | BAREWORD ;` — a leaf, or the `(` of a group.
    fn parse_primary(&mut self) -> Result<Primary, ConditionError> {
        let Some(token) = self.peek() else {
            return Err(ErrorKind::UnexpectedEnd.at(self.end()));
        };
        let span = token.span;
        let lexeme = self.lexeme(span);
        let operand = match token.node {
            Token::LParen => {
                self.pos += 1;
                return Ok(Primary::Group(span));
            }
            Token::Ref => Operand::Ref(ref_path(lexeme)),
            Token::Str => Operand::Str(unescape(lexeme)),
            Token::Number => Operand::Number {
                value: lexeme.parse().unwrap_or(f64::NAN),
                text: lexeme.into(),
            },
            Token::True => Operand::Bool(true),
            Token::False => Operand::Bool(false),
            Token::Null => Operand::Null,
            Token::Bareword => Operand::Bareword(lexeme.to_owned()),
            op => {
                let text = operator_text(op);
                return Err(ErrorKind::UnexpectedOperator(text).at(span));
            }
        };
        self.pos += 1;
        Ok(Primary::Leaf(Spanned::new(Expr::Operand(operand), span)))
    }
}

/// `Or`/`And` of the nodes, spanning all of them; a single node is itself.
fn n_ary(make: fn(Vec<Node>) -> Expr, mut items: Vec<Node>) -> Node {
    if items.len() == 1
        && let Some(only) = items.pop()
    {
        return only;
    }
    let span = match (items.first(), items.last()) {
        (Some(a), Some(b)) => a.span.to(b.span),
        _ => Span::default(),
    };
    Spanned::new(make(items), span)
}

/// The text of an operator token, for `unexpected operator 'X'`.
fn operator_text(token: Token) -> &'static str {
    match token {
        Token::AndAnd => "&&",
        Token::OrOr => "||",
        Token::EqEq => "==",
        Token::NotEq => "!=",
        Token::GtEq => ">=",
        Token::LtEq => "<=",
        Token::Gt => ">",
        Token::Lt => "<",
        Token::Bang => "!",
        Token::LParen => "(",
        Token::RParen => ")",
        other => other.name(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree printed fully parenthesised, to check grouping.
    fn shape(src: &str) -> String {
        fn go(n: &Node) -> String {
            match &n.node {
                Expr::Or(items) => format!(
                    "or({})",
                    items.iter().map(go).collect::<Vec<_>>().join(", ")
                ),
                Expr::And(items) => format!(
                    "and({})",
                    items.iter().map(go).collect::<Vec<_>>().join(", ")
                ),
                Expr::Not(x) => format!("not({})", go(x)),
                Expr::Compare(a, op, b) => format!("({} {} {})", go(a), op.node.as_str(), go(b)),
                Expr::Paren(x) => format!("[{}]", go(x)),
                Expr::Operand(o) => o.to_string(),
            }
        }
        let cond = parse_cond(src).unwrap_or_else(|e| panic!("{src:?}: {e} at {:?}", e.span));
        cond.expr.as_ref().map_or(String::new(), go)
    }

    /// The error message and the text its span covers (`$` marks an empty span at the end).
    fn err(src: &str) -> (String, String) {
        let e = parse_cond(src).expect_err(src);
        let covered = if e.span.is_empty() {
            assert_eq!(
                e.span.start as usize,
                src.len(),
                "{src:?}: empty span not at end"
            );
            "$".to_owned()
        } else {
            src[e.span.range()].to_owned()
        };
        (e.message, covered)
    }

    fn e(message: &str, covered: &str) -> (String, String) {
        (message.to_owned(), covered.to_owned())
    }

    #[test]
    fn precedence() {
        assert_eq!(shape("a || b && c"), "or(a, and(b, c))");
        assert_eq!(shape("a && b || c && d"), "or(and(a, b), and(c, d))");
        assert_eq!(shape("!{a} == b"), "not(({a} == b))");
        assert_eq!(shape("!!a && !b"), "and(not(not(a)), not(b))");
        assert_eq!(shape("(a || b) && c"), "and([or(a, b)], c)");
        assert_eq!(shape("(a) == (b)"), "([a] == [b])");
        assert_eq!(shape("a && b && c && d"), "and(a, b, c, d)");
        assert_eq!(shape("a || (b || c)"), "or(a, [or(b, c)])");
        assert_eq!(shape("!(a == b)"), "not([(a == b)])");
        assert_eq!(
            shape(
                "({steps.triage.json.severity} == high || {steps.triage.json.severity} == critical) && !{steps.triage.json.suppressed}"
            ),
            "and([or(({steps.triage.json.severity} == high), ({steps.triage.json.severity} == critical))], not({steps.triage.json.suppressed}))"
        );
    }

    #[test]
    fn operands() {
        let cond = parse_cond(
            r#"{ args.x } == 'a\nb' && -1.5e2 != "x\"y" && true && false && null && v1.2"#,
        )
        .unwrap();
        let Some(Expr::And(items)) = cond.expr.map(|n| n.node) else {
            panic!("not an and")
        };
        let Expr::Compare(a, op, b) = &items[0].node else {
            panic!()
        };
        assert_eq!(
            a.node,
            Expr::Operand(Operand::Ref(RefPath::parse("args.x")))
        );
        assert_eq!(op.node, CmpOp::Eq);
        assert_eq!(b.node, Expr::Operand(Operand::Str("anb".into())));
        let Expr::Compare(a, _, b) = &items[1].node else {
            panic!()
        };
        assert_eq!(
            a.node,
            Expr::Operand(Operand::Number {
                value: -150.0,
                text: "-1.5e2".into()
            })
        );
        assert_eq!(b.node, Expr::Operand(Operand::Str("x\"y".into())));
        assert_eq!(items[2].node, Expr::Operand(Operand::Bool(true)));
        assert_eq!(items[3].node, Expr::Operand(Operand::Bool(false)));
        assert_eq!(items[4].node, Expr::Operand(Operand::Null));
        assert_eq!(
            items[5].node,
            Expr::Operand(Operand::Bareword("v1.2".into()))
        );
        assert_eq!(
            shape("{\u{a0}steps.a.output\u{3000}}"),
            "{steps.a.output}",
            "REF content is JS-trimmed"
        );
    }

    #[test]
    fn empty_is_none() {
        // The expression is JS-trimmed first: JavaScript whitespace alone is empty.
        for src in [
            "",
            " ",
            " \t\r\n ",
            "\u{a0}",
            "\u{b}\u{c}\u{feff}\u{2028}\u{2029}\u{1680}\u{2000}\u{200a}\u{202f}\u{205f}\u{3000}",
        ] {
            assert_eq!(parse_cond(src), Ok(Cond { expr: None }), "{src:?}");
        }
        // U+0085 and U+200B are not whitespace in JavaScript.
        assert_eq!(shape("\u{85}"), "\u{85}");
        assert_eq!(shape("\u{200b}"), "\u{200b}");
    }

    #[test]
    fn refs_before_the_error() {
        let before = |src: &str| {
            let error = parse_cond(src).expect_err(src);
            refs_before_error(src, &error)
                .iter()
                .map(|p| p.text.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(before("{a} == {b} {c}"), ["a", "b"]);
        assert_eq!(before("({ a.b } == {x}"), ["a.b", "x"]);
        assert_eq!(before("{a} == !{b}"), ["a"]);
        assert_eq!(before("{a} && {a} ||"), ["a", "a"]);
        assert_eq!(before("&& {a}"), Vec::<String>::new());
        assert_eq!(before("({a} {b})"), ["a"]);
        // A tokenizer error anywhere: nothing was resolved.
        assert_eq!(before("{a} = {b}"), Vec::<String>::new());
        assert_eq!(before("{a} == {b"), Vec::<String>::new());
        assert_eq!(before("{a} == \"x {b}"), Vec::<String>::new());
        assert_eq!(before("{a} >== broken"), Vec::<String>::new());
        assert_eq!(before("{a} == b\u{a0}c"), Vec::<String>::new());
    }

    #[test]
    fn only_ascii_space_separates_tokens() {
        // Harmless at either end: the expression is JS-trimmed first.
        assert_eq!(shape("\u{a0}true\u{a0}"), "true");
        assert_eq!(shape("-\u{a0}"), "-");
        assert_eq!(shape("\u{feff}\u{c}{x} == 1\u{2028}\u{3000}"), "({x} == 1)");
        assert_eq!(shape("a\t==\r\nb"), "(a == b)");
        // In the middle, any other JS whitespace is an unexpected char.
        assert_eq!(
            err("true\u{a0}&& true"),
            e("unexpected char '\u{a0}'", "\u{a0}")
        );
        assert_eq!(
            err("true\u{c}&&true"),
            e("unexpected char '\u{c}'", "\u{c}")
        );
        assert_eq!(
            err("a\u{3000}b"),
            e("unexpected char '\u{3000}'", "\u{3000}")
        );
        assert_eq!(err("a\u{b}== b"), e("unexpected char '\u{b}'", "\u{b}"));
        assert_eq!(
            err("{x}\u{2028}&& y"),
            e("unexpected char '\u{2028}'", "\u{2028}")
        );
    }

    #[test]
    fn spans() {
        let src = "!{a} == b && (c)";
        let Some(root) = parse_cond(src).unwrap().expr else {
            panic!()
        };
        assert_eq!(&src[root.span.range()], src);
        let Expr::And(items) = &root.node else {
            panic!()
        };
        assert_eq!(&src[items[0].span.range()], "!{a} == b");
        assert_eq!(&src[items[1].span.range()], "(c)");
        let Expr::Not(cmp) = &items[0].node else {
            panic!()
        };
        assert_eq!(&src[cmp.span.range()], "{a} == b");
        let Expr::Compare(a, op, b) = &cmp.node else {
            panic!()
        };
        assert_eq!(
            (
                &src[a.span.range()],
                &src[op.span.range()],
                &src[b.span.range()]
            ),
            ("{a}", "==", "b")
        );
    }

    #[test]
    fn error_messages_and_spans() {
        let cases = [
            (
                "{args.x == 1",
                e("unterminated placeholder", "{args.x == 1"),
            ),
            ("a == {b", e("unterminated placeholder", "{b")),
            ("{a} == \"high", e("unterminated string", "\"high")),
            ("a == 'x\\'", e("unterminated string", "'x\\'")),
            ("a = b", e("unexpected char '='", "=")),
            ("a & b", e("unexpected char '&'", "&")),
            ("a | b", e("unexpected char '|'", "|")),
            ("a }", e("unexpected char '}'", "}")),
            ("é\u{a0}b", e("unexpected char '\u{a0}'", "\u{a0}")),
            (
                "a\u{3000}==\u{2028}",
                e("unexpected char '\u{3000}'", "\u{3000}"),
            ),
            ("a ==\u{2028}", e("unexpected end", "$")),
            ("a !== b", e("unexpected char '='", "=")),
            ("a b", e("trailing tokens", "b")),
            ("a == b == c", e("trailing tokens", "==")),
            ("1.2.3", e("trailing tokens", ".3")),
            ("2024-01-01", e("trailing tokens", "-01")),
            ("3px", e("trailing tokens", "px")),
            ("a)", e("trailing tokens", ")")),
            ("a !b", e("trailing tokens", "!")),
            ("(a == b", e("missing )", "$")),
            ("(a == b  ", e("missing )", "$")),
            ("(a b)", e("missing )", "b")),
            ("((a) == b == c)", e("missing )", "==")),
            ("a ==", e("unexpected end", "$")),
            ("a == ", e("unexpected end", "$")),
            ("!", e("unexpected end", "$")),
            ("(", e("unexpected end", "$")),
            ("a &&", e("unexpected end", "$")),
            ("a ||  ", e("unexpected end", "$")),
            ("a == !b", e("unexpected operator '!'", "!")),
            ("&& a", e("unexpected operator '&&'", "&&")),
            ("()", e("unexpected operator ')'", ")")),
            ("a || || b", e("unexpected operator '||'", "||")),
            ("a == == b", e("unexpected operator '=='", "==")),
            ("a < >= b", e("unexpected operator '>='", ">=")),
            (")", e("unexpected operator ')'", ")")),
            // A lexing error anywhere wins over a parse error earlier on.
            ("a == == \"x", e("unterminated string", "\"x")),
        ];
        for (src, want) in cases {
            assert_eq!(err(src), want, "{src:?}");
        }
    }

    #[test]
    fn nesting_limit() {
        let ok =
            |open: &str, close: &str, n: usize| format!("{}a{}", open.repeat(n), close.repeat(n));
        assert!(parse_cond(&ok("(", ")", MAX_DEPTH)).is_ok());
        assert!(parse_cond(&ok("!", "", MAX_DEPTH)).is_ok());
        assert!(parse_cond(&ok("(!", ")", MAX_DEPTH / 2)).is_ok());
        let src = ok("(", ")", MAX_DEPTH + 1);
        let error = parse_cond(&src).unwrap_err();
        assert_eq!(error.message, "nesting too deep");
        assert_eq!(
            error.span,
            Span::new(MAX_DEPTH as u32, MAX_DEPTH as u32 + 1)
        );
        assert_eq!(err(&ok("!", "", MAX_DEPTH + 1)), e("nesting too deep", "!"));
        assert_eq!(
            err(&ok("(!", ")", MAX_DEPTH / 2 + 1)),
            e("nesting too deep", "(")
        );
        // Siblings do not add up: depth is nesting, not count.
        let wide = vec!["(!(a))"; 1000].join(" && ");
        assert!(parse_cond(&wide).is_ok());
        let wide = vec!["!a"; 1000].join(" || ");
        assert!(parse_cond(&wide).is_ok());
    }

    /// 100,000 `(` or `!` is an error, not a stack overflow, even on a small stack; the deepest
    /// accepted trees are parsed, printed and dropped there too (compiled and evaluated in
    /// `eval::condition`'s tests).
    #[test]
    fn deep_input_on_a_small_stack() {
        let run = || {
            for unit in ["(", "!", "(!", "!("] {
                let src = unit.repeat(100_000);
                let error = parse_cond(&src).unwrap_err();
                assert_eq!(error.message, "nesting too deep");
                let src = format!("{}a{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
                let cond = parse_cond(&src).unwrap();
                assert_eq!(cond.to_string(), src);
            }
            let src = vec!["a"; 100_000].join(" && ");
            assert!(parse_cond(&src).is_ok());
        };
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(run)
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn printing_round_trips() {
        for src in [
            "",
            "a",
            "!{ a.b } == 'x\\'y' && (b || !!c) || -5 >= 1e3",
            r#""a\\b\"c" != 'it"s'"#,
            "(((a)))",
            "true == \"true\" || null < false",
        ] {
            let once = parse_cond(src).unwrap().to_string();
            let twice = parse_cond(&once).unwrap().to_string();
            assert_eq!(once, twice, "{src:?}");
        }
        assert_eq!(
            parse_cond("  !{ a.b }==x&&(b||c)").unwrap().to_string(),
            "!{a.b} == x && (b || c)"
        );
    }
}
