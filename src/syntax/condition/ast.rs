//! The condition AST (SPEC §6). Every node carries its byte span in the condition text.
//!
//! `&&` and `||` chains are n-ary ([`Expr::And`], [`Expr::Or`]), so a condition of 100,000
//! clauses is a wide tree, not a deep one: the tree's depth is bounded by the `(`/`!` nesting
//! limit of the parser, and every recursive walk over it is safe.
//!
//! [`std::fmt::Display`] prints a condition back as source text: parentheses exactly where they
//! were written, one space around binary operators, strings in double quotes. Printing and
//! parsing again gives the same tree (spans aside).

use std::fmt;

use crate::source::{Span, Spanned};
use crate::syntax::RefPath;

/// A node of the condition tree with its span.
pub type Node = Spanned<Expr>;

/// A parsed condition: `None` for an empty or whitespace-only one (which is true).
#[derive(Clone, Debug, PartialEq)]
pub struct Cond {
    /// The root expression.
    pub expr: Option<Node>,
}

/// A condition expression (SPEC §6 grammar, `grammar/condition.ebnf`).
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// `a || b || …`, two or more operands.
    Or(Vec<Node>),
    /// `a && b && …`, two or more operands.
    And(Vec<Node>),
    /// `!x`; binds looser than a comparison, so `!a == b` is `!(a == b)`.
    Not(Box<Node>),
    /// `a OP b` where both sides are primaries.
    Compare(Box<Node>, Spanned<CmpOp>, Box<Node>),
    /// `( x )`, kept so printing reproduces the source's grouping; evaluates to `x`.
    Paren(Box<Node>),
    /// A leaf.
    Operand(Operand),
}

/// A leaf operand.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// `{ path }`: the raw value of the placeholder (undefined when it does not resolve).
    Ref(RefPath),
    /// A quoted string, unescaped.
    Str(String),
    /// A NUMBER with its lexeme (kept for printing: `1e400` is `Infinity` but prints as written).
    Number {
        /// The value (`1e400` is `Infinity`).
        value: f64,
        /// The lexeme as written.
        text: Box<str>,
    },
    /// `true` / `false`.
    Bool(bool),
    /// `null`.
    Null,
    /// An unquoted word; a string operand.
    Bareword(String),
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `>=`
    Ge,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `<`
    Lt,
}

impl CmpOp {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Ge => ">=",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Lt => "<",
        }
    }

    /// The operator with its sides swapped: `a < b` is `b > a`.
    pub fn flip(self) -> CmpOp {
        match self {
            CmpOp::Ge => CmpOp::Le,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Lt => CmpOp::Gt,
            same => same,
        }
    }

    /// Does `ordering` (of left vs right) satisfy this operator?
    pub fn holds(self, ordering: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        match self {
            CmpOp::Eq => ordering == Equal,
            CmpOp::Ne => ordering != Equal,
            CmpOp::Ge => ordering != Less,
            CmpOp::Le => ordering != Greater,
            CmpOp::Gt => ordering == Greater,
            CmpOp::Lt => ordering == Less,
        }
    }
}

impl Cond {
    /// Every placeholder with its span, in source order.
    pub fn refs(&self) -> Vec<(Span, &RefPath)> {
        let mut out = Vec::new();
        let mut work: Vec<&Node> = self.expr.iter().collect();
        while let Some(node) = work.pop() {
            match &node.node {
                Expr::Or(items) | Expr::And(items) => work.extend(items.iter().rev()),
                Expr::Not(inner) | Expr::Paren(inner) => work.push(inner),
                Expr::Compare(a, _, b) => work.extend([&**b, &**a]),
                Expr::Operand(Operand::Ref(path)) => out.push((node.span, path)),
                Expr::Operand(_) => {}
            }
        }
        out
    }
}

impl fmt::Display for Cond {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.expr {
            Some(node) => node.node.fmt(f),
            None => Ok(()),
        }
    }
}

impl fmt::Display for Expr {
    /// Iterative (a work list instead of recursion), like every walk that may meet deep input.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        enum Work<'a> {
            Expr(&'a Expr),
            Text(&'static str),
        }
        let mut work = vec![Work::Expr(self)];
        while let Some(item) = work.pop() {
            let expr = match item {
                Work::Text(text) => {
                    f.write_str(text)?;
                    continue;
                }
                Work::Expr(expr) => expr,
            };
            match expr {
                Expr::Or(items) | Expr::And(items) => {
                    let sep = if matches!(expr, Expr::Or(_)) {
                        " || "
                    } else {
                        " && "
                    };
                    for (i, item) in items.iter().enumerate().rev() {
                        work.push(Work::Expr(&item.node));
                        if i > 0 {
                            work.push(Work::Text(sep));
                        }
                    }
                }
                Expr::Not(inner) => {
                    work.push(Work::Expr(&inner.node));
                    work.push(Work::Text("!"));
                }
                Expr::Compare(a, op, b) => {
                    work.push(Work::Expr(&b.node));
                    work.push(Work::Text(" "));
                    work.push(Work::Text(op.node.as_str()));
                    work.push(Work::Text(" "));
                    work.push(Work::Expr(&a.node));
                }
                Expr::Paren(inner) => {
                    work.push(Work::Text(")"));
                    work.push(Work::Expr(&inner.node));
                    work.push(Work::Text("("));
                }
                Expr::Operand(operand) => operand.fmt(f)?,
            }
        }
        Ok(())
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Ref(path) => write!(f, "{{{}}}", path.text),
            Operand::Str(s) => {
                f.write_str("\"")?;
                for c in s.chars() {
                    if c == '"' || c == '\\' {
                        f.write_str("\\")?;
                    }
                    write!(f, "{c}")?;
                }
                f.write_str("\"")
            }
            Operand::Number { text, .. } => f.write_str(text),
            Operand::Bool(b) => write!(f, "{b}"),
            Operand::Null => f.write_str("null"),
            Operand::Bareword(w) => f.write_str(w),
        }
    }
}
