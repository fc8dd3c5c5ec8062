//! `opencode run --format json` (opencode).
//!
//! Stream, per model step: `step_start` → `text` {part.text: a whole text part} → `tool_use` →
//! `step_finish` {part.reason, part.tokens, part.cost}. The terminal event is a `step_finish`
//! whose reason is not `tool-calls`. The answer is the `text` parts concatenated, reset by each
//! `tool_use`. An API failure prints one `error` line (no step events) and exits 1; with an HTTP
//! status it counts as a turn. Tokens and cost are summed over steps; input excludes cached
//! tokens.
//!
//! `--title` is always passed (the node, unless `extra_args` name one): without it opencode asks
//! the model a second time, for a session title, and that request appears nowhere in the stream.
//!
//! The prompt goes to stdin, never argv: opencode re-quotes every argv word containing a space.
//! A read-only tool list is enforced with `OPENCODE_PERMISSION` (merged into opencode's
//! permission config): every tool denied but read, grep, glob and list.

use serde_json::Value;

use super::cli::{
    Cli, Events, Invocation, PresetConfig, Step, Stream, add_cost, at, preset_agent, str_at,
    u64_at, with_system,
};
use crate::agent::call::{Request, ToolPolicy};
use crate::agent::env::EnvPolicy;

/// The permission config of a read-only call.
pub(crate) const READ_ONLY_PERMISSION: &str =
    r#"{"*":"deny","read":"allow","grep":"allow","glob":"allow","list":"allow"}"#;

/// The opencode preset.
#[derive(Clone, Debug, Default)]
pub struct Opencode {
    /// Binary, extra arguments, environment and kill grace.
    pub config: PresetConfig,
}

impl Cli for Opencode {
    type Events = OpencodeEvents;
    const NAME: &'static str = "opencode";
    const ENV: EnvPolicy = EnvPolicy::Allowlist {
        prefixes: &["OPENCODE_", "OPENAI_", "ANTHROPIC_", "GOOGLE_", "GEMINI_"],
    };

    fn config(&self) -> &PresetConfig {
        &self.config
    }

    fn invocation(&self, request: &Request) -> Result<Invocation, String> {
        let mut inv = Invocation::new(
            argv(request, &self.config.extra_args),
            Some(with_system(request)),
        );
        if let ToolPolicy::ReadOnly(_) = request.tools {
            inv.env
                .push(("OPENCODE_PERMISSION".into(), READ_ONLY_PERMISSION.into()));
        }
        Ok(inv)
    }
}

preset_agent!(Opencode, cost: true, sandboxed: false);

/// The argv after `opencode`; no message argument, so the prompt is read from stdin.
fn argv(request: &Request, extra: &[String]) -> Vec<String> {
    let mut a: Vec<String> = ["run", "--format", "json"].map(String::from).into();
    if !request.cwd.as_os_str().is_empty() {
        a.extend(["--dir".into(), request.cwd.to_string_lossy().into_owned()]);
    }
    if let Some(m) = &request.model {
        a.extend(["-m".into(), m.clone()]);
    }
    if let Some(v) = request.thinking.as_deref().and_then(variant) {
        a.extend(["--variant".into(), v.into()]);
    }
    if !extra
        .iter()
        .any(|x| x == "--title" || x.starts_with("--title="))
    {
        a.extend(["--title".into(), title(request)]);
    }
    a.extend(extra.iter().cloned());
    a
}

/// The session title: the run and the node (`tfc run-7 review#1`). Any title will do — given
/// one, opencode does not ask the model for one.
fn title(request: &Request) -> String {
    format!("tfc {} {}", request.run_id, request.node)
}

/// Thinking level → `--variant`: off omitted, ultra ⇒ max.
fn variant(level: &str) -> Option<&str> {
    match level {
        "off" => None,
        "ultra" => Some("max"),
        l => Some(l),
    }
}

/// opencode's events.
#[derive(Debug, Default)]
pub struct OpencodeEvents;

impl Events for OpencodeEvents {
    const TERMINAL: &'static str = "step_finish";

    fn event(&mut self, kind: &str, e: &Value, s: &mut Stream) -> Step {
        match kind {
            "text" => s
                .answer
                .push_str(str_at(e, &["part", "text"]).unwrap_or("")),
            "tool_use" => s.answer.clear(),
            "step_finish" => {
                let t = &e["part"]["tokens"];
                s.usage.input += u64_at(t, &["input"]);
                s.usage.output += u64_at(t, &["output"]) + u64_at(t, &["reasoning"]);
                s.usage.cache_read += u64_at(t, &["cache", "read"]);
                s.usage.cache_write += u64_at(t, &["cache", "write"]);
                add_cost(&mut s.usage.cost_usd, e["part"]["cost"].as_f64());
                s.usage.turns += 1;
                if str_at(e, &["part", "reason"]) != Some("tool-calls") {
                    return Step::Terminal;
                }
            }
            "error" => {
                s.failure = Some(error_text(&e["error"]));
                // An HTTP status means the provider answered a request: a turn, as the other
                // presets count a refused request.
                if at(e, &["error", "data", "statusCode"]).is_some_and(Value::is_u64) {
                    s.usage.turns += 1;
                }
            }
            _ => {}
        }
        Step::Continue
    }
}

/// `APIError: simulated bad request (HTTP 400)`.
fn error_text(err: &Value) -> String {
    let name = str_at(err, &["name"]);
    let message = str_at(err, &["data", "message"]).or_else(|| str_at(err, &["message"]));
    let mut text = match (name, message) {
        (Some(n), Some(m)) => format!("{n}: {m}"),
        (None, Some(m)) => m.to_owned(),
        (Some(n), None) => n.to_owned(),
        (None, None) => format!("opencode error: {err}"),
    };
    if let Some(code) = at(err, &["data", "statusCode"]).and_then(Value::as_u64) {
        text.push_str(&format!(" (HTTP {code})"));
    }
    text
}

/// Parse a whole opencode stream.
pub fn parse(text: &str) -> Stream {
    super::cli::parse_text::<OpencodeEvents>(text)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{fixture, request};
    use super::*;
    use crate::agent::call::Usage;

    #[test]
    fn plain_answer() {
        let s = parse(&fixture("opencode.jsonl"));
        assert_eq!(
            s.answer,
            "The capital of France is Paris. (canned by mockllm)"
        );
        assert_eq!(
            s.usage,
            Usage {
                calls: 0,
                input: 2445,
                output: 13,
                cache_read: 1200,
                cache_write: 0,
                cost_usd: Some(0.00318625),
                turns: 1
            }
        );
        assert!(s.terminal && s.failure.is_none() && s.protocol_error.is_none());
    }

    #[test]
    fn tool_round_resets_text_and_sums_steps() {
        let s = parse(&fixture("opencode-tool.jsonl"));
        assert_eq!(s.answer, "The file says: hello from the workdir");
        assert_eq!(
            s.usage,
            Usage {
                calls: 0,
                input: 2442 + 2560,
                output: 17 + 10,
                cache_read: 0,
                cache_write: 0,
                cost_usd: Some(0.0032225 + 0.0033),
                turns: 2
            }
        );
        assert!(s.terminal);
        // Cut after the first step (`tool-calls`): not terminal yet.
        let text = fixture("opencode-tool.jsonl");
        let first: Vec<&str> = text.lines().take(4).collect();
        let s = parse(&first.join("\n"));
        assert!(!s.terminal);
        assert_eq!(s.answer, "");
    }

    #[test]
    fn lone_error_line_is_a_failure() {
        let s = parse(&fixture("opencode-error.jsonl"));
        assert_eq!(
            s.failure.as_deref(),
            Some("APIError: simulated bad request (HTTP 400)")
        );
        assert!(!s.terminal);
        // The refused request is one turn; cost unknown, as for every preset's failed call.
        assert_eq!(
            s.usage,
            Usage {
                turns: 1,
                ..Usage::default()
            }
        );
        assert_eq!(s.answer, "");
        // An error without an HTTP status (no request answered) is no turn.
        let s =
            parse(r#"{"type":"error","error":{"name":"UnknownError","data":{"message":"boom"}}}"#);
        assert_eq!(s.failure.as_deref(), Some("UnknownError: boom"));
        assert_eq!(s.usage.turns, 0);
    }

    #[test]
    fn argv_and_permission() {
        let mut r = request();
        assert_eq!(
            argv(&r, &[]),
            ["run", "--format", "json", "--title", "tfc r1 p"]
        );
        r.cwd = "/w".into();
        r.model = Some("mock/mock-model".into());
        r.thinking = Some("ultra".into());
        assert_eq!(
            argv(&r, &["--title".into(), "t".into()])[3..],
            [
                "--dir",
                "/w",
                "-m",
                "mock/mock-model",
                "--variant",
                "max",
                "--title",
                "t"
            ]
        );
        r.thinking = Some("off".into());
        assert!(!argv(&r, &[]).contains(&"--variant".to_owned()));
        // A title in `extra_args` replaces the preset's, in either spelling.
        assert_eq!(argv(&r, &[]).last().unwrap(), "tfc r1 p");
        let titled = argv(&r, &["--title=mine".into()]);
        assert_eq!(
            titled.iter().filter(|a| a.starts_with("--title")).count(),
            1
        );
        assert_eq!(titled.last().unwrap(), "--title=mine");
        let oc = Opencode::default();
        assert!(oc.invocation(&r).unwrap().env.is_empty());
        r.tools = ToolPolicy::ReadOnly(vec!["read".into()]);
        let inv = oc.invocation(&r).unwrap();
        assert_eq!(
            inv.env,
            [(
                "OPENCODE_PERMISSION".to_owned(),
                READ_ONLY_PERMISSION.to_owned()
            )]
        );
        assert_eq!(inv.stdin.as_deref(), Some("Do it"));
    }
}
