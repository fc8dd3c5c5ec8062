//! The journal as a record of the machine's inputs: every input is one line
//! (`{"type":"input","ts":…,"input":{…}}`) among the event lines, and feeding those inputs,
//! in order, into a fresh [`Machine`] built from the same flow, arguments and [`Config`]
//! reproduces the run's record exactly (SPEC §14.1).

use std::sync::Arc;

use super::machine::{Command, Config, Input, Machine};
use super::record::RunRecord;
use crate::flow::Flow;
use crate::value::Map;

/// Everything needed to replay a run: what the machine was built from, and its inputs.
#[derive(Clone)]
pub struct Recorded {
    /// The flow.
    pub flow: Arc<Flow>,
    /// The effective arguments.
    pub args: Map,
    /// The machine's configuration.
    pub config: Config,
    /// Every input, in order.
    pub inputs: Vec<Input>,
}

/// Feed `inputs` into a fresh machine; the record it finishes with (`None` when the inputs
/// do not take the run to its end).
pub fn replay(flow: Arc<Flow>, args: Map, config: Config, inputs: &[Input]) -> Option<RunRecord> {
    let mut m = Machine::new(flow, args, config);
    let mut out = Vec::new();
    for input in inputs {
        m.handle_into(input.clone(), &mut out);
        for c in out.drain(..) {
            if let Command::Finish(record) = c {
                return Some(*record);
            }
        }
    }
    None
}

/// [`replay`] of a [`Recorded`] run.
pub fn replay_recorded(r: &Recorded) -> Option<RunRecord> {
    replay(r.flow.clone(), r.args.clone(), r.config.clone(), &r.inputs)
}

/// The inputs in a journal's text (`journal.jsonl`), in order; other lines are skipped.
pub fn inputs(journal: &str) -> Result<Vec<Input>, String> {
    let mut out = Vec::new();
    for (n, line) in journal.lines().enumerate() {
        if !line.starts_with("{\"type\":\"input\"") {
            continue;
        }
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("line {}: {e}", n + 1))?;
        let input = v
            .get("input")
            .cloned()
            .ok_or_else(|| format!("line {}: no input", n + 1))?;
        out.push(serde_json::from_value(input).map_err(|e| format!("line {}: {e}", n + 1))?);
    }
    Ok(out)
}
