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
//! The phases of inline object `def`s count as the flow's own (`sub/inner.when.true`): their
//! machine passes its decision lines up, named by node path. Left out: the phases of saved
//! flows (`use`) and of string `def`s, and those an `expand` generates — what they are is
//! known only at run time (their `flow` phase's own outcomes, its `when` or `optional`, count).

mod record;
mod tally;

pub(crate) use record::Recorder;
pub use tally::{Coverage, Row, json_lines, tally, text};

use crate::flow::{Def, Flow, Join, OnBlock, Phase, PhaseKind};
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

/// One outcome a run reached, at phase `phase` (an index into the flow's phases, then its
/// inline defs' phases: see `Layout`): the compact form a test's report keeps.
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
    /// The `join:"any"` phase's join held (it was started, its `when` evaluated) with
    /// dependency `via` satisfied.
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
    /// The phase's node path: its id, `sub/inner` inside an inline def.
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

/// Inline defs deeper than this are not counted (a run stops nesting at 5).
const MAX_DEPTH: usize = 5;

/// The phases coverage counts, each with an index: the flow's own first (index = its index
/// in the flow), then the phases of its inline object `def`s, each flow's phases in one
/// block (so a phase's dependency `d` is `base + d`).
pub(crate) struct Layout<'a> {
    /// By index.
    pub(crate) entries: Vec<Entry<'a>>,
    /// Node path → index.
    paths: std::collections::HashMap<String, u32>,
}

/// One phase of a [`Layout`].
pub(crate) struct Entry<'a> {
    /// Its node path: `triage`, `sub/inner`.
    pub(crate) path: String,
    /// The phase.
    pub(crate) phase: &'a Phase,
    /// The index of its flow's first phase.
    pub(crate) base: u32,
    /// A flow phase with an inline object `def`: the index of the child's first phase.
    pub(crate) child: Option<u32>,
}

impl<'a> Layout<'a> {
    /// The layout of `flow` and its inline defs.
    pub(crate) fn new(flow: &'a Flow) -> Layout<'a> {
        let mut l = Layout {
            entries: Vec::with_capacity(flow.phases.len()),
            paths: Default::default(),
        };
        l.add(flow, "", 0);
        l.paths = l
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.path.clone(), i as u32))
            .collect();
        l
    }

    fn add(&mut self, flow: &'a Flow, prefix: &str, depth: usize) -> u32 {
        let base = self.entries.len() as u32;
        self.entries.extend(flow.phases.iter().map(|p| Entry {
            path: format!("{prefix}{}", p.id),
            phase: p,
            base,
            child: None,
        }));
        if depth >= MAX_DEPTH {
            return base;
        }
        for (k, p) in flow.phases.iter().enumerate() {
            if let PhaseKind::Flow(f) = &p.kind
                && let Some(def) = &f.def
                && let Def::Inline(child) = &def.value
            {
                let at = self.add(child, &format!("{prefix}{}/", p.id), depth + 1);
                self.entries[base as usize + k].child = Some(at);
            }
        }
        base
    }

    /// The index of the phase at node path `path`.
    pub(crate) fn index(&self, path: &str) -> Option<u32> {
        self.paths.get(path).copied()
    }
}

/// Every outcome of `flow`'s phases and of its inline object defs' (each right after its
/// flow phase's), in flow order (within a phase: `when`, then the kind's outcomes, then
/// retry, join, optional).
pub fn outcomes(flow: &Flow) -> Vec<Point> {
    let layout = Layout::new(flow);
    let mut out = Vec::new();
    let top = flow.phases.len() as u32;
    add_block(&layout, 0, top, &mut out);
    out
}

/// The outcomes of the phases `from..to` of `layout` (one flow's block), depth first.
fn add_block(layout: &Layout<'_>, from: u32, to: u32, out: &mut Vec<Point>) {
    for i in from..to {
        let e = &layout.entries[i as usize];
        phase_outcomes(layout, i, out);
        if let Some(c) = e.child {
            let n = match &e.phase.kind {
                PhaseKind::Flow(f) => match f.def.as_ref().map(|d| &d.value) {
                    Some(Def::Inline(child)) => child.phases.len() as u32,
                    _ => 0,
                },
                _ => 0,
            };
            add_block(layout, c, c + n, out);
        }
    }
}

/// The outcomes of phase `i` of `layout`.
fn phase_outcomes(layout: &Layout<'_>, i: u32, out: &mut Vec<Point>) {
    let e = &layout.entries[i as usize];
    let p = e.phase;
    let mut add = |hit: Hit, which: &str, label: String, span: Span| {
        out.push(Point {
            hit,
            phase: e.path.clone(),
            id: format!("{}.{}.{which}", e.path, hit.kind().as_str()),
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
            let Some(d) = layout.entries.get(e.base as usize + dep.index()) else {
                continue;
            };
            let span = p
                .depends_on
                .iter()
                .chain(&p.from)
                .find(|f| f.value == d.phase.id)
                .map_or_else(|| at("join"), |f| f.span);
            add(
                Hit::Joined {
                    phase: i,
                    via: e.base + dep.index() as u32,
                },
                &d.phase.id,
                format!("join any reached by {}", d.phase.id),
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
