//! The closed field sets of every object in a flow file (SPEC §2–§3). Lowering rejects any
//! other key (E0003, with a did-you-mean from these lists) and `tfc schema` is generated from
//! the same tables, so the reader and the schema cannot drift apart.

/// The objects of a flow file that have a closed field set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjectKind {
    /// The document.
    Flow,
    /// A phase object.
    Phase,
    /// A `branches` entry.
    Branch,
    /// A step of the `chain`/`tasks` shorthand.
    Step,
    /// An `args` entry.
    ArgSpec,
    /// `budget`.
    Budget,
    /// `retry`.
    Retry,
    /// `cache`.
    Cache,
    /// A gate's `score`.
    Score,
    /// A `score.scorers` entry.
    Scorer,
    /// `score.judge`.
    Judge,
    /// An `expect` contract (and its nested schemas).
    Expect,
    /// `lint`.
    Lint,
    /// `hooks` (SPEC §8.10).
    Hooks,
}

impl ObjectKind {
    /// How messages name it: `unknown field 'x' in a phase`.
    pub fn describe(self) -> &'static str {
        match self {
            ObjectKind::Flow => "the flow",
            ObjectKind::Phase => "a phase",
            ObjectKind::Branch => "a branch",
            ObjectKind::Step => "a shorthand step",
            ObjectKind::ArgSpec => "an argument spec",
            ObjectKind::Budget => "budget",
            ObjectKind::Retry => "retry",
            ObjectKind::Cache => "cache",
            ObjectKind::Score => "score",
            ObjectKind::Scorer => "a scorer",
            ObjectKind::Judge => "score.judge",
            ObjectKind::Expect => "an expect contract",
            ObjectKind::Lint => "lint",
            ObjectKind::Hooks => "hooks",
        }
    }
}

/// The JSON shape a field takes, for the schema and for type errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldType {
    /// A string.
    String,
    /// A boolean.
    Bool,
    /// A number.
    Number,
    /// An integer.
    Integer,
    /// A number of ms, or (an approval's `timeout`) a duration string such as `"4h"`.
    Duration,
    /// An array of strings.
    StringArray,
    /// A command as argv: a non-empty array of strings, the program first (`hooks`).
    Argv,
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// One of these strings, or a non-empty array of them (a contract's `type`).
    OneOrList(&'static [&'static str]),
    /// An object with a closed field set.
    Object(ObjectKind),
    /// An array of such objects.
    ArrayOf(ObjectKind),
    /// An object whose values are all of this kind (`args`, `properties`).
    MapOf(ObjectKind),
    /// Any JSON value.
    Any,
    /// A string or an array of strings (`run`).
    StringOrStrings,
    /// A string or an object (`def`).
    StringOrObject,
    /// An object of arbitrary values (`with`).
    AnyObject,
    /// An array of phases or strings/steps (`phases`, `chain`, `tasks`).
    Phases,
    /// The steps of the `chain`/`tasks` shorthand.
    Steps,
}

/// One field of a closed field set.
#[derive(Clone, Copy, Debug)]
pub struct FieldDef {
    /// The key.
    pub name: &'static str,
    /// Its JSON shape.
    pub ty: FieldType,
    /// One line for the schema.
    pub doc: &'static str,
}

pub(super) const fn f(name: &'static str, ty: FieldType, doc: &'static str) -> FieldDef {
    FieldDef { name, ty, doc }
}

use super::enums::{
    AgentScope, ArgType, CacheScope, CodeLanguage, Combine, ContractType, Join, OutputMode,
    PhaseType, ScorerType, Thinking,
};
use FieldType as T;
use ObjectKind as K;

const FLOW: &[FieldDef] = &[
    f(
        "$schema",
        T::String,
        "JSON Schema reference for editors; ignored",
    ),
    f("name", T::String, "flow name (default: file stem)"),
    f("description", T::String, "shown in listings"),
    f("version", T::Number, "informational"),
    f(
        "args",
        T::MapOf(K::ArgSpec),
        "declared invocation arguments",
    ),
    f(
        "concurrency",
        T::Number,
        "max phases running at once (default 8)",
    ),
    f("budget", T::Object(K::Budget), "spend caps"),
    f(
        "hooks",
        T::Object(K::Hooks),
        "commands run when the run ends (SPEC §8.10)",
    ),
    f(
        "agentScope",
        T::OneOf(AgentScope::NAMES),
        "where agent definitions are found",
    ),
    f(
        "strictInterpolation",
        T::Bool,
        "report interpolation warnings as errors",
    ),
    f("contextSharing", T::Bool, "accepted; no effect in tfc v1"),
    f("incremental", T::Bool, "default cache scope cross-run"),
    f("idleTimeout", T::Number, "idle watchdog in ms (0 disables)"),
    f(
        "lint",
        T::Object(K::Lint),
        "warning settings for the whole file",
    ),
    f("phases", T::Phases, "the phases of the DAG"),
    // Shorthand forms (SPEC §2.3).
    f("chain", T::Steps, "shorthand: sequential steps"),
    f("tasks", T::Steps, "shorthand: parallel tasks"),
    f("task", T::String, "shorthand: one task"),
    f(
        "agent",
        T::String,
        "shorthand: agent of the generated phases",
    ),
    f("context", T::StringArray, "shorthand: files to pre-read"),
    f(
        "contextLimit",
        T::Number,
        "shorthand: chars per pre-read file",
    ),
    f("cwd", T::String, "shorthand: working directory"),
];

/// The common phase fields (SPEC §3.1); each kind adds its own (`kinds/`).
pub(crate) const PHASE_COMMON: &[FieldDef] = &[
    f("id", T::String, "unique id, [A-Za-z0-9-]+"),
    f(
        "type",
        T::OneOf(PhaseType::NAMES),
        "phase kind (default agent)",
    ),
    f("agent", T::String, "agent name (default `default`)"),
    f("task", T::String, "prompt template"),
    f("dependsOn", T::StringArray, "phases that must finish first"),
    f(
        "from",
        T::StringArray,
        "phases whose output this phase consumes",
    ),
    f(
        "join",
        T::OneOf(Join::NAMES),
        "wait for all dependencies or the first satisfied one",
    ),
    f("when", T::String, "condition; falsy skips the phase"),
    f("retry", T::Object(K::Retry), "explicit retry policy"),
    f(
        "timeout",
        T::Duration,
        "wall limit per call in ms (>= 1000); an approval's deadline (ms, or e.g. \"4h\")",
    ),
    f(
        "idleTimeout",
        T::Number,
        "idle watchdog in ms (0 or >= 1000)",
    ),
    f(
        "output",
        T::OneOf(OutputMode::NAMES),
        "store safeParse(output) as json",
    ),
    f(
        "expect",
        T::Object(K::Expect),
        "output contract (needs output: json)",
    ),
    f("model", T::String, "model override"),
    f("thinking", T::OneOf(Thinking::NAMES), "reasoning effort"),
    f("tools", T::StringArray, "tool policy"),
    f(
        "cwd",
        T::String,
        "working directory: path, temp, dedicated, worktree or {args.X}",
    ),
    f(
        "context",
        T::StringArray,
        "files to pre-read into the prompt",
    ),
    f(
        "contextLimit",
        T::Number,
        "chars per pre-read file (default 8000)",
    ),
    f("final", T::Bool, "this phase's output is the flow's result"),
    f("optional", T::Bool, "a failure is tolerated"),
    f("shareContext", T::Bool, "accepted; no effect in tfc v1"),
    f(
        "idempotent",
        T::Bool,
        "false: never retried on transient errors nor cached",
    ),
    f("concurrency", T::Number, "fan-out width"),
    f("cache", T::Object(K::Cache), "result reuse"),
];

const BRANCH: &[FieldDef] = &[
    f("task", T::String, "prompt template"),
    f("agent", T::String, "agent name"),
    f("cwd", T::String, "parallel: literal working directory"),
];

const STEP: &[FieldDef] = &[
    f("task", T::String, "prompt template"),
    f("agent", T::String, "agent name"),
    f("context", T::StringArray, "files to pre-read"),
    f("contextLimit", T::Number, "chars per pre-read file"),
    f("cwd", T::String, "working directory"),
];

const ARG_SPEC: &[FieldDef] = &[
    f(
        "type",
        T::OneOf(ArgType::NAMES),
        "value type (absent: legacy untyped)",
    ),
    f("default", T::Any, "value when not provided"),
    f("description", T::String, "help text"),
    f("required", T::Bool, "must be provided (typed args)"),
    f("minimum", T::Number, "number: lower bound"),
    f("maximum", T::Number, "number: upper bound"),
    f("values", T::Any, "enum: the allowed strings/numbers"),
];

const BUDGET: &[FieldDef] = &[
    f("maxUSD", T::Number, "cost cap in USD"),
    f("maxTokens", T::Number, "input+output token cap"),
    f("maxCalls", T::Integer, "agent call cap (integer >= 1)"),
];

const LINT: &[FieldDef] = &[f(
    "allow",
    T::StringArray,
    "warnings not reported: codes (W0102) or names (gate-sole-path)",
)];

const HOOKS: &[FieldDef] = &[
    f(
        "onComplete",
        T::Argv,
        "argv run when the run completes; the run record on stdin",
    ),
    f(
        "onFail",
        T::Argv,
        "argv run when the run fails; the run record on stdin",
    ),
    f(
        "onPause",
        T::Argv,
        "argv run when the run pauses (approval, budget, interrupt)",
    ),
    f(
        "onBlock",
        T::Argv,
        "argv run when a gate or rejection blocks the run",
    ),
    f(
        "timeout",
        T::Number,
        "wall limit per hook in ms (default 30000, >= 1000)",
    ),
];

const RETRY: &[FieldDef] = &[
    f("max", T::Number, "extra attempts, 0..20 (required)"),
    f("backoffMs", T::Number, "base delay, 0..60000 ms"),
    f("factor", T::Number, "backoff multiplier, 1..10"),
];

const CACHE: &[FieldDef] = &[
    f(
        "scope",
        T::OneOf(CacheScope::NAMES),
        "where results are reused",
    ),
    f(
        "fingerprint",
        T::StringArray,
        "git:/glob:/glob!:/file:/env: inputs of the key",
    ),
    f("ttl", T::String, "max age, e.g. 30m, 6h, 7d"),
];

const SCORE: &[FieldDef] = &[
    f(
        "target",
        T::String,
        "text to score (default {previous.output})",
    ),
    f("scorers", T::ArrayOf(K::Scorer), "deterministic scorers"),
    f("combine", T::OneOf(Combine::NAMES), "how scores combine"),
    f("weights", T::Any, "weighted: one per scorer (+1 judge)"),
    f("threshold", T::Number, "pass mark in (0, 1] (default 0.5)"),
    f("judge", T::Object(K::Judge), "LLM judge"),
];

const SCORER: &[FieldDef] = &[
    f("type", T::OneOf(ScorerType::NAMES), "scorer kind"),
    f("name", T::String, "report name"),
    f("value", T::String, "exact-match/contains: expected text"),
    f("pattern", T::String, "regex: pattern"),
    f("negate", T::Bool, "regex: pass when it does not match"),
    f("schema", T::Object(K::Expect), "json-schema: contract"),
    f("min", T::Number, "length-range: min chars"),
    f("max", T::Number, "length-range: max chars"),
    f(
        "language",
        T::OneOf(CodeLanguage::NAMES),
        "code-compiles: language",
    ),
];

const JUDGE: &[FieldDef] = &[
    f("agent", T::String, "judge agent"),
    f("task", T::String, "judge instructions"),
];

const EXPECT: &[FieldDef] = &[
    f(
        "type",
        T::OneOrList(ContractType::NAMES),
        "JSON type, or a list of JSON types (any of them)",
    ),
    f(
        "properties",
        T::MapOf(K::Expect),
        "object: contracts of properties",
    ),
    f("required", T::StringArray, "object: keys that must exist"),
    f(
        "items",
        T::Object(K::Expect),
        "array: contract of every element",
    ),
    f("enum", T::Any, "allowed literal values"),
    f(
        "additionalProperties",
        T::Bool,
        "object: false allows no key besides properties",
    ),
    f("minItems", T::Integer, "array: at least this many elements"),
    f("maxItems", T::Integer, "array: at most this many elements"),
    f(
        "description",
        T::String,
        "annotation, shown on hover; ignored at run time",
    ),
    f("title", T::String, "annotation; ignored at run time"),
    f("examples", T::Any, "annotation; ignored at run time"),
    f("$comment", T::String, "annotation; ignored at run time"),
];

/// The closed field set of an object kind, except that of a phase: its common fields only
/// (the whole phase table, with every kind's own fields, is `kinds::table::fields_of`).
pub(crate) fn object_fields(kind: ObjectKind) -> &'static [FieldDef] {
    match kind {
        K::Flow => FLOW,
        K::Phase => PHASE_COMMON,
        K::Branch => BRANCH,
        K::Step => STEP,
        K::ArgSpec => ARG_SPEC,
        K::Budget => BUDGET,
        K::Retry => RETRY,
        K::Cache => CACHE,
        K::Score => SCORE,
        K::Scorer => SCORER,
        K::Judge => JUDGE,
        K::Expect => EXPECT,
        K::Lint => LINT,
        K::Hooks => HOOKS,
    }
}

/// Is `key` a common phase field (SPEC §3.1)?
pub(super) fn is_common(key: &str) -> bool {
    PHASE_COMMON.iter().any(|f| f.name == key)
}
