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

use crate::source::Span;
use crate::syntax::RefPath;
use crate::syntax::condition::{
    CmpOp, Cond, ConditionError, Expr, Node, Operand, parse_counting_tokens,
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
    pub fn parse(src: &str) -> Result<Condition, ConditionError> {
        let (cond, tokens) = parse_counting_tokens(src)?;
        Ok(Condition {
            src: src.into(),
            program: compile_with_capacity(cond, tokens + 1),
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
