//! A run whose final phase was skipped (SPEC §8.9): the run still ends and its output is the
//! last `done` phase's, which is easy to mistake for the final phase's. The machine records
//! why, as one run-level warning (the record's shape stays that of SPEC §11.1), and the CLI
//! reads it back for its stderr line and summary.
//!
//! The warning, after the final phase's id (like every run-level warning):
//! `publish: final phase skipped: its dependency 'review' was skipped, whose when was false:
//! {steps.draft.json.ok} == true; the run's output is that of phase 'draft'`.

use super::record::RunRecord;

/// Why the final phase was skipped and whose output stands in for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FinalSkip {
    /// The final phase.
    pub phase: String,
    /// Why it was skipped: `its when was false: <expr>`, `its dependency 'x' was skipped,
    /// whose when was false: <expr>`, `its ancestor 'y' failed`, or the skip reason itself.
    pub why: String,
    /// The phase whose output is the run's output instead (`None`: no phase finished).
    pub output_phase: Option<String>,
}

const SKIPPED: &str = ": final phase skipped: ";
const OUTPUT: &str = "; the run's output is that of phase '";
const NO_OUTPUT: &str = "; no phase finished, so the run has no output";

impl FinalSkip {
    /// The run-level warning that records it.
    pub fn warning(&self) -> String {
        match &self.output_phase {
            Some(p) => format!("{}{SKIPPED}{}{OUTPUT}{p}'", self.phase, self.why),
            None => format!("{}{SKIPPED}{}{NO_OUTPUT}", self.phase, self.why),
        }
    }

    /// The one recorded in a run's warnings by [`FinalSkip::warning`], if any.
    pub fn of(record: &RunRecord) -> Option<FinalSkip> {
        record.warnings.iter().find_map(|w| parse(w))
    }

    /// The summary's words: `final phase 'publish' skipped (its when was false: …) · output
    /// of 'draft' instead`.
    pub fn summary(&self) -> String {
        match &self.output_phase {
            Some(p) => format!(
                "final phase '{}' skipped ({}) · output of '{p}' instead",
                self.phase, self.why
            ),
            None => format!(
                "final phase '{}' skipped ({}) · no output",
                self.phase, self.why
            ),
        }
    }
}

fn parse(w: &str) -> Option<FinalSkip> {
    let (phase, rest) = w.split_once(SKIPPED)?;
    let (why, output_phase) = match rest.strip_suffix(NO_OUTPUT) {
        Some(why) => (why, None),
        None => {
            let at = rest.rfind(OUTPUT)?;
            let p = rest[at + OUTPUT.len()..].strip_suffix('\'')?;
            (&rest[..at], Some(p.to_owned()))
        }
    };
    Some(FinalSkip {
        phase: phase.to_owned(),
        why: why.to_owned(),
        output_phase,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warning_reads_back() {
        for skip in [
            FinalSkip {
                phase: "publish".into(),
                why: "its when was false: {a} == 'x; y' && ({b})".into(),
                output_phase: Some("draft".into()),
            },
            FinalSkip {
                phase: "p q".into(),
                why: "its dependency 'r' was skipped, whose when was false: x".into(),
                output_phase: None,
            },
        ] {
            assert_eq!(parse(&skip.warning()), Some(skip.clone()));
        }
        assert_eq!(
            FinalSkip {
                phase: "publish".into(),
                why: "its when was false: {ok} == yes".into(),
                output_phase: Some("draft".into()),
            }
            .warning(),
            "publish: final phase skipped: its when was false: {ok} == yes; the run's output is that of phase 'draft'"
        );
        assert_eq!(parse("a: unresolved refs in task: {x}"), None);
    }
}
