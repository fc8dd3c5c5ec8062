//! The flow IR: one [`Flow`] for the whole document, with every default applied, every field's
//! span kept, and every templated string already parsed by the language core.
//!
//! A phase is its [`Common`] fields (SPEC §3.1) and a [`PhaseKind`] carrying only its own
//! kind's fields (SPEC §3.2–§3.14), one file per kind under `kinds/`. A type-specific field
//! written on another type is validated but not kept: its key stays in [`Written`] so the
//! checker can say it has no effect there. Dependencies are resolved to [`PhaseId`]s once, at
//! the end of lowering. Lowering and the kinds import this file; it imports only the kinds'
//! types (through `kinds/mod.rs`) and the word enums.

use std::borrow::Cow;
use std::collections::HashMap;

use indexmap::IndexMap;

use crate::compile::Condition;
use crate::compile::Template;
use crate::json::{Str, StrAt};
use crate::source::Span;
use crate::syntax::condition::ConditionError;
use crate::value::Value;

use super::enums::{AgentScope, ArgType, CacheScope, Join, OutputMode, PhaseType};
use super::kinds::{Branch, Def, Map, PhaseKind, Run, Script, SubFlow, WithValue};

/// A value with the span of its key and of the value itself.
#[derive(Clone, Debug, PartialEq)]
pub struct Field<T> {
    /// What was written, lowered.
    pub value: T,
    /// The key (`"dependsOn"`), for problems about the field as a whole.
    pub key: Span,
    /// The value, for problems about what was written.
    pub span: Span,
}

impl<T> Field<T> {
    /// A field from its value and spans.
    pub fn new(value: T, key: Span, span: Span) -> Field<T> {
        Field { value, key, span }
    }
}

/// A templated string: its compiled template (which holds the text) and its file location.
#[derive(Clone, Debug)]
pub struct Text {
    /// Where the decoded string lies in the file.
    at: StrAt,
    /// The parsed template; its source is the decoded string.
    pub template: Template,
}

impl Text {
    /// Parse `src` as a template; the template keeps the decoded string.
    pub fn new(src: Str) -> Text {
        let (value, at) = src.into_parts();
        let template = Template::parse_owned(value);
        Text { at, template }
    }

    /// The decoded text.
    pub fn as_str(&self) -> &str {
        self.template.source()
    }

    /// The whole string literal, quotes included.
    pub fn span(&self) -> Span {
        self.at.span
    }

    /// The file span of a span relative to the decoded text (a placeholder's span).
    pub fn file_span(&self, rel: Span) -> Span {
        self.at.file_span(self.as_str(), rel.range())
    }
}

/// A `when`/`until`/gate `eval` condition: the text as written and its parse.
#[derive(Clone, Debug)]
pub struct Cond {
    /// The decoded string and its place in the file.
    pub src: Str,
    /// The parsed condition, or why it does not parse.
    pub parsed: Result<Condition, ConditionError>,
}

impl Cond {
    /// Parse `src` as a condition.
    pub fn new(src: Str) -> Cond {
        let parsed = Condition::parse(&src.value);
        Cond { src, parsed }
    }

    /// The decoded text.
    pub fn as_str(&self) -> &str {
        &self.src.value
    }

    /// The file span of a span relative to the decoded text.
    pub fn file_span(&self, rel: Span) -> Span {
        self.src.file_span(rel.range())
    }
}

/// A whole flow document.
#[derive(Clone, Debug)]
pub struct Flow {
    /// The flow's name: `name`, else the file stem, else the shorthand name, else `flow`.
    pub name: String,
    /// `name`, when written.
    pub name_field: Option<Field<String>>,
    /// `description`.
    pub description: Option<String>,
    /// `version` (informational, default 1).
    pub version: f64,
    /// `args`: the declared arguments by name.
    pub args: IndexMap<String, ArgSpec>,
    /// The `args` key, when written.
    pub args_key: Option<Span>,
    /// Max phases running at once; `None` = the default 8.
    pub concurrency: Option<Field<f64>>,
    /// `budget`.
    pub budget: Option<Field<Budget>>,
    /// `hooks`: commands run when the run ends (SPEC §8.10).
    pub hooks: Option<Field<Hooks>>,
    /// `agentScope`.
    pub agent_scope: AgentScope,
    /// `strictInterpolation`.
    pub strict_interpolation: bool,
    /// `contextSharing` (no effect in tfc v1).
    pub context_sharing: bool,
    /// `incremental`: the default cache scope is cross-run.
    pub incremental: bool,
    /// Idle watchdog in ms (0 disables); `None` = configuration, else 300000.
    pub idle_timeout: Option<Field<f64>>,
    /// `lint.allow`: warnings not reported for this file (each a valid warning code).
    pub lint_allow: Vec<crate::diag::Code>,
    /// The phases, in file order.
    pub phases: Vec<Phase>,
    /// Each phase id's position (the first phase of a repeated id).
    pub ids: PhaseIds,
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

    /// The phase with this id (the first, if the id is repeated).
    pub fn phase(&self, id: &str) -> Option<&Phase> {
        self.index_of(id).map(|i| &self.phases[i])
    }

    /// Every phase's resolved edges by index: `(deps, dependents)`, where `deps[i]` lists the
    /// phases `i` depends on (dependsOn first, then from, de-duplicated) and `dependents[i]`
    /// the phases that depend on `i`. Self-edges are left out (reported on their own, E0105).
    pub fn edges(&self) -> (Vec<Vec<usize>>, Vec<Vec<usize>>) {
        let n = self.phases.len();
        let mut deps = Vec::with_capacity(n);
        let mut dependents = vec![Vec::new(); n];
        for (i, p) in self.phases.iter().enumerate() {
            let d: Vec<usize> = p
                .deps
                .iter()
                .map(|j| j.index())
                .filter(|&j| j != i && j < n)
                .collect();
            for &j in &d {
                dependents[j].push(i);
            }
            deps.push(d);
        }
        (deps, dependents)
    }

    /// The position of the phase with this id (the first, if the id is repeated).
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.ids.get(id, &self.phases).map(PhaseId::index)
    }

    /// Runtime concurrency: `max(1, floor(v))`, default 8; a budget with `maxUSD` or
    /// `maxTokens` forces 1 (`maxCalls` alone does not: its cap is taken before each call).
    pub fn effective_concurrency(&self) -> usize {
        if self
            .budget
            .as_ref()
            .is_some_and(|b| b.value.max_calls.is_none() || b.value.meters_spend())
        {
            return 1;
        }
        self.concurrency
            .as_ref()
            .map_or(8, |c| c.value.floor().max(1.0) as usize)
    }
}

/// The shorthand forms of a flow document (SPEC §2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shorthand {
    /// `chain`: sequential steps.
    Chain,
    /// `tasks`: parallel tasks.
    Tasks,
    /// `task`: one task.
    Task,
}

/// The flow's `budget` (SPEC §2.1).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Budget {
    /// `maxUSD`.
    pub max_usd: Option<f64>,
    /// `maxTokens`.
    pub max_tokens: Option<f64>,
    /// `maxCalls` (**tfc:**): agent calls the run may make (SPEC §8.7).
    pub max_calls: Option<u64>,
    /// Written as `{}` (W0309); a budget whose caps were invalid is not empty.
    pub empty: bool,
}

impl Budget {
    /// A cap on what calls spend (`maxUSD` or `maxTokens`), which serialises the run.
    pub fn meters_spend(&self) -> bool {
        self.max_usd.is_some() || self.max_tokens.is_some()
    }
}

/// How long a hook may run when `hooks.timeout` is not written (ms).
pub const DEFAULT_HOOK_TIMEOUT_MS: u64 = 30_000;
/// The shortest `hooks.timeout` (ms).
pub const MIN_HOOK_TIMEOUT_MS: f64 = 1000.0;

/// The ways a run ends that a hook can follow, each with its key in `hooks`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HookEvent {
    /// `onComplete`: the run completed.
    Complete,
    /// `onFail`: the run failed.
    Fail,
    /// `onPause`: the run paused (an undecided approval, a budget, an interrupt).
    Pause,
    /// `onBlock`: a gate or a rejected approval blocked the run.
    Block,
}

impl HookEvent {
    /// Every event, in the order `hooks` lists them.
    pub const ALL: [HookEvent; 4] = [
        HookEvent::Complete,
        HookEvent::Fail,
        HookEvent::Pause,
        HookEvent::Block,
    ];

    /// Its key in `hooks` (and the `event` of its journal line).
    pub fn key(self) -> &'static str {
        match self {
            HookEvent::Complete => "onComplete",
            HookEvent::Fail => "onFail",
            HookEvent::Pause => "onPause",
            HookEvent::Block => "onBlock",
        }
    }

    /// The event of a `hooks` key.
    pub fn parse(key: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.key() == key)
    }
}

/// One hook: the command run for one event.
#[derive(Clone, Debug)]
pub struct Hook {
    /// When it runs.
    pub event: HookEvent,
    /// The program, then its arguments; each a template.
    pub argv: Vec<Text>,
    /// Its key in `hooks`.
    pub key: Span,
    /// The array.
    pub span: Span,
}

/// `hooks`.
#[derive(Clone, Debug, Default)]
pub struct Hooks {
    /// The commands written, in file order (at most one per event).
    pub hooks: Vec<Hook>,
    /// `timeout` in ms; `None` = [`DEFAULT_HOOK_TIMEOUT_MS`].
    pub timeout: Option<Field<f64>>,
}

impl Hooks {
    /// The hook of `event`, if one is written.
    pub fn get(&self, event: HookEvent) -> Option<&Hook> {
        self.hooks.iter().find(|h| h.event == event)
    }

    /// Each hook's wall limit in ms.
    pub fn timeout_ms(&self) -> u64 {
        self.timeout
            .as_ref()
            .map_or(DEFAULT_HOOK_TIMEOUT_MS, |t| t.value as u64)
    }
}

/// An argument declaration (SPEC §2.2).
#[derive(Clone, Debug)]
pub struct ArgSpec {
    /// The argument name.
    pub name: String,
    /// The name's key in the file.
    pub name_span: Span,
    /// `None` = the legacy form without `type`.
    pub ty: Option<ArgType>,
    /// `default`.
    pub default: Option<Field<Value>>,
    /// `description`.
    pub description: Option<String>,
    /// `required`.
    pub required: bool,
    /// The `required` key, when written.
    pub required_span: Option<Span>,
    /// `minimum` (numbers).
    pub minimum: Option<f64>,
    /// `maximum` (numbers).
    pub maximum: Option<f64>,
    /// `values` (enums).
    pub values: Vec<Value>,
    /// The spec object.
    pub span: Span,
}

/// `retry` (SPEC §8.4).
#[derive(Clone, Debug, PartialEq)]
pub struct Retry {
    /// `max`: extra attempts.
    pub max: f64,
    /// `backoffMs`: the first delay.
    pub backoff_ms: Option<f64>,
    /// `factor`: the backoff multiplier.
    pub factor: Option<f64>,
    /// The `factor` key, when written.
    pub factor_span: Option<Span>,
}

/// `cache` (SPEC §10.5).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CacheSpec {
    /// `scope`.
    pub scope: Option<Field<CacheScope>>,
    /// `fingerprint`: the inputs of the cache key.
    pub fingerprint: Vec<Field<String>>,
    /// TTL in ms.
    pub ttl_ms: Option<f64>,
}

/// `cwd` (SPEC §3.1).
#[derive(Clone, Debug)]
pub enum Cwd {
    /// A literal path, relative to the invocation cwd.
    Path(String),
    /// `temp`: a fresh temporary directory.
    Temp,
    /// `dedicated`: `.tfc/work/<runId>/<phaseId>/`.
    Dedicated,
    /// `worktree`: a detached git worktree.
    Worktree,
    /// One whole `{args.X}` of a declared relative-path arg.
    Arg(String),
}

/// An output contract (SPEC §3.15).
#[derive(Clone, Debug, Default)]
pub struct Contract {
    /// `type`: one of [`ContractType::NAMES`](crate::flow::ContractType::NAMES), or a list
    /// of them (the value may have any of these types).
    pub ty: Option<Field<Vec<String>>>,
    /// `properties`.
    pub properties: IndexMap<String, Field<Contract>>,
    /// `required`.
    pub required: Vec<Field<String>>,
    /// `items`.
    pub items: Option<Box<Field<Contract>>>,
    /// `enum`.
    pub enum_values: Option<Vec<Value>>,
    /// `additionalProperties` (**tfc:** a boolean only): `false` closes the object, so a key
    /// not in `properties` is a violation (and never resolves statically).
    pub additional_properties: Option<Field<bool>>,
    /// `minItems`: an array has at least this many elements.
    pub min_items: Option<Field<u64>>,
    /// `maxItems`: an array has at most this many elements.
    pub max_items: Option<Field<u64>>,
    /// `description`, an annotation: ignored at run time, shown by editors on hover.
    pub description: Option<Field<String>>,
    /// The contract object.
    pub span: Span,
}

impl Contract {
    /// Does `additionalProperties: false` close the object (no key besides `properties`)?
    pub fn closed(&self) -> bool {
        self.additional_properties
            .as_ref()
            .is_some_and(|a| !a.value)
    }
}

/// A phase's position in [`Flow::phases`]: dependencies are resolved to these after lowering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PhaseId(pub u32);

impl PhaseId {
    /// The position as an index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Phase ids to positions; a repeated id maps to its first phase.
///
/// Keyed by the id's hash, checked against the phase's own id on lookup, so the ids are not
/// copied (a flow may hold 100 000 phases). An id whose hash an earlier, different id holds
/// goes to a short overflow list.
#[derive(Clone, Debug, Default)]
pub struct PhaseIds {
    first: HashMap<u64, PhaseId, foldhash::fast::FixedState>,
    overflow: Vec<(String, PhaseId)>,
}

impl PhaseIds {
    fn hash(id: &str) -> u64 {
        use std::hash::BuildHasher;
        foldhash::fast::FixedState::default().hash_one(id)
    }

    /// The index of `phases`.
    pub fn new(phases: &[Phase]) -> PhaseIds {
        let mut first =
            HashMap::with_capacity_and_hasher(phases.len(), foldhash::fast::FixedState::default());
        let mut overflow: Vec<(String, PhaseId)> = Vec::new();
        for (i, p) in phases.iter().enumerate() {
            let at = PhaseId(i as u32);
            match first.entry(Self::hash(&p.id)) {
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(at);
                }
                std::collections::hash_map::Entry::Occupied(e) => {
                    let other: &PhaseId = e.get();
                    if phases[other.index()].id != p.id && !overflow.iter().any(|(k, _)| *k == p.id)
                    {
                        overflow.push((p.id.clone(), at));
                    }
                }
            }
        }
        PhaseIds { first, overflow }
    }

    /// The position of the phase with this id, among `phases` (the ones it was built from).
    pub fn get(&self, id: &str, phases: &[Phase]) -> Option<PhaseId> {
        if let Some(&at) = self.first.get(&Self::hash(id))
            && phases.get(at.index()).is_some_and(|p| p.id == id)
        {
            return Some(at);
        }
        self.overflow
            .iter()
            .find(|(k, _)| k == id)
            .map(|(_, at)| *at)
    }

    /// How many distinct ids there are.
    pub fn len(&self) -> usize {
        self.first.len() + self.overflow.len()
    }

    /// No phases?
    pub fn is_empty(&self) -> bool {
        self.first.is_empty()
    }
}

/// One phase: the fields every kind has, and the kind with its own fields (SPEC §3).
///
/// `Phase` dereferences to its [`Common`] part, so `p.id` or `p.task` read the common fields.
#[derive(Clone, Debug)]
pub struct Phase {
    /// The fields of SPEC §3.1.
    pub common: Common,
    /// The kind and the fields only it has.
    pub kind: PhaseKind,
}

impl std::ops::Deref for Phase {
    type Target = Common;
    fn deref(&self) -> &Common {
        &self.common
    }
}

impl std::ops::DerefMut for Phase {
    fn deref_mut(&mut self) -> &mut Common {
        &mut self.common
    }
}

/// The common fields of a phase (SPEC §3.1), with the spans checks need.
#[derive(Clone, Debug)]
pub struct Common {
    /// The phase id.
    pub id: String,
    /// The id's value.
    pub id_span: Span,
    /// The phase object.
    pub span: Span,
    /// The `type` value, when written.
    pub ty_span: Option<Span>,
    /// Fields that were present but invalid: later checks stay quiet about them.
    pub invalid: Vec<&'static str>,
    /// The keys written, with their spans (for "field X has no effect on T" checks).
    pub written: Written,
    /// `agent` (default `default`).
    pub agent: Field<String>,
    /// `task`.
    pub task: Option<Text>,
    /// `dependsOn` as written: the names and spans behind [`Common::deps`].
    pub depends_on: Vec<Field<String>>,
    /// `from` as written.
    pub from: Vec<Field<String>>,
    /// The edges into this phase, `dependsOn ∪ from` (dependsOn first, de-duplicated),
    /// resolved to phases; a name that is no phase id is left out (the DAG check reports it).
    pub deps: Vec<PhaseId>,
    /// `join`.
    pub join: Join,
    /// `when` (boxed: rare and large).
    pub when: Option<Box<Cond>>,
    /// `retry` (boxed: rare).
    pub retry: Option<Box<Field<Retry>>>,
    /// `timeout` in ms (boxed: rare, like the next few).
    pub timeout: Option<Box<Field<f64>>>,
    /// `idleTimeout` in ms.
    pub idle_timeout: Option<Box<Field<f64>>>,
    /// `output`.
    pub output: OutputMode,
    /// `expect` (boxed: rare and large).
    pub expect: Option<Box<Contract>>,
    /// `model`.
    pub model: Option<Box<Field<String>>>,
    /// `thinking` (one of [`Thinking::NAMES`](crate::flow::Thinking::NAMES)).
    pub thinking: Option<Box<Field<String>>>,
    /// `tools`.
    pub tools: Vec<Field<String>>,
    /// `cwd`, classified.
    pub cwd: Option<Box<Field<Cwd>>>,
    /// `cwd` as a template, for reference checks (boxed: rare and large).
    pub cwd_text: Option<Box<Text>>,
    /// `context`.
    pub context: Vec<Text>,
    /// `contextLimit`.
    pub context_limit: f64,
    /// `final`.
    pub is_final: bool,
    /// `optional`.
    pub optional: bool,
    /// `shareContext`.
    pub share_context: bool,
    /// `idempotent`.
    pub idempotent: bool,
    /// `concurrency`.
    pub concurrency: Option<Box<Field<f64>>>,
    /// `cache` (boxed: rare and large).
    pub cache: Option<Box<Field<CacheSpec>>>,
}

/// The keys of a phase object, with their spans, in file order. A phase has a handful of keys,
/// so a vector beats any map here (this is on the check's hot path).
///
/// Checks about a field written on a type that ignores it work from this table alone: such a
/// field's value is validated while lowering but not kept. The one fact they need about the
/// value (whether it was the literal `true`) is kept here.
#[derive(Clone, Debug, Default)]
pub struct Written(Vec<WrittenKey>);

/// One written key.
#[derive(Clone, Copy, Debug)]
struct WrittenKey {
    key: &'static str,
    span: Span,
    is_true: bool,
}

/// The agent of a phase that names none.
pub(crate) const DEFAULT_AGENT: &str = "default";

impl Written {
    /// The span of a written key.
    pub fn get(&self, key: &str) -> Option<&Span> {
        self.0.iter().find(|k| k.key == key).map(|k| &k.span)
    }

    /// Was `key` written?
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Was `key` written with the literal value `true`?
    pub fn is_true(&self, key: &str) -> bool {
        self.0.iter().any(|k| k.key == key && k.is_true)
    }

    /// The table of distinct keys (an object's known fields, each once), in file order, each
    /// with its span and whether its value was the literal `true`.
    pub(crate) fn from_distinct(
        keys: impl ExactSizeIterator<Item = (&'static str, Span, bool)>,
    ) -> Written {
        Written(
            keys.map(|(key, span, is_true)| WrittenKey { key, span, is_true })
                .collect(),
        )
    }

    /// Record a key (first occurrence wins).
    pub fn insert(&mut self, key: &'static str, span: Span) {
        self.insert_value(key, span, false);
    }

    /// Record a key and whether its value was the literal `true` (first occurrence wins).
    pub fn insert_value(&mut self, key: &'static str, span: Span, is_true: bool) {
        if !self.contains_key(key) {
            self.0.push(WrittenKey { key, span, is_true });
        }
    }

    /// The keys and their spans, in file order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, Span)> + '_ {
        self.0.iter().map(|k| (k.key, k.span))
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

impl Common {
    /// The common fields of phase `id` with every default applied (SPEC §3.1).
    pub fn new(id: String, id_span: Span, span: Span) -> Common {
        Common::with_agent(id, id_span, span, DEFAULT_AGENT.into())
    }

    /// [`Common::new`] with the agent name `agent` (the lowering, which reads a phase's agent
    /// first thing, starts from an empty one instead of building the default to replace it).
    pub(crate) fn with_agent(id: String, id_span: Span, span: Span, agent: String) -> Common {
        Common {
            id,
            id_span,
            span,
            ty_span: None,
            invalid: Vec::new(),
            written: Written::default(),
            agent: Field::new(agent, Span::default(), Span::default()),
            task: None,
            depends_on: Vec::new(),
            from: Vec::new(),
            deps: Vec::new(),
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
        }
    }
}

impl Phase {
    /// A phase of type `ty` with every default applied (SPEC §3).
    pub fn new(id: String, id_span: Span, span: Span, ty: PhaseType) -> Phase {
        Phase {
            common: Common::new(id, id_span, span),
            kind: PhaseKind::new(ty),
        }
    }

    /// The phase's type.
    pub fn ty(&self) -> PhaseType {
        self.kind.ty()
    }

    /// Was this key written in the phase object?
    pub fn has(&self, key: &str) -> bool {
        self.written.contains_key(key)
    }

    /// The edges into this phase by name: `dependsOn ∪ from`, dependsOn first, de-duplicated.
    /// Prefer [`Common::deps`], resolved once while lowering.
    pub fn dep_names(&self) -> Vec<&str> {
        let n = self.depends_on.len() + self.from.len();
        let mut out: Vec<&str> = Vec::with_capacity(n);
        // A fan-in may list thousands: de-duplicate by set past a handful.
        let mut seen: std::collections::HashSet<&str, foldhash::fast::RandomState> =
            Default::default();
        for d in self.depends_on.iter().chain(&self.from) {
            let fresh = if n <= 16 {
                !out.contains(&d.value.as_str())
            } else {
                seen.insert(&d.value)
            };
            if fresh {
                out.push(&d.value);
            }
        }
        out
    }

    /// The judge agent a phase names beside its own and its branches': a tournament's
    /// `judgeAgent`, a gate's `score.judge.agent`. Every kind is matched, so a new kind with
    /// a judge is flagged here.
    pub fn judge_agent(&self) -> Option<&Field<String>> {
        match &self.kind {
            PhaseKind::Tournament(k) => k.judge_agent.as_ref(),
            PhaseKind::Gate(k) => k.score.as_ref()?.judge.as_ref()?.agent.as_ref(),
            PhaseKind::Agent(_)
            | PhaseKind::Parallel(_)
            | PhaseKind::Map(_)
            | PhaseKind::Reduce(_)
            | PhaseKind::Approval(_)
            | PhaseKind::Flow(_)
            | PhaseKind::Loop(_)
            | PhaseKind::Script(_)
            | PhaseKind::Race(_)
            | PhaseKind::Expand(_) => None,
        }
    }

    /// The branches of a parallel, race or tournament phase (none for other kinds).
    pub fn branches(&self) -> &[Branch] {
        match &self.kind {
            PhaseKind::Parallel(k) => &k.branches,
            PhaseKind::Race(k) => &k.branches,
            PhaseKind::Tournament(k) => &k.branches,
            _ => &[],
        }
    }

    /// The `def` of a flow or expand phase.
    pub fn def(&self) -> Option<&Field<Def>> {
        match &self.kind {
            PhaseKind::Flow(k) => k.def.as_ref(),
            PhaseKind::Expand(k) => k.def.as_ref(),
            _ => None,
        }
    }

    /// The map fields; the defaults for another kind.
    /// Prefer matching on [`PhaseKind`]; kept for the cache keys (`run::machine::cache`).
    pub fn map_fields(&self) -> &Map {
        match &self.kind {
            PhaseKind::Map(k) => k,
            _ => {
                static DEFAULT: Map = Map::DEFAULT;
                &DEFAULT
            }
        }
    }

    /// The sub-flow fields; the defaults for another kind.
    /// Prefer matching on [`PhaseKind`]; kept for the cache keys (`run::machine::cache`).
    pub fn flow_fields(&self) -> &SubFlow {
        match &self.kind {
            PhaseKind::Flow(k) => k,
            _ => {
                static DEFAULT: SubFlow = SubFlow::DEFAULT;
                &DEFAULT
            }
        }
    }

    /// The script fields; the defaults for another kind.
    /// Prefer matching on [`PhaseKind`]; kept for the cache keys (`run::machine::cache`).
    pub fn script_fields(&self) -> &Script {
        match &self.kind {
            PhaseKind::Script(k) => k,
            _ => {
                static DEFAULT: Script = Script::DEFAULT;
                &DEFAULT
            }
        }
    }

    /// The name a map binds each element to (`as`, default `item`).
    pub fn local_name(&self) -> &str {
        match &self.kind {
            PhaseKind::Map(k) => k.local_name(),
            _ => "item",
        }
    }

    /// Every templated text of the phase with the field name used in messages
    /// (`task`, `branches[0].task`, `context`, …), in a stable order.
    pub fn texts(&self) -> Vec<(Cow<'static, str>, &Text)> {
        let mut out: Vec<(Cow<'static, str>, &Text)> = Vec::new();
        self.each_text(|name, t| out.push((name, t)));
        out
    }

    /// [`Phase::texts`] without collecting them.
    pub fn each_text<'s>(&'s self, mut out: impl FnMut(Cow<'static, str>, &'s Text)) {
        if let Some(t) = &self.task {
            out(Cow::Borrowed("task"), t);
        }
        for (i, b) in self.branches().iter().enumerate() {
            if let Some(t) = &b.task {
                out(Cow::Owned(format!("branches[{i}].task")), t);
            }
        }
        match &self.kind {
            PhaseKind::Map(k) => {
                if let Some(t) = &k.over {
                    out(Cow::Borrowed("over"), t);
                }
            }
            PhaseKind::Script(k) => {
                if let Some(t) = &k.input {
                    out(Cow::Borrowed("input"), t);
                }
                if let Some(Field {
                    value: Run::Argv(argv),
                    ..
                }) = &k.run
                {
                    for t in argv {
                        out(Cow::Borrowed("run"), t);
                    }
                }
            }
            _ => {}
        }
        for t in &self.context {
            out(Cow::Borrowed("context"), t);
        }
        if let Some(Field {
            value: Def::Template(t),
            ..
        }) = self.def()
        {
            out(Cow::Borrowed("def"), t);
        }
        match &self.kind {
            PhaseKind::Tournament(k) => {
                if let Some(t) = &k.judge {
                    out(Cow::Borrowed("judge"), t);
                }
            }
            PhaseKind::Gate(g) => {
                if let Some(score) = &g.score {
                    if let Some(t) = &score.target {
                        out(Cow::Borrowed("score.target"), t);
                    }
                    if let Some(t) = score.judge.as_ref().and_then(|j| j.task.as_ref()) {
                        out(Cow::Borrowed("score.judge.task"), t);
                    }
                }
            }
            PhaseKind::Flow(k) => {
                for (k, v) in &k.with {
                    if let WithValue::Template(t) = &v.value {
                        out(Cow::Owned(format!("with.{k}")), t);
                    }
                }
            }
            _ => {}
        }
        if let Some(t) = self.cwd_text.as_deref() {
            out(Cow::Borrowed("cwd"), t);
        }
    }

    /// Every condition of the phase with its field name (`when`, `until`).
    pub fn conditions(&self) -> Vec<(&'static str, &Cond)> {
        let mut out: Vec<(&'static str, &Cond)> = Vec::new();
        if let Some(c) = &self.when {
            out.push(("when", c));
        }
        if let PhaseKind::Loop(k) = &self.kind
            && let Some(c) = &k.until
        {
            out.push(("until", c));
        }
        out
    }
}

#[cfg(test)]
mod size_tests {
    use super::*;

    /// The phase record stays small: the common part holds only SPEC §3.1 (large, rare
    /// fields boxed) and each kind only its own fields (large kinds boxed). The union record
    /// this replaced was ~2.8 KB.
    #[test]
    fn phase_size_is_bounded() {
        let common = std::mem::size_of::<Common>();
        let kind = std::mem::size_of::<PhaseKind>();
        let phase = std::mem::size_of::<Phase>();
        eprintln!("Common {common} B, PhaseKind {kind} B, Phase {phase} B");
        assert!(common <= 520, "Common is {common} bytes");
        assert!(kind <= 48, "PhaseKind is {kind} bytes");
        assert!(phase <= 568, "Phase is {phase} bytes");
    }

    #[test]
    fn ids_map_to_their_first_phase() {
        let at = |id: &str| {
            Phase::new(
                id.into(),
                Span::default(),
                Span::default(),
                PhaseType::Agent,
            )
        };
        let phases = vec![at("a"), at("b"), at("a"), at("c")];
        let ids = PhaseIds::new(&phases);
        assert_eq!(ids.len(), 3);
        assert_eq!(ids.get("a", &phases), Some(PhaseId(0)));
        assert_eq!(ids.get("b", &phases), Some(PhaseId(1)));
        assert_eq!(ids.get("c", &phases), Some(PhaseId(3)));
        assert_eq!(ids.get("d", &phases), None);
        assert_eq!(ids.get("", &phases), None);
    }
}
