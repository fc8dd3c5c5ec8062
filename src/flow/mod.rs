//! The flow IR: one [`Flow`] for the whole document, with every default applied, every field's
//! span kept, and every templated string already parsed by the language core.
//!
//! Lowering (`lower.rs`) reads the span-keeping JSON tree, reports schema problems (unknown
//! fields, wrong types, out-of-range values) and fills this IR; the checks in `crate::check`
//! then work on the IR alone. A phase is one flat record holding the union of all phase fields
//! (SPEC §3.1–§3.14): a type-specific field on another type is kept so the checker can say it
//! has no effect there.

mod args;
mod fields;
mod lower;
pub mod schema;
mod shorthand;

pub use args::{
    Invocation, check_relative_path, check_value, convert_text, effective_args, resolve_invocation,
    resolve_owned, split_pair, value_help,
};
pub use fields::{FieldDef, FieldType, ObjectKind, fields_of};
pub(crate) use lower::spaced_placeholder;
pub use lower::{LowerOptions, Lowered, lower, lower_source};

use std::borrow::Cow;

use indexmap::IndexMap;

use crate::compile::Condition;
use crate::compile::Template;
use crate::json::Str;
use crate::source::Span;
use crate::syntax::condition::ConditionError;
use crate::value::Value;

/// A value with the span of its key and of the value itself.
#[derive(Clone, Debug, PartialEq)]
pub struct Field<T> {
    pub value: T,
    /// The key (`"dependsOn"`), for problems about the field as a whole.
    pub key: Span,
    /// The value, for problems about what was written.
    pub span: Span,
}

impl<T> Field<T> {
    pub fn new(value: T, key: Span, span: Span) -> Field<T> {
        Field { value, key, span }
    }
}

/// A templated string: its text, its file location, and the compiled template.
#[derive(Clone, Debug)]
pub struct Text {
    pub src: Str,
    pub template: Template,
}

impl Text {
    pub fn new(src: Str) -> Text {
        let template = Template::parse(&src.value);
        Text { src, template }
    }

    pub fn as_str(&self) -> &str {
        &self.src.value
    }

    /// The file span of a span relative to the decoded text (a placeholder's span).
    pub fn file_span(&self, rel: Span) -> Span {
        self.src.file_span(rel.range())
    }
}

/// A `when`/`until`/gate `eval` condition: the text as written and its parse.
#[derive(Clone, Debug)]
pub struct Cond {
    pub src: Str,
    pub parsed: Result<Condition, ConditionError>,
}

impl Cond {
    pub fn new(src: Str) -> Cond {
        let parsed = Condition::parse(&src.value);
        Cond { src, parsed }
    }

    pub fn as_str(&self) -> &str {
        &self.src.value
    }

    pub fn file_span(&self, rel: Span) -> Span {
        self.src.file_span(rel.range())
    }
}

/// A whole flow document.
#[derive(Clone, Debug)]
pub struct Flow {
    /// The flow's name: `name`, else the file stem, else the shorthand name, else `flow`.
    pub name: String,
    pub name_field: Option<Field<String>>,
    pub description: Option<String>,
    pub version: f64,
    pub args: IndexMap<String, ArgSpec>,
    /// The `args` key, when written.
    pub args_key: Option<Span>,
    /// Max phases running at once; `None` = the default 8.
    pub concurrency: Option<Field<f64>>,
    pub budget: Option<Field<Budget>>,
    pub agent_scope: AgentScope,
    pub strict_interpolation: bool,
    pub context_sharing: bool,
    pub incremental: bool,
    /// Idle watchdog in ms (0 disables); `None` = configuration, else 300000.
    pub idle_timeout: Option<Field<f64>>,
    /// `lint.allow`: warnings not reported for this file (each a valid warning code).
    pub lint_allow: Vec<crate::diag::Code>,
    pub phases: Vec<Phase>,
    /// Some phase entry could not be read (not an object, or no id) and is missing from
    /// `phases`: references to it cannot be judged.
    pub incomplete: bool,
    /// An inline `def` of a flow/expand phase (may be empty, SPEC §3.8).
    pub inline: bool,
    /// Which shorthand form the document used, if any.
    pub shorthand: Option<Shorthand>,
    /// The whole document.
    pub span: Span,
}

impl Flow {
    /// The final phase: the one marked `final`, else the last.
    pub fn final_phase(&self) -> Option<usize> {
        self.phases
            .iter()
            .position(|p| p.is_final)
            .or_else(|| self.phases.len().checked_sub(1))
    }

    pub fn phase(&self, id: &str) -> Option<&Phase> {
        self.phases.iter().find(|p| p.id == id)
    }

    /// Runtime concurrency: `max(1, floor(v))`, default 8; any budget forces 1.
    pub fn effective_concurrency(&self) -> usize {
        if self.budget.is_some() {
            return 1;
        }
        self.concurrency
            .as_ref()
            .map_or(8, |c| c.value.floor().max(1.0) as usize)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shorthand {
    Chain,
    Tasks,
    Task,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AgentScope {
    User,
    Project,
    #[default]
    Both,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Budget {
    pub max_usd: Option<f64>,
    pub max_tokens: Option<f64>,
    /// Written as `{}` (W0309); a budget whose caps were invalid is not empty.
    pub empty: bool,
}

/// An argument declaration (SPEC §2.2).
#[derive(Clone, Debug)]
pub struct ArgSpec {
    pub name: String,
    pub name_span: Span,
    /// `None` = the legacy form without `type`.
    pub ty: Option<ArgType>,
    pub default: Option<Field<Value>>,
    pub description: Option<String>,
    pub required: bool,
    pub required_span: Option<Span>,
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    pub values: Vec<Value>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgType {
    String,
    RelativePath,
    Number,
    Boolean,
    Enum,
}

impl ArgType {
    pub fn as_str(self) -> &'static str {
        match self {
            ArgType::String => "string",
            ArgType::RelativePath => "relative-path",
            ArgType::Number => "number",
            ArgType::Boolean => "boolean",
            ArgType::Enum => "enum",
        }
    }
}

/// The twelve phase kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PhaseType {
    Agent,
    Parallel,
    Map,
    Gate,
    Reduce,
    Approval,
    Flow,
    Loop,
    Tournament,
    Script,
    Race,
    Expand,
}

impl PhaseType {
    pub const ALL: [PhaseType; 12] = [
        PhaseType::Agent,
        PhaseType::Parallel,
        PhaseType::Map,
        PhaseType::Gate,
        PhaseType::Reduce,
        PhaseType::Approval,
        PhaseType::Flow,
        PhaseType::Loop,
        PhaseType::Tournament,
        PhaseType::Script,
        PhaseType::Race,
        PhaseType::Expand,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PhaseType::Agent => "agent",
            PhaseType::Parallel => "parallel",
            PhaseType::Map => "map",
            PhaseType::Gate => "gate",
            PhaseType::Reduce => "reduce",
            PhaseType::Approval => "approval",
            PhaseType::Flow => "flow",
            PhaseType::Loop => "loop",
            PhaseType::Tournament => "tournament",
            PhaseType::Script => "script",
            PhaseType::Race => "race",
            PhaseType::Expand => "expand",
        }
    }

    pub fn parse(s: &str) -> Option<PhaseType> {
        PhaseType::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// Types that run agents and so have an idle watchdog (SPEC §3.1 `idleTimeout`).
    pub fn runs_agents(self) -> bool {
        matches!(
            self,
            PhaseType::Agent
                | PhaseType::Gate
                | PhaseType::Reduce
                | PhaseType::Map
                | PhaseType::Parallel
                | PhaseType::Loop
                | PhaseType::Tournament
                | PhaseType::Race
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Join {
    #[default]
    All,
    Any,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OutputMode {
    #[default]
    Text,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OnBlock {
    #[default]
    Halt,
    Retry,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ReduceStrategy {
    #[default]
    OneShot,
    Tree,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TournamentMode {
    #[default]
    Best,
    Aggregate,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ExpandMode {
    #[default]
    Nested,
    Graft,
}

/// `retry` (SPEC §8.4).
#[derive(Clone, Debug, PartialEq)]
pub struct Retry {
    pub max: f64,
    pub backoff_ms: Option<f64>,
    pub factor: Option<f64>,
    pub factor_span: Option<Span>,
}

/// `cache` (SPEC §10.5).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CacheSpec {
    pub scope: Option<Field<CacheScope>>,
    pub fingerprint: Vec<Field<String>>,
    /// TTL in ms.
    pub ttl_ms: Option<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheScope {
    RunOnly,
    CrossRun,
    Off,
}

/// `cwd` (SPEC §3.1).
#[derive(Clone, Debug)]
pub enum Cwd {
    /// A literal path, relative to the invocation cwd.
    Path(String),
    Temp,
    Dedicated,
    Worktree,
    /// One whole `{args.X}` of a declared relative-path arg.
    Arg(String),
}

/// A branch of a parallel, race or tournament phase.
#[derive(Clone, Debug)]
pub struct Branch {
    pub task: Option<Text>,
    pub agent: Option<Field<String>>,
    pub cwd: Option<Field<String>>,
    pub span: Span,
}

/// An output contract (SPEC §3.15).
#[derive(Clone, Debug, Default)]
pub struct Contract {
    pub ty: Option<Field<String>>,
    pub properties: IndexMap<String, Field<Contract>>,
    pub required: Vec<Field<String>>,
    pub items: Option<Box<Field<Contract>>>,
    pub enum_values: Option<Vec<Value>>,
    pub span: Span,
}

/// A scoring gate (SPEC §3.14).
#[derive(Clone, Debug)]
pub struct Score {
    pub target: Option<Text>,
    pub scorers: Vec<Scorer>,
    pub combine: Combine,
    pub weights: Option<Field<Vec<f64>>>,
    pub threshold: f64,
    pub judge: Option<ScoreJudge>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Combine {
    #[default]
    All,
    Any,
    Weighted,
}

#[derive(Clone, Debug)]
pub struct Scorer {
    pub name: String,
    pub kind: ScorerKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum ScorerKind {
    ExactMatch { value: String },
    Contains { value: String },
    Regex { pattern: String, negate: bool },
    JsonSchema { schema: Contract },
    LengthRange { min: Option<f64>, max: Option<f64> },
    CodeCompiles { language: String },
}

#[derive(Clone, Debug)]
pub struct ScoreJudge {
    pub agent: Option<Field<String>>,
    pub task: Option<Text>,
}

/// A sub-flow definition (`flow`/`expand` `def`).
#[derive(Clone, Debug)]
pub enum Def {
    /// An object def, lowered as a flow of its own (boxed: flows nest).
    Inline(Box<Flow>),
    /// A string def: interpolated and safeParsed at run time.
    Template(Text),
}

/// One phase, with the union of all phase fields (SPEC §3).
#[derive(Clone, Debug)]
pub struct Phase {
    pub id: String,
    pub id_span: Span,
    /// The phase object.
    pub span: Span,
    pub ty: PhaseType,
    pub ty_span: Option<Span>,
    /// Fields that were present but invalid: later checks stay quiet about them.
    pub invalid: Vec<&'static str>,
    /// The keys written, with their spans (for "field X has no effect on T" checks).
    pub written: Written,

    // Common fields (SPEC §3.1).
    pub agent: Field<String>,
    pub task: Option<Text>,
    pub depends_on: Vec<Field<String>>,
    pub from: Vec<Field<String>>,
    pub join: Join,
    pub when: Option<Cond>,
    pub retry: Option<Field<Retry>>,
    pub timeout: Option<Field<f64>>,
    pub idle_timeout: Option<Field<f64>>,
    pub output: OutputMode,
    pub expect: Option<Contract>,
    pub model: Option<Field<String>>,
    pub thinking: Option<Field<String>>,
    pub tools: Vec<Field<String>>,
    pub cwd: Option<Field<Cwd>>,
    pub cwd_text: Option<Text>,
    pub context: Vec<Text>,
    pub context_limit: f64,
    pub is_final: bool,
    pub optional: bool,
    pub share_context: bool,
    pub idempotent: bool,
    pub concurrency: Option<Field<f64>>,
    pub cache: Option<Field<CacheSpec>>,

    // parallel, race, tournament
    pub branches: Vec<Branch>,
    // map
    pub over: Option<Text>,
    pub as_name: Option<Field<String>>,
    // gate
    pub eval: Vec<EvalEntry>,
    pub score: Option<Score>,
    pub on_block: OnBlock,
    // reduce
    pub reduce_strategy: ReduceStrategy,
    pub batch_size: Option<Field<f64>>,
    // flow, expand
    pub use_flow: Option<Field<String>>,
    pub def: Option<Field<Def>>,
    pub with: IndexMap<String, Field<WithValue>>,
    pub expand_mode: ExpandMode,
    pub max_nodes: f64,
    // loop
    pub until: Option<Cond>,
    pub max_iterations: f64,
    pub convergence: bool,
    pub reflexion: bool,
    // tournament
    pub variants: f64,
    pub mode: TournamentMode,
    pub judge: Option<Text>,
    pub judge_agent: Option<Field<String>>,
    // script
    pub run: Option<Field<Run>>,
    pub input: Option<Text>,
    // race
    pub cancel_losers: bool,
}

/// One gate `eval` entry (SPEC §3.5): a ` contains ` test or a condition.
#[derive(Clone, Debug)]
pub struct EvalEntry {
    pub src: Str,
    pub kind: EvalKind,
}

#[derive(Clone, Debug)]
pub enum EvalKind {
    /// An empty entry: passes.
    Empty,
    /// `LHS contains RHS`: the LHS is a template starting at byte `lhs_start` of the entry.
    Contains {
        lhs: Template,
        lhs_start: usize,
    },
    Condition(Result<Condition, ConditionError>),
}

/// The keys of a phase object, with their spans, in file order. A phase has a handful of keys,
/// so a vector beats any map here (this is on the check's hot path).
#[derive(Clone, Debug, Default)]
pub struct Written(Vec<(&'static str, Span)>);

impl Written {
    pub fn get(&self, key: &str) -> Option<&Span> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, s)| s)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Record a key (first occurrence wins).
    pub fn insert(&mut self, key: &'static str, span: Span) {
        if !self.contains_key(key) {
            self.0.push((key, span));
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'static str, Span)> + '_ {
        self.0.iter().copied()
    }
}

impl std::ops::Index<&str> for Written {
    type Output = Span;
    fn index(&self, key: &str) -> &Span {
        self.get(key).expect("a key checked with `has` first")
    }
}

impl FromIterator<(&'static str, Span)> for Written {
    fn from_iter<I: IntoIterator<Item = (&'static str, Span)>>(iter: I) -> Written {
        let mut w = Written::default();
        for (k, s) in iter {
            w.insert(k, s);
        }
        w
    }
}

/// A `with` value: strings are templates (value mode), other values pass unchanged.
#[derive(Clone, Debug)]
pub enum WithValue {
    Template(Text),
    Literal(Value),
}

/// A script's `run`.
#[derive(Clone, Debug)]
pub enum Run {
    /// `sh -c` with this text (no placeholders allowed).
    Shell(Str),
    /// argv, each element a template.
    Argv(Vec<Text>),
}

impl Phase {
    /// A phase of type `ty` with every default applied (SPEC §3).
    pub fn new(id: String, id_span: Span, span: Span, ty: PhaseType) -> Phase {
        Phase {
            id,
            id_span,
            span,
            ty,
            ty_span: None,
            invalid: Vec::new(),
            written: Written::default(),
            agent: Field::new("default".into(), Span::default(), Span::default()),
            task: None,
            depends_on: Vec::new(),
            from: Vec::new(),
            join: Join::All,
            when: None,
            retry: None,
            timeout: None,
            idle_timeout: None,
            output: OutputMode::Text,
            expect: None,
            model: None,
            thinking: None,
            tools: Vec::new(),
            cwd: None,
            cwd_text: None,
            context: Vec::new(),
            context_limit: 8000.0,
            is_final: false,
            optional: false,
            share_context: false,
            idempotent: true,
            concurrency: None,
            cache: None,
            branches: Vec::new(),
            over: None,
            as_name: None,
            eval: Vec::new(),
            score: None,
            on_block: OnBlock::Halt,
            reduce_strategy: ReduceStrategy::OneShot,
            batch_size: None,
            use_flow: None,
            def: None,
            with: IndexMap::new(),
            expand_mode: ExpandMode::Nested,
            max_nodes: 50.0,
            until: None,
            max_iterations: 10.0,
            convergence: true,
            reflexion: false,
            variants: 3.0,
            mode: TournamentMode::Best,
            judge: None,
            judge_agent: None,
            run: None,
            input: None,
            cancel_losers: true,
        }
    }

    /// Was this key written in the phase object?
    pub fn has(&self, key: &str) -> bool {
        self.written.contains_key(key)
    }

    /// The edges into this phase: `dependsOn ∪ from`, dependsOn first, de-duplicated.
    pub fn deps(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for d in self.depends_on.iter().chain(&self.from) {
            if !out.contains(&d.value.as_str()) {
                out.push(&d.value);
            }
        }
        out
    }

    /// The name a map binds each element to (`as`, default `item`).
    pub fn local_name(&self) -> &str {
        self.as_name.as_ref().map_or("item", |f| f.value.as_str())
    }

    /// Every templated text of the phase with the field name used in messages
    /// (`task`, `branches[0].task`, `context`, …), in a stable order.
    pub fn texts(&self) -> Vec<(Cow<'static, str>, &Text)> {
        let mut out: Vec<(Cow<'static, str>, &Text)> = Vec::new();
        if let Some(t) = &self.task {
            out.push((Cow::Borrowed("task"), t));
        }
        for (i, b) in self.branches.iter().enumerate() {
            if let Some(t) = &b.task {
                out.push((Cow::Owned(format!("branches[{i}].task")), t));
            }
        }
        if let Some(t) = &self.over {
            out.push((Cow::Borrowed("over"), t));
        }
        if let Some(t) = &self.input {
            out.push((Cow::Borrowed("input"), t));
        }
        if let Some(Field {
            value: Run::Argv(argv),
            ..
        }) = &self.run
        {
            out.extend(argv.iter().map(|t| (Cow::Borrowed("run"), t)));
        }
        out.extend(self.context.iter().map(|t| (Cow::Borrowed("context"), t)));
        if let Some(Field {
            value: Def::Template(t),
            ..
        }) = &self.def
        {
            out.push((Cow::Borrowed("def"), t));
        }
        if let Some(t) = &self.judge {
            out.push((Cow::Borrowed("judge"), t));
        }
        if let Some(score) = &self.score {
            if let Some(t) = &score.target {
                out.push((Cow::Borrowed("score.target"), t));
            }
            if let Some(t) = score.judge.as_ref().and_then(|j| j.task.as_ref()) {
                out.push((Cow::Borrowed("score.judge.task"), t));
            }
        }
        for (k, v) in &self.with {
            if let WithValue::Template(t) = &v.value {
                out.push((Cow::Owned(format!("with.{k}")), t));
            }
        }
        if let Some(t) = &self.cwd_text {
            out.push((Cow::Borrowed("cwd"), t));
        }
        out
    }

    /// Does this phase's type read the templated field `field` (a name from [`Phase::texts`],
    /// `when`, `until` or `eval`)? A field its type ignores (W0302/W0308) never runs, so its
    /// placeholders are not checked either.
    pub fn reads_field(&self, field: &str) -> bool {
        use PhaseType as T;
        let base = field.split(['.', '[']).next().unwrap_or(field);
        match base {
            "task" => matches!(
                self.ty,
                T::Agent | T::Map | T::Gate | T::Reduce | T::Approval | T::Loop | T::Tournament
            ),
            "branches" => matches!(self.ty, T::Parallel | T::Race | T::Tournament),
            "over" => self.ty == T::Map,
            "input" | "run" => self.ty == T::Script,
            "def" => matches!(self.ty, T::Flow | T::Expand),
            "with" => self.ty == T::Flow,
            "judge" => self.ty == T::Tournament,
            "score" | "eval" => self.ty == T::Gate,
            "until" => self.ty == T::Loop,
            _ => true,
        }
    }

    /// Every condition of the phase with its field name (`when`, `until`, `eval`).
    pub fn conditions(&self) -> Vec<(&'static str, &Cond)> {
        let mut out = Vec::new();
        if let Some(c) = &self.when {
            out.push(("when", c));
        }
        if let Some(c) = &self.until {
            out.push(("until", c));
        }
        out
    }
}
