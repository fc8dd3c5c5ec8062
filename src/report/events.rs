//! What the HTML report needs from a run's journal (SPEC §10.3): each agent call (its prompt,
//! attempt, end time and duration) filed under the phase that made it, and the phases' start and
//! end times for a record that has not caught up yet (a live or killed run).

use std::collections::HashMap;

use indexmap::IndexMap;

use crate::run::runs::parse_timestamp;
use crate::value::{Value, parse_json};

/// One `agent-call` event.
#[derive(Clone, Debug, Default)]
pub struct Call {
    /// The call's node (`phase`, `map#3`, …).
    pub node: String,
    /// 1-based attempt.
    pub attempt: u64,
    /// The prompt, when the journal kept it.
    pub prompt: Option<String>,
    /// Whether the call succeeded.
    pub ok: bool,
    /// Its error, if it failed.
    pub error: Option<String>,
    /// When it ended (epoch ms).
    pub end_ms: Option<u64>,
    /// How long it took.
    pub duration_ms: Option<f64>,
    /// `backend/model` as recorded.
    pub backend: String,
}

impl Call {
    /// Start and end, when both are known.
    pub fn span(&self) -> Option<(u64, u64)> {
        let end = self.end_ms?;
        let d = self.duration_ms.filter(|d| d.is_finite() && *d >= 0.0)?;
        Some((end.saturating_sub(d as u64), end))
    }
}

/// The journal, read for the report.
#[derive(Debug, Default)]
pub struct Events {
    /// Agent calls by phase key, in journal order.
    pub calls: IndexMap<String, Vec<Call>>,
    /// `phase-start` / `phase-end` times (epoch ms) by phase.
    pub times: HashMap<String, (Option<u64>, Option<u64>)>,
    /// Lines that are not JSON objects (a torn last line after a crash).
    pub unreadable: usize,
}

/// Read `journal`, filing each call under the phase `is_phase` recognises: the node itself, or
/// the node with its `#item`/`/child`/`:part` suffixes taken off one by one.
pub fn read(journal: &str, is_phase: &dyn Fn(&str) -> bool) -> Events {
    let mut ev = Events::default();
    for line in journal.lines() {
        if line.trim().is_empty() {
            continue;
        }
        // Machine inputs are the bulk of a journal and carry nothing the report shows.
        if line.starts_with("{\"type\":\"input\"") {
            continue;
        }
        let Some(o) = parse_json(line).ok().and_then(Value::into_object) else {
            ev.unreadable += 1;
            continue;
        };
        let s = |k: &str| o.get(k).and_then(Value::as_str);
        let ts = s("ts").and_then(parse_timestamp);
        match s("type") {
            Some("agent-call") => {
                let node = s("node").unwrap_or("").to_owned();
                let key = phase_of(&node, is_phase);
                let backend = match (s("backend"), s("model")) {
                    (Some(b), Some(m)) => format!("{b}/{m}"),
                    (Some(b), None) => b.to_owned(),
                    _ => String::new(),
                };
                let call = Call {
                    attempt: match o.get("attempt") {
                        Some(Value::Number(n)) if *n >= 0.0 => *n as u64,
                        _ => 1,
                    },
                    prompt: s("prompt").map(str::to_owned),
                    ok: matches!(o.get("ok"), Some(Value::Bool(true))),
                    error: s("error").map(str::to_owned),
                    end_ms: ts,
                    duration_ms: match o.get("durationMs") {
                        Some(Value::Number(n)) => Some(*n),
                        _ => None,
                    },
                    backend,
                    node,
                };
                ev.calls.entry(key).or_default().push(call);
            }
            Some("phase-start") => {
                if let Some(p) = s("phase") {
                    ev.times.entry(p.to_owned()).or_default().0 = ts;
                }
            }
            Some("phase-end") => {
                if let Some(p) = s("phase") {
                    ev.times.entry(p.to_owned()).or_default().1 = ts;
                }
            }
            _ => {}
        }
    }
    ev
}

/// The phase a call node belongs to.
fn phase_of(node: &str, is_phase: &dyn Fn(&str) -> bool) -> String {
    let mut n = node;
    loop {
        if is_phase(n) {
            return n.to_owned();
        }
        match n.rfind(['#', '/', ':']) {
            Some(k) if k > 0 => n = &n[..k],
            _ => return node.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_filed_under_their_phase() {
        let j = concat!(
            r#"{"type":"run-start","ts":"2026-12-01T10:00:00.000Z","runId":"r"}"#,
            "\n",
            r#"{"type":"phase-start","ts":"2026-12-01T10:00:00.010Z","phase":"m#x"}"#,
            "\n",
            r#"{"type":"input","ts":"2026-12-01T10:00:00.010Z","input":{}}"#,
            "\n",
            r#"{"type":"agent-call","ts":"2026-12-01T10:00:01.000Z","node":"m#x#2","agent":"a","attempt":2,"ok":false,"error":"boom","durationMs":250,"prompt":"P","backend":"replay","model":null}"#,
            "\n",
            r#"{"type":"agent-call","ts":"2026-12-01T10:00:02.000Z","node":"other","agent":"a","ok":true}"#,
            "\n",
            r#"{"type":"phase-end","ts":"2026-12-01T10:00:03.000Z","phase":"m#x","status":"done"}"#,
            "\n",
            r#"{"type":"phase-end","ts":"#,
        );
        let ev = read(j, &|p| p == "m#x");
        assert_eq!(ev.calls.values().map(Vec::len).sum::<usize>(), 2);
        assert_eq!(ev.unreadable, 1);
        let c = &ev.calls["m#x"][0];
        assert_eq!(
            (c.attempt, c.ok, c.prompt.as_deref()),
            (2, false, Some("P"))
        );
        assert_eq!(c.error.as_deref(), Some("boom"));
        assert_eq!(c.backend, "replay");
        let end = parse_timestamp("2026-12-01T10:00:01.000Z").expect("ts");
        assert_eq!(c.span(), Some((end - 250, end)));
        assert!(ev.calls["other"][0].span().is_none());
        let (s, e) = ev.times["m#x"];
        assert_eq!(e.zip(s).map(|(e, s)| e - s), Some(2990));
    }
}
