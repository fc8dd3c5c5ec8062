//! Reports for people: the Mermaid flowchart of `tfc graph` (SPEC §11.3), its SVG and Graphviz
//! counterparts, and the self-contained HTML report of a run (SPEC §11.5). Text only — no
//! renderer, no network.

/// A checked flow placed on a plane (phases, edges, def clusters).
pub mod dag;
/// Graphviz text.
pub mod dot;
/// The journal, read for the report.
pub mod events;
/// The self-contained HTML report of a run.
pub mod html;
/// Layered DAG drawing, shared by the SVG graph and the HTML report.
pub mod layout;
/// The Mermaid flowchart.
pub mod mermaid;
/// The SVG of a placed flow.
pub mod svg;
/// The report's timeline.
pub mod timeline;

pub use mermaid::{Direction, mermaid};
