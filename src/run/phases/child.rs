//! The state of a sub-flow in progress (flow, expand): the child flow and the machine running
//! it. `flow.rs` loads a saved child; `subflow.rs` runs it.

use super::super::machine::Child;
use crate::flow::Flow;
use crate::value::Map;

/// A sub-flow in progress.
#[derive(Default)]
pub(crate) struct Subflow {
    /// The child flow, once known.
    pub(super) flow: Option<Flow>,
    /// Its name (a saved flow's, while it loads).
    pub(super) name: String,
    pub(super) args: Map,
    pub(super) generated: bool,
    pub(super) machine: Option<Box<dyn Child>>,
}

impl std::fmt::Debug for Subflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Subflow")
    }
}
