//! The state of a fan-out in progress (parallel, map, tournament): shared by the engine
//! (`fanout.rs`) and each kind's own part (`parallel.rs`, `map.rs`, `tournament.rs`), which
//! import it and never each other.

use super::super::machine::CallDir;
use super::super::record::PhaseStatus;
use super::super::scope::PhaseScope;
use crate::agent::Usage;
use crate::value::Value;

/// How one item ended.
#[derive(Debug)]
pub(super) struct ItemDone {
    pub index: usize,
    pub agent: String,
    pub status: PhaseStatus,
    pub output: String,
    pub error: Option<String>,
    /// A map item's key when it ended `done` (its `inputHash`).
    pub key: Option<String>,
}

/// A fan-out in progress.
#[derive(Debug, Default)]
pub(crate) struct Fanout {
    pub(super) count: usize,
    pub(super) width: usize,
    pub(super) next: usize,
    pub(super) running: usize,
    pub(super) finished: usize,
    pub(super) done: Vec<Option<ItemDone>>,
    /// Item agents, by index, while their calls run.
    pub(super) agents: Vec<String>,
    pub(super) usage: Usage,
    pub(super) scope: PhaseScope,
    /// A map's elements.
    pub(super) elements: Elements,
    /// A tournament's items, kept for the judge.
    pub(super) items: Vec<ItemDone>,
    /// Map items' cache keys, by index, while their calls run (SPEC §10.5: maps cache per
    /// item).
    pub(super) keys: Vec<Option<String>>,
    /// Whether map items may be reused (the phase's cache scope is not `off`).
    pub(super) reusable: bool,
    /// Map items are looked up in, and stored to, the cross-run cache.
    pub(super) cross: bool,
    /// Items whose cross-run lookup is out: agent, prompt, directory.
    pub(super) looking: Vec<Option<(String, String, CallDir)>>,
    /// Set when the host runs this map's calls in shards.
    pub(super) shard: Option<Box<Sharding>>,
}

/// A map whose calls run in shards, one shard at a time (SPEC §14.3).
#[derive(Debug, Default)]
pub(super) struct Sharding {
    /// Items per shard, at most.
    pub size: usize,
    /// The calls of the shard being gathered.
    pub batch: Vec<crate::run::machine::ShardCall>,
    /// What that shard is expected to weigh on the wire, in bytes.
    pub bytes: usize,
    /// A shard is out.
    pub out: bool,
    /// Outputs that came back from shards: their count and their total length.
    pub outputs: (usize, usize),
}

impl Sharding {
    /// What an item's output is expected to weigh: the mean of those back from shards so
    /// far, else 2 KiB.
    pub fn expected_output(&self) -> usize {
        match self.outputs {
            (0, _) => 2048,
            (n, total) => total / n,
        }
    }
}

/// A map's elements: parsed from rendered text (owned), or a value in the phase's view of
/// the run, looked up again for each item instead of copied (a 100,000-item list stays
/// where it is).
#[derive(Debug, Default)]
pub(super) enum Elements {
    #[default]
    None,
    Owned(Vec<Value>),
    Scoped,
}
