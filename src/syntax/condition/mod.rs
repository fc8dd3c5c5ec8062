//! The condition language of `when`, `until` and gate `eval` (SPEC §6): a logos lexer
//! (`token`) and a recursive-descent parser (`parser`) into a spanned AST (`ast`). The AST is
//! compiled to a small stack bytecode by [`crate::compile::condition`] and run by
//! [`crate::eval::condition`].

pub mod ast;
pub mod parser;
pub(crate) mod token;

pub use ast::{CmpOp, Cond, Expr, Node, Operand};
pub use parser::{ConditionError, ErrorKind, MAX_DEPTH, parse_cond};
pub(crate) use parser::{parse_counting_tokens, ref_text, refs_before_error};
