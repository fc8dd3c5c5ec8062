//! What one test run reached, recorded from the machine's own decisions as the test driver
//! sees them go by: the calls it starts (an attempt past the first is a retry), its journal
//! lines (`condition` for `when`, `phase-start`/`phase-end` for joins, `race-won`) and its
//! final record (verdicts, rounds, loop stops, approval decisions, optional failures).

use crate::flow::{Flow, Join, PhaseKind};
use crate::run::{PhaseStatus, RunRecord};
use crate::value::Value;

use super::{Decision, Hit, LoopEnd};

/// The hits of one run, gathered while it runs.
pub(crate) struct Recorder<'a> {
    flow: &'a Flow,
    /// Per phase: satisfied (SPEC §8.2) as of the journal lines seen so far.
    satisfied: Vec<bool>,
    hits: Vec<Hit>,
}

impl<'a> Recorder<'a> {
    /// A recorder for a run of `flow`.
    pub(crate) fn new(flow: &'a Flow) -> Recorder<'a> {
        Recorder {
            flow,
            satisfied: vec![false; flow.phases.len()],
            hits: Vec::new(),
        }
    }

    fn index(&self, id: &str) -> Option<u32> {
        self.flow.index_of(id).map(|i| i as u32)
    }

    /// The machine starts attempt `attempt` (1-based) of a call of phase `phase_id` at node
    /// `node`. Calls inside sub-flows (`sub/inner`) are not the flow's own.
    pub(crate) fn call(&mut self, node: &str, phase_id: &str, attempt: u32) {
        if attempt > 1
            && !node.contains('/')
            && let Some(phase) = self.index(phase_id)
        {
            self.hits.push(Hit::Retried { phase });
        }
    }

    /// A journal event line.
    pub(crate) fn journal(&mut self, v: &Value) {
        let Value::Object(m) = v else { return };
        let text = |k: &str| m.get(k).and_then(Value::as_str);
        let Some(i) = text("phase").and_then(|id| self.index(id)) else {
            return;
        };
        match text("type") {
            Some("condition") if text("field") == Some("when") => {
                if let Some(Value::Bool(value)) = m.get("value") {
                    self.hits.push(Hit::When {
                        phase: i,
                        value: *value,
                    });
                }
            }
            Some("phase-end") => {
                let p = &self.flow.phases[i as usize];
                self.satisfied[i as usize] = match text("status") {
                    Some("done") => true,
                    Some("failed") => p.optional,
                    _ => false,
                };
            }
            Some("phase-start") => {
                let p = &self.flow.phases[i as usize];
                if p.join == Join::Any {
                    for d in &p.deps {
                        if self.satisfied.get(d.index()) == Some(&true) {
                            self.hits.push(Hit::Joined {
                                phase: i,
                                via: d.index() as u32,
                            });
                        }
                    }
                }
            }
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

    /// The run's final record: the rest of the hits; all of them, sorted, each once.
    pub(crate) fn finish(mut self, record: &RunRecord) -> Vec<Hit> {
        for (i, p) in self.flow.phases.iter().enumerate() {
            let Some(r) = record.phases.get(&p.id) else {
                continue;
            };
            let phase = i as u32;
            match &p.kind {
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
            if p.optional && r.status == PhaseStatus::Failed {
                self.hits.push(Hit::OptionalFailed { phase });
            }
        }
        self.hits.sort_unstable();
        self.hits.dedup();
        self.hits
    }
}
