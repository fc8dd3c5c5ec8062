//! What one test run reached, recorded from the machine's own decisions as the test driver
//! sees them go by: the calls it starts (an attempt past the first is a retry), its decision
//! lines (`condition` for `when`, `phase-start`/`phase-end` for joins, `race-won`; those of
//! inline defs named by node path) and its final record (verdicts, rounds, loop stops,
//! approval decisions, optional failures; inline defs' in their `subRun`).

use crate::flow::{Flow, Join, PhaseKind};
use crate::run::{PhaseRecord, PhaseStatus, RunRecord};
use crate::value::Value;

use super::{Decision, Hit, Layout, LoopEnd};

/// The hits of one run, gathered while it runs.
pub(crate) struct Recorder<'a> {
    layout: Layout<'a>,
    /// Per phase: satisfied (SPEC §8.2) as of the lines seen so far.
    satisfied: Vec<bool>,
    hits: Vec<Hit>,
}

impl<'a> Recorder<'a> {
    /// A recorder for a run of `flow`.
    pub(crate) fn new(flow: &'a Flow) -> Recorder<'a> {
        let layout = Layout::new(flow);
        Recorder {
            satisfied: vec![false; layout.entries.len()],
            layout,
            hits: Vec::new(),
        }
    }

    /// The machine starts attempt `attempt` (1-based) of a call of phase `phase_id` at node
    /// `node` (`triage`, `review#2`, `fix@3`, `sub/inner`).
    pub(crate) fn call(&mut self, node: &str, phase_id: &str, attempt: u32) {
        if attempt <= 1 {
            return;
        }
        let prefix = node.rfind('/').map_or("", |k| &node[..=k]);
        let rest = &node[prefix.len()..];
        let own = rest
            .strip_prefix(phase_id)
            .is_some_and(|tail| tail.is_empty() || tail.starts_with('#') || tail.starts_with('@'));
        if own && let Some(phase) = self.layout.index(&format!("{prefix}{phase_id}")) {
            self.hits.push(Hit::Retried { phase });
        }
    }

    /// A journal event line.
    pub(crate) fn journal(&mut self, v: &Value) {
        let Value::Object(m) = v else { return };
        let text = |k: &str| m.get(k).and_then(Value::as_str);
        let Some(i) = text("phase").and_then(|path| self.layout.index(path)) else {
            return;
        };
        let e = &self.layout.entries[i as usize];
        match text("type") {
            Some("condition") if text("field") == Some("when") => {
                if let Some(Value::Bool(value)) = m.get("value") {
                    self.hits.push(Hit::When {
                        phase: i,
                        value: *value,
                    });
                }
                // Its join held, whatever the condition says.
                self.joined(i);
            }
            Some("phase-end") => {
                self.satisfied[i as usize] = match text("status") {
                    Some("done") => true,
                    Some("failed") => e.phase.optional,
                    _ => false,
                };
            }
            Some("phase-start") => self.joined(i),
            Some("race-won") => {
                if let Some(Value::Number(b)) = m.get("branch")
                    && *b >= 0.0
                {
                    self.hits.push(Hit::Won {
                        phase: i,
                        branch: *b as u32,
                    });
                }
            }
            _ => {}
        }
    }

    /// Phase `i` is being started (its join held): a `join:"any"` phase was reached by each
    /// dependency satisfied now.
    fn joined(&mut self, i: u32) {
        let e = &self.layout.entries[i as usize];
        if e.phase.join != Join::Any {
            return;
        }
        for d in &e.phase.deps {
            let via = e.base + d.index() as u32;
            if self.satisfied.get(via as usize) == Some(&true) {
                self.hits.push(Hit::Joined { phase: i, via });
            }
        }
    }

    /// The run's final record: the rest of the hits; all of them, sorted, each once.
    pub(crate) fn finish(mut self, record: &RunRecord) -> Vec<Hit> {
        for (i, e) in self.layout.entries.iter().enumerate() {
            let Some(r) = find(record, &e.path) else {
                continue;
            };
            let phase = i as u32;
            match &e.phase.kind {
                PhaseKind::Gate(_) => {
                    if let Some(g) = &r.gate {
                        let rounds = g.rounds.unwrap_or(0);
                        if g.verdict == "pass" {
                            self.hits.push(Hit::Gate { phase, pass: true });
                        }
                        // A block that was reworked was a block all the same.
                        if g.verdict == "block" || rounds > 0 {
                            self.hits.push(Hit::Gate { phase, pass: false });
                        }
                        self.hits
                            .extend((1..=rounds).map(|round| Hit::Round { phase, round }));
                    }
                }
                PhaseKind::Loop(_) => {
                    let end = match r.loop_info.as_ref().map(|l| l.stop) {
                        Some("until") => Some(LoopEnd::Until),
                        Some("max") => Some(LoopEnd::Max),
                        _ => None,
                    };
                    if let Some(end) = end {
                        self.hits.push(Hit::Loop { phase, end });
                    }
                }
                PhaseKind::Approval(_) => {
                    let decision = match r.approval.as_ref().map(|a| a.decision) {
                        Some("approve" | "edit") => Some(Decision::Approved),
                        Some("reject") => Some(Decision::Rejected),
                        Some("pending") => Some(Decision::Pending),
                        _ => None,
                    };
                    if let Some(decision) = decision {
                        self.hits.push(Hit::Approval { phase, decision });
                    }
                }
                _ => {}
            }
            if e.phase.optional && r.status == PhaseStatus::Failed {
                self.hits.push(Hit::OptionalFailed { phase });
            }
        }
        self.hits.sort_unstable();
        self.hits.dedup();
        self.hits
    }
}

/// The record of the phase at node path `path` (`sub/inner`: in `sub`'s `subRun`).
fn find<'r>(record: &'r RunRecord, path: &str) -> Option<&'r PhaseRecord> {
    let mut parts = path.split('/');
    let mut r = record.phases.get(parts.next()?)?;
    for part in parts {
        r = r.sub_run.as_ref()?.phases.get(part)?;
    }
    Some(r)
}
