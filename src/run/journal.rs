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

/// [`inputs`] that never fails on what a crash leaves: a last line cut short (no newline, or
/// not valid JSON) is ignored with a warning; a bad line elsewhere is skipped with one too.
pub fn inputs_lenient(journal: &str) -> (Vec<Input>, Vec<String>) {
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    let total = journal.lines().count();
    let torn_tail = !journal.is_empty() && !journal.ends_with('\n');
    for (n, line) in journal.lines().enumerate() {
        let last = n + 1 == total;
        if !line.starts_with("{\"type\":\"input\"") {
            if last && torn_tail {
                warnings.push(format!(
                    "journal line {} is incomplete (the run stopped while writing it); ignored",
                    n + 1
                ));
            }
            continue;
        }
        let parsed = serde_json::from_str::<serde_json::Value>(line)
            .ok()
            .and_then(|v| v.get("input").cloned())
            .and_then(|i| serde_json::from_value::<Input>(i).ok());
        match parsed {
            Some(i) => out.push(i),
            None if last => warnings.push(format!(
                "journal line {} is incomplete (the run stopped while writing it); ignored",
                n + 1
            )),
            None => warnings.push(format!("journal line {} could not be read; skipped", n + 1)),
        }
    }
    (out, warnings)
}

/// The `run-start` line's object.
fn run_start(journal: &str) -> Option<crate::value::Value> {
    let first = journal.lines().next()?;
    let v = crate::json::parse(first).root?.to_value();
    match &v {
        crate::value::Value::Object(m)
            if m.get("type").and_then(crate::value::Value::as_str) == Some("run-start") =>
        {
            Some(v)
        }
        _ => None,
    }
}

/// The machine configuration the `run-start` line keeps (journals written before it was
/// kept have none).
pub fn start_config(journal: &str) -> Option<Config> {
    match &run_start(journal)? {
        crate::value::Value::Object(m) => Config::from_value(m.get("config")?),
        _ => None,
    }
}

/// The effective arguments of the `run-start` line.
pub fn start_args(journal: &str) -> Option<Map> {
    match &run_start(journal)? {
        crate::value::Value::Object(m) => match m.get("args")? {
            crate::value::Value::Object(a) => Some(a.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// The finished map items a journal records (`item-end` lines): node → (key, output). A
/// torn line is skipped.
pub fn item_ends(journal: &str) -> indexmap::IndexMap<String, (String, String)> {
    item_ends_in(journal.as_bytes())
}

/// [`item_ends`] of a journal's bytes: only the `item-end` lines are looked at (found by
/// their start, so a journal of other lines is not read line by line); a line that is not
/// UTF-8 is skipped as a torn one is.
pub fn item_ends_in(journal: &[u8]) -> indexmap::IndexMap<String, (String, String)> {
    const START: &[u8] = b"{\"type\":\"item-end\"";
    let mut out = indexmap::IndexMap::new();
    let at_line_start = journal.starts_with(START).then_some(0);
    let after_newline =
        memchr::memmem::find_iter(journal, b"\n{\"type\":\"item-end\"").map(|i| i + 1);
    for start in at_line_start.into_iter().chain(after_newline) {
        let rest = &journal[start..];
        let line = &rest[..memchr::memchr(b'\n', rest).unwrap_or(rest.len())];
        // As `str::lines` gives it: without a `\r` before the newline.
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) else {
            continue;
        };
        let (Some(node), Some(key), Some(output)) = (
            v.get("node").and_then(|x| x.as_str()),
            v.get("inputHash").and_then(|x| x.as_str()),
            v.get("output").and_then(|x| x.as_str()),
        ) else {
            continue;
        };
        out.insert(node.to_owned(), (key.to_owned(), output.to_owned()));
    }
    out
}

#[cfg(test)]
mod lenient_tests {
    use super::*;

    #[test]
    fn a_torn_last_line_is_a_warning() {
        let good = r#"{"type":"input","ts":"x","input":{"at":5,"what":{"kind":"start"}}}"#;
        let text = format!("{good}\n{good}\n{{\"type\":\"input\",\"ts\":\"x\",\"inp");
        let (inputs, warnings) = inputs_lenient(&text);
        assert_eq!(inputs.len(), 2);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("line 3 is incomplete"), "{warnings:?}");
        // A torn event line too.
        let (inputs, warnings) = inputs_lenient(&format!("{good}\n{{\"type\":\"phase-e"));
        assert_eq!((inputs.len(), warnings.len()), (1, 1));
        // A complete journal: no warning.
        let (inputs, warnings) = inputs_lenient(&format!("{good}\n"));
        assert_eq!((inputs.len(), warnings.len()), (1, 0));
    }

    #[test]
    fn item_ends_are_found_by_their_lines_start() {
        let end = |node: &str, out: &str| {
            format!(
                r#"{{"type":"item-end","node":"{node}","inputHash":"k{node}","output":"{out}"}}"#
            )
        };
        let text = format!(
            "{}\n{good}\r\n{}\r\n{{\"type\":\"phase-end\",\"x\":{}}}\n{}\n{}",
            end("m#0", "a"),
            end("m#1", "b"),
            serde_json::to_string(&end("m#9", "hidden")).expect("json"),
            end("m#0", "again"),
            &end("m#2", "torn")[..20],
            good = r#"{"type":"input","ts":"x","input":{"at":5,"what":{"kind":"start"}}}"#,
        );
        let items = item_ends(&text);
        let got: Vec<(&str, &str)> = items
            .iter()
            .map(|(k, (_, o))| (k.as_str(), o.as_str()))
            .collect();
        assert_eq!(got, vec![("m#0", "again"), ("m#1", "b")]);
        assert_eq!(items["m#1"].0, "km#1");
    }
}
