//! What a run's summaries count, defined once: the calls of a run or a phase, and how a
//! fan-out's items ended. The end line of `tfc run`, the live view, `tfc runs`, `tfc show`
//! and the HTML report all count through here, so they never disagree.
//!
//! **Calls are agent calls**: every request sent to an agent backend, retries included (a
//! phase record's `attempts`). A script phase's run of its command is not one, although its
//! record says `attempts: 1` (SPEC §11.1): a call is what a model answers, what tokens and
//! cost are counted for, and what a replay fixture holds one line of. Reused and cached
//! phases made none. The function reads a phase's type and attempts as the record spells
//! them, so typed records and `run.json` files count the same.
//!
//! **A sub-flow's calls are its flow phase's**: a `flow` (or `expand`) phase records 0
//! attempts of its own (SPEC §11.1), and the calls its child run made are counted from the
//! child's record (`subRun`), at any depth — unless the phase was reused (`cacheHit`): its
//! sub-run's calls were an earlier run's, as its zeroed usage says.

/// The agent calls a phase's record stands for: its `attempts`, except for a `script` phase
/// (whose one run is no agent call). `ty` is the record's `type` (`""` when an old record has
/// none: counted as calls).
pub fn phase_calls(ty: &str, attempts: u64) -> u64 {
    if ty == "script" { 0 } else { attempts }
}

/// A run record as JSON, whichever JSON value holds it (`run.json` read by the CLI, by the
/// HTML report or by the MCP server): what [`record_calls`] reads of it.
pub trait RecordValue {
    /// Member `key` of an object (`None` for anything else).
    fn member(&self, key: &str) -> Option<&Self>;
    /// The string, if it is one.
    fn text(&self) -> Option<&str>;
    /// The number, if it is one.
    fn number(&self) -> Option<f64>;
    /// The members' values of an object, in order (none for anything else).
    fn values(&self) -> Vec<&Self>;
}

impl RecordValue for crate::value::Value {
    fn member(&self, key: &str) -> Option<&Self> {
        self.as_object()?.get(key)
    }
    fn text(&self) -> Option<&str> {
        self.as_str()
    }
    fn number(&self) -> Option<f64> {
        match self {
            crate::value::Value::Number(n) => Some(*n),
            _ => None,
        }
    }
    fn values(&self) -> Vec<&Self> {
        self.as_object()
            .map_or_else(Vec::new, |o| o.values().collect())
    }
}

impl RecordValue for serde_json::Value {
    fn member(&self, key: &str) -> Option<&Self> {
        self.as_object()?.get(key)
    }
    fn text(&self) -> Option<&str> {
        self.as_str()
    }
    fn number(&self) -> Option<f64> {
        self.as_f64()
    }
    fn values(&self) -> Vec<&Self> {
        self.as_object()
            .map_or_else(Vec::new, |o| o.values().collect())
    }
}

/// The agent calls a phase's record (as JSON) stands for: [`phase_calls`] of its `type` and
/// `attempts`, plus the calls of its sub-run (`subRun`, at any depth) when it was not reused.
pub fn phase_record_calls<V: RecordValue>(phase: &V) -> u64 {
    let mut total = own_calls(phase);
    let mut runs: Vec<&V> = sub_run(phase).into_iter().collect();
    // A list, not recursion: a record may nest sub-runs deeply.
    while let Some(run) = runs.pop() {
        for p in run.member("phases").map(V::values).unwrap_or_default() {
            total += own_calls(p);
            runs.extend(sub_run(p));
        }
    }
    total
}

/// The agent calls of a run record (as JSON): [`phase_record_calls`] summed over its
/// `phases` — what every summary of a run shows.
pub fn record_calls<V: RecordValue>(run: &V) -> u64 {
    run.member("phases")
        .map(V::values)
        .unwrap_or_default()
        .into_iter()
        .map(phase_record_calls)
        .sum()
}

/// [`phase_calls`] of a phase record as JSON (`attempts` absent or not a count: 0).
fn own_calls<V: RecordValue>(phase: &V) -> u64 {
    let ty = phase.member("type").and_then(V::text).unwrap_or("");
    let attempts = phase.member("attempts").and_then(V::number).unwrap_or(0.0);
    phase_calls(ty, attempts.max(0.0) as u64)
}

/// The sub-run whose calls a phase record (as JSON) counts: none when it was reused.
fn sub_run<V: RecordValue>(phase: &V) -> Option<&V> {
    let reused = phase.member("cacheHit").is_some_and(|h| h.text().is_some());
    if reused {
        return None;
    }
    phase
        .member("subRun")
        .filter(|r| r.member("phases").is_some())
}

/// `N call` / `N calls`.
pub fn calls_text(n: u64) -> String {
    format!("{n} call{}", if n == 1 { "" } else { "s" })
}

/// The error of an item stopped by an interrupt (Ctrl-C, `tfc cancel`, a lost race).
pub const ABORTED: &str = "Aborted";

/// How the items of a fan-out (`map`, `parallel`, `tournament`, `race`) ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ItemTally {
    /// Every item.
    pub total: usize,
    /// Ended with an output.
    pub done: usize,
    /// Ended with an error (aborted ones not included).
    pub failed: usize,
    /// Stopped by an interrupt before or while it ran.
    pub aborted: usize,
    /// A race's branch stopped because another won (or it did not settle in time).
    pub cancelled: usize,
    /// Not run: the budget was exceeded.
    pub skipped: usize,
}

impl ItemTally {
    /// Count items from their `(status, error)`, spelled as in the record (`done`,
    /// `failed`, `skipped`, …). An item not ended is counted in `total` only.
    pub fn count<'a>(items: impl IntoIterator<Item = (&'a str, Option<&'a str>)>) -> ItemTally {
        let mut t = ItemTally::default();
        for (status, error) in items {
            t.total += 1;
            match status {
                "done" => t.done += 1,
                "failed" if error == Some(ABORTED) => t.aborted += 1,
                "failed" if error.is_some_and(|e| e.starts_with("cancelled:")) => {
                    t.cancelled += 1;
                }
                "failed" => t.failed += 1,
                "skipped" => t.skipped += 1,
                _ => {}
            }
        }
        t
    }

    /// `3/3 items`; `2/3 items, 1 aborted`; `1/4 items, 1 failed, 1 aborted, 1 not run` —
    /// the first number counts the items done, so one that did not succeed is never shown
    /// as if it had.
    pub fn text(&self) -> String {
        let mut s = format!("{}/{} items", self.done, self.total);
        let ended = self.done + self.failed + self.aborted + self.cancelled + self.skipped;
        let not_run = self.total.saturating_sub(ended);
        for (n, what) in [
            (self.failed, "failed"),
            (self.aborted, "aborted"),
            (self.cancelled, "cancelled"),
            (self.skipped, "skipped (budget)"),
            (not_run, "not run"),
        ] {
            if n > 0 {
                s.push_str(&format!(", {n} {what}"));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_are_not_calls() {
        assert_eq!(phase_calls("script", 1), 0);
        assert_eq!(phase_calls("map", 4), 4);
        assert_eq!(phase_calls("", 2), 2);
        let changelog = crate::value::parse_json(
            r#"{"phases": {"collect": {"type": "script", "attempts": 1},
                "m": {"type": "map", "attempts": 4}, "bump": {"type": "script", "attempts": 1},
                "r": {"type": "reduce", "attempts": 1}}}"#,
        )
        .expect("JSON");
        assert_eq!(record_calls(&changelog), 5);
        assert_eq!(calls_text(1), "1 call");
        assert_eq!(calls_text(5), "5 calls");
    }

    #[test]
    fn a_sub_flows_calls_are_its_flow_phases_unless_it_was_reused() {
        // One agent phase, an inline sub-flow of two agent phases (one retried once) and a
        // sub-flow nested in it: 1 + 3 + 1 calls.
        let text = r#"{"phases": {
            "a": {"status": "done", "type": "agent", "attempts": 1},
            "sub": {"status": "done", "type": "flow", "attempts": 0, "subRun": {"runId": "s1", "status": "completed", "phases": {
                "x": {"status": "done", "type": "agent", "attempts": 2},
                "y": {"status": "done", "type": "agent", "attempts": 1},
                "deep": {"status": "done", "type": "flow", "attempts": 0, "subRun": {"runId": "s2", "status": "completed", "phases": {
                    "z": {"status": "done", "type": "agent", "attempts": 1}}}}}}},
            "reused": {"status": "done", "type": "flow", "attempts": 0, "cacheHit": "run-only",
                "subRun": {"runId": "s3", "status": "completed", "phases": {"w": {"status": "done", "type": "agent", "attempts": 7}}}}}}"#;
        let v = crate::value::parse_json(text).expect("JSON");
        assert_eq!(record_calls(&v), 5);
        let sub = v
            .member("phases")
            .and_then(|p| p.member("sub"))
            .expect("sub");
        assert_eq!(phase_record_calls(sub), 4);
        // The MCP server reads records as serde's values: the same count.
        let wire: serde_json::Value = serde_json::from_str(text).expect("JSON");
        assert_eq!(record_calls(&wire), 5);
        // The typed record counts the same.
        let typed = crate::run::RunRecord::from_value(&{
            let mut full = v.clone();
            if let crate::value::Value::Object(o) = &mut full {
                for (k, val) in [
                    ("runId", "r"),
                    ("flow", "f"),
                    ("status", "completed"),
                    ("startedAt", "2026-01-01T00:00:00.000Z"),
                ] {
                    o.insert(k.into(), val.into());
                }
            }
            full
        });
        assert_eq!(typed.map(|r| r.agent_calls()), Some(5));
    }

    #[test]
    fn items_tell_how_they_ended() {
        let t = ItemTally::count([("done", None), ("done", None), ("failed", Some(ABORTED))]);
        assert_eq!(t.text(), "2/3 items, 1 aborted");
        let all = ItemTally::count([("done", None); 3]);
        assert_eq!(all.text(), "3/3 items");
        let mixed = ItemTally::count([
            ("done", None),
            ("failed", Some("exit 1")),
            ("skipped", Some("(skipped: budget exceeded)")),
            ("pending", None),
        ]);
        assert_eq!(
            mixed.text(),
            "1/4 items, 1 failed, 1 skipped (budget), 1 not run"
        );
        let race = ItemTally::count([
            ("done", None),
            ("failed", Some("cancelled: another branch won")),
        ]);
        assert_eq!(race.text(), "1/2 items, 1 cancelled");
    }
}
