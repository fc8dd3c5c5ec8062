//! The single seam to models: the [`Agent`] trait and its backends.
//!
//! A backend turns a [`Request`] (prompt, agent, model, limits) into an [`Outcome`] — always a
//! value, never an error: failures, timeouts and cancellations are outcomes with a
//! [`StopReason`]. Retries, budgets and fail-soft rules live in the interpreter, not here.
//!
//! Files:
//! * `call.rs` — the call contract: [`Request`], [`Outcome`], [`Usage`], [`StopReason`] and the
//!   [`Agent`] trait (this file only declares the modules and re-exports).
//! * `roster.rs` — the [`Roster`] trait (agent → backend). Processes (spawning, timeouts,
//!   cancellation tokens) are [`crate::process`]'s; `env.rs` picks what a backend passes on.
//! * `config/`, `definitions.rs`, `config_roster.rs` — `config.toml` (read through serde
//!   derive), `.tfc/agents/*.md`, auto-detection, and [`ConfigRoster`], the roster of `tfc run`
//!   (SPEC §9.1–9.2).
//! * `command.rs`, `presets/` — process backends: any command, and the CLI presets.
//! * `preflight.rs` — E0701–E0703, W0701–W0702 before a run (SPEC §7.4).
//! * `openai.rs` over `http.rs` — the OpenAI-compatible HTTP backend (SPEC §9.7).
//! * `record.rs`, `replay.rs` — the `agent-call` record shared with the journal, `--record`,
//!   `replay:FILE` (SPEC §9.8), over `wire.rs` (serde to and from [`crate::value::Value`]).
//!   `dry_run.rs` — `--dry-run` (SPEC §9.9).

pub(crate) mod call;
pub mod command;
pub mod config;
pub mod config_roster;
pub mod definitions;
pub mod dry_run;
pub mod env;
mod func;
pub(crate) mod http;
pub mod openai;
mod plan_env;
pub mod preflight;
pub mod presets;
pub mod record;
pub mod replay;
pub(crate) mod roster;
#[cfg(test)]
pub(crate) mod test_support;
mod wire;

pub use crate::process::{Cancel, CancelSource};
pub use call::{
    Agent, BoxFuture, DEFAULT_MAX_PROMPT, Outcome, Purpose, Request, StopReason, ToolPolicy, Usage,
};
pub use command::{CommandBackend, split_command};
pub use config::{Config, ConfigEnv};
pub use config_roster::{
    BackendFactory, ConfigRoster, NoProcessBackends, ProcessBackends, RosterOptions,
};
pub use definitions::{AgentDefinition, AgentDefinitions};
pub use dry_run::DryRun;
pub use func::FnAgent;
pub use openai::{OpenAiBackend, OpenAiConfig};
pub use plan_env::PlanEnv;
pub use preflight::{
    AgentUse, PreflightOptions, preflight, undefined_agents, undefined_agents_line,
};
pub use record::{AgentCallRecord, RecordSink, Recorder, prompt_sha256};
pub use replay::{Replay, is_replay_miss};
pub use roster::{ResolvedAgent, Roster, SingleBackend};

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn stop_reasons_serialize_as_they_are_spelled() {
        for r in StopReason::ALL {
            assert_eq!(wire::to_value(&r), crate::value::Value::from(r.as_str()));
            assert_eq!(StopReason::parse(r.as_str()), Some(r));
        }
    }

    #[test]
    fn request_phase_id_is_the_nodes_own_part() {
        let id = |node: &str| Request::new("r", node, "a", "p").phase_id;
        assert_eq!(id("review"), "review");
        assert_eq!(id("audit#3"), "audit");
        assert_eq!(id("fix@2"), "fix");
        assert_eq!(id("sub/check#judge"), "check");
        let r = Request::new("r", "x", "a", "p");
        assert_eq!(
            (r.attempt, r.purpose, r.cwd),
            (1, Purpose::Task, PathBuf::from("."))
        );
    }
}
