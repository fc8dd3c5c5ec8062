//! The evaluator: runs what [`crate::compile`] built against a [`Scope`] — templates rendered
//! as text or values, conditions decided — plus resolution of placeholder paths, truthiness,
//! and JSON recovery from model output (safeParse, coerceArray).

pub mod coerce;
pub mod condition;
pub mod context;
pub mod safe_parse;
pub mod scope;
mod template;
mod text;

pub use coerce::coerce_array;
pub use condition::{Outcome, eval_gate_entry, eval_until, eval_when};
pub use scope::{Bindings, Scope, StepState, StepStatus, resolve};
pub use template::{Oversize, Rendered};
pub use text::{truthy, write_text};
