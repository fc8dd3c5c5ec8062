//! `gemini --output-format stream-json` (Gemini CLI; the prompt on stdin runs it headless).
//!
//! Stream: `init` {model} → `message` role user → `message` role assistant chunks (`delta:
//! true`, one per SSE chunk) → `tool_use`/`tool_result` → `result`, the terminal event {status,
//! error, stats}. The answer is the assistant chunks concatenated; `error` events are notices.
//! A failure is `result.status: "error"`; the exit code is then the HTTP status mod 256 (144
//! for a 400), so the events decide, not the code. Input tokens include cached ones; no cost.

use serde_json::Value;

use super::cli::{
    Cli, Events, Invocation, PresetConfig, Step, Stream, preset_agent, str_at, u64_at, with_system,
};
use crate::agent::call::{Request, ToolPolicy};
use crate::agent::env::EnvPolicy;

/// The gemini preset.
#[derive(Clone, Debug, Default)]
pub struct Gemini {
    /// Binary, extra arguments, environment and kill grace.
    pub config: PresetConfig,
}

impl Cli for Gemini {
    type Events = GeminiEvents;
    const NAME: &'static str = "gemini";
    const ENV: EnvPolicy = EnvPolicy::Allowlist {
        prefixes: &["GEMINI_", "GOOGLE_"],
    };

    fn config(&self) -> &PresetConfig {
        &self.config
    }

    fn invocation(&self, request: &Request) -> Result<Invocation, String> {
        let mut inv = Invocation::new(
            argv(request, &self.config.extra_args),
            Some(with_system(request)),
        );
        if let Some(level) = request.thinking.as_deref().filter(|l| *l != "off") {
            inv.warnings.push(format!(
                "the gemini preset has no thinking option; thinking \"{level}\" ignored"
            ));
        }
        if let ToolPolicy::ReadOnly(tools) | ToolPolicy::Mutating(tools) = &request.tools {
            inv.warnings.push(format!(
                "the gemini preset does not restrict tools; tools [{}] not enforced",
                tools.join(", ")
            ));
        }
        Ok(inv)
    }
}

preset_agent!(Gemini, cost: false, sandboxed: false);

/// The argv after `gemini`.
fn argv(request: &Request, extra: &[String]) -> Vec<String> {
    let mut a: Vec<String> = ["--output-format", "stream-json"].map(String::from).into();
    if let Some(m) = &request.model {
        a.extend(["-m".into(), m.clone()]);
    }
    a.extend(extra.iter().cloned());
    a
}

/// gemini's events.
#[derive(Debug, Default)]
pub struct GeminiEvents;

impl Events for GeminiEvents {
    const TERMINAL: &'static str = "result";

    fn event(&mut self, kind: &str, e: &Value, s: &mut Stream) -> Step {
        match kind {
            "init" => s.model = str_at(e, &["model"]).map(str::to_owned),
            "message" if str_at(e, &["role"]) == Some("assistant") => {
                s.answer.push_str(str_at(e, &["content"]).unwrap_or(""));
            }
            "error" => {
                let m = str_at(e, &["message"]).map_or_else(|| e.to_string(), str::to_owned);
                s.warnings.push(format!("gemini: {m}"));
            }
            "result" => {
                let st = &e["stats"];
                s.usage.input = u64_at(st, &["input_tokens"]);
                s.usage.output = u64_at(st, &["output_tokens"]);
                s.usage.cache_read = u64_at(st, &["cached"]);
                s.usage.turns = 1;
                // With the default model "auto" a router model answers first; the stats list
                // the answering model last.
                if s.model.as_deref() == Some("auto")
                    && let Some(last) = st["models"].as_object().and_then(|m| m.keys().next_back())
                {
                    s.model = Some(last.clone());
                }
                if str_at(e, &["status"]) == Some("error") {
                    s.failure = Some(
                        str_at(e, &["error", "message"])
                            .unwrap_or("gemini reported an error")
                            .to_owned(),
                    );
                }
                return Step::Terminal;
            }
            _ => {}
        }
        Step::Continue
    }
}

/// Parse a whole gemini stream.
pub fn parse(text: &str) -> Stream {
    super::cli::parse_text::<GeminiEvents>(text)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{fixture, request, usage};
    use super::*;

    #[test]
    fn plain_answer() {
        let s = parse(&fixture("gemini.jsonl"));
        assert_eq!(
            s.answer,
            "The capital of France is Paris. (canned by mockllm)"
        );
        assert_eq!(s.usage, usage(7235, 13, 1200));
        assert_eq!(s.model.as_deref(), Some("gemini-2.5-pro"));
        assert!(s.terminal && s.failure.is_none() && s.protocol_error.is_none());
    }

    #[test]
    fn auto_model_names_the_answering_model() {
        let s = parse(&fixture("gemini-auto.jsonl"));
        assert_eq!(
            s.answer,
            "The capital of France is Paris. (canned by mockllm)"
        );
        assert_eq!(s.usage, usage(8574, 27, 0));
        assert_eq!(s.model.as_deref(), Some("gemini-3.8-flash"));
    }

    #[test]
    fn tool_round() {
        let s = parse(&fixture("gemini-tool.jsonl"));
        assert_eq!(s.answer, "The file says: hello from the workdir");
        assert_eq!(s.usage, usage(12154, 19, 0));
        assert!(s.terminal && s.failure.is_none());
    }

    #[test]
    fn error_result_is_a_failure_error_event_is_not() {
        let s = parse(&fixture("gemini-error.jsonl"));
        assert_eq!(
            s.failure.as_deref(),
            Some(
                r#"[API Error: {"error":{"code":400,"message":"simulated bad request","status":"INVALID_ARGUMENT"}}]"#
            )
        );
        assert_eq!(s.usage, usage(0, 0, 0));
        assert!(s.terminal);
        let s = parse(concat!(
            r#"{"type":"error","severity":"warning","message":"Loop detected, stopping"}"#,
            "\n",
            r#"{"type":"message","role":"assistant","content":"ok","delta":true}"#,
            "\n",
            r#"{"type":"result","status":"success","stats":{"input_tokens":3,"output_tokens":1}}"#,
        ));
        assert_eq!(s.failure, None);
        assert_eq!(s.answer, "ok");
        assert_eq!(s.warnings, ["gemini: Loop detected, stopping"]);
    }

    #[test]
    fn argv_per_request() {
        let mut r = request();
        assert_eq!(argv(&r, &[]), ["--output-format", "stream-json"]);
        r.model = Some("gemini-2.5-pro".into());
        r.system_prompt = "Sys".into();
        assert_eq!(
            argv(&r, &["--skip-trust".into()]),
            [
                "--output-format",
                "stream-json",
                "-m",
                "gemini-2.5-pro",
                "--skip-trust"
            ]
        );
        let inv = Gemini::default().invocation(&r).unwrap();
        assert_eq!(inv.stdin.as_deref(), Some("Sys\n\n---\n\nTask: Do it"));
        assert!(inv.warnings.is_empty());
        r.thinking = Some("high".into());
        r.tools = ToolPolicy::ReadOnly(vec!["read_file".into()]);
        let inv = Gemini::default().invocation(&r).unwrap();
        assert_eq!(
            inv.warnings,
            [
                "the gemini preset has no thinking option; thinking \"high\" ignored",
                "the gemini preset does not restrict tools; tools [read_file] not enforced"
            ]
        );
    }
}
