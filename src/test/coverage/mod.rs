//! `tfc test --coverage` (SPEC §17 "Coverage"): which of a flow's outcomes its tests reached.
//!
//! The outcomes are enumerated from the flow alone ([`outcomes`]): each `when` true and false,
//! each gate PASS and BLOCK and each `onBlock` round, each loop ending by `until` and by
//! `maxIterations`, each declared retry used, each `join:"any"` phase reached by each of its
//! dependencies, each race won by each branch, each approval approved, rejected and pending,
//! each optional phase failing. What a test reached is recorded from the run machine's own
//! decisions — its journal lines and its final record ([`Recorder`]) — as a short list of
//! [`Hit`]s on the test's report; nothing is evaluated again. `tally.rs` merges the hits of
//! every test of a flow into the report (a table, JSON, a diagnostic per unreached outcome).
//!
//! Left out: the phases inside sub-flows (`use` and `def`, inline objects included) and the
//! phases an `expand` generates. A sub-flow runs in a machine of its own that keeps no
//! journal, so its `when`s, joins and races leave no decision to record; its `flow` phase's
//! own outcomes (its `when`, `optional`) are covered like any phase's.

mod record;
mod tally;

pub(crate) use record::Recorder;
pub use tally::{Coverage, Row, json_lines, tally, text};

use crate::flow::{Flow, Join, OnBlock, Phase, PhaseKind};
use crate::source::Span;

/// What an approval was decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Decision {
    /// `approve` (or `edit`: approved with a note).
    Approved,
    /// `reject`.
    Rejected,
    /// Undecided: the run paused.
    Pending,
}

/// How a loop ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LoopEnd {
    /// Its `until` held.
    Until,
    /// It made `maxIterations` iterations.
    Max,
}

/// One outcome a run reached, at phase `phase` (an index into the flow's phases): the
/// compact form a test's report keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Hit {
    /// Its `when` was evaluated to `value`.
    When {
        /// The phase.
        phase: u32,
        /// The condition's value.
        value: bool,
    },
    /// The gate's verdict was PASS (`pass`) or BLOCK.
    Gate {
        /// The phase.
        phase: u32,
        /// PASS.
        pass: bool,
    },
    /// The gate made `onBlock` rework round `round` (1-based).
    Round {
        /// The phase.
        phase: u32,
        /// The round.
        round: u32,
    },
    /// The loop ended so.
    Loop {
        /// The phase.
        phase: u32,
        /// How.
        end: LoopEnd,
    },
    /// An agent call of the phase was retried at least once.
    Retried {
        /// The phase.
        phase: u32,
    },
    /// The `join:"any"` phase started with dependency `via` satisfied.
    Joined {
        /// The phase.
        phase: u32,
        /// The dependency (a phase index).
        via: u32,
    },
    /// The race was won by branch `branch` (0-based).
    Won {
        /// The phase.
        phase: u32,
        /// The branch.
        branch: u32,
    },
    /// The approval was decided so (or stayed pending).
    Approval {
        /// The phase.
        phase: u32,
        /// The decision.
        decision: Decision,
    },
    /// The optional phase failed.
    OptionalFailed {
        /// The phase.
        phase: u32,
    },
}

/// The kinds of outcome, as the JSON report names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `when` true / false.
    When,
    /// A gate's PASS / BLOCK.
    Gate,
    /// A gate's `onBlock` rework round.
    OnBlock,
    /// A loop's ending.
    Loop,
    /// A retry used.
    Retry,
    /// A `join:"any"` reached by a dependency.
    Join,
    /// A race's winner.
    Race,
    /// An approval's decision.
    Approval,
    /// An optional phase failing.
    Optional,
}

impl Kind {
    /// Its name: `when`, `gate`, `onBlock`, `loop`, `retry`, `join`, `race`, `approval`,
    /// `optional`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::When => "when",
            Kind::Gate => "gate",
            Kind::OnBlock => "onBlock",
            Kind::Loop => "loop",
            Kind::Retry => "retry",
            Kind::Join => "join",
            Kind::Race => "race",
            Kind::Approval => "approval",
            Kind::Optional => "optional",
        }
    }
}

impl Hit {
    /// Its kind.
    pub fn kind(self) -> Kind {
        match self {
            Hit::When { .. } => Kind::When,
            Hit::Gate { .. } => Kind::Gate,
            Hit::Round { .. } => Kind::OnBlock,
            Hit::Loop { .. } => Kind::Loop,
            Hit::Retried { .. } => Kind::Retry,
            Hit::Joined { .. } => Kind::Join,
            Hit::Won { .. } => Kind::Race,
            Hit::Approval { .. } => Kind::Approval,
            Hit::OptionalFailed { .. } => Kind::Optional,
        }
    }
}

/// One outcome of a flow that a test may reach.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// What reaching it looks like on a test's report.
    pub hit: Hit,
    /// The phase's id.
    pub phase: String,
    /// A stable id: `<phase>.<kind>.<which>` (`deep.when.true`, `pick.race.1`).
    pub id: String,
    /// What it is, for people: `when true`, `gate BLOCK`, `race won by branch 1`.
    pub label: String,
    /// Where it is in the flow file: the field that makes it (`when`, `onBlock`, `until`,
    /// `retry`, the `dependsOn` entry, the branch, `optional`), else the phase's id.
    pub span: Span,
}

impl Point {
    /// Its kind.
    pub fn kind(&self) -> Kind {
        self.hit.kind()
    }
}

/// Most `onBlock` rounds listed (a larger `retry.max` lists the first this many).
const MAX_ROUNDS: u32 = 20;

/// Every outcome of `flow`'s own phases, in phase order (within a phase: `when`, then the
/// kind's outcomes, then retry, join, optional).
pub fn outcomes(flow: &Flow) -> Vec<Point> {
    let mut out = Vec::new();
    for (i, p) in flow.phases.iter().enumerate() {
        let i = i as u32;
        let mut add = |hit: Hit, which: &str, label: String, span: Span| {
            out.push(Point {
                hit,
                phase: p.id.clone(),
                id: format!("{}.{}.{which}", p.id, hit.kind().as_str()),
                label,
                span,
            });
        };
        let at = |key: &str| p.written.get(key).copied().unwrap_or(p.id_span);
        if p.when.is_some() {
            for value in [true, false] {
                add(
                    Hit::When { phase: i, value },
                    if value { "true" } else { "false" },
                    format!("when {value}"),
                    at("when"),
                );
            }
        }
        match &p.kind {
            PhaseKind::Gate(g) => {
                for pass in [true, false] {
                    let word = if pass { "PASS" } else { "BLOCK" };
                    add(
                        Hit::Gate { phase: i, pass },
                        &word.to_ascii_lowercase(),
                        format!("gate {word}"),
                        p.id_span,
                    );
                }
                if g.on_block == OnBlock::Retry {
                    for round in 1..=rounds(p) {
                        add(
                            Hit::Round { phase: i, round },
                            &round.to_string(),
                            format!("onBlock round {round}"),
                            at("onBlock"),
                        );
                    }
                }
            }
            PhaseKind::Loop(_) => {
                add(
                    Hit::Loop {
                        phase: i,
                        end: LoopEnd::Until,
                    },
                    "until",
                    "loop ends by until".into(),
                    at("until"),
                );
                add(
                    Hit::Loop {
                        phase: i,
                        end: LoopEnd::Max,
                    },
                    "maxIterations",
                    "loop ends by maxIterations".into(),
                    at("maxIterations"),
                );
            }
            PhaseKind::Race(r) => {
                for (b, branch) in r.branches.iter().enumerate() {
                    add(
                        Hit::Won {
                            phase: i,
                            branch: b as u32,
                        },
                        &b.to_string(),
                        format!("race won by branch {b}"),
                        branch.span,
                    );
                }
            }
            PhaseKind::Approval(_) => {
                for (decision, word) in [
                    (Decision::Approved, "approved"),
                    (Decision::Rejected, "rejected"),
                    (Decision::Pending, "pending"),
                ] {
                    add(
                        Hit::Approval { phase: i, decision },
                        word,
                        format!("approval {word}"),
                        p.id_span,
                    );
                }
            }
            _ => {}
        }
        if retries(p) {
            add(
                Hit::Retried { phase: i },
                "used",
                "retried at least once".into(),
                at("retry"),
            );
        }
        if p.join == Join::Any {
            for dep in &p.deps {
                let Some(d) = flow.phases.get(dep.index()) else {
                    continue;
                };
                let span = p
                    .depends_on
                    .iter()
                    .chain(&p.from)
                    .find(|f| f.value == d.id)
                    .map_or_else(|| at("join"), |f| f.span);
                add(
                    Hit::Joined {
                        phase: i,
                        via: dep.index() as u32,
                    },
                    &d.id,
                    format!("join any reached by {}", d.id),
                    span,
                );
            }
        }
        if p.optional {
            add(
                Hit::OptionalFailed { phase: i },
                "failed",
                "optional phase fails".into(),
                at("optional"),
            );
        }
    }
    out
}

/// The `onBlock` rounds a gate may make: `retry.max` (default 1; SPEC §3.5: while
/// `round < max`), at most [`MAX_ROUNDS`].
fn rounds(p: &Phase) -> u32 {
    let max = p.retry.as_ref().map_or(1.0, |r| r.value.max);
    if max.is_nan() || max <= 0.0 {
        return 0;
    }
    max.ceil().min(MAX_ROUNDS as f64) as u32
}

/// Does the phase declare retries of its agent calls (`retry.max` ≥ 1 on a kind that calls
/// agents)? The transient layer every call has (SPEC §8.4) is not an outcome of the flow.
fn retries(p: &Phase) -> bool {
    let calls = !matches!(
        p.kind,
        PhaseKind::Approval(_) | PhaseKind::Script(_) | PhaseKind::Flow(_)
    );
    calls && p.retry.as_ref().is_some_and(|r| r.value.max >= 1.0)
}

#[cfg(test)]
mod tests;
