//! Presets: the headless argv and the JSON event stream of each agent CLI (SPEC §9.5).
//!
//! Each CLI has one file: its argv builder, its event vocabulary ([`Events`]) and a `parse`
//! function — a pure function from the CLI's stdout to a [`Stream`] (answer, usage, model,
//! whether the terminal event came, failure or protocol error). The preset struct
//! ([`Claude`], [`Codex`], [`Opencode`], [`Gemini`], [`Pi`]) runs the CLI under the
//! [supervisor](crate::process), feeds stdout to the same parser line by line, and turns
//! stream plus exit into an [`Outcome`](crate::agent::Outcome):
//!
//! - timeouts and cancellation first (the supervisor stopped the process);
//! - a stdout line over 1 MiB, a line that is not a JSON object with a `type`, or output after
//!   the terminal event ⇒ `protocol-error` (the process is stopped at once);
//! - a failure the stream reported (claude `is_error`, codex `turn.failed`, gemini
//!   `result.status:"error"`, opencode `error`, pi an assistant message with `stopReason:"error"`)
//!   ⇒ `failed` with the stream's message, whatever the exit code;
//! - the terminal event and exit 0 (pi: settled) ⇒ `completed`;
//! - exit 0 without the terminal event ⇒ `failed`, `process exited without <event>`;
//! - any other exit ⇒ `failed`, `<bin> exited with code N: <end of stderr>`.

mod claude;
mod cli;
mod codex;
mod gemini;
mod opencode;
mod pi;
#[cfg(test)]
mod test_support;

pub use claude::Claude;
pub use codex::Codex;
pub use gemini::Gemini;
pub use opencode::Opencode;
pub use pi::Pi;

/// The stream parsers, one pure function per CLI: stdout text in, [`Stream`] out.
pub mod parse {
    pub use super::claude::parse as claude;
    pub use super::codex::parse as codex;
    pub use super::gemini::parse as gemini;
    pub use super::opencode::parse as opencode;
    pub use super::pi::parse as pi;
}

pub use cli::{Events, Parser, PresetConfig, Step, Stream};

use std::sync::Arc;

use crate::agent::call::Agent;

/// The preset backend called `name` (`claude`, `codex`, `opencode`, `gemini`, `pi`).
pub fn by_name(name: &str, config: PresetConfig) -> Option<Arc<dyn Agent>> {
    Some(match name {
        "claude" => Arc::new(Claude { config }),
        "codex" => Arc::new(Codex { config }),
        "opencode" => Arc::new(Opencode { config }),
        "gemini" => Arc::new(Gemini { config }),
        "pi" => Arc::new(Pi { config }),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::cli::*;
    use super::*;
    use serde_json::Value;

    #[derive(Default)]
    struct Toy;
    impl Events for Toy {
        const TERMINAL: &'static str = "end";
        fn event(&mut self, kind: &str, e: &Value, s: &mut Stream) -> Step {
            match kind {
                "text" => {
                    s.answer.push_str(str_at(e, &["t"]).unwrap_or(""));
                    Step::Continue
                }
                "end" => Step::Terminal,
                _ => Step::Continue,
            }
        }
    }

    #[test]
    fn generic_stream_rules() {
        let s = parse_text::<Toy>("{\"type\":\"text\",\"t\":\"a\"}\n\n  \n{\"type\":\"end\"}\n");
        assert_eq!((s.answer.as_str(), s.terminal), ("a", true));
        assert_eq!(s.protocol_error, None);
        let s = parse_text::<Toy>("{\"type\":\"end\"}\n{\"type\":\"text\",\"t\":\"b\"}\n");
        assert!(
            s.protocol_error
                .unwrap()
                .starts_with("output after the terminal `end` event: {\"type\":\"text\"")
        );
        for bad in ["not json", "[1]", "{\"no\":\"type\"}", "{\"type\":3}"] {
            let s = parse_text::<Toy>(bad);
            assert_eq!(
                s.protocol_error.as_deref(),
                Some(format!("malformed event line: {bad}").as_str())
            );
        }
        let long = format!("x{}", "é".repeat(300));
        let s = parse_text::<Toy>(&long);
        assert!(s.protocol_error.unwrap().ends_with("éé…"));
    }

    #[test]
    fn a_zero_cost_over_no_tokens_is_unknown() {
        let s = parse_text::<Costed>(r#"{"type":"end","cost":0,"tokens":0}"#);
        assert_eq!(s.usage.cost_usd, None);
        // A zero cost with tokens is what the CLI priced them at (a free model): kept.
        let s = parse_text::<Costed>(r#"{"type":"end","cost":0,"tokens":5}"#);
        assert_eq!(s.usage.cost_usd, Some(0.0));
        let s = parse_text::<Costed>(r#"{"type":"end","cost":0.5,"tokens":0}"#);
        assert_eq!(s.usage.cost_usd, Some(0.5));
    }

    #[derive(Default)]
    struct Costed;
    impl Events for Costed {
        const TERMINAL: &'static str = "end";
        fn event(&mut self, _: &str, e: &Value, s: &mut Stream) -> Step {
            s.usage.cache_write = u64_at(e, &["tokens"]);
            s.usage.cost_usd = e["cost"].as_f64();
            Step::Terminal
        }
    }

    #[test]
    fn system_prompt_prepended() {
        let mut r = test_support::request();
        assert_eq!(with_system(&r), "Do it");
        r.system_prompt = "Be brief.".into();
        assert_eq!(with_system(&r), "Be brief.\n\n---\n\nTask: Do it");
    }

    #[test]
    fn by_name_knows_every_preset() {
        for n in crate::agent::config::Preset::ALL.map(|p| p.as_str()) {
            let a = by_name(n, PresetConfig::default()).unwrap();
            assert_eq!(a.name(), n);
            assert!(a.reports_tokens());
            assert_eq!(a.reports_cost(), matches!(n, "claude" | "opencode" | "pi"));
        }
        assert!(by_name("nope", PresetConfig::default()).is_none());
    }
}
