//! The flow stage: the IR ([`Flow`], in `ir.rs`, with the phase kinds under `kinds/`), its
//! lowering from the span-keeping JSON tree (`lower.rs`, with the field readers in `read.rs`
//! and `specs.rs` and the shorthand forms in `shorthand.rs`), the field tables that drive
//! unknown-field detection and `tfc schema`, and the argument helpers a run uses.
//!
//! Lowering reads the JSON tree, reports schema problems (unknown fields, wrong types,
//! out-of-range values) and fills the IR; the checks in `crate::check` then work on the IR
//! alone. This file only declares the modules and re-exports their API: no file of the folder
//! imports it, so the files point one way (the IR and the tables at the bottom, the kinds
//! above them, lowering on top).

mod args;
pub(crate) mod enums;
pub(crate) mod fields;
mod hooks;
mod ir;
/// The phase kinds, one file each.
pub mod kinds;
pub(crate) mod lower;
pub(crate) mod lowerer;
pub(crate) mod read;
/// The JSON Schema of flow files.
pub mod schema;
mod shorthand;
mod specs;

pub(crate) use args::enum_list;
pub use args::{
    ArgProblem, Invocation, Notation, check_relative_path, check_value, convert_text,
    convert_value, effective_args, resolve_args, resolve_invocation, resolve_owned, split_pair,
    unknown_arg_message, value_help,
};
pub use enums::{
    AgentScope, ArgType, CacheScope, CodeLanguage, Combine, ContractType, CwdKeyword, ExpandMode,
    Join, OnBlock, OnTimeout, OutputMode, PhaseType, ReduceStrategy, ScorerType, Thinking,
    TournamentMode, Words,
};
pub use fields::{FieldDef, FieldType, ObjectKind};
pub use ir::{
    ArgSpec, Budget, CacheSpec, Common, Cond, Contract, Cwd, DEFAULT_HOOK_TIMEOUT_MS, Field, Flow,
    Hook, HookEvent, Hooks, Phase, PhaseId, PhaseIds, Retry, Shorthand, Text, Written,
};
pub use kinds::table::fields_of;
pub use kinds::{
    Branch, Def, EvalEntry, EvalKind, PhaseKind, Run, Score, ScoreJudge, Scorer, ScorerKind,
    WithValue,
};
pub use lower::{LowerOptions, Lowered, lower, lower_source};
pub(crate) use lowerer::spaced_placeholder;
