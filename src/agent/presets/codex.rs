//! `codex exec --json` (OpenAI Codex CLI).
//!
//! Stream: `thread.started` → `turn.started` → `item.started`/`item.completed` … →
//! `turn.completed` {usage}, the terminal event. The answer is the text of the **last**
//! `item.completed` of type `agent_message`. `item.completed` items of type `error` are notices
//! (unknown model metadata, …), not failures. A failed turn ends with
//! `{"type":"error","message"}` then `turn.failed` {error.message}, which counts as a turn. **tfc:** an `error` event
//! followed by `turn.completed` (a recovered stream) is a warning, not a failure. Input tokens
//! include cached ones; no cost.

use serde_json::Value;

use super::cli::{
    Cli, Events, Invocation, PresetConfig, Step, Stream, preset_agent, str_at, u64_at, with_system,
};
use crate::agent::call::{Request, ToolPolicy};
use crate::agent::env::EnvPolicy;

/// The codex preset.
#[derive(Clone, Debug, Default)]
pub struct Codex {
    /// Binary, extra arguments, environment and kill grace.
    pub config: PresetConfig,
}

impl Cli for Codex {
    type Events = CodexEvents;
    const NAME: &'static str = "codex";
    const ENV: EnvPolicy = EnvPolicy::Allowlist {
        prefixes: &["CODEX_", "OPENAI_", "AZURE_OPENAI_"],
    };

    fn config(&self) -> &PresetConfig {
        &self.config
    }

    fn invocation(&self, request: &Request) -> Result<Invocation, String> {
        Ok(Invocation::new(
            argv(request, &self.config.extra_args),
            Some(with_system(request)),
        ))
    }
}

// codex confines writes to the workspace: mutating tools need no opt-in (E0703).
preset_agent!(Codex, cost: false, sandboxed: true);

/// The argv after `codex`; the prompt is read from stdin (`-`).
fn argv(request: &Request, extra: &[String]) -> Vec<String> {
    let sandbox = match request.tools {
        ToolPolicy::Mutating(_) => "workspace-write",
        ToolPolicy::Default | ToolPolicy::ReadOnly(_) => "read-only",
    };
    let mut a: Vec<String> = ["exec", "--json", "--skip-git-repo-check", "-s", sandbox]
        .map(String::from)
        .into();
    if let Some(m) = &request.model {
        a.extend(["-m".into(), m.clone()]);
    }
    if let Some(effort) = request.thinking.as_deref().and_then(effort) {
        a.extend(["-c".into(), format!("model_reasoning_effort={effort}")]);
    }
    if !request.cwd.as_os_str().is_empty() {
        a.extend(["-C".into(), request.cwd.to_string_lossy().into_owned()]);
    }
    a.extend(extra.iter().cloned());
    a.push("-".into());
    a
}

/// Thinking level → `model_reasoning_effort`: off/none/minimal omitted, max/ultra ⇒ xhigh.
fn effort(level: &str) -> Option<&str> {
    match level {
        "off" | "none" | "minimal" => None,
        "max" | "ultra" => Some("xhigh"),
        l => Some(l),
    }
}

/// codex's events.
#[derive(Debug, Default)]
pub struct CodexEvents {
    /// An `error` event not (yet) followed by `turn.completed`.
    pending_error: Option<String>,
}

impl Events for CodexEvents {
    const TERMINAL: &'static str = "turn.completed";

    fn event(&mut self, kind: &str, e: &Value, s: &mut Stream) -> Step {
        match kind {
            "item.completed" => match str_at(e, &["item", "type"]) {
                Some("agent_message") => {
                    s.answer = str_at(e, &["item", "text"]).unwrap_or("").to_owned();
                }
                Some("error") => {
                    if let Some(m) = str_at(e, &["item", "message"]) {
                        s.warnings.push(format!("codex: {m}"));
                    }
                }
                _ => {}
            },
            "error" => {
                self.pending_error =
                    Some(str_at(e, &["message"]).unwrap_or("codex error").to_owned());
            }
            "turn.completed" => {
                let u = &e["usage"];
                s.usage.input += u64_at(u, &["input_tokens"]);
                s.usage.cache_read += u64_at(u, &["cached_input_tokens"]);
                s.usage.cache_write += u64_at(u, &["cache_write_input_tokens"]);
                s.usage.output +=
                    u64_at(u, &["output_tokens"]) + u64_at(u, &["reasoning_output_tokens"]);
                s.usage.turns += 1;
                if let Some(m) = self.pending_error.take() {
                    s.warnings.push(format!("codex: {m}"));
                }
                return Step::Terminal;
            }
            "turn.failed" => {
                let m = str_at(e, &["error", "message"])
                    .map(str::to_owned)
                    .or_else(|| self.pending_error.take())
                    .unwrap_or_else(|| "codex turn failed".into());
                s.failure = Some(m);
                // The failed turn is a turn, as claude, gemini and pi count theirs.
                s.usage.turns += 1;
                return Step::Terminal;
            }
            _ => {}
        }
        Step::Continue
    }

    fn finish(&mut self, s: &mut Stream) {
        if let Some(m) = self.pending_error.take()
            && s.failure.is_none()
        {
            s.failure = Some(m);
        }
    }
}

/// Parse a whole codex stream.
pub fn parse(text: &str) -> Stream {
    super::cli::parse_text::<CodexEvents>(text)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{fixture, request, usage};
    use super::*;
    use crate::agent::call::Usage;

    #[test]
    fn plain_answer() {
        let s = parse(&fixture("codex.jsonl"));
        assert_eq!(
            s.answer,
            "The capital of France is Paris. (canned by mockllm)"
        );
        assert_eq!(s.usage, usage(8145, 13, 1200));
        assert!(s.terminal && s.failure.is_none() && s.protocol_error.is_none());
        assert_eq!(s.model, None);
    }

    #[test]
    fn tool_round() {
        let s = parse(&fixture("codex-tool.jsonl"));
        assert_eq!(s.answer, "The file says: hello from the workdir");
        assert_eq!(s.usage, usage(14008, 19, 0));
        assert!(s.terminal && s.failure.is_none());
    }

    #[test]
    fn http_400_fails_with_the_body() {
        let s = parse(&fixture("codex-error.jsonl"));
        assert_eq!(
            s.failure.as_deref(),
            Some(
                r#"{"error": {"message": "simulated bad request", "type": "invalid_request_error", "param": null, "code": null}}"#
            )
        );
        assert_eq!(s.answer, "");
        // The failed turn counts; no tokens, cost unknown.
        assert_eq!(
            s.usage,
            Usage {
                turns: 1,
                ..Usage::default()
            }
        );
        assert!(s.terminal);
    }

    #[test]
    fn notices_and_last_message() {
        let s = parse(concat!(
            r#"{"type":"item.completed","item":{"id":"i0","type":"error","message":"Model metadata for `gpt-5-mock` not found."}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"i1","type":"agent_message","text":"first"}}"#,
            "\n",
            r#"{"type":"error","message":"Reconnecting... 1/5"}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"i2","type":"agent_message","text":"second"}}"#,
            "\n",
            r#"{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":4,"output_tokens":3,"reasoning_output_tokens":2}}"#,
        ));
        assert_eq!(s.answer, "second");
        assert_eq!(s.failure, None);
        assert_eq!(
            s.warnings,
            [
                "codex: Model metadata for `gpt-5-mock` not found.",
                "codex: Reconnecting... 1/5"
            ]
        );
        assert_eq!(s.usage, usage(10, 5, 4));
        // An `error` with nothing after it is the failure.
        let s = parse(r#"{"type":"error","message":"stream disconnected"}"#);
        assert_eq!(s.failure.as_deref(), Some("stream disconnected"));
        assert!(!s.terminal);
    }

    #[test]
    fn argv_per_request() {
        let mut r = request();
        assert_eq!(
            argv(&r, &[]),
            [
                "exec",
                "--json",
                "--skip-git-repo-check",
                "-s",
                "read-only",
                "-"
            ]
        );
        r.model = Some("gpt-5.5".into());
        r.thinking = Some("ultra".into());
        r.cwd = "/w".into();
        r.tools = ToolPolicy::Mutating(vec!["bash".into()]);
        assert_eq!(
            argv(&r, &["--ephemeral".into()])[3..],
            [
                "-s",
                "workspace-write",
                "-m",
                "gpt-5.5",
                "-c",
                "model_reasoning_effort=xhigh",
                "-C",
                "/w",
                "--ephemeral",
                "-"
            ]
        );
        for (level, want) in [
            ("off", None),
            ("none", None),
            ("minimal", None),
            ("low", Some("low")),
            ("high", Some("high")),
            ("max", Some("xhigh")),
        ] {
            assert_eq!(effort(level), want);
        }
    }
}
