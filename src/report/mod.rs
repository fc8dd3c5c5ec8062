//! Reports about a checked flow for people: the Mermaid flowchart of `tfc graph` (SPEC §11.3).
//! Text only — no renderer, no network.

/// Layered DAG drawing, shared by the SVG graph and the HTML report.
pub mod layout;
/// The Mermaid flowchart.
pub mod mermaid;

pub use mermaid::{Direction, mermaid};
