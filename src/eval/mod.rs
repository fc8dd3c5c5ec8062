//! The evaluator: runs what [`crate::compile`] built against a [`Scope`] — templates rendered
//! as text or values, conditions decided — plus resolution of placeholder paths, truthiness,
//! and JSON recovery from model output (safeParse, coerceArray).

pub mod coerce;
pub mod condition;
pub mod context;
pub mod modes;
mod render;
pub mod safe_parse;
pub mod scope;
mod text;

pub use coerce::coerce_array;
pub use condition::{Outcome, eval_gate_entry, eval_until, eval_when};
pub use render::{Oversize, Rendered};
pub use scope::{Bindings, Scope, StepState, StepStatus, resolve};
pub use text::{truthy, write_text};
