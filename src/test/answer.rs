//! The answering backend: one more [`Agent`], which answers each call from a test's
//! `answers` instead of a model (SPEC §17). The run machine does not know it is being tested:
//! retries, contracts, gates and timeouts all see an ordinary backend's outcomes.
//!
//! Each call goes to the most specific pattern matching its node; each node has its own
//! cursor over that pattern's answers (the last one repeats). Every call is logged (node,
//! agent, prompt) for the `prompts` and `calls` expectations; a call no pattern answers is
//! logged as missing and fails, and the test with it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use crate::agent::call::idle_timeout_error;
use crate::agent::{Agent, BoxFuture, Cancel, Outcome, Request, StopReason};

use super::model::{Answer, AnswerRule, Named, Reply};
use super::pattern::best_match;

/// The idle watchdog's default (SPEC §8.6), for a timeout answer to a call without a limit.
const DEFAULT_IDLE_MS: u128 = 300_000;

/// One call the backend saw.
#[derive(Clone, Debug, PartialEq)]
pub struct CallLog {
    /// Its node (`review#0`, `sub/inner`).
    pub node: String,
    /// The agent the flow named.
    pub agent: String,
    /// The resolved prompt.
    pub prompt: String,
    /// Whether some pattern answered it.
    pub answered: bool,
}

/// What the backend remembers across calls.
#[derive(Default)]
struct State {
    cursors: HashMap<String, usize>,
    calls: Vec<CallLog>,
}

/// The backend of one test.
pub struct Answering {
    rules: Vec<Named<AnswerRule>>,
    state: Mutex<State>,
    /// `--missing=stub`: a call no pattern answers gets the dry-run stub (SPEC §9.9); the
    /// JSON stubs of `output: "json"` phases by phase id.
    stubs: Option<HashMap<String, crate::value::Value>>,
}

impl Answering {
    /// Answer from `rules` (a test's `answers`).
    pub fn new(rules: Vec<Named<AnswerRule>>) -> Answering {
        Answering {
            rules,
            state: Mutex::new(State::default()),
            stubs: None,
        }
    }

    /// Answer calls no pattern matches like `--dry-run` does, with the JSON stubs of
    /// `flow`'s `output: "json"` phases (those of inline sub-flows too).
    pub fn stubbing(mut self, flow: &crate::flow::Flow) -> Answering {
        fn add(flow: &crate::flow::Flow, out: &mut HashMap<String, crate::value::Value>) {
            for p in &flow.phases {
                if p.output == crate::flow::OutputMode::Json {
                    out.entry(p.id.clone())
                        .or_insert_with(|| crate::run::contract::stub(p.expect.as_deref()));
                }
                if let Some(crate::flow::Def::Inline(child)) = p.def().map(|d| &d.value) {
                    add(child, out);
                }
            }
        }
        let mut stubs = HashMap::new();
        add(flow, &mut stubs);
        self.stubs = Some(stubs);
        self
    }

    /// The next answer for `node` (its cursor moves on), if some pattern matches it.
    /// `script`: only script answers count (and only they move the cursor), or none of them.
    pub(crate) fn next(&self, node: &str, script: bool) -> Option<Answer> {
        let candidates: Vec<(usize, &Named<AnswerRule>)> = self
            .rules
            .iter()
            .enumerate()
            .filter(|(_, r)| {
                r.value
                    .answers
                    .iter()
                    .any(|a| matches!(a.reply, Reply::Script { .. }) == script)
            })
            .collect();
        let best = best_match(candidates.iter().map(|(_, r)| &r.value.pattern), node)?;
        let rule = &candidates[best].1.value;
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let cursor = st.cursors.entry(node.to_owned()).or_insert(0);
        let k = (*cursor).min(rule.answers.len() - 1);
        *cursor += 1;
        Some(rule.answers[k].clone())
    }

    /// Every call made so far, in order.
    pub fn calls(&self) -> Vec<CallLog> {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .calls
            .clone()
    }

    /// The outcome of `answer` to `request`.
    fn outcome(answer: &Answer, request: &Request) -> Outcome {
        let mut o = match &answer.reply {
            Reply::Text(t) => Outcome::ok(t.clone()),
            Reply::Json(v) => Outcome::ok(v.to_json()),
            Reply::Error(e) => Outcome::failed(StopReason::Failed, e.clone()),
            Reply::Timeout => match request.wall_timeout {
                // The machine words a wall timeout itself (SPEC §8.6).
                Some(_) => Outcome::failed(StopReason::WallTimeout, "timed out"),
                None => {
                    let ms = request
                        .idle_timeout
                        .map_or(DEFAULT_IDLE_MS, |d: Duration| d.as_millis());
                    Outcome::failed(StopReason::IdleTimeout, idle_timeout_error(ms))
                }
            },
            Reply::Script { .. } => Outcome::failed(
                StopReason::Failed,
                format!(
                    "tfc test: node '{}' is an agent call, answered with a script's {{\"stdout\", \"exitCode\"}}",
                    request.node
                ),
            ),
        };
        if let Some(u) = answer.usage {
            o.usage = u;
        }
        o
    }
}

/// The error of a call no pattern answers (never transient: it is not retried).
pub(crate) const NO_ANSWER: &str = "tfc test: no answer for this call";

impl Agent for Answering {
    fn name(&self) -> &str {
        "test"
    }

    fn call<'a>(&'a self, request: Request, cancel: Cancel) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            if cancel.is_cancelled() {
                return Outcome::failed(StopReason::Cancelled, "Aborted");
            }
            let answer = self.next(&request.node, false);
            let stub = match (&answer, &self.stubs) {
                (None, Some(stubs)) => {
                    let mut r = request.clone();
                    r.json_stub = stubs.get(&request.phase_id).cloned();
                    Some(crate::agent::DryRun::stub(&r))
                }
                _ => None,
            };
            let log = CallLog {
                node: request.node.clone(),
                agent: request.agent.clone(),
                prompt: request.prompt.clone(),
                answered: answer.is_some() || stub.is_some(),
            };
            self.state
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .calls
                .push(log);
            match (answer, stub) {
                (Some(a), _) => Answering::outcome(&a, &request),
                (None, Some(text)) => Outcome::ok(text),
                (None, None) => Outcome::failed(StopReason::Failed, NO_ANSWER),
            }
        })
    }

    fn reports_tokens(&self) -> bool {
        true
    }

    fn reports_cost(&self) -> bool {
        true
    }

    /// Nothing runs, so nothing writes.
    fn sandboxed(&self) -> bool {
        true
    }

    /// No model reads a system prompt.
    fn uses_system_prompt(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Span;
    use crate::test::pattern::Pattern;

    fn rule(pattern: &str, replies: &[Reply]) -> Named<AnswerRule> {
        Named {
            name: pattern.into(),
            span: Span::default(),
            value: AnswerRule {
                pattern: Pattern::parse(pattern).unwrap(),
                answers: replies
                    .iter()
                    .map(|r| Answer {
                        reply: r.clone(),
                        usage: None,
                        violates: false,
                        span: Span::default(),
                    })
                    .collect(),
            },
        }
    }

    fn call(b: &Answering, node: &str) -> Outcome {
        let r = Request::new("r", node, "default", "Do it.\nmore");
        smol::block_on(b.call(r, Cancel::never()))
    }

    #[test]
    fn each_node_has_its_own_cursor_and_the_last_answer_repeats() {
        let t = |s: &str| Reply::Text(s.into());
        let b = Answering::new(vec![
            rule("review#*", &[t("first"), t("second")]),
            rule("*", &[t("any")]),
        ]);
        let outs: Vec<String> = ["review#0", "review#0", "review#1", "review#0", "other"]
            .iter()
            .map(|n| call(&b, n).output)
            .collect();
        assert_eq!(outs, ["first", "second", "first", "second", "any"]);
        assert_eq!(b.calls().len(), 5);
        assert!(
            b.calls()
                .iter()
                .all(|c| c.answered && c.prompt == "Do it.\nmore")
        );
    }

    #[test]
    fn replies_become_outcomes() {
        let b = Answering::new(vec![
            rule(
                "j",
                &[Reply::Json(
                    crate::value::parse_json(r#"{"a":[1]}"#).unwrap(),
                )],
            ),
            rule("e", &[Reply::Error("overloaded".into())]),
            rule("t", &[Reply::Timeout]),
        ]);
        assert_eq!(call(&b, "j").output, r#"{"a":[1]}"#);
        let e = call(&b, "e");
        assert_eq!(
            (e.stop, e.error.as_deref()),
            (StopReason::Failed, Some("overloaded"))
        );
        let t = call(&b, "t");
        assert_eq!(t.stop, StopReason::IdleTimeout);
        assert_eq!(
            t.error.as_deref(),
            Some("Subagent produced no output for 300000ms (idle timeout)")
        );
        let mut r = Request::new("r", "t", "default", "p");
        r.wall_timeout = Some(Duration::from_millis(50));
        assert_eq!(
            smol::block_on(b.call(r, Cancel::never())).stop,
            StopReason::WallTimeout
        );
        let miss = call(&b, "nobody");
        assert_eq!(miss.error.as_deref(), Some(NO_ANSWER));
        assert!(!b.calls().last().unwrap().answered);
    }

    #[test]
    fn script_answers_are_apart_from_call_answers() {
        let script = Reply::Script {
            stdout: "out".into(),
            exit_code: 0,
        };
        let b = Answering::new(vec![
            rule("*", &[Reply::Text("x".into())]),
            rule("s", std::slice::from_ref(&script)),
        ]);
        assert_eq!(b.next("s", true).map(|a| a.reply), Some(script));
        assert_eq!(b.next("other", true), None);
        assert_eq!(call(&b, "s").output, "x");
    }
}
