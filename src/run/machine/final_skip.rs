//! The final phase was skipped: say why, and whose output stands in (SPEC §8.9). See
//! [`crate::run::final_skip`].

use super::state::Machine;
use crate::run::final_skip::FinalSkip;
use crate::run::record::PhaseStatus;

const WHEN_FALSE: &str = "Condition not met: ";

impl Machine {
    /// When the final phase `fin` ended skipped: why, following unsatisfied dependencies back
    /// to the phase whose `when` was false (or that failed), and the phase whose output is
    /// the run's (`output_phase`). Call before the records move into the run record.
    pub(super) fn final_skip(&self, fin: usize, output_phase: Option<&str>) -> Option<FinalSkip> {
        if self.recs[fin].status != PhaseStatus::Skipped {
            return None;
        }
        let phases = &self.flow.phases;
        let mut cur = fin;
        let mut hops = 0;
        // Each hop goes to an unsatisfied dependency, which ended before its dependent: the
        // walk cannot loop, and the bound keeps it so on any record.
        while hops < phases.len() {
            let rec = &self.recs[cur];
            let upstream = rec.status == PhaseStatus::Skipped
                && !rec
                    .skip_reason
                    .as_deref()
                    .is_some_and(|r| r.starts_with(WHEN_FALSE));
            let next = upstream
                .then(|| {
                    self.deps[cur]
                        .iter()
                        .copied()
                        .find(|&j| self.unsatisfied(j))
                })
                .flatten();
            match next {
                Some(j) => {
                    cur = j;
                    hops += 1;
                }
                None => break,
            }
        }
        let rec = &self.recs[cur];
        let when = phases[cur].when.as_ref().map(|w| w.as_str()).unwrap_or("");
        let cause = match (rec.status, rec.skip_reason.as_deref()) {
            (PhaseStatus::Failed, _) => "failed".to_owned(),
            (_, Some(r)) if r.starts_with(WHEN_FALSE) => format!("when was false: {when}"),
            (_, r) => r.unwrap_or("skipped").to_owned(),
        };
        let why = match (hops, rec.status) {
            (0, PhaseStatus::Skipped) if cause.starts_with("when") => format!("its {cause}"),
            (0, _) => cause,
            (_, status) => {
                let who = if hops == 1 { "dependency" } else { "ancestor" };
                let id = &phases[cur].id;
                match status {
                    PhaseStatus::Failed => format!("its {who} '{id}' failed"),
                    _ if cause.starts_with("when") => {
                        format!("its {who} '{id}' was skipped, whose {cause}")
                    }
                    _ => format!("its {who} '{id}' was skipped: {cause}"),
                }
            }
        };
        Some(FinalSkip {
            phase: phases[fin].id.clone(),
            why,
            output_phase: output_phase.map(str::to_owned),
        })
    }

    /// Ended without satisfying its dependents: skipped, or failed and not optional.
    fn unsatisfied(&self, j: usize) -> bool {
        match self.recs[j].status {
            PhaseStatus::Skipped => true,
            PhaseStatus::Failed => !self.flow.phases[j].optional,
            _ => false,
        }
    }
}
