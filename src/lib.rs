//! tfc — a checker and runner for taskflow flows.
//!
//! A flow is a JSON document describing a DAG of phases (`agent`, `map`, `reduce`, `gate`,
//! `loop`, `script`, …) joined by `dependsOn`, with `{placeholder}` templates and
//! `when`/`until` conditions. tfc checks the whole graph before any model call is paid for,
//! then runs it and hands back only the final output.
//!
//! # Pipeline
//!
//! `flow.json` bytes → [`source`] (the text, byte [`Span`](source::Span)s) → [`json`] (a tree
//! that keeps every value's span) → [`flow`] (the IR: every field lowered with its defaults;
//! each template and condition string is parsed by [`syntax`] and compiled to a flat op list
//! by [`compile`] once, its spans shifted into the file) → [`check`] (every static problem at
//! once; `tfc check` renders them and stops here) → [`run`]: the run machine makes every
//! decision (evaluates `when` and renders `task` with [`eval`], asks for an agent call), the
//! driver executes its commands — calls through an [`agent`] backend, scripts, timers — and
//! feeds the results back, and the store records the run. Every stage reports
//! [`Diagnostic`](diag::Diagnostic)s with spans into the same file, so one renderer
//! ([`diag::render`]) serves check and run.
//!
//! The language stages point one way: [`value`] (JSON values with JavaScript semantics:
//! numbers, `trim`, whitespace) → [`source`] → [`diag`] → [`json`] → [`syntax`] (lex and parse
//! only) → [`compile`] → [`eval`]; a stage uses only the stages before it (`tests/layers.rs`
//! checks this). [`report`] draws a checked flow as Mermaid; [`project`] finds a project's
//! files.
//!
//! # Running a flow
//!
//! [`run::Interpreter::eval`] checks and runs a flow with injected backends. Here every agent
//! is answered in-process by a function, so nothing leaves the process:
//!
//! ```
//! use tfc::agent::{FnAgent, Outcome};
//! use tfc::run::{FlowSource, Interpreter, PhaseStatus, RunStatus};
//! use tfc::value::Map;
//!
//! let flow = r#"{
//!   "name": "conditional-review",
//!   "phases": [
//!     { "id": "triage", "output": "json", "task": "Classify the PR. Output JSON {severity, reason}." },
//!     { "id": "deep", "dependsOn": ["triage"],
//!       "when": "{steps.triage.json.severity} == high",
//!       "task": "Deep-dive the change. Reason: {steps.triage.json.reason}" },
//!     { "id": "quick", "dependsOn": ["triage"],
//!       "when": "{steps.triage.json.severity} != high",
//!       "task": "Write a one-paragraph summary." }
//!   ]
//! }"#;
//! let model = FnAgent::new("model", |request| match request.phase_id.as_str() {
//!     "triage" => Outcome::ok(r#"{"severity": "high", "reason": "touches auth"}"#),
//!     _ => Outcome::ok(format!("[{}]", request.prompt)),
//! });
//! let source = FlowSource::Text { name: "review".into(), text: flow.into() };
//! let record = Interpreter::with_agent(model).eval(source, Map::default()).unwrap();
//!
//! assert_eq!(record.status, RunStatus::Completed);
//! assert_eq!(record.phases["quick"].status, PhaseStatus::Skipped);
//! assert_eq!(record.final_output, "[Deep-dive the change. Reason: touches auth]");
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod agent;
pub mod check;
pub mod compile;
pub mod diag;
pub mod eval;
pub mod flow;
pub mod json;
pub mod lsp;
pub mod mcp;
pub mod plan;
pub mod process;
pub mod project;
pub mod report;
pub mod run;
pub mod source;
pub mod syntax;
pub mod telemetry;
#[cfg(feature = "temporal")]
pub mod temporal;
pub mod test;
pub mod value;

/// README.md's Rust block, compiled and run as a doc test so that the library call it shows
/// stays the one that compiles (its other blocks are `sh`, `json`, `toml` or `text`).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
