//! `pi --mode json -p --no-session` (the pi coding agent).
//!
//! pi takes the prompt on argv (`Task: PROMPT`; stdin is `/dev/null`) and the system prompt as
//! a file (`--append-system-prompt FILE` reads the file's contents): a private temp file, deleted
//! after the call. Argv prompts over 120 KiB fail at once.
//!
//! Stream: `session` header → `agent_start` → per turn `message_start`/`message_update`/
//! `message_end` {message: user | assistant | toolResult} and `tool_execution_*` → `agent_end`
//! {messages, willRetry?} → (newer versions) `agent_settled`. The answer is the text of the
//! last assistant `message_end`; usage and cost are summed over assistant messages. A
//! provider failure is an assistant message with `stopReason: "error"` and `errorMessage` —
//! pi still exits 0, so the stream decides. The end: `agent_settled`, or `agent_end` without
//! `willRetry: true` (pi retries by itself otherwise) plus 1500 ms grace for the process to
//! exit, after which it is reaped.

use std::time::Duration;

use serde_json::Value;

use super::cli::{
    Cli, Events, Invocation, PresetConfig, Step, Stream, add_cost, check_argv_prompt, preset_agent,
    str_at, u64_at,
};
use crate::agent::call::{Request, ToolPolicy};
use crate::agent::command::private_temp_file;
use crate::agent::env::EnvPolicy;

/// How long pi may take to exit after its agent loop ended.
pub(crate) const SETTLE_GRACE: Duration = Duration::from_millis(1500);

/// The pi preset.
#[derive(Clone, Debug, Default)]
pub struct Pi {
    /// Binary, extra arguments, environment and kill grace.
    pub config: PresetConfig,
}

impl Cli for Pi {
    type Events = PiEvents;
    const NAME: &'static str = "pi";
    const ENV: EnvPolicy = EnvPolicy::Full;

    fn config(&self) -> &PresetConfig {
        &self.config
    }

    fn invocation(&self, request: &Request) -> Result<Invocation, String> {
        let prompt = format!("Task: {}", request.prompt);
        check_argv_prompt(&prompt)?;
        let mut temp_files = Vec::new();
        let system_file = if request.system_prompt.is_empty() {
            None
        } else {
            let f = private_temp_file("tfc-pi-system-", &request.system_prompt)
                .map_err(|e| format!("cannot write the system prompt file: {e}"))?;
            let path = f.path().to_string_lossy().into_owned();
            temp_files.push(f);
            Some(path)
        };
        let mut inv = Invocation::new(
            argv(
                request,
                system_file.as_deref(),
                &self.config.extra_args,
                prompt,
            ),
            None,
        );
        inv.temp_files = temp_files;
        Ok(inv)
    }
}

preset_agent!(Pi, cost: true, sandboxed: false);

/// The argv after `pi`, the prompt last.
fn argv(
    request: &Request,
    system_file: Option<&str>,
    extra: &[String],
    prompt: String,
) -> Vec<String> {
    let mut a: Vec<String> = ["--mode", "json", "-p", "--no-session"]
        .map(String::from)
        .into();
    if let Some(m) = &request.model {
        a.extend(["--model".into(), m.clone()]);
    }
    if let Some(t) = &request.thinking {
        a.extend(["--thinking".into(), t.clone()]);
    }
    if let ToolPolicy::ReadOnly(tools) | ToolPolicy::Mutating(tools) = &request.tools {
        a.extend(["--tools".into(), tools.join(",")]);
    }
    if let Some(f) = system_file {
        a.extend(["--append-system-prompt".into(), f.to_owned()]);
    }
    a.extend(extra.iter().cloned());
    a.push(prompt);
    a
}

/// pi's events.
#[derive(Debug, Default)]
pub struct PiEvents {
    /// The error of the last assistant message, if it failed.
    pending_error: Option<String>,
    settled: bool,
}

impl Events for PiEvents {
    const TERMINAL: &'static str = "agent_end";

    fn event(&mut self, kind: &str, e: &Value, s: &mut Stream) -> Step {
        match kind {
            "message_end" if str_at(e, &["message", "role"]) == Some("assistant") => {
                let m = &e["message"];
                let u = &m["usage"];
                s.usage.input += u64_at(u, &["input"]);
                s.usage.output += u64_at(u, &["output"]);
                s.usage.cache_read += u64_at(u, &["cacheRead"]);
                s.usage.cache_write += u64_at(u, &["cacheWrite"]);
                add_cost(&mut s.usage.cost_usd, u["cost"]["total"].as_f64());
                s.usage.turns += 1;
                if let Some(model) = str_at(m, &["model"]) {
                    s.model = Some(model.to_owned());
                }
                let text: String = m["content"]
                    .as_array()
                    .map(|blocks| {
                        blocks
                            .iter()
                            .filter(|b| b["type"] == "text")
                            .filter_map(|b| b["text"].as_str())
                            .collect()
                    })
                    .unwrap_or_default();
                if !text.is_empty() {
                    s.answer = text;
                }
                self.pending_error = match str_at(m, &["stopReason"]) {
                    Some(r @ ("error" | "aborted")) => Some(
                        str_at(m, &["errorMessage"])
                            .map_or_else(|| format!("pi: assistant message {r}"), str::to_owned),
                    ),
                    _ => None,
                };
            }
            "agent_end" if e["willRetry"].as_bool() != Some(true) => {
                s.failure = self.pending_error.take();
                return Step::Settle(SETTLE_GRACE);
            }
            "agent_settled" => {
                self.settled = true;
                if let Some(err) = self.pending_error.take() {
                    s.failure = Some(err);
                }
                return Step::Settle(SETTLE_GRACE);
            }
            _ => {}
        }
        Step::Continue
    }

    fn after_terminal(&self, _kind: &str) -> bool {
        // After `agent_end`, events (`agent_settled` among them) may follow until it settles.
        !self.settled
    }

    fn finish(&mut self, s: &mut Stream) {
        if let Some(err) = self.pending_error.take()
            && s.failure.is_none()
        {
            s.failure = Some(err);
        }
    }
}

/// Parse a whole pi stream.
pub fn parse(text: &str) -> Stream {
    super::cli::parse_text::<PiEvents>(text)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{fixture, request};
    use super::*;
    use crate::agent::call::Usage;

    #[test]
    fn plain_answer() {
        let s = parse(&fixture("pi.jsonl"));
        assert_eq!(
            s.answer,
            "The capital of France is Paris. (canned by mockllm)"
        );
        assert_eq!(
            s.usage,
            Usage {
                calls: 0,
                input: 620,
                output: 13,
                cache_read: 0,
                cache_write: 0,
                cost_usd: Some(0.0009050000000000001),
                turns: 1
            }
        );
        assert_eq!(s.model.as_deref(), Some("mock-model"));
        assert!(s.terminal && s.failure.is_none() && s.protocol_error.is_none());
    }

    #[test]
    fn tool_round_sums_assistant_messages() {
        let s = parse(&fixture("pi-tool.jsonl"));
        assert_eq!(s.answer, "The file says: hello from the workdir");
        assert_eq!(
            s.usage,
            Usage {
                calls: 0,
                input: 624 + 703,
                output: 20,
                cache_read: 0,
                cache_write: 0,
                cost_usd: Some(0.0008800000000000001 + 0.00097875),
                turns: 2
            }
        );
        assert!(s.terminal && s.failure.is_none());
    }

    #[test]
    fn error_stop_reason_is_a_failure() {
        let s = parse(&fixture("pi-error.jsonl"));
        assert_eq!(s.failure.as_deref(), Some("400 simulated bad request"));
        assert_eq!(s.answer, "");
        // `cost.total: 0` over no tokens is no measurement: the cost is unknown.
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
    fn retries_and_settling() {
        let err = r#"{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"overloaded","usage":{"input":1,"output":0,"cost":{"total":0.5}}}}"#;
        let ok = r#"{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"stopReason":"stop","usage":{"input":2,"output":3,"cacheRead":4,"cacheWrite":5,"cost":{"total":0.25}}}}"#;
        let text = [
            err,
            r#"{"type":"agent_end","messages":[],"willRetry":true}"#,
            r#"{"type":"auto_retry_start","attempt":1}"#,
            ok,
            r#"{"type":"agent_end","messages":[],"willRetry":false}"#,
            r#"{"type":"agent_settled"}"#,
        ]
        .join("\n");
        let s = parse(&text);
        assert_eq!((s.answer.as_str(), s.failure.as_deref()), ("done", None));
        assert_eq!(
            s.usage,
            Usage {
                calls: 0,
                input: 3,
                output: 3,
                cache_read: 4,
                cache_write: 5,
                cost_usd: Some(0.75),
                turns: 2
            }
        );
        let s = parse(&(text + "\n{\"type\":\"late\"}"));
        assert!(
            s.protocol_error
                .unwrap()
                .contains("output after the terminal")
        );
        // Ended without agent_end: the failed message is the failure.
        let s = parse(err);
        assert!(!s.terminal);
        assert_eq!(s.failure.as_deref(), Some("overloaded"));
    }

    #[test]
    fn argv_and_system_prompt_file() {
        let mut r = request();
        let inv = Pi::default().invocation(&r).unwrap();
        assert_eq!(
            inv.args,
            ["--mode", "json", "-p", "--no-session", "Task: Do it"]
        );
        assert_eq!(inv.stdin, None);
        r.model = Some("mock/mock-model".into());
        r.thinking = Some("high".into());
        r.tools = ToolPolicy::ReadOnly(vec!["read".into(), "grep".into()]);
        r.system_prompt = "Be brief.".into();
        let inv = Pi::default().invocation(&r).unwrap();
        let file = inv.temp_files[0].path().to_owned();
        assert_eq!(
            inv.args,
            [
                "--mode",
                "json",
                "-p",
                "--no-session",
                "--model",
                "mock/mock-model",
                "--thinking",
                "high",
                "--tools",
                "read,grep",
                "--append-system-prompt",
                file.to_str().unwrap(),
                "Task: Do it"
            ]
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "Be brief.");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        drop(inv);
        assert!(!file.exists());
    }

    #[test]
    fn huge_argv_prompt_fails_at_once() {
        let mut r = request();
        r.prompt = "x".repeat(120 * 1024);
        let err = Pi::default().invocation(&r).err().unwrap();
        assert_eq!(
            err,
            "prompt too large for argv (122886 bytes); use a stdin-capable backend"
        );
        r.prompt = "x".repeat(120 * 1024 - 6);
        assert!(Pi::default().invocation(&r).is_ok());
    }
}
