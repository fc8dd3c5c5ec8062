//! Lowering: the span-keeping JSON tree → the flow IR, with the schema checks of SPEC §7.1
//! (closed field sets, JSON types, ranges and sets). Problems are collected, never fatal: a
//! field with a problem is left at its default and listed in `Phase::invalid`, so later checks
//! do not pile follow-on errors on top.

use indexmap::IndexMap;

use super::enums::{AgentScope, CwdKeyword, PhaseType, Thinking};
use super::fields::{self, ObjectKind};
use super::ir::{Common, Cond, Cwd, DEFAULT_AGENT, Field, Flow, Phase, PhaseIds, Text, Written};
use super::kinds::common::Cx;
use super::kinds::dispatch::lower_kind;
use super::kinds::table::{field_name, fields_of, is_field_of};
use super::kinds::{Agent, PhaseKind};
use super::lowerer::{Detached, Fields, Lowerer, PhaseFields, Taken, spaced_placeholder};
use super::read::{a_type_name, invalid_agent, valid_agent_name};
use super::shorthand;
use crate::diag::{Code, Diagnostic, did_you_mean};
use crate::json::Str;
use crate::json::{self, Kind, Member, Node};
use crate::source::Span;
use crate::value::format_number;

/// How to name a flow that has no `name` field.
#[derive(Clone, Debug, Default)]
pub struct LowerOptions {
    /// The file stem or saved-flow name.
    pub default_name: Option<String>,
}

/// The result of lowering: the IR (absent when the document is not a flow at all) and every
/// problem found on the way.
#[derive(Debug)]
pub struct Lowered {
    /// The flow, unless the document is no flow at all.
    pub flow: Option<Flow>,
    /// Every problem found.
    pub diagnostics: Vec<Diagnostic>,
}

/// Parse flow text (JSON/JSONC) and lower it. Syntax errors stop before lowering.
pub fn lower_source(text: &str, opts: &LowerOptions) -> Lowered {
    lower_text(text, opts, false).0
}

/// [`lower_source`], also handing back the parsed document when `keep` is set (`None` after a
/// syntax error). Without `keep`, each phase's part of the tree is dropped as soon as the phase
/// is lowered, so the peak memory is not that of the whole tree and the whole IR together.
pub(crate) fn lower_text(text: &str, opts: &LowerOptions, keep: bool) -> (Lowered, Option<Node>) {
    let mut detached = Detached::default();
    let mut streamed = None;
    let parsed = if keep {
        json::parse(text)
    } else {
        // Each phase is lowered as soon as it is read: in the order and with the diagnostics
        // of lowering the whole tree (a phase's lowering depends on nothing else), spliced in
        // where the document's lowering reaches the phases array.
        let mut l = Lowerer::default();
        let mut first = None;
        let mut sink = |item: Node| {
            let phases = &mut detached.phases;
            if phases.len() == phases.capacity() {
                let start = *first.get_or_insert(item.span.start) as usize;
                phases.reserve_exact(more_entries(
                    detached.entries + 1,
                    item.span.end as usize - start,
                    text.len() - item.span.end as usize,
                ));
            }
            // The hot fields' strings move into the IR instead of being copied: the rest of
            // `item` (this phase's part of the tree) is dropped here.
            let mut item = item;
            let taken = Taken::from_phase(&mut item);
            l.phase_taking(&item, detached.entries, phases, taken);
            detached.entries += 1;
        };
        let (parsed, span) = json::parse_streaming(text, "phases", &mut sink);
        detached.diags = l.diags;
        streamed = span;
        parsed
    };
    let syntax_failed = parsed
        .diagnostics
        .iter()
        .any(|d| d.code == Code::JsonSyntax);
    let root = parsed.root.filter(|_| !syntax_failed);
    let mut out = match root.as_ref() {
        Some(root) => {
            let mut l = Lowerer::default();
            if let Some(span) = streamed {
                l.detached = Some(Detached { span, ..detached });
            }
            let flow = l.document(root, opts.default_name.as_deref(), None);
            Lowered {
                flow,
                diagnostics: l.diags,
            }
        }
        None => Lowered {
            flow: None,
            diagnostics: Vec::new(),
        },
    };
    let mut diagnostics = parsed.diagnostics;
    diagnostics.append(&mut out.diagnostics);
    out.diagnostics = diagnostics;
    (out, root.filter(|_| keep))
}

/// Room to reserve for the rest of a phases array read as a stream: `read` entries took `done`
/// bytes, `left` bytes of the file follow. The number of entries is not known until the array
/// ends, and growing the vector by doubling would copy it and hold both copies at once: the
/// rest is estimated from the size of the entries so far, an eighth more for variation (what
/// is not used is never touched, so it costs no memory).
fn more_entries(read: usize, done: usize, left: usize) -> usize {
    let each = (done / read).max(1);
    let rest = left / each + 1;
    rest + rest / 8 + 8
}

/// Lower a parsed document.
pub fn lower(root: &Node, opts: &LowerOptions) -> Lowered {
    let mut l = Lowerer::default();
    let flow = l.document(root, opts.default_name.as_deref(), None);
    Lowered {
        flow,
        diagnostics: l.diags,
    }
}

/// The fields of §2.1; the rest of the flow table belongs to the shorthand forms.
const SHORTHAND_ONLY: &[&str] = &[
    "chain",
    "tasks",
    "task",
    "agent",
    "context",
    "contextLimit",
    "cwd",
];

impl Lowerer {
    /// A whole document: a flow object, a top-level phases array, or a shorthand object.
    /// `fallback` is the shorthand/inline name used when there is no `name` and no default.
    pub(super) fn document(
        &mut self,
        root: &Node,
        default_name: Option<&str>,
        inline_name: Option<&str>,
    ) -> Option<Flow> {
        let mut flow = self.document_fields(root, default_name, inline_name)?;
        resolve_deps(&mut flow);
        Some(flow)
    }

    /// [`Lowerer::document`] before dependencies are resolved.
    fn document_fields(
        &mut self,
        root: &Node,
        default_name: Option<&str>,
        inline_name: Option<&str>,
    ) -> Option<Flow> {
        let inline = inline_name.is_some() && default_name.is_none();
        let members: &[Member] = match &root.kind {
            Kind::Object(m) => m,
            Kind::Array(_) => {
                let mut flow = empty_flow(root.span);
                flow.inline = inline;
                flow.name = default_name.or(inline_name).unwrap_or("flow").to_owned();
                (flow.incomplete, flow.phases) = self.phases(root);
                self.require_phases(&flow, root.span, None);
                return Some(flow);
            }
            _ => {
                self.push(
                    Diagnostic::new(
                        Code::NotAFlow,
                        format!(
                            "a flow must be a JSON object or an array of phases, found {}",
                            root.type_name()
                        ),
                    )
                    .at(root.span)
                    .with_label(format!("{} is not a flow", a_type_name(root)))
                    .help(match &root.kind {
                        Kind::String(_) => {
                            "to run one task, use the task shorthand: {\"task\": \"…\"}"
                        }
                        _ => "write {\"phases\": [{\"id\": \"main\", \"task\": \"…\"}]}",
                    }),
                );
                return None;
            }
        };
        let phases_member = members.iter().find(|m| m.key.value == "phases");
        let shorthand = match phases_member {
            Some(m) if matches!(m.value.kind, Kind::Array(_)) => None,
            _ => shorthand::detect(members),
        };
        let fields = self.fields(members, ObjectKind::Flow, |key| {
            shorthand.is_none() && phases_member.is_some() && SHORTHAND_ONLY.contains(&key)
        });
        let mut flow = empty_flow(root.span);
        flow.inline = inline;
        flow.shorthand = shorthand;
        self.flow_fields(&mut flow, &fields);
        let name_default = default_name
            .or(inline_name)
            .map(str::to_owned)
            .or_else(|| shorthand.map(|s| shorthand::name(s).to_owned()));
        flow.name = match &flow.name_field {
            Some(f) if shorthand.is_some() => crate::value::js_trim(&f.value).to_owned(),
            Some(f) => f.value.clone(),
            None => name_default.unwrap_or_else(|| "flow".to_owned()),
        };
        if let Some(f) = &flow.name_field
            && !f.value.is_empty()
            && flow.name.is_empty()
        {
            self.push(
                Diagnostic::new(
                    Code::InvalidName,
                    "the flow 'name' is only whitespace, which a shorthand document trims away",
                )
                .at(f.span)
                .with_label("empty once trimmed")
                .help("remove 'name' to use the file name, or give it a visible character"),
            );
        }
        match (shorthand, phases_member) {
            (Some(kind), _) => {
                (flow.incomplete, flow.phases) = shorthand::desugar(self, kind, &fields)
            }
            (None, Some(m)) => {
                if matches!(m.value.kind, Kind::Array(_)) {
                    (flow.incomplete, flow.phases) = self.phases(&m.value);
                } else {
                    self.wrong_type(m, "an array of phases");
                    return Some(flow);
                }
            }
            (None, None) => {}
        }
        let empty_steps = members.iter().find(|m| {
            phases_member.is_none()
                && ["chain", "tasks"].contains(&m.key.value.as_str())
                && matches!(&m.value.kind, Kind::Array(a) if a.is_empty())
        });
        self.require_phases(
            &flow,
            phases_member.map_or(root.span, |m| m.value.span),
            empty_steps,
        );
        Some(flow)
    }

    /// E0101, unless phases were written but could not be read (reported already).
    /// `empty_steps` is an empty `chain`/`tasks`, which the author meant as the phases.
    fn require_phases(&mut self, flow: &Flow, span: Span, empty_steps: Option<&Member>) {
        // An inline def may be empty: it runs as done with output "" (SPEC §3.8).
        if !flow.phases.is_empty() || flow.incomplete || flow.inline {
            return;
        }
        let d = Diagnostic::new(Code::NoPhases, "Taskflow must have at least one phase");
        self.push(match empty_steps {
            Some(m) => d
                .at(m.value.span)
                .with_label(format!("'{}' is empty", m.key.value))
                .help(format!(
                    "list the steps: \"{}\": [\"first task\", \"second task\"]",
                    m.key.value
                )),
            None => d
                .at(span)
                .with_label("no phases here")
                .help("add a phase: {\"id\": \"main\", \"task\": \"…\"}"),
        });
    }

    fn flow_fields(&mut self, flow: &mut Flow, f: &Fields<'_>) {
        if let Some(name) = self.string(f, "name") {
            if name.value.is_empty() {
                self.push(
                    Diagnostic::new(Code::InvalidName, "the flow 'name' must not be empty")
                        .at(name.span)
                        .with_label("empty name")
                        .help(
                            "remove 'name' to use the file name, or give it at least one character",
                        ),
                );
            }
            flow.name_field = Some(name);
        }
        flow.description = self.string(f, "description").map(|d| d.value);
        flow.version = self.number(f, "version").map_or(1.0, |v| v.value);
        if let Some(m) = f.get("args") {
            flow.args = self.args(m);
            flow.args_key = Some(m.key.span);
        }
        flow.concurrency = self.number(f, "concurrency");
        if let Some(m) = f.get("budget") {
            flow.budget = self.budget(m);
        }
        if let Some(m) = f.get("hooks") {
            flow.hooks = self.hooks(m);
        }
        flow.agent_scope = self.word(f, "agentScope").unwrap_or_default();
        flow.strict_interpolation = self.boolean(f, "strictInterpolation").unwrap_or(false);
        flow.context_sharing = self.boolean(f, "contextSharing").unwrap_or(false);
        flow.incremental = self.boolean(f, "incremental").unwrap_or(false);
        flow.idle_timeout = self.idle_timeout(f);
        if let Some(m) = f.get("lint") {
            flow.lint_allow = self.lint(m);
        }
    }

    /// `lint: {"allow": [...]}`: the warnings it names (E0005 on each entry that is not one).
    fn lint(&mut self, m: &Member) -> Vec<Code> {
        let Some(members) = self.object_members(m, "an object {\"allow\": [\"W0102\", …]}")
        else {
            return Vec::new();
        };
        let f = self.fields(members, ObjectKind::Lint, |_| false);
        let mut out = Vec::new();
        for entry in self.str_nodes(&f, "allow").unwrap_or_default() {
            match crate::diag::allowable(&entry.value) {
                Ok(code) => out.push(code),
                Err(e) => self.push(
                    Diagnostic::new(Code::InvalidValue, format!("lint.allow: {}", e.message))
                        .at(entry.span)
                        .with_label("not a warning")
                        .help(e.help),
                ),
            }
        }
        out
    }

    /// The `phases` array, and whether some entry could not be read (not an object, no id)
    /// and was left out.
    pub(super) fn phases(&mut self, node: &Node) -> (bool, Vec<Phase>) {
        let Kind::Array(items) = &node.kind else {
            return (false, Vec::new());
        };
        if items.is_empty()
            && let Some(mut detached) = self.detached.take_if(|d| d.span == node.span)
        {
            self.diags.append(&mut detached.diags);
            return (detached.phases.len() < detached.entries, detached.phases);
        }
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            self.phase(item, i, &mut out);
        }
        (out.len() < items.len(), out)
    }

    /// One phase, lowered in place at the end of `out`.
    fn phase(&mut self, node: &Node, index: usize, out: &mut Vec<Phase>) {
        self.phase_taking(node, index, out, Taken::default());
    }

    /// [`Lowerer::phase`] with the values `taken` out of `node` (see [`Taken::from_phase`]).
    fn phase_taking(&mut self, node: &Node, index: usize, out: &mut Vec<Phase>, mut taken: Taken) {
        let Kind::Object(members) = &node.kind else {
            self.push(
                Diagnostic::new(
                    Code::WrongType,
                    format!(
                        "phase #{} must be an object, found {}",
                        index + 1,
                        node.type_name()
                    ),
                )
                .at(node.span)
                .with_label(format!(
                    "expected a phase object, found {}",
                    node.type_name()
                ))
                .help("write {\"id\": \"…\", \"task\": \"…\"}"),
            );
            return;
        };
        let f: PhaseFields<'_> = self.fields(members, ObjectKind::Phase, |_| false);
        let taken_id = taken.id.take();
        let (id, id_span) = match f.get("id").map(|m| (&m.value.kind, m)) {
            // A taken id was a non-empty string.
            Some((Kind::String(s), m)) if taken_id.is_some() || !s.value.is_empty() => {
                (taken_id.unwrap_or_else(|| s.value.clone()), m.value.span)
            }
            other => {
                let (span, label) = match other {
                    None => (node.span, "this phase has no 'id'".to_owned()),
                    Some((_, m)) => (
                        m.value.span,
                        format!("expected a non-empty string, found {}", m.value.type_name()),
                    ),
                };
                self.push(
                    Diagnostic::new(
                        Code::MissingId,
                        format!("phase #{} has no string 'id'", index + 1),
                    )
                    .at(span)
                    .with_label(label)
                    .help("give every phase a unique id such as \"review\""),
                );
                return;
            }
        };
        if id.as_bytes().contains(&b'_') {
            self.push(
                Diagnostic::new(Code::UnderscoreId, format!("phase id '{id}' contains '_'"))
                    .at(id_span)
                    .with_label("'_' is not allowed in phase ids")
                    .phase(&id)
                    .help(format!(
                        "use hyphens instead, e.g. \"{}\", referenced as {{steps.{}.output}}",
                        id.replace('_', "-"),
                        id.replace('_', "-")
                    )),
            );
        }
        // Filled in place: a phase is large, so it is not built aside and moved in.
        out.push(Phase {
            common: Common::with_agent(id, id_span, node.span, String::new()),
            kind: PhaseKind::Agent(Agent),
        });
        let Some(p) = out.last_mut() else { return };
        let c = &mut p.common;
        // `f` holds each field once.
        c.written = Written::from_distinct(
            f.iter()
                .map(|(k, m)| (*k, m.key.span, matches!(m.value.kind, Kind::Bool(true)))),
        );
        // A misspelt key (`dependOn`) stands for the field it resembles: later checks treat
        // that field as present-but-invalid instead of reporting it missing or its edges gone.
        // When every key became a field, none is misspelt.
        let all_known = f.len() == members.len();
        for m in members.iter().filter(|_| !all_known) {
            if field_name(ObjectKind::Phase, &m.key.value).is_none()
                && let Some(near) = did_you_mean(
                    &m.key.value,
                    fields_of(ObjectKind::Phase).iter().map(|f| f.name),
                )
            {
                c.invalid.push(near);
            }
        }
        let mut ty = PhaseType::Agent;
        if let Some(m) = f.get("type") {
            c.ty_span = Some(m.value.span);
            match &m.value.kind {
                Kind::String(s) => match PhaseType::parse(&s.value) {
                    Some(t) => ty = t,
                    None => {
                        let names = PhaseType::NAMES;
                        let mut d = Diagnostic::new(
                            Code::UnknownType,
                            format!("{}: unknown phase type '{}'", c.id, s.value),
                        )
                        .at(m.value.span)
                        .with_label("not a phase type")
                        .phase(&c.id);
                        d = match did_you_mean(&s.value, names.iter().copied()) {
                            Some(s) => d.help(format!("did you mean '{s}'?")),
                            None => d.help(format!("phase types: {}", names.join(", "))),
                        };
                        self.push(d);
                        c.invalid.push("type");
                    }
                },
                _ => {
                    self.wrong_type(m, "a string");
                    c.invalid.push("type");
                }
            }
        }
        // Nearly every phase of a large flow is written with only these common fields: every
        // other common field is at its default, and no field of another kind is written.
        let plain = f
            .keys()
            .all(|k| matches!(*k, "id" | "type" | "agent" | "task" | "dependsOn"));
        let before = self.diags.len();
        self.common_fields(c, ty, &f, taken, plain);
        p.kind = self.kind_fields(&mut p.common, ty, &f, plain);
        for d in &mut self.diags[before..] {
            d.phase.get_or_insert_with(|| p.common.id.clone());
        }
    }

    /// The common fields of SPEC §3.1.
    /// `plain`: `f` holds no field besides id, type, agent, task and dependsOn.
    fn common_fields(
        &mut self,
        p: &mut Common,
        ty: PhaseType,
        f: &PhaseFields<'_>,
        taken: Taken,
        plain: bool,
    ) {
        macro_rules! invalid_if_none {
            ($key:literal, $e:expr) => {{
                let v = $e;
                if v.is_none() && f.contains_key($key) {
                    p.invalid.push($key);
                }
                v
            }};
        }
        // The phase was made with an empty agent name (see `phase`): its agent or the default.
        let agent = self.agent_name_taking(f, "agent", &p.id, taken.agent);
        match invalid_if_none!("agent", agent) {
            Some(a) => p.agent = a,
            None => p.agent.value = DEFAULT_AGENT.to_owned(),
        }
        p.task = invalid_if_none!("task", self.text_taking(f, "task", taken.task));
        p.depends_on = invalid_if_none!(
            "dependsOn",
            self.strings_taking(f, "dependsOn", taken.depends_on)
        )
        .unwrap_or_default();
        // The phase was made with every other common field at its default: none of the
        // reads below would find its field.
        if plain {
            return;
        }
        p.from = invalid_if_none!("from", self.strings(f, "from")).unwrap_or_default();
        p.join = self.word(f, "join").unwrap_or_default();
        p.when = invalid_if_none!("when", self.str_node(f, "when"))
            .map(|(_, s)| Box::new(Cond::new(s.clone())));
        p.retry = invalid_if_none!("retry", self.retry(f)).map(Box::new);
        p.timeout = invalid_if_none!("timeout", self.timeout(f, ty)).map(Box::new);
        p.idle_timeout = invalid_if_none!("idleTimeout", self.idle_timeout(f)).map(Box::new);
        p.output = self.word(f, "output").unwrap_or_default();
        if let Some(m) = f.get("expect") {
            p.expect = invalid_if_none!("expect", self.contract(m, "expect")).map(Box::new);
        }
        p.model = self.string(f, "model").map(Box::new);
        if let Some(t) = self.word::<Thinking>(f, "thinking") {
            p.thinking = Some(Box::new(Field::new(
                t.as_str().to_owned(),
                f["thinking"].key.span,
                f["thinking"].value.span,
            )));
        }
        p.tools = self.tools(f);
        if let Some((m, s)) = self.str_node(f, "cwd") {
            p.cwd_text = Some(Box::new(Text::new(s.clone())));
            p.cwd = invalid_if_none!("cwd", self.cwd_of(m, s)).map(Box::new);
        }
        if let Some(list) = self.str_nodes(f, "context") {
            p.context = list.into_iter().map(|s| Text::new(s.clone())).collect();
        }
        if let Some(n) = self.number(f, "contextLimit") {
            if n.value < 0.0 {
                self.invalid_value(f["contextLimit"], "a number >= 0");
            } else {
                p.context_limit = n.value;
            }
        }
        p.is_final = self.boolean(f, "final").unwrap_or(false);
        p.optional = self.boolean(f, "optional").unwrap_or(false);
        p.share_context = self.boolean(f, "shareContext").unwrap_or(false);
        p.idempotent = self.boolean(f, "idempotent").unwrap_or(true);
        p.concurrency = self.number(f, "concurrency").map(Box::new);
        if let Some(m) = f.get("cache") {
            p.cache = invalid_if_none!("cache", self.cache(m)).map(Box::new);
        }
    }

    /// The phase's own kind from `f`. Fields of other kinds written on it are lowered too, so
    /// their problems are reported as on any phase, and then dropped: the checks say they
    /// have no effect from the written keys alone. A field shared by several kinds is lowered
    /// once.
    /// `plain` as for [`Lowerer::common_fields`]: then no field of another kind is written.
    fn kind_fields(
        &mut self,
        p: &mut Common,
        ty: PhaseType,
        f: &PhaseFields<'_>,
        plain: bool,
    ) -> PhaseKind {
        let mut cx = Cx {
            id: &p.id,
            ty,
            invalid: &mut p.invalid,
        };
        let kind = lower_kind(self, ty, f, &mut cx);
        if plain {
            return kind;
        }
        let mut foreign: Vec<&'static str> = f
            .keys()
            .copied()
            .filter(|k| !fields::is_common(k) && !is_field_of(ty, k))
            .collect();
        for other in PhaseType::ALL {
            if foreign.is_empty() {
                break;
            }
            if !foreign.iter().any(|k| is_field_of(*other, k)) {
                continue;
            }
            let sub: PhaseFields<'_> = f
                .iter()
                .filter(|(k, _)| foreign.contains(k) && is_field_of(*other, k))
                .map(|(k, m)| (*k, *m))
                .collect();
            foreign.retain(|k| !is_field_of(*other, k));
            let _ = lower_kind(self, *other, &sub, &mut cx);
        }
        kind
    }

    /// An agent name field: `^[a-z][a-z0-9-]*$` (E0112).
    pub(super) fn agent_name(
        &mut self,
        f: &Fields<'_>,
        name: &str,
        phase: &str,
    ) -> Option<Field<String>> {
        self.agent_name_taking(f, name, phase, None)
    }

    /// [`Lowerer::agent_name`] using `taken`, the value moved out of the field's member.
    fn agent_name_taking(
        &mut self,
        f: &Fields<'_>,
        name: &str,
        phase: &str,
        taken: Option<String>,
    ) -> Option<Field<String>> {
        let a = self.string_taking(f, name, taken)?;
        if valid_agent_name(&a.value) {
            return Some(a);
        }
        self.push(invalid_agent(&a, name, phase));
        None
    }

    fn timeout(&mut self, f: &PhaseFields<'_>, ty: PhaseType) -> Option<Field<f64>> {
        if ty == PhaseType::Approval {
            return self.deadline(f);
        }
        let n = self.number(f, "timeout")?;
        let (ok, want) = if ty == PhaseType::Script {
            (
                (1000.0..=300000.0).contains(&n.value),
                "from 1000 to 300000 ms for scripts",
            )
        } else {
            (n.value >= 1000.0 && n.value.is_finite(), "at least 1000 ms")
        };
        if !ok {
            self.push(
                Diagnostic::new(
                    Code::InvalidTimeout,
                    format!("'timeout' must be {want}, found {}", format_number(n.value)),
                )
                .at(n.span)
                .with_label(if ty == PhaseType::Script {
                    "outside 1000..300000 ms"
                } else {
                    "below 1000 ms"
                })
                .help("'timeout' is in milliseconds: 60000 is one minute"),
            );
            return None;
        }
        Some(n)
    }

    /// An approval's `timeout` (SPEC §8.8): its deadline, ms >= 1000 as a number or a duration
    /// string read as a cache `ttl` (`"30m"`, `"4h"`, `"2d"`); anything else is E0005.
    fn deadline(&mut self, f: &PhaseFields<'_>) -> Option<Field<f64>> {
        let m = f.get("timeout")?;
        let ms = match &m.value.kind {
            Kind::Number(n) => Some(*n),
            Kind::String(s) => super::specs::parse_ttl(&s.value),
            _ => {
                self.wrong_type(m, "a number of ms or a duration string");
                return None;
            }
        };
        match ms {
            Some(ms) if ms >= 1000.0 && ms.is_finite() => {
                Some(Field::new(ms, m.key.span, m.value.span))
            }
            _ => {
                self.invalid_value(
                    m,
                    "a deadline of at least 1000 ms: a number of ms, or a duration such as \"30m\", \"4h\" or \"2d\"",
                );
                None
            }
        }
    }

    fn tools(&mut self, f: &PhaseFields<'_>) -> Vec<Field<String>> {
        let Some(m) = f.get("tools") else {
            return Vec::new();
        };
        match &m.value.kind {
            // A phase's `tools` is a list (SPEC §3.1). The comma string of agent-definition
            // frontmatter is not accepted here: say how to write it as a list.
            Kind::String(s) => {
                let names: Vec<String> = s
                    .value
                    .split(',')
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .map(|t| format!("\"{t}\""))
                    .collect();
                let fixed = if names.is_empty() {
                    "[]".to_owned()
                } else {
                    format!("[{}]", names.join(", "))
                };
                self.push(
                    Diagnostic::new(
                        Code::WrongType,
                        "'tools' must be an array of strings, found a string",
                    )
                    .at(m.value.span)
                    .with_label("expected an array of strings")
                    .help(format!("write it as a list: \"tools\": {fixed}")),
                );
                Vec::new()
            }
            Kind::Array(_) => self.strings(f, "tools").unwrap_or_default(),
            _ => {
                self.wrong_type(m, "an array of strings");
                Vec::new()
            }
        }
    }

    pub(super) fn cwd_of(&mut self, m: &Member, s: &Str) -> Option<Field<Cwd>> {
        let v = s.value.as_str();
        let cwd = match CwdKeyword::parse(v) {
            Some(CwdKeyword::Temp) => Cwd::Temp,
            Some(CwdKeyword::Dedicated) => Cwd::Dedicated,
            Some(CwdKeyword::Worktree) => Cwd::Worktree,
            None => {
                let template = crate::compile::Template::parse(v);
                if let Some(fixed) = spaced_placeholder(v).filter(|_| !template.has_placeholders())
                {
                    // `{ args.dir }` is no placeholder (SPEC §4.2): it would be used as a
                    // literal directory name, braces and all.
                    self.push(
                        Diagnostic::new(Code::InvalidCwd, format!("'cwd' may hold only one whole {{args.X}} placeholder, found \"{v}\" (a placeholder has no spaces inside its braces)"))
                            .at(m.value.span)
                            .with_label("a literal path with braces, not a placeholder")
                            .help(format!("write \"cwd\": \"{fixed}\" for a declared relative-path arg")),
                    );
                    return None;
                }
                if !template.has_placeholders() {
                    Cwd::Path(v.to_owned())
                } else {
                    let whole = template.refs().len() == 1
                        && template.refs()[0].span.range() == (0..v.len())
                        && template.paths()[0].head() == "args"
                        && template.paths()[0].segs().len() == 2;
                    if !whole {
                        self.push(
                            Diagnostic::new(Code::InvalidCwd, format!("'cwd' may hold only one whole {{args.X}} placeholder, found \"{v}\""))
                                .at(m.value.span)
                                .with_label("not exactly one {args.X}")
                                .help("declare a relative-path arg and write \"cwd\": \"{args.dir}\""),
                        );
                        return None;
                    }
                    Cwd::Arg(template.paths()[0].segs()[1].key.to_string())
                }
            }
        };
        Some(Field::new(cwd, m.key.span, m.value.span))
    }
}

/// Resolve every phase's `dependsOn ∪ from` to phase positions, once: the checks and the run
/// use these indices, and the names stay in `depends_on`/`from` for messages.
fn resolve_deps(flow: &mut Flow) {
    flow.ids = PhaseIds::new(&flow.phases);
    // `seen[j] == i + 1` ⇔ phase j is already an edge of phase i: linear de-duplication even
    // for a fan-in of thousands.
    let mut seen = vec![0u32; flow.phases.len()];
    // Each phase's edges are stored as soon as they are found (no list of lists aside).
    for i in 0..flow.phases.len() {
        let p = &flow.phases[i];
        let written = p.depends_on.len() + p.from.len();
        if written == 0 {
            flow.phases[i].common.deps.clear();
            continue;
        }
        let stamp = i as u32 + 1;
        let mut deps = Vec::with_capacity(written);
        for d in p.depends_on.iter().chain(&p.from) {
            if let Some(j) = flow.ids.get(&d.value, &flow.phases)
                && seen[j.index()] != stamp
            {
                seen[j.index()] = stamp;
                deps.push(j);
            }
        }
        flow.phases[i].common.deps = deps;
    }
}

fn empty_flow(span: Span) -> Flow {
    Flow {
        name: String::new(),
        name_field: None,
        description: None,
        version: 1.0,
        args: IndexMap::new(),
        args_key: None,
        concurrency: None,
        budget: None,
        hooks: None,
        agent_scope: AgentScope::Both,
        strict_interpolation: false,
        context_sharing: false,
        incremental: false,
        idle_timeout: None,
        lint_allow: Vec::new(),
        phases: Vec::new(),
        ids: PhaseIds::default(),
        incomplete: false,
        inline: false,
        shorthand: None,
        span,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::check::testing::{check, codes, find};

    /// Lowering while dropping the phases' subtrees gives exactly what lowering the kept tree
    /// gives, whatever the document's shape.
    #[test]
    fn dropping_the_tree_while_lowering_changes_nothing() {
        let docs = [
            r#"{"name": "x", "phases": [{"id": "a", "task": "t"}, {"id": "b", "dependsOn": ["a"], "task": "{steps.a.output}"}]}"#,
            r#"[{"id": "a", "task": "t"}, {"id": "b", "dependOn": ["a"], "task": "u"}]"#,
            r#"{"phases": [{"id": "a", "task": "t"}], "phases": [{"id": "b", "task": "u"}]}"#,
            r#"{"phases": {"id": "a"}, "task": "t"}"#,
            r#"{"phases": []}"#,
            r#"{"phases": [{"id": "a", "type": "flow", "def": {"phases": [{"id": "i", "task": "t"}]}}, 3]}"#,
            r#"{"chain": ["one", "two"]}"#,
            r#"{"name": 3, "phases": [{"id": "a_b", "task": 3}, {"task": "no id"}, {"id": "c", "agent": "Bad"}], "nme": "x"}"#,
            r#"{"phases": [{"id": "a", "task": "t", "dependsOn": ["zz"]}], "args": {"a": 1}}"#,
        ];
        for text in docs {
            let parsed = json::parse(text);
            let mut kept = lower(
                parsed.root.as_ref().expect("a tree"),
                &LowerOptions::default(),
            );
            let mut diagnostics = parsed.diagnostics.clone();
            diagnostics.append(&mut kept.diagnostics);
            kept.diagnostics = diagnostics;
            let (dropped, document) = lower_text(text, &LowerOptions::default(), false);
            assert!(document.is_none());
            assert_eq!(format!("{kept:?}"), format!("{dropped:?}"), "{text}");
            let (_, document) = lower_text(text, &LowerOptions::default(), true);
            assert_eq!(document, json::parse(text).root, "{text}");
        }
    }

    #[test]
    fn a_dynamic_cwd_is_one_whole_args_placeholder() {
        let args = r#""args": {"dir": {"type": "relative-path", "default": "a"}}"#;
        let cwd = |cwd: &str| {
            let text =
                format!(r#"{{{args}, "phases": [{{"id": "a", "task": "x", "cwd": "{cwd}"}}]}}"#);
            check(&text)
                .into_iter()
                .filter(|d| d.code.as_str() == "E0410")
                .map(|d| d.help.unwrap_or_default())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            cwd("{ args.dir }"),
            [r#"write "cwd": "{args.dir}" for a declared relative-path arg"#]
        );
        for bad in [
            "work/{args.dir}",
            "{args.dir}{args.dir}",
            "{args.dir} ",
            "{steps.a.output}",
            "{args}",
        ] {
            assert_eq!(cwd(bad).len(), 1, "{bad}");
        }
        for ok in ["{args.dir}", "build/out", "temp", "a {b c}"] {
            assert!(cwd(ok).is_empty(), "{ok}");
        }
    }

    #[test]
    fn spaced_placeholders_are_recognised() {
        assert_eq!(
            spaced_placeholder("{ steps.a.json }"),
            Some("{steps.a.json}".into())
        );
        assert_eq!(
            spaced_placeholder("[{a b}, { item }]"),
            Some("{item}".into())
        );
        assert_eq!(spaced_placeholder("[1, 2]"), None);
        assert_eq!(spaced_placeholder("{ x"), None);
    }

    #[test]
    fn shorthand_names_are_trimmed_before_the_empty_check() {
        assert_eq!(codes(r#"{"name": "  ", "task": "x"}"#), ["E0108"]);
        assert_eq!(
            codes(r#"{"name": "  x ", "task": "x"}"#),
            Vec::<&str>::new()
        );
        assert_eq!(
            codes(r#"{"name": " ", "phases": [{"id": "a", "task": "x"}]}"#),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn an_empty_inline_def_is_allowed() {
        let text = r#"[{"id": "a", "type": "flow", "def": []}, {"id": "b", "type": "flow", "def": {"phases": []}}]"#;
        assert_eq!(codes(text), ["W0101"]);
    }

    #[test]
    fn no_phases_points_at_an_empty_chain() {
        let text = r#"{"name": "x", "chain": []}"#;
        let d = find(&check(text), "E0101");
        assert_eq!(&text[d.span.unwrap().range()], "[]");
        assert_eq!(d.label.as_deref(), Some("'chain' is empty"));
        // Phases that were written but could not be read are not "no phases".
        assert_eq!(codes(r#"{"phases": [3]}"#), ["E0004"]);
    }

    #[test]
    fn a_misspelt_retry_max_is_one_error() {
        let text = r#"[{"id": "a", "task": "x", "retry": {"mx": 2}}]"#;
        assert_eq!(codes(text), ["E0003"]);
    }

    #[test]
    fn a_string_document_suggests_the_task_shorthand() {
        let d = find(&check(r#""Review the PR""#), "E0006");
        assert_eq!(d.label.as_deref(), Some("a string is not a flow"));
        assert!(d.help.unwrap().contains(r#"{"task": "…"}"#));
    }

    #[test]
    fn a_dropped_chain_step_silences_reference_rules() {
        // step2 could not be read, so the last step is named step2, not step3: references by
        // number cannot be judged.
        let text = r#"{"chain": ["a", 7, "c {steps.step3.output}"]}"#;
        assert_eq!(codes(text), ["E0004"]);
    }

    #[test]
    fn edges_are_deduplicated_by_name_and_by_index() {
        let mut phases: Vec<String> = (0..20)
            .map(|i| format!(r#"{{"id": "w{i}", "task": "x"}}"#))
            .collect();
        let list: Vec<String> = (0..20).chain(0..20).map(|i| format!("\"w{i}\"")).collect();
        phases.push(format!(
            r#"{{"id": "m", "task": "x", "dependsOn": [{}], "from": ["w3", "nope"]}}"#,
            list.join(", ")
        ));
        let text = format!("[{}]", phases.join(", "));
        let flow = lower_source(&text, &LowerOptions::default())
            .flow
            .expect("flow");
        let m = flow.phases.last().expect("m");
        let names = m.dep_names();
        assert_eq!(names.len(), 21);
        assert_eq!(names[0], "w0");
        assert_eq!(names[20], "nope");
        let deps: Vec<usize> = m.deps.iter().map(|d| d.index()).collect();
        assert_eq!(deps, (0..20).collect::<Vec<_>>());
    }
}
