//! `--backend replay:FILE` (SPEC §9.8): answer calls from recorded `agent-call` records.
//!
//! A call is answered by the records with the same key — (node, agent, promptSha256) — in
//! file order: the first call takes the first such record, the next call the next one, and once
//! they run out the last one repeats. `ok:false` records replay as failures with their stop
//! reason and error. Lines of other journal event types (`run-start`, `phase-end`, …) are
//! skipped, so a run's `journal.jsonl` is a valid fixture.
//!
//! A miss fails the call with [`StopReason::Failed`] and an error starting
//! [`REPLAY_MISS_PREFIX`]; [`is_replay_miss`] recognises it, and the interpreter must not retry
//! it (another attempt would miss the same way).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use super::record::{AgentCallRecord, prompt_sha256};
use crate::agent::call::{Agent, BoxFuture, Outcome, Request, StopReason};
use crate::process::Cancel;
use crate::value::{Value, parse_json};

/// How every replay-miss error starts.
pub const REPLAY_MISS_PREFIX: &str = "replay: no fixture for ";

/// Is this outcome a replay miss (never worth retrying)?
pub fn is_replay_miss(outcome: &Outcome) -> bool {
    outcome.stop == StopReason::Failed
        && outcome
            .error
            .as_deref()
            .is_some_and(|e| e.starts_with(REPLAY_MISS_PREFIX))
}

type Key = (String, String, String);

/// The replay backend. Its [`Agent::name`] is `replay`, so run records label replayed runs.
pub struct Replay {
    records: Vec<AgentCallRecord>,
    by_key: HashMap<Key, Vec<usize>>,
    /// Per key: how many of its records were consumed.
    cursors: Mutex<HashMap<Key, usize>>,
    tokens: bool,
    cost: bool,
}

impl Replay {
    /// Load a fixture file. Errors name the file and the 1-based line.
    pub fn load(path: &Path) -> Result<Replay, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read replay fixture '{}': {e}", path.display()))?;
        Replay::parse(&text, &path.display().to_string())
    }

    /// Parse fixture text; `name` is used in error messages. Blank lines and records of other
    /// event types are skipped; anything else that is not a valid `agent-call` record is an
    /// error: `<name>:<line>: <what is wrong>`.
    pub fn parse(text: &str, name: &str) -> Result<Replay, String> {
        let mut records = Vec::new();
        let (mut tokens, mut cost) = (false, false);
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = |msg: String| format!("{name}:{}: invalid replay record: {msg}", i + 1);
            let v = parse_json(line).map_err(|e| at(format!("not JSON: {e}")))?;
            if let Some(Value::String(t)) = v.as_object().and_then(|o| o.get("type"))
                && t != "agent-call"
            {
                continue;
            }
            let (r, has_tokens) = AgentCallRecord::read(&v).map_err(at)?;
            tokens |= has_tokens;
            cost |= r.usage.cost_usd.is_some();
            records.push(r);
        }
        let mut by_key: HashMap<Key, Vec<usize>> = HashMap::new();
        for (i, r) in records.iter().enumerate() {
            by_key
                .entry((r.node.clone(), r.agent.clone(), r.prompt_sha256.clone()))
                .or_default()
                .push(i);
        }
        Ok(Replay {
            records,
            by_key,
            cursors: Mutex::new(HashMap::new()),
            tokens,
            cost,
        })
    }

    /// How many `agent-call` records the fixture holds.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Does the fixture hold no `agent-call` record?
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The answer for one key: the next unconsumed record, else the last one again.
    pub fn answer(
        &self,
        node: &str,
        agent: &str,
        sha256: &str,
    ) -> Result<&AgentCallRecord, String> {
        let key = (node.to_owned(), agent.to_owned(), sha256.to_owned());
        let Some(idx) = self.by_key.get(&key) else {
            return Err(self.miss_message(node, agent, sha256));
        };
        let mut cursors = self.cursors.lock().unwrap_or_else(|e| e.into_inner());
        let n = cursors.entry(key).or_insert(0);
        let pick = idx[(*n).min(idx.len() - 1)];
        *n += 1;
        Ok(&self.records[pick])
    }

    /// `replay: no fixture for node '<n>' agent '<a>' sha256 <12 hex>; nearest: <key> (<what
    /// differs>)`.
    ///
    /// Nearest = the record differing in the fewest of (node, agent, prompt). Ties: a record
    /// whose node matches beats one whose agent matches, which beats one whose prompt
    /// matches (the node names the call site most precisely, so a changed prompt at the same
    /// node is the likeliest story); then the earliest in the file. With no records at all:
    /// `nearest: none (the fixture has no agent-call records)`.
    pub fn miss_message(&self, node: &str, agent: &str, sha256: &str) -> String {
        let head = format!(
            "{REPLAY_MISS_PREFIX}node '{node}' agent '{agent}' sha256 {}",
            short(sha256)
        );
        let best = self
            .records
            .iter()
            .map(|r| [r.node != node, r.agent != agent, r.prompt_sha256 != sha256])
            .enumerate()
            .min_by_key(|(i, d)| (d.iter().filter(|x| **x).count(), *d, *i));
        let Some((i, diff)) = best else {
            return format!("{head}; nearest: none (the fixture has no agent-call records)");
        };
        let r = &self.records[i];
        let names: Vec<&str> = ["node", "agent", "prompt"]
            .iter()
            .zip(diff)
            .filter(|(_, d)| *d)
            .map(|(n, _)| *n)
            .collect();
        let what = match names.as_slice() {
            [one] => format!("{one} differs"),
            [a, b] => format!("{a} and {b} differ"),
            [a, b, c] => format!("{a}, {b} and {c} differ"),
            _ => "same key".to_owned(),
        };
        format!(
            "{head}; nearest: node '{}' agent '{}' sha256 {} ({what})",
            r.node,
            r.agent,
            short(&r.prompt_sha256)
        )
    }
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

impl Agent for Replay {
    fn name(&self) -> &str {
        "replay"
    }

    fn call<'a>(&'a self, request: Request, cancel: Cancel) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            if cancel.is_cancelled() {
                return Outcome::failed(StopReason::Cancelled, "Aborted");
            }
            let sha = prompt_sha256(&request.prompt);
            match self.answer(&request.node, &request.agent, &sha) {
                Ok(r) => r.to_outcome(),
                Err(msg) => Outcome::failed(StopReason::Failed, msg),
            }
        })
    }

    /// True iff some record carries token counts.
    fn reports_tokens(&self) -> bool {
        self.tokens
    }

    /// True iff some record carries a cost.
    fn reports_cost(&self) -> bool {
        self.cost
    }

    /// Replaying writes nothing.
    fn sandboxed(&self) -> bool {
        true
    }

    /// Answers are looked up by the task prompt alone.
    fn uses_system_prompt(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::record::tests::{request, sample};

    fn rec(node: &str, agent: &str, prompt: &str, output: &str) -> String {
        let mut r = sample();
        r.node = node.into();
        r.agent = agent.into();
        r.prompt_sha256 = prompt_sha256(prompt);
        r.prompt = None;
        r.output = output.into();
        r.to_json_line()
    }

    fn call(r: &Replay, node: &str, agent: &str, prompt: &str) -> Outcome {
        smol::block_on(r.call(request(node, agent, prompt), Cancel::never()))
    }

    #[test]
    fn same_key_consumed_in_order_last_repeats() {
        let text = [
            rec("a", "x", "p", "first"),
            r#"{"type":"phase-start","ts":"t","phase":"a"}"#.to_owned(),
            String::new(),
            rec("b", "x", "p", "other"),
            rec("a", "x", "p", "second"),
        ]
        .join("\n");
        let r = Replay::parse(&text, "f.jsonl").unwrap();
        assert_eq!(r.len(), 3);
        let outs: Vec<_> = (0..4).map(|_| call(&r, "a", "x", "p").output).collect();
        assert_eq!(outs, ["first", "second", "second", "second"]);
        assert_eq!(call(&r, "b", "x", "p").output, "other");
        let o = call(&r, "a", "x", "p");
        assert!(o.is_ok());
        assert_eq!(o.model.as_deref(), Some("qwen"));
        assert_eq!(o.usage.input, 10);
        assert!(r.reports_tokens() && r.reports_cost());
    }

    #[test]
    fn failures_replay_as_failures() {
        let mut f = sample();
        f.ok = false;
        f.stop_reason = StopReason::IdleTimeout;
        f.error = Some("Subagent produced no output for 1000ms (idle timeout)".into());
        f.output = "partial".into();
        let r = Replay::parse(&f.to_json_line(), "f").unwrap();
        let o = call(&r, "audit#3", "scout", "hello");
        assert_eq!(o.stop, StopReason::IdleTimeout);
        assert_eq!(o.output, "partial");
        assert_eq!(o.error, f.error);
        assert!(!is_replay_miss(&o));
    }

    #[test]
    fn miss_names_the_nearest_key() {
        let text = [
            rec("plan", "scout", "old prompt", "1"),
            rec("review", "critic", "new prompt", "2"),
            rec("plan", "critic", "new prompt", "3"),
        ]
        .join("\n");
        let r = Replay::parse(&text, "f").unwrap();
        let sha = prompt_sha256("new prompt");
        let o = call(&r, "plan", "scout", "new prompt");
        assert!(is_replay_miss(&o));
        assert_eq!(o.stop, StopReason::Failed);
        // Both record 0 (prompt differs) and record 2 (agent differs) differ in one field;
        // the one matching the node and agent wins.
        assert_eq!(
            o.error.unwrap(),
            format!(
                "replay: no fixture for node 'plan' agent 'scout' sha256 {}; nearest: node 'plan' agent 'scout' sha256 {} (prompt differs)",
                &sha[..12],
                &prompt_sha256("old prompt")[..12]
            )
        );
        let msg = r.miss_message("review", "scout", &sha);
        assert!(msg.ends_with(&format!(
            "nearest: node 'review' agent 'critic' sha256 {} (agent differs)",
            &sha[..12]
        )));
        let msg = r.miss_message("other", "nobody", &prompt_sha256("x"));
        assert!(msg.ends_with("(node, agent and prompt differ)"), "{msg}");
        let msg = r.miss_message("other", "critic", &sha);
        assert!(msg.contains("nearest: node 'review'") && msg.ends_with("(node differs)"));
        let msg = r.miss_message("plan", "nobody", &prompt_sha256("x"));
        assert!(msg.contains("nearest: node 'plan' agent 'scout'"), "{msg}");
        assert!(msg.ends_with("(agent and prompt differ)"), "{msg}");

        let empty = Replay::parse("\n", "f").unwrap();
        assert!(empty.is_empty() && !empty.reports_tokens() && !empty.reports_cost());
        assert!(
            empty
                .miss_message("a", "b", &sha)
                .ends_with("; nearest: none (the fixture has no agent-call records)")
        );
    }

    #[test]
    fn invalid_lines_name_the_line() {
        let text = format!(
            "{}\n{{\"type\":\"agent-call\",\"node\":1}}\n",
            rec("a", "b", "c", "d")
        );
        let e = Replay::parse(&text, "fx.jsonl").err().unwrap();
        assert!(e.starts_with("fx.jsonl:2: invalid replay record:"), "{e}");
        let e = Replay::parse("\n\nnot json", "fx.jsonl").err().unwrap();
        assert!(e.starts_with("fx.jsonl:3: "), "{e}");
        let e = Replay::load(Path::new("/nonexistent/fixture.jsonl"))
            .err()
            .unwrap();
        assert!(e.contains("cannot read replay fixture"));
    }

    #[test]
    fn cost_and_tokens_only_when_recorded() {
        let no_usage = r#"{"type":"agent-call","node":"a","agent":"b","ok":true,"prompt":"p"}"#;
        let r = Replay::parse(no_usage, "f").unwrap();
        assert!(!r.reports_tokens() && !r.reports_cost());
        let tokens_only = r#"{"type":"agent-call","node":"a","agent":"b","ok":true,"prompt":"p","usage":{"input":1,"output":2,"costUSD":null}}"#;
        let r = Replay::parse(tokens_only, "f").unwrap();
        assert!(r.reports_tokens() && !r.reports_cost());
        assert_eq!(call(&r, "a", "b", "p").usage.cost_usd, None);
    }

    #[test]
    fn cancelled_before_start() {
        let r = Replay::parse(&rec("a", "b", "c", "d"), "f").unwrap();
        let src = crate::process::CancelSource::new();
        src.cancel();
        let o = smol::block_on(r.call(request("a", "b", "c"), src.token()));
        assert_eq!(o.stop, StopReason::Cancelled);
    }
}
