//! The phase kinds: one file each, holding the kind's fields, its field table (which drives
//! unknown-field detection, did-you-mean and `tfc schema`), its lowering and its checks.
//!
//! This file holds only the kinds' types: [`PhaseKind`], the kind structs it re-exports from
//! its children, and nothing the children call. What the kinds share lives beside them:
//! `common.rs` (the lowering context `Cx` and the required-field checks),
//! `branch.rs` (branches of parallel, race and tournament), `table.rs` (the field tables) and
//! `dispatch.rs` (the `match`es that call each kind's lowering and checks).
//!
//! Adding a kind means: its file here, one line in [`PhaseType`], and the arms the compiler
//! then asks for ([`PhaseKind`] and the `match`es of `dispatch.rs` and `table.rs`).

mod agent;
mod approval;
mod branch;
pub(crate) mod common;
pub(crate) mod dispatch;
mod expand;
mod flow;
mod gate;
#[path = "loop.rs"]
mod loop_kind;
mod map;
mod parallel;
mod race;
pub(crate) mod reduce;
mod script;
pub(crate) mod table;
mod tournament;

pub use agent::Agent;
pub use approval::Approval;
pub use branch::Branch;
pub use expand::Expand;
pub use flow::{Def, SubFlow, WithValue};
pub use gate::{EvalEntry, EvalKind, Gate, Score, ScoreJudge, Scorer, ScorerKind};
pub use loop_kind::Loop;
pub use map::Map;
pub use parallel::Parallel;
pub use race::Race;
pub use reduce::Reduce;
pub use script::{Run, Script};
pub use tournament::Tournament;

use super::enums::PhaseType;

/// The kind of a phase with the fields only that kind has. Each variant's type and its
/// lowering, field table and checks live in `flow/kinds/<kind>.rs`. The larger kinds are
/// boxed, so a phase costs little more than its common fields whatever its kind.
#[derive(Clone, Debug)]
pub enum PhaseKind {
    /// `agent`.
    Agent(Agent),
    /// `parallel`.
    Parallel(Parallel),
    /// `map`.
    Map(Box<Map>),
    /// `gate`.
    Gate(Box<Gate>),
    /// `reduce`.
    Reduce(Reduce),
    /// `approval`.
    Approval(Approval),
    /// `flow`.
    Flow(Box<SubFlow>),
    /// `loop`.
    Loop(Box<Loop>),
    /// `tournament`.
    Tournament(Box<Tournament>),
    /// `script`.
    Script(Box<Script>),
    /// `race`.
    Race(Race),
    /// `expand`.
    Expand(Box<Expand>),
}

impl PhaseKind {
    /// The type of this kind.
    pub fn ty(&self) -> PhaseType {
        match self {
            PhaseKind::Agent(_) => PhaseType::Agent,
            PhaseKind::Parallel(_) => PhaseType::Parallel,
            PhaseKind::Map(_) => PhaseType::Map,
            PhaseKind::Gate(_) => PhaseType::Gate,
            PhaseKind::Reduce(_) => PhaseType::Reduce,
            PhaseKind::Approval(_) => PhaseType::Approval,
            PhaseKind::Flow(_) => PhaseType::Flow,
            PhaseKind::Loop(_) => PhaseType::Loop,
            PhaseKind::Tournament(_) => PhaseType::Tournament,
            PhaseKind::Script(_) => PhaseType::Script,
            PhaseKind::Race(_) => PhaseType::Race,
            PhaseKind::Expand(_) => PhaseType::Expand,
        }
    }

    /// A kind of type `ty` with every default applied.
    pub fn new(ty: PhaseType) -> PhaseKind {
        match ty {
            PhaseType::Agent => PhaseKind::Agent(Agent),
            PhaseType::Parallel => PhaseKind::Parallel(Parallel::DEFAULT),
            PhaseType::Map => PhaseKind::Map(Box::new(Map::DEFAULT)),
            PhaseType::Gate => PhaseKind::Gate(Box::new(Gate::DEFAULT)),
            PhaseType::Reduce => PhaseKind::Reduce(Reduce::DEFAULT),
            PhaseType::Approval => PhaseKind::Approval(Approval::default()),
            PhaseType::Flow => PhaseKind::Flow(Box::new(SubFlow::DEFAULT)),
            PhaseType::Loop => PhaseKind::Loop(Box::new(Loop::DEFAULT)),
            PhaseType::Tournament => PhaseKind::Tournament(Box::new(Tournament::DEFAULT)),
            PhaseType::Script => PhaseKind::Script(Box::new(Script::DEFAULT)),
            PhaseType::Race => PhaseKind::Race(Race::DEFAULT),
            PhaseType::Expand => PhaseKind::Expand(Box::new(Expand::DEFAULT)),
        }
    }
}
