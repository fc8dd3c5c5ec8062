//! The condition language of `when`, `until` and gate `eval` (SPEC §6): a logos lexer
//! (`token`), a recursive-descent parser (`parser`) into a spanned AST (`ast`), compiled to a
//! small stack bytecode (`crate::compile::condition`) and run by `crate::eval::condition`.

pub mod ast;
pub mod parser;
pub mod token;

pub use ast::{CmpOp, Cond, Expr, Node, Operand};
pub use parser::{ConditionError, ErrorKind, MAX_DEPTH, parse_cond};
