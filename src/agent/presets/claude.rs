//! `claude -p --output-format stream-json --verbose` (Claude Code).
//!
//! Stream: `system/init` → one `assistant` event per content block → `user` tool results → …
//! → `result`, the terminal event. A failure is a `result` with `is_error: true` — its `subtype`
//! may still say `"success"` (an HTTP 400 looks like that). Usage and cost come from `result`
//! only: `assistant` events carry placeholder usage (`output_tokens: 1`) and are never summed.

use serde_json::Value;

use super::cli::{
    Cli, Events, Invocation, PresetConfig, Step, Stream, at, preset_agent, str_at, u64_at,
};
use crate::agent::call::{Request, ToolPolicy};
use crate::agent::env::EnvPolicy;

/// The claude preset.
#[derive(Clone, Debug, Default)]
pub struct Claude {
    /// Binary, extra arguments, environment and kill grace.
    pub config: PresetConfig,
}

impl Cli for Claude {
    type Events = ClaudeEvents;
    const NAME: &'static str = "claude";
    const ENV: EnvPolicy = EnvPolicy::Allowlist {
        prefixes: &["ANTHROPIC_", "AWS_", "CLAUDE_CODE_", "GOOGLE_", "VERTEX_"],
    };

    fn config(&self) -> &PresetConfig {
        &self.config
    }

    fn model_id(model: &str) -> String {
        model_id(model).to_owned()
    }

    fn invocation(&self, request: &Request) -> Result<Invocation, String> {
        let mut inv = Invocation::new(
            argv(request, &self.config.extra_args),
            Some(request.prompt.clone()),
        );
        if let Some(level) = request.thinking.as_deref().filter(|l| *l != "off") {
            inv.warnings.push(format!(
                "the claude preset has no thinking option; thinking \"{level}\" ignored"
            ));
        }
        Ok(inv)
    }
}

preset_agent!(Claude, cost: true, sandboxed: false);

/// The argv after `claude`. A read-only tool list is enforced: `--tools` limits the tools
/// offered to the model (`--allowedTools` alone only pre-approves, the others stay offered);
/// a mutating list is pre-approved with `--allowedTools`.
fn argv(request: &Request, extra: &[String]) -> Vec<String> {
    let mut a: Vec<String> = ["-p", "--output-format", "stream-json", "--verbose"]
        .map(String::from)
        .into();
    if let Some(m) = &request.model {
        a.extend(["--model".into(), m.clone()]);
    }
    if !request.system_prompt.is_empty() {
        a.extend([
            "--append-system-prompt".into(),
            request.system_prompt.clone(),
        ]);
    }
    match &request.tools {
        ToolPolicy::Default => {}
        ToolPolicy::ReadOnly(tools) => {
            // `=` keeps these variadic options from swallowing the words after them.
            a.push(format!("--tools={}", tools.join(",")));
            a.push(format!("--allowedTools={}", tools.join(",")));
        }
        ToolPolicy::Mutating(tools) => a.push(format!("--allowedTools={}", tools.join(","))),
    }
    a.extend(extra.iter().cloned());
    a
}

/// A model id without claude's display suffixes: `claude-opus-4-8[1m]` (the 1M-context variant,
/// as `system/init` names it) is `claude-opus-4-8`, the id the API answers as.
pub(crate) fn model_id(model: &str) -> &str {
    let mut id = model.trim_end();
    while let Some(open) = id.strip_suffix(']').and_then(|rest| rest.rfind('[')) {
        id = id[..open].trim_end();
    }
    if id.is_empty() { model } else { id }
}

/// claude's events.
#[derive(Debug, Default)]
pub struct ClaudeEvents {
    init_model: Option<String>,
    /// The text of the last `assistant` event not from model `<synthetic>`.
    last_text: Option<String>,
}

impl Events for ClaudeEvents {
    const TERMINAL: &'static str = "result";

    fn event(&mut self, kind: &str, e: &Value, s: &mut Stream) -> Step {
        match kind {
            "system" if str_at(e, &["subtype"]) == Some("init") => {
                self.init_model = str_at(e, &["model"]).map(|m| model_id(m).to_owned());
            }
            "assistant" => {
                let model = str_at(e, &["message", "model"]);
                if model != Some("<synthetic>") {
                    if let Some(m) = model {
                        s.model = Some(model_id(m).to_owned());
                    }
                    let text = texts(at(e, &["message", "content"]));
                    if !text.is_empty() {
                        self.last_text = Some(text);
                    }
                }
            }
            "result" => {
                let result = str_at(e, &["result"]);
                s.answer = result
                    .map(str::to_owned)
                    .or_else(|| self.last_text.clone())
                    .unwrap_or_default();
                let u = &e["usage"];
                s.usage.input = u64_at(u, &["input_tokens"]);
                s.usage.output = u64_at(u, &["output_tokens"]);
                s.usage.cache_read = u64_at(u, &["cache_read_input_tokens"]);
                s.usage.cache_write = u64_at(u, &["cache_creation_input_tokens"]);
                s.usage.turns = u64_at(e, &["num_turns"]) as u32;
                s.usage.cost_usd = e["total_cost_usd"].as_f64();
                if e["is_error"].as_bool() == Some(true) {
                    s.failure = Some(error_text(e, result));
                }
                if let Some(denied) = e["permission_denials"].as_array()
                    && !denied.is_empty()
                {
                    let tools: Vec<&str> = denied
                        .iter()
                        .filter_map(|d| d["tool_name"].as_str())
                        .collect();
                    s.warnings.push(format!(
                        "claude denied {} tool call(s): {}",
                        denied.len(),
                        tools.join(", ")
                    ));
                }
                if s.model.is_none() {
                    s.model = self.init_model.clone();
                }
                return Step::Terminal;
            }
            _ => {}
        }
        Step::Continue
    }

    fn finish(&mut self, s: &mut Stream) {
        if !s.terminal {
            s.answer = self.last_text.clone().unwrap_or_default();
            if s.model.is_none() {
                s.model = self.init_model.clone();
            }
        }
    }
}

/// The text blocks of a message content, joined.
fn texts(content: Option<&Value>) -> String {
    content
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("")
        })
        .unwrap_or_default()
}

/// A failed `result`'s message: its text, else its `errors`, else its subtype.
fn error_text(e: &Value, result: Option<&str>) -> String {
    if let Some(r) = result.filter(|r| !r.trim().is_empty()) {
        return r.to_owned();
    }
    if let Some(errors) = e["errors"].as_array() {
        let errors: Vec<String> = errors
            .iter()
            .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_owned))
            .collect();
        if !errors.is_empty() {
            return errors.join("; ");
        }
    }
    format!(
        "claude reported an error ({})",
        str_at(e, &["subtype"]).unwrap_or("no subtype")
    )
}

/// Parse a whole claude stream.
pub fn parse(text: &str) -> Stream {
    super::cli::parse_text::<ClaudeEvents>(text)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{fixture, request};
    use super::*;
    use crate::agent::call::Usage;

    fn usage(input: u64, output: u64, cache_read: u64, cost: f64, turns: u32) -> Usage {
        Usage {
            calls: 0,
            input,
            output,
            cache_read,
            cache_write: 0,
            cost_usd: Some(cost),
            turns,
        }
    }

    #[test]
    fn plain_answer() {
        let s = parse(&fixture("claude.jsonl"));
        assert_eq!(
            s.answer,
            "The capital of France is Paris. (canned by mockllm)"
        );
        assert_eq!(s.usage, usage(3216, 13, 1200, 0.017005, 1));
        assert_eq!(s.model.as_deref(), Some("claude-opus-4-8"));
        assert!(s.terminal && s.failure.is_none() && s.protocol_error.is_none());
        assert!(s.warnings.is_empty());
    }

    #[test]
    fn tool_round_takes_usage_from_result_only() {
        let s = parse(&fixture("claude-tool.jsonl"));
        assert_eq!(s.answer, "The file says: hello from the workdir");
        // Summing the `assistant` events would give 3214 * 2 + 3310 input and 3 output.
        assert_eq!(s.usage, usage(6524, 29, 0, 0.033345, 2));
        assert!(s.terminal && s.failure.is_none());
    }

    #[test]
    fn http_400_is_a_failure_despite_subtype_success() {
        let s = parse(&fixture("claude-error.jsonl"));
        assert_eq!(
            s.failure.as_deref(),
            Some("API Error: 400 simulated bad request")
        );
        assert_eq!(s.answer, "API Error: 400 simulated bad request");
        // `total_cost_usd: 0` over no tokens is no measurement: the cost is unknown.
        assert_eq!(
            s.usage,
            Usage {
                turns: 1,
                ..Usage::default()
            }
        );
        // The synthetic assistant message does not name the model; `system/init` does, as
        // `claude-opus-4-8[1m]`.
        assert_eq!(s.model.as_deref(), Some("claude-opus-4-8"));
        assert!(s.terminal);
    }

    #[test]
    fn display_suffixes_are_not_part_of_the_model_id() {
        for (shown, id) in [
            ("claude-opus-4-8[1m]", "claude-opus-4-8"),
            ("opus[1m]", "opus"),
            ("claude-sonnet-4-5 [1m]", "claude-sonnet-4-5"),
            ("claude-opus-4-8[1m][fast]", "claude-opus-4-8"),
            ("claude-haiku-4-5", "claude-haiku-4-5"),
            ("[1m]", "[1m]"),
            ("", ""),
        ] {
            assert_eq!(model_id(shown), id, "{shown}");
            assert_eq!(<Claude as Cli>::model_id(shown), id, "{shown}");
        }
        let s = parse(&fixture("claude.jsonl").replace(
            r#""model":"claude-opus-4-8""#,
            r#""model":"claude-opus-4-8[1m]""#,
        ));
        assert_eq!(s.model.as_deref(), Some("claude-opus-4-8"));
    }

    #[test]
    fn permission_denial_is_a_warning() {
        let s = parse(&fixture("claude-denied.jsonl"));
        assert_eq!(s.answer, "I was not allowed to create the file.");
        assert_eq!(s.usage, usage(6561, 29, 0, 0.033530000000000004, 2));
        assert!(s.failure.is_none());
        assert_eq!(s.warnings, ["claude denied 1 tool call(s): Bash"]);
    }

    #[test]
    fn without_result_the_last_real_assistant_text_is_the_partial_answer() {
        let text = fixture("claude-tool.jsonl");
        let cut: Vec<&str> = text.lines().take(4).collect();
        let s = parse(&cut.join("\n"));
        assert!(!s.terminal);
        assert_eq!(s.answer, "Let me read the file.");
        assert_eq!(s.usage, Usage::default());
        let s = parse(
            r#"{"type":"result","subtype":"error_max_turns","is_error":true,"errors":["max turns"],"usage":{}}"#,
        );
        assert_eq!(s.failure.as_deref(), Some("max turns"));
        assert_eq!(s.usage.cost_usd, None);
    }

    #[test]
    fn output_after_result_is_a_protocol_error() {
        let text = fixture("claude.jsonl") + "{\"type\":\"system\",\"subtype\":\"late\"}\n";
        let s = parse(&text);
        assert!(
            s.protocol_error
                .unwrap()
                .starts_with("output after the terminal `result` event")
        );
    }

    #[test]
    fn argv_per_request() {
        let mut r = request();
        assert_eq!(
            argv(&r, &[]),
            ["-p", "--output-format", "stream-json", "--verbose"]
        );
        r.model = Some("claude-haiku-4-5".into());
        r.system_prompt = "Be terse.".into();
        r.tools = ToolPolicy::ReadOnly(vec!["Read".into(), "Grep".into()]);
        assert_eq!(
            argv(&r, &["--safe-mode".into()])[4..],
            [
                "--model",
                "claude-haiku-4-5",
                "--append-system-prompt",
                "Be terse.",
                "--tools=Read,Grep",
                "--allowedTools=Read,Grep",
                "--safe-mode"
            ]
        );
        r.tools = ToolPolicy::Mutating(vec!["Edit".into()]);
        assert_eq!(argv(&r, &[]).last().unwrap(), "--allowedTools=Edit");
        assert!(
            Claude::default()
                .invocation(&r)
                .unwrap()
                .warnings
                .is_empty()
        );
        r.thinking = Some("max".into());
        assert_eq!(
            Claude::default().invocation(&r).unwrap().warnings,
            ["the claude preset has no thinking option; thinking \"max\" ignored"]
        );
    }
}
