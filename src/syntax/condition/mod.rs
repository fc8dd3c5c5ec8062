//! The condition language of `when`, `until` and gate `eval` (SPEC §6): a logos lexer
//! (`token`), a recursive-descent parser (`parser`) into a spanned AST (`ast`), compiled to a
//! small stack bytecode (`crate::compile::condition`) and run by `crate::eval::condition`.

pub mod ast;
pub mod parser;
pub mod token;

pub use ast::{CmpOp, Cond, Expr, Node, Operand};
pub use parser::{ConditionError, ErrorKind, MAX_DEPTH, parse_cond, refs_before_error};

use crate::compile::condition::{Program, compile_with_capacity};
use crate::eval::Scope;
use crate::source::Span;
use crate::syntax::RefPath;

pub use crate::eval::condition::{Decision, Evaluated, ReadSet};

/// A condition parsed and compiled once, evaluated many times.
///
/// ```
/// use tfc::eval::Bindings;
/// use tfc::syntax::condition::Condition;
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
        let (cond, tokens) = parser::parse_counting_tokens(src)?;
        Ok(Condition {
            src: src.into(),
            program: compile_with_capacity(cond, tokens + 1),
        })
    }

    /// The condition as written.
    pub fn source(&self) -> &str {
        &self.src
    }

    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Evaluate against `scope`: the value, and what it read.
    pub fn eval<S: Scope + ?Sized>(&self, scope: &S) -> Evaluated {
        crate::eval::condition::run(&self.program, scope)
    }

    /// Evaluate against `scope`: the value, and what it read as indices into the ref table
    /// (nothing is allocated for up to 64 distinct placeholders); [`Condition::path_texts`]
    /// and [`Condition::read_phases`] turn the reads into text when needed.
    pub fn decide<S: Scope + ?Sized>(&self, scope: &S) -> Decision {
        crate::eval::condition::decide(&self.program, scope)
    }

    /// The paths of `reads`, as written, distinct, in first-resolution order.
    pub fn path_texts(&self, reads: &ReadSet) -> Vec<String> {
        crate::eval::condition::path_texts(&self.program, reads)
    }

    /// The phase ids `reads` read, distinct, in first-read order.
    pub fn read_phases<S: Scope + ?Sized>(&self, scope: &S, reads: &ReadSet) -> Vec<String> {
        crate::eval::condition::read_phases(&self.program, scope, reads)
    }

    /// Evaluate against `scope`, the value only (no read lists are built).
    pub fn holds<S: Scope + ?Sized>(&self, scope: &S) -> bool {
        crate::eval::condition::run_value(&self.program, scope)
    }

    /// Every placeholder occurrence with its span in the condition text, in source order (for
    /// the static checker).
    pub fn refs(&self) -> impl Iterator<Item = (Span, &RefPath)> {
        self.program.ref_sites()
    }
}
