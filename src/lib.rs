//! tfc — a checker and runner for taskflow flows.
//!
//! A flow is a JSON document describing a DAG of phases. tfc lowers it into an IR, checks the
//! whole graph (dependencies, placeholders, conditions) before any model call, and runs it.
//!
//! Pipeline, one module per stage:
//! `source` (text, spans) → `syntax` (template and condition languages) → `eval` (values,
//! resolution, safeParse) → `diag` (diagnostics and their rendering).

#![forbid(unsafe_code)]

pub mod agent;
pub mod check;
pub mod compile;
pub mod diag;
pub mod eval;
pub mod flow;
pub mod json;
pub mod process;
pub mod project;
pub mod report;
pub mod run;
pub mod source;
pub mod syntax;
pub mod value;
