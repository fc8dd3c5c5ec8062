//! Lowering parsed languages to flat programs: conditions to a stack bytecode (a `Vec` of ops
//! with a parallel span table), templates to a list of literal runs and placeholder
//! occurrences. [`crate::eval`] runs both.

pub mod condition;
pub mod template;

pub use condition::Condition;
pub use template::{Template, TemplateRef};
