//! Conditions compiled to a small stack bytecode (SPEC §6).
//!
//! A [`Program`] is a flat list of [`Op`]s with a parallel span table, a constant pool and a
//! table of the *distinct* placeholder paths (first appearance first).
//!
//! **Reads without short-circuit semantics.** SPEC §6 evaluates every operand left to right
//! and records a read for every placeholder that resolves (§4.4), even when `&&`/`||` has
//! already decided. Resolving has no effect besides that read, so the machine resolves every
//! entry of the ref table *up front*, in table order, which records exactly the reads of a full
//! left-to-right evaluation (same paths, same first-resolution order, since the table is in
//! first-appearance order and equal paths resolve equally). [`Op::Ref`] then only loads the
//! pre-resolved value, and `&&`/`||` are free to jump over operands whose values cannot change
//! the result.
//!
//! Values on the stack: an operand's raw value (undefined, a constant, a resolved placeholder)
//! or a boolean computed by `!`, a comparison, `&&` or `||`. A group `( x )` is `x` itself.
//! The result is the truthiness of the single value left on the stack.
//!
//! [`compile`] lowers a parsed tree; [`Condition::parse`] does not build one: it runs the
//! parser's productions over the tokens as they are lexed and emits the same program directly
//! (`compile_direct`), leaving a condition that does not parse to the parser for its error.

use logos::Lexer;

use crate::source::Span;
use crate::syntax::RefPath;
use crate::syntax::condition::token::{Token, lexer, unescape};
use crate::syntax::condition::{
    CmpOp, Cond, ConditionError, Expr, MAX_DEPTH, Node, Operand, parse_counting_tokens, ref_text,
};
use crate::value::Value;

/// A condition parsed and compiled once, evaluated many times ([`crate::eval`] runs it).
///
/// ```
/// use tfc::compile::Condition;
/// use tfc::eval::Bindings;
/// use tfc::value::Value;
///
/// let mut scope = Bindings::default();
/// scope.locals.insert("item".into(), Value::from("high"));
/// let cond = Condition::parse("{item} == high && !{missing}").unwrap();
/// let result = cond.eval(&scope);
/// assert!(result.value);
/// assert_eq!(result.reads, ["item"]);
/// let decision = cond.decide(&scope);
/// assert_eq!(cond.path_texts(&decision.reads), ["item"]);
/// assert_eq!(Condition::parse("a == == b").unwrap_err().message, "unexpected operator '=='");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    src: Box<str>,
    program: Program,
}

impl Condition {
    /// Parse and compile. Empty or whitespace-only text is a condition that is always true.
    ///
    /// A condition that parses is compiled in one pass over its tokens, with no syntax tree;
    /// one that does not is handed to the parser, whose error (message and span) is returned.
    pub fn parse(src: &str) -> Result<Condition, ConditionError> {
        Ok(Condition {
            src: src.into(),
            program: compile_source(src)?,
        })
    }

    /// The condition as written.
    pub fn source(&self) -> &str {
        &self.src
    }

    /// The compiled program.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Every placeholder occurrence with its span in the condition text, in source order (for
    /// the static checker).
    pub fn refs(&self) -> impl Iterator<Item = (Span, &RefPath)> {
        self.program.ref_sites()
    }
}

/// Parse and compile `src` to a program ([`Condition::parse`] without keeping the text).
pub(crate) fn compile_source(src: &str) -> Result<Program, ConditionError> {
    match compile_direct(src) {
        Some(program) => Ok(program),
        None => {
            let (cond, tokens) = parse_counting_tokens(src)?;
            Ok(compile_with_capacity(cond, tokens + 1))
        }
    }
}

/// One instruction. Jump targets are op indices (only ever forward).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `[] → [consts[k]]`
    Const(u32),
    /// `[] → [value of refs[r]]` (undefined if it did not resolve)
    Ref(u32),
    /// `[a, b] → [a OP b]` (a boolean, SPEC §6 comparison)
    Compare(CmpOp),
    /// `[v] → [!truthy(v)]`
    Not,
    /// `[v] → [truthy(v)]`
    Truthy,
    /// `[v] → [false]` and jump if `v` is falsy; `[v] → []` otherwise (`&&`)
    JumpIfFalse(u32),
    /// `[v] → [true]` and jump if `v` is truthy; `[v] → []` otherwise (`||`)
    JumpIfTrue(u32),
}

const _: () = assert!(std::mem::size_of::<Op>() == 8);

/// A compiled condition.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// The instructions.
    pub ops: Vec<Op>,
    /// `spans[i]` is the source of `ops[i]` (relative to the condition text).
    pub spans: Vec<Span>,
    /// The constant pool ([`Op::Const`] indexes it).
    pub consts: Vec<Value>,
    /// Distinct placeholder paths, in order of first appearance.
    pub refs: Vec<RefPath>,
    /// The most values the stack holds at once.
    pub max_stack: u32,
}

impl Program {
    /// Every placeholder occurrence with its span, in source order.
    pub(crate) fn ref_sites(&self) -> impl Iterator<Item = (Span, &RefPath)> {
        self.ops
            .iter()
            .zip(&self.spans)
            .filter_map(|(op, span)| match *op {
                Op::Ref(r) => self.refs.get(r as usize).map(|path| (*span, path)),
                _ => None,
            })
    }

    /// A listing of the program, one op per line, for tests.
    #[cfg(test)]
    pub(crate) fn disassemble(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        for (i, op) in self.ops.iter().enumerate() {
            let _ = match *op {
                Op::Const(k) => match self.consts.get(k as usize) {
                    Some(v) => writeln!(out, "{i}: const {}", v.to_json()),
                    None => writeln!(out, "{i}: const ?"),
                },
                Op::Ref(r) => match self.refs.get(r as usize) {
                    Some(p) => writeln!(out, "{i}: ref {}", p.text),
                    None => writeln!(out, "{i}: ref ?"),
                },
                Op::Compare(op) => writeln!(out, "{i}: compare {}", op.as_str()),
                Op::Not => writeln!(out, "{i}: not"),
                Op::Truthy => writeln!(out, "{i}: truthy"),
                Op::JumpIfFalse(t) => writeln!(out, "{i}: jump_if_false {t}"),
                Op::JumpIfTrue(t) => writeln!(out, "{i}: jump_if_true {t}"),
            };
        }
        out
    }
}

/// Work items of the (non-recursive) code generator.
enum Work<'a> {
    /// Generate code for a node (its leaves are moved into the program).
    Node(&'a mut Node),
    /// Emit an op.
    Emit(Op, Span),
    /// Emit a jump to `label` (patched once the label is bound).
    Jump {
        if_true: bool,
        label: usize,
        span: Span,
    },
    /// The label's position is here.
    Bind(usize),
}

/// Compile a parsed condition, moving its placeholder paths and strings into the program
/// (nothing is copied). An empty condition is the constant `true`.
pub fn compile(cond: Cond) -> Program {
    compile_with_capacity(cond, 0)
}

/// [`compile`], with room for `ops_hint` ops reserved up front (about one per token: one per
/// operand, comparison, `!`, `&&` and `||`, none per parenthesis, a `truthy` per chain).
pub(crate) fn compile_with_capacity(mut cond: Cond, ops_hint: usize) -> Program {
    let mut c = Compiler {
        ops: Vec::with_capacity(ops_hint),
        spans: Vec::with_capacity(ops_hint),
        ..Compiler::default()
    };
    match &mut cond.expr {
        Some(node) => c.emit_node(node),
        None => {
            let k = c.constant(Value::Bool(true));
            c.push(Op::Const(k), Span::default());
        }
    }
    c.finish()
}

#[derive(Default)]
struct Compiler {
    ops: Vec<Op>,
    spans: Vec<Span>,
    consts: Vec<Value>,
    refs: Vec<RefPath>,
    /// Label positions (op indices), once bound.
    labels: Vec<u32>,
    /// Jumps to patch: (op index, label).
    fixups: Vec<(usize, usize)>,
}

impl Compiler {
    fn push(&mut self, op: Op, span: Span) {
        self.ops.push(op);
        self.spans.push(span);
    }

    fn constant(&mut self, value: Value) -> u32 {
        self.consts.push(value);
        (self.consts.len() - 1) as u32
    }

    /// The ref-table index of `path`, added on first appearance.
    fn reference(&mut self, path: RefPath) -> u32 {
        match self.refs.iter().position(|p| p.text == path.text) {
            Some(i) => i as u32,
            None => {
                self.refs.push(path);
                (self.refs.len() - 1) as u32
            }
        }
    }

    /// Generate code for `root` with a work list, so deep trees need no native stack.
    fn emit_node(&mut self, root: &mut Node) {
        let mut work = Vec::with_capacity(16);
        work.push(Work::Node(root));
        while let Some(item) = work.pop() {
            match item {
                Work::Emit(op, span) => self.push(op, span),
                Work::Jump {
                    if_true,
                    label,
                    span,
                } => {
                    self.fixups.push((self.ops.len(), label));
                    let op = if if_true {
                        Op::JumpIfTrue(0)
                    } else {
                        Op::JumpIfFalse(0)
                    };
                    self.push(op, span);
                }
                Work::Bind(label) => {
                    if let Some(at) = self.labels.get_mut(label) {
                        *at = self.ops.len() as u32;
                    }
                }
                Work::Node(node) => self.emit_expr(node, &mut work),
            }
        }
    }

    /// Lower one node: emit leaves now, schedule the rest (pushed in reverse order).
    fn emit_expr<'a>(&mut self, node: &'a mut Node, work: &mut Vec<Work<'a>>) {
        let span = node.span;
        let if_true = matches!(node.node, Expr::Or(_));
        match &mut node.node {
            // x1 jump_if_false(L) x2 jump_if_false(L) … xn truthy L:
            Expr::And(items) | Expr::Or(items) => {
                let label = self.labels.len();
                self.labels.push(0);
                work.push(Work::Bind(label));
                if !items.last().is_some_and(is_boolean) {
                    work.push(Work::Emit(Op::Truthy, span));
                }
                let last = items.len();
                for (i, item) in items.iter_mut().enumerate().rev() {
                    if i + 1 < last {
                        work.push(Work::Jump {
                            if_true,
                            label,
                            span,
                        });
                    }
                    work.push(Work::Node(item));
                }
            }
            Expr::Not(inner) => {
                work.push(Work::Emit(Op::Not, span));
                work.push(Work::Node(inner));
            }
            Expr::Compare(a, op, b) => {
                work.push(Work::Emit(Op::Compare(op.node), op.span));
                work.push(Work::Node(b));
                work.push(Work::Node(a));
            }
            Expr::Paren(inner) => work.push(Work::Node(inner)),
            Expr::Operand(operand) => {
                let value = match std::mem::replace(operand, Operand::Null) {
                    Operand::Ref(path) => {
                        let r = self.reference(path);
                        self.push(Op::Ref(r), span);
                        return;
                    }
                    Operand::Str(s) | Operand::Bareword(s) => Value::String(s),
                    Operand::Number { value, .. } => Value::Number(value),
                    Operand::Bool(b) => Value::Bool(b),
                    Operand::Null => Value::Null,
                };
                let k = self.constant(value);
                self.push(Op::Const(k), span);
            }
        }
    }

    fn finish(mut self) -> Program {
        for &(at, label) in &self.fixups {
            let target = self.labels.get(label).copied().unwrap_or(0);
            if let Some(op) = self.ops.get_mut(at) {
                *op = match *op {
                    Op::JumpIfTrue(_) => Op::JumpIfTrue(target),
                    Op::JumpIfFalse(_) => Op::JumpIfFalse(target),
                    other => other,
                };
            }
        }
        // Jumps only go forward to where the stack is as deep as on the fall-through path, so
        // one pass in program order finds the deepest point.
        let (mut depth, mut max_stack) = (0i64, 0i64);
        for op in &self.ops {
            depth += match op {
                Op::Const(_) | Op::Ref(_) => 1,
                Op::Compare(_) | Op::JumpIfFalse(_) | Op::JumpIfTrue(_) => -1,
                Op::Not | Op::Truthy => 0,
            };
            max_stack = max_stack.max(depth);
        }
        Program {
            ops: self.ops,
            spans: self.spans,
            consts: self.consts,
            refs: self.refs,
            max_stack: max_stack as u32,
        }
    }
}

/// The single-pass compiler: the parser's productions (`syntax::condition::parser`), run over
/// the tokens as they are lexed, emitting each node's code as it completes instead of building
/// it. The code is that of [`compile`] on the parsed tree, op for op and span for span: leaves
/// in source order, an operator after its operands, a chain's jumps patched (target and the
/// chain's span) when the chain ends. `None` for text that does not lex or parse: the parser
/// then reports the error.
fn compile_direct(src: &str) -> Option<Program> {
    let mut d = Direct {
        src,
        lexer: lexer(src),
        next: None,
        depth: 0,
        stack: Vec::with_capacity(16),
        jumps: Vec::new(),
        c: Compiler {
            ops: Vec::with_capacity(src.len() / 4 + 2),
            spans: Vec::with_capacity(src.len() / 4 + 2),
            ..Compiler::default()
        },
    };
    d.advance()?;
    if d.next.is_none() {
        let k = d.c.constant(Value::Bool(true));
        d.c.push(Op::Const(k), Span::default());
        return Some(d.c.finish());
    }
    d.or_expr()?;
    // Trailing tokens (or a lexing error after the expression) are an error.
    d.next.is_none().then(|| d.c.finish())
}

/// Room for a few items in a list about to get its first: a condition often has more than the
/// four a `Vec` starts with, and growing it costs an allocation and a copy.
fn reserve_some<T>(list: &mut Vec<T>) {
    if list.capacity() == 0 {
        list.reserve(8);
    }
}

/// A node whose code is emitted: its span, and whether it leaves a boolean ([`is_boolean`]).
#[derive(Clone, Copy)]
struct Done {
    span: Span,
    boolean: bool,
}

/// A production waiting for its next operand (the parser's `Frame`, holding code positions
/// instead of nodes).
enum Pending {
    /// `or_expr`, `and_expr`: the first operand's span once there is a second (`None` before),
    /// and where this chain's jumps start in [`Direct::jumps`].
    Or(Option<Span>, usize),
    And(Option<Span>, usize),
    /// `not_expr` after a `!` starting at this offset.
    Not(u32),
    /// `comparison` waiting for its first `primary`.
    Comparison,
    /// `comparison` after `primary cmp_op` (the primary's span; the operator and its span).
    CompareRight(Span, CmpOp, Span),
    /// `primary` after `(` (this span).
    Group(Span),
}

/// Where a descent starts (the parser's `Production`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum From {
    OrExpr,
    AndExpr,
    NotExpr,
    Primary,
}

struct Direct<'s> {
    src: &'s str,
    lexer: Lexer<'s, Token>,
    /// The next token, not consumed yet (`None` at the end).
    next: Option<(Token, Span)>,
    /// `(`/`!` nesting.
    depth: usize,
    stack: Vec<Pending>,
    /// Jumps of the open chains, innermost last: their op indices, patched when the chain ends.
    jumps: Vec<usize>,
    c: Compiler,
}

impl Direct<'_> {
    /// Lex the next token into `next`; `None` on a lexing error.
    fn advance(&mut self) -> Option<()> {
        self.next = match self.lexer.next() {
            Some(Ok(token)) => Some((token, Span::from_range(self.lexer.span()))),
            Some(Err(_)) => return None,
            None => None,
        };
        Some(())
    }

    fn next_is(&self, token: Token) -> bool {
        self.next.is_some_and(|(t, _)| t == token)
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    /// `or_expr`, driving the whole descent as the parser's `parse_or_expr` does.
    fn or_expr(&mut self) -> Option<Done> {
        let mut from = From::OrExpr;
        loop {
            let mut node = self.descend(from)?;
            loop {
                let Some(pending) = self.stack.pop() else {
                    return Some(node);
                };
                match self.ascend(pending, node)? {
                    Ok(up) => node = up,
                    Err(down) => {
                        from = down;
                        break;
                    }
                }
            }
        }
    }

    fn descend(&mut self, mut from: From) -> Option<Done> {
        loop {
            if from <= From::OrExpr {
                self.stack.push(Pending::Or(None, self.jumps.len()));
            }
            if from <= From::AndExpr {
                self.stack.push(Pending::And(None, self.jumps.len()));
            }
            if from <= From::NotExpr {
                while let Some((Token::Bang, bang)) = self.next {
                    self.enter()?;
                    self.stack.push(Pending::Not(bang.start));
                    self.advance()?;
                }
                self.stack.push(Pending::Comparison);
            }
            let (token, span) = self.next?;
            self.advance()?;
            let operand = match token {
                Token::LParen => {
                    self.enter()?;
                    self.stack.push(Pending::Group(span));
                    from = From::OrExpr;
                    continue;
                }
                Token::Ref => {
                    let text = ref_text(self.src.get(span.range())?);
                    let r = match self.c.refs.iter().position(|p| *p.text == *text) {
                        Some(i) => i,
                        None => {
                            reserve_some(&mut self.c.refs);
                            self.c.refs.push(RefPath::parse(text));
                            self.c.refs.len() - 1
                        }
                    };
                    self.c.push(Op::Ref(r as u32), span);
                    return Some(Done {
                        span,
                        boolean: false,
                    });
                }
                Token::Str => Value::String(unescape(self.src.get(span.range())?)),
                Token::Number => {
                    Value::Number(self.src.get(span.range())?.parse().unwrap_or(f64::NAN))
                }
                Token::True => Value::Bool(true),
                Token::False => Value::Bool(false),
                Token::Null => Value::Null,
                Token::Bareword => Value::String(self.src.get(span.range())?.to_owned()),
                _ => return None,
            };
            let boolean = matches!(operand, Value::Bool(_));
            reserve_some(&mut self.c.consts);
            let k = self.c.constant(operand);
            self.c.push(Op::Const(k), span);
            return Some(Done { span, boolean });
        }
    }

    /// `node` completes the operand `pending` waited for: `Ok` hands a node up, `Err` descends
    /// for the next operand.
    fn ascend(&mut self, pending: Pending, node: Done) -> Option<Result<Done, From>> {
        Some(match pending {
            Pending::Or(first, base) => self.chain(first, base, node, Token::OrOr, true)?,
            Pending::And(first, base) => self.chain(first, base, node, Token::AndAnd, false)?,
            Pending::Not(start) => {
                self.depth -= 1;
                let span = Span::new(start, node.span.end);
                self.c.push(Op::Not, span);
                Ok(Done {
                    span,
                    boolean: true,
                })
            }
            Pending::Comparison => {
                let op = match self.next {
                    Some((Token::EqEq, s)) => (CmpOp::Eq, s),
                    Some((Token::NotEq, s)) => (CmpOp::Ne, s),
                    Some((Token::GtEq, s)) => (CmpOp::Ge, s),
                    Some((Token::LtEq, s)) => (CmpOp::Le, s),
                    Some((Token::Gt, s)) => (CmpOp::Gt, s),
                    Some((Token::Lt, s)) => (CmpOp::Lt, s),
                    _ => return Some(Ok(node)),
                };
                self.advance()?;
                self.stack
                    .push(Pending::CompareRight(node.span, op.0, op.1));
                Err(From::Primary)
            }
            Pending::CompareRight(left, op, op_span) => {
                self.c.push(Op::Compare(op), op_span);
                Ok(Done {
                    span: left.to(node.span),
                    boolean: true,
                })
            }
            Pending::Group(open) => {
                let (Token::RParen, close) = self.next? else {
                    return None;
                };
                self.advance()?;
                self.depth -= 1;
                Ok(Done {
                    span: open.to(close),
                    boolean: node.boolean,
                })
            }
        })
    }

    /// An `or_expr`/`and_expr` chain after one more operand: continue past `joiner` (emitting
    /// the jump), or end it (a single operand is itself; else `truthy` if needed, and the
    /// chain's jumps patched to the end and given its span).
    fn chain(
        &mut self,
        first: Option<Span>,
        base: usize,
        node: Done,
        joiner: Token,
        if_true: bool,
    ) -> Option<Result<Done, From>> {
        if self.next_is(joiner) {
            self.advance()?;
            let first = first.unwrap_or(node.span);
            reserve_some(&mut self.jumps);
            self.jumps.push(self.c.ops.len());
            let op = if if_true {
                Op::JumpIfTrue(0)
            } else {
                Op::JumpIfFalse(0)
            };
            self.c.push(op, Span::default());
            let (pending, next) = if if_true {
                (Pending::Or(Some(first), base), From::AndExpr)
            } else {
                (Pending::And(Some(first), base), From::NotExpr)
            };
            self.stack.push(pending);
            return Some(Err(next));
        }
        let Some(first) = first else {
            return Some(Ok(node));
        };
        let span = first.to(node.span);
        if !node.boolean {
            self.c.push(Op::Truthy, span);
        }
        let target = self.c.ops.len() as u32;
        for &at in &self.jumps[base..] {
            self.c.ops[at] = if if_true {
                Op::JumpIfTrue(target)
            } else {
                Op::JumpIfFalse(target)
            };
            self.c.spans[at] = span;
        }
        self.jumps.truncate(base);
        Some(Ok(Done {
            span,
            boolean: true,
        }))
    }
}

/// Does `node` already leave a boolean (so `truthy` would be a no-op)?
fn is_boolean(node: &Node) -> bool {
    let mut node = node;
    while let Expr::Paren(inner) = &node.node {
        node = inner;
    }
    matches!(
        node.node,
        Expr::Or(_)
            | Expr::And(_)
            | Expr::Not(_)
            | Expr::Compare(..)
            | Expr::Operand(Operand::Bool(_))
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::condition::parse_cond;

    fn asm(src: &str) -> String {
        compile(parse_cond(src).unwrap()).disassemble()
    }

    #[test]
    fn lowers_each_construct() {
        assert_eq!(asm(""), "0: const true\n");
        assert_eq!(
            asm("{a} == high"),
            "0: ref a\n1: const \"high\"\n2: compare ==\n"
        );
        assert_eq!(
            asm("!(1 < '2')"),
            "0: const 1\n1: const \"2\"\n2: compare <\n3: not\n"
        );
        assert_eq!(
            asm("a && b && c"),
            "0: const \"a\"\n1: jump_if_false 6\n2: const \"b\"\n3: jump_if_false 6\n\
             4: const \"c\"\n5: truthy\n"
        );
        assert_eq!(
            asm("a || b && null"),
            "0: const \"a\"\n1: jump_if_true 6\n2: const \"b\"\n3: jump_if_false 6\n\
             4: const null\n5: truthy\n"
        );
        assert_eq!(
            asm("a || (b == c)"),
            "0: const \"a\"\n1: jump_if_true 5\n2: const \"b\"\n3: const \"c\"\n\
             4: compare ==\n"
        );
    }

    #[test]
    fn refs_are_distinct_and_sites_keep_spans() {
        let src = "{a} == {b} || !{ a } && {c.d}";
        let program = compile(parse_cond(src).unwrap());
        let table: Vec<&str> = program.refs.iter().map(|p| &*p.text).collect();
        assert_eq!(table, ["a", "b", "c.d"]);
        let sites: Vec<(&str, &str)> = program
            .ref_sites()
            .map(|(span, path)| (&src[span.range()], &*path.text))
            .collect();
        assert_eq!(
            sites,
            [("{a}", "a"), ("{b}", "b"), ("{ a }", "a"), ("{c.d}", "c.d")]
        );
        assert_eq!(program.ops.len(), program.spans.len());
    }

    #[test]
    fn max_stack() {
        let depth = |src: &str| compile(parse_cond(src).unwrap()).max_stack;
        assert_eq!(depth(""), 1);
        assert_eq!(depth("a"), 1);
        assert_eq!(depth("a == b"), 2);
        assert_eq!(depth("a && b && c"), 1);
        assert_eq!(depth("(a == b) == (c == d)"), 3);
        assert_eq!(depth("(a == (b == (c == d)))"), 4);
    }

    /// The single-pass compiler against the parser and [`compile`]: the same program (ops,
    /// spans, constants, refs, stack depth) for every condition that parses, nothing for one
    /// that does not.
    fn same_as_tree(src: &str) {
        let tree = parse_cond(src).ok().map(compile);
        assert_eq!(compile_direct(src), tree, "{src:?}");
    }

    #[test]
    fn direct_matches_the_tree() {
        for src in [
            "",
            "  \u{a0} ",
            "a",
            "{a} == high",
            "!(1 < '2')",
            "a && b && c",
            "a || b && null",
            "a || (b == c)",
            "{a} == {b} || !{ a } && {c.d}",
            "!{a} == b && (c)",
            "(a || b) && c",
            "a && b || c && d",
            "!!a && !b",
            "(a) == (b)",
            "((a)) && (true)",
            "a && (b || c) && !(d && e) || f",
            "{ args.x } == 'a\\nb' && -1.5e2 != \"x\\\"y\" && true && false && null && v1.2",
            "({steps.t.json.severity} == high || {steps.t.json.severity} == critical) && !{steps.t.json.suppressed}",
            "{steps.triage.json.severity} == high && {steps.triage.json.score} >= 0.8 && !{steps.triage.json.suppressed} && ({args.mode} == \"deep\" || {args.force}) && {steps.scan.json.count} > 3 && {args.env} != prod",
            "a <= b || a >= b || a < b || a > b",
            "x\u{a0}==\u{3000}y && (false) && (a || true)",
            "\u{feff}\u{c}x == y\u{2028}",
            // Errors, lexing and parsing.
            "{args.x == 1",
            "a == \"x",
            "a = b",
            "a b",
            "a == b == c",
            "(a == b",
            "(a b)",
            "a ==",
            "!",
            "(",
            "a &&",
            "a || || b",
            "a == !b",
            "&& a",
            "()",
            ")",
            "a)",
            "a && b |",
            "a == == \"x",
        ] {
            same_as_tree(src);
        }
        let n = crate::syntax::condition::MAX_DEPTH;
        for (open, close, k) in [("(", ")", n), ("!", "", n), ("(!", ")", n / 2)] {
            for k in [k, k + 1] {
                same_as_tree(&format!("{}a{}", open.repeat(k), close.repeat(k)));
            }
        }
        same_as_tree(&vec!["(!(a))"; 300].join(" && "));
        same_as_tree(&vec!["!a == {b}"; 300].join(" || "));
    }

    /// Conditions from the grammar: leaves, comparisons, `!`, `&&`/`||` chains and groups,
    /// with assorted spacing.
    fn grammar() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        use proptest::sample::select;
        let leaf = select(vec![
            "{a}", "{ b.c }", "{a}", "x", "'q'", "\"r s\"", "1.5", "-2", "true", "false", "null",
        ])
        .prop_map(str::to_owned);
        let sep = || select(vec![" ", "", "\r\n", "\t"]);
        leaf.prop_recursive(5, 40, 4, move |inner| {
            let ops = select(vec!["==", "!=", ">=", "<=", ">", "<"]);
            prop_oneof![
                (inner.clone(), sep(), ops, inner.clone())
                    .prop_map(|(a, s, op, b)| format!("({a}){s}{op} ({b})")),
                (sep(), inner.clone()).prop_map(|(s, e)| format!("!{s}{e}")),
                (inner.clone(), sep(), inner.clone())
                    .prop_map(|(a, s, b)| format!("{a}{s}&&{s}{b}")),
                (inner.clone(), sep(), inner.clone())
                    .prop_map(|(a, s, b)| format!("{a}{s}||{s}{b}")),
                inner.prop_map(|e| format!("( {e})")),
            ]
        })
    }

    proptest::proptest! {
        /// Conditions that parse: the same program from the tree and from the single pass.
        #[test]
        fn direct_matches_the_tree_on_the_grammar(src in grammar()) {
            proptest::prop_assert!(parse_cond(&src).is_ok(), "{src:?}");
            same_as_tree(&src);
        }

        /// Token soup: random sequences of condition tokens (and a few bytes that do not lex).
        #[test]
        fn direct_matches_the_tree_on_token_soup(
            parts in proptest::collection::vec(proptest::sample::select(vec![
                "a", "{a}", "{ b.c }", "'s'", "\"t\"", "1", "-2.5", "true", "false", "null",
                "&&", "||", "==", "!=", "<", ">=", "!", "(", ")", " ", "=", "{x", "\u{a0}",
            ]), 0..24)
        ) {
            same_as_tree(&parts.join(" "));
            same_as_tree(&parts.concat());
        }
    }

    #[test]
    fn deep_trees_compile_on_a_small_stack() {
        let run = || {
            let n = crate::syntax::condition::MAX_DEPTH;
            let src = format!("{}a{}", "(!".repeat(n / 2), ")".repeat(n / 2));
            let program = compile(parse_cond(&src).unwrap());
            assert_eq!(program.ops.len(), 1 + n / 2);
        };
        std::thread::Builder::new()
            .stack_size(128 * 1024)
            .spawn(run)
            .unwrap()
            .join()
            .unwrap();
    }
}
