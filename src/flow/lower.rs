//! Lowering: the span-keeping JSON tree → the flow IR, with the schema checks of SPEC §7.1
//! (closed field sets, JSON types, ranges and sets). Problems are collected, never fatal: a
//! field with a problem is left at its default and listed in `Phase::invalid`, so later checks
//! do not pile follow-on errors on top.

use std::hash::BuildHasher;

use indexmap::IndexMap;

use super::fields::{ObjectKind, THINKING, field_name, fields_of};
use super::shorthand;
use super::*;
use crate::diag::{Code, Diagnostic, did_you_mean};
use crate::json::{self, Kind, Member, Node};
use crate::syntax::path::is_placeholder_path;
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
    pub flow: Option<Flow>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Parse flow text (JSON/JSONC) and lower it. Syntax errors stop before lowering.
pub fn lower_source(text: &str, opts: &LowerOptions) -> Lowered {
    let parsed = json::parse(text);
    let syntax_failed = parsed
        .diagnostics
        .iter()
        .any(|d| d.code == Code::JsonSyntax);
    let mut out = match (&parsed.root, syntax_failed) {
        (Some(root), false) => lower(root, opts),
        _ => Lowered {
            flow: None,
            diagnostics: Vec::new(),
        },
    };
    let mut diagnostics = parsed.diagnostics;
    diagnostics.append(&mut out.diagnostics);
    out.diagnostics = diagnostics;
    out
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

type Fields<'a, S = foldhash::fast::RandomState> = IndexMap<&'static str, &'a Member, S>;

/// A phase's fields: each phase asks for ~50 names, so this map uses a fast hasher (the
/// helpers below take either map).
type PhaseFields<'a> = Fields<'a, foldhash::fast::RandomState>;

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

#[derive(Default)]
pub(super) struct Lowerer {
    pub(super) diags: Vec<Diagnostic>,
}

impl Lowerer {
    fn push(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    /// A whole document: a flow object, a top-level phases array, or a shorthand object.
    /// `fallback` is the shorthand/inline name used when there is no `name` and no default.
    pub(super) fn document(
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
        flow.agent_scope = self
            .one_of(
                f,
                "agentScope",
                &[
                    ("user", AgentScope::User),
                    ("project", AgentScope::Project),
                    ("both", AgentScope::Both),
                ],
            )
            .unwrap_or_default();
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

    /// Check an object's keys against its closed field set; return the known members by name.
    /// `misplaced` marks known keys that are not allowed in this context.
    pub(super) fn fields<'a>(
        &mut self,
        members: &'a [Member],
        kind: ObjectKind,
        misplaced: impl Fn(&str) -> bool,
    ) -> Fields<'a> {
        self.fields_at(members, kind, misplaced, kind.describe())
    }

    /// [`Lowerer::fields`], naming the object `at` in messages (`expect.properties.a`).
    fn fields_at<'a>(
        &mut self,
        members: &'a [Member],
        kind: ObjectKind,
        misplaced: impl Fn(&str) -> bool,
        at: &str,
    ) -> Fields<'a> {
        let mut out = Fields::default();
        for m in members {
            let key = m.key.value.as_str();
            match field_name(kind, key) {
                Some(name) if !misplaced(key) => {
                    out.entry(name).or_insert(m);
                }
                Some(_) => self.push(
                    Diagnostic::new(Code::UnknownField, format!("unknown field '{key}' in {at}"))
                        .at(m.key.span)
                        .with_label("only for chain/tasks/task documents")
                        .help(format!("'{key}' belongs to the shorthand forms (chain/tasks/task), which a flow with 'phases' cannot use; move it into the phases")),
                ),
                None => self.unknown_field(m, kind, at),
            }
        }
        out
    }

    fn unknown_field(&mut self, m: &Member, kind: ObjectKind, at: &str) {
        let key = m.key.value.as_str();
        let names = fields_of(kind).iter().map(|f| f.name);
        let help = match did_you_mean(key, names) {
            Some(s) => format!("did you mean '{s}'?"),
            None => format!(
                "{} accepts: {}",
                kind.describe(),
                fields_of(kind)
                    .iter()
                    .map(|f| f.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let (code, message) = if kind == ObjectKind::Expect {
            (
                Code::InvalidContract,
                format!(
                    "{at}.{key}: unknown contract keyword (supported: type, properties, required, items, enum)"
                ),
            )
        } else {
            (Code::UnknownField, format!("unknown field '{key}' in {at}"))
        };
        self.push(
            Diagnostic::new(code, message)
                .at(m.key.span)
                .with_label("unknown field")
                .help(help),
        );
    }

    /// The members of an object node, or an E0004 naming `what`.
    fn object_members<'a>(&mut self, m: &'a Member, what: &str) -> Option<&'a [Member]> {
        match &m.value.kind {
            Kind::Object(members) => Some(members),
            _ => {
                self.wrong_type(m, what);
                None
            }
        }
    }

    pub(super) fn wrong_type(&mut self, m: &Member, expected: &str) {
        let key = &m.key.value;
        self.push(
            Diagnostic::new(
                Code::WrongType,
                format!("'{key}' must be {expected}, found {}", m.value.type_name()),
            )
            .at(m.value.span)
            .with_label(format!("expected {expected}"))
            .help(type_help(key, expected, &m.value)),
        );
    }

    fn invalid_value(&mut self, m: &Member, allowed: &str) {
        let shown = match &m.value.kind {
            Kind::String(s) => format!("'{}'", s.value),
            Kind::Number(n) => format_number(*n),
            _ => m.value.type_name().to_owned(),
        };
        self.push(
            Diagnostic::new(
                Code::InvalidValue,
                format!(
                    "invalid value {shown} for '{}': expected {allowed}",
                    m.key.value
                ),
            )
            .at(m.value.span)
            .with_label(format!("expected {allowed}"))
            .help(format!("change '{}' to {allowed}", m.key.value)),
        );
    }

    pub(super) fn string<S: BuildHasher>(
        &mut self,
        f: &Fields<'_, S>,
        name: &str,
    ) -> Option<Field<String>> {
        let m = f.get(name)?;
        match &m.value.kind {
            Kind::String(s) => Some(Field::new(s.value.clone(), m.key.span, m.value.span)),
            _ => {
                self.wrong_type(m, "a string");
                None
            }
        }
    }

    pub(super) fn str_node<'a, S: BuildHasher>(
        &mut self,
        f: &Fields<'a, S>,
        name: &str,
    ) -> Option<(&'a Member, &'a Str)> {
        let m = *f.get(name)?;
        match &m.value.kind {
            Kind::String(s) => Some((m, s)),
            _ => {
                self.wrong_type(m, "a string");
                None
            }
        }
    }

    pub(super) fn text<S: BuildHasher>(&mut self, f: &Fields<'_, S>, name: &str) -> Option<Text> {
        self.str_node(f, name).map(|(_, s)| Text::new(s.clone()))
    }

    pub(super) fn boolean<S: BuildHasher>(
        &mut self,
        f: &Fields<'_, S>,
        name: &str,
    ) -> Option<bool> {
        let m = f.get(name)?;
        match m.value.kind {
            Kind::Bool(b) => Some(b),
            _ => {
                self.wrong_type(m, "true or false");
                None
            }
        }
    }

    pub(super) fn number<S: BuildHasher>(
        &mut self,
        f: &Fields<'_, S>,
        name: &str,
    ) -> Option<Field<f64>> {
        let m = f.get(name)?;
        match m.value.kind {
            Kind::Number(n) => Some(Field::new(n, m.key.span, m.value.span)),
            _ => {
                self.wrong_type(m, "a number");
                None
            }
        }
    }

    /// A number that must lie in `lo..=hi` (E0005 otherwise).
    fn ranged<S: BuildHasher>(
        &mut self,
        f: &Fields<'_, S>,
        name: &str,
        lo: f64,
        hi: f64,
    ) -> Option<f64> {
        let n = self.number(f, name)?;
        if n.value >= lo && n.value <= hi {
            Some(n.value)
        } else {
            let m = f[name];
            self.invalid_value(
                m,
                &format!(
                    "a number from {} to {}",
                    format_number(lo),
                    format_number(hi)
                ),
            );
            None
        }
    }

    pub(super) fn one_of<T: Copy, S: BuildHasher>(
        &mut self,
        f: &Fields<'_, S>,
        name: &str,
        table: &[(&str, T)],
    ) -> Option<T> {
        let m = f.get(name)?;
        let Kind::String(s) = &m.value.kind else {
            self.wrong_type(m, "a string");
            return None;
        };
        if let Some((_, v)) = table.iter().find(|(k, _)| *k == s.value) {
            return Some(*v);
        }
        let names: Vec<&str> = table.iter().map(|(k, _)| *k).collect();
        self.invalid_value(m, &format!("one of {}", names.join(", ")));
        if let Some(s) = did_you_mean(&s.value, names.iter().copied())
            && let Some(d) = self.diags.last_mut()
        {
            d.help = Some(format!("did you mean '{s}'?"));
        }
        None
    }

    /// An array of strings; other elements are E0004 each.
    pub(super) fn strings<S: BuildHasher>(
        &mut self,
        f: &Fields<'_, S>,
        name: &str,
    ) -> Option<Vec<Field<String>>> {
        let key = f.get(name)?.key.span;
        let (items, all_strings) = self.string_items(f, name)?;
        all_strings.then(|| {
            items
                .into_iter()
                .map(|s| Field::new(s.value.clone(), key, s.span))
                .collect()
        })
    }

    /// The string elements of an array field; other elements are E0004 each.
    fn str_nodes<'a, S: BuildHasher>(
        &mut self,
        f: &Fields<'a, S>,
        name: &str,
    ) -> Option<Vec<&'a Str>> {
        self.string_items(f, name).map(|(items, _)| items)
    }

    /// The string elements of an array field and whether every element was one (each other
    /// element is an E0004); `None` when the field is absent or not an array.
    fn string_items<'a, S: BuildHasher>(
        &mut self,
        f: &Fields<'a, S>,
        name: &str,
    ) -> Option<(Vec<&'a Str>, bool)> {
        let m = f.get(name)?;
        let Kind::Array(items) = &m.value.kind else {
            self.wrong_type(m, "an array of strings");
            return None;
        };
        let mut out = Vec::new();
        let mut all_strings = true;
        for item in items {
            match &item.kind {
                Kind::String(s) => out.push(s),
                _ => {
                    all_strings = false;
                    self.push(
                        Diagnostic::new(
                            Code::WrongType,
                            format!(
                                "'{}' must contain only strings, found {}",
                                m.key.value,
                                item.type_name()
                            ),
                        )
                        .at(item.span)
                        .with_label("expected a string")
                        .help(element_help(item)),
                    );
                }
            }
        }
        Some((out, all_strings))
    }

    fn idle_timeout<S: BuildHasher>(&mut self, f: &Fields<'_, S>) -> Option<Field<f64>> {
        let n = self.number(f, "idleTimeout")?;
        let v = n.value;
        if v < 0.0 || !v.is_finite() || (v > 0.0 && v < 1000.0) {
            self.push(
                Diagnostic::new(
                    Code::InvalidIdleTimeout,
                    format!(
                        "'idleTimeout' must be 0 (off) or at least 1000 ms, found {}",
                        format_number(v)
                    ),
                )
                .at(n.span)
                .with_label("expected 0 or >= 1000 ms")
                .help("use 0 to disable the idle watchdog, or a value >= 1000 (milliseconds)"),
            );
            return None;
        }
        Some(n)
    }

    fn args(&mut self, m: &Member) -> IndexMap<String, ArgSpec> {
        let mut out = IndexMap::new();
        let Some(members) = self.object_members(m, "an object of argument specs") else {
            return out;
        };
        for arg in members {
            if let Some(spec) = self.arg_spec(arg) {
                out.entry(spec.name.clone()).or_insert(spec);
            }
        }
        out
    }

    fn arg_spec(&mut self, arg: &Member) -> Option<ArgSpec> {
        let name = arg.key.value.clone();
        let members = self.object_members(
            arg,
            "an argument spec object ({\"type\": …, \"default\": …})",
        )?;
        let f = self.fields(members, ObjectKind::ArgSpec, |_| false);
        let ty = self.one_of(
            &f,
            "type",
            &[
                ("string", ArgType::String),
                ("relative-path", ArgType::RelativePath),
                ("number", ArgType::Number),
                ("boolean", ArgType::Boolean),
                ("enum", ArgType::Enum),
            ],
        );
        let mut spec = ArgSpec {
            name: name.clone(),
            name_span: arg.key.span,
            ty,
            default: f
                .get("default")
                .map(|m| Field::new(m.value.to_value(), m.key.span, m.value.span)),
            description: self.string(&f, "description").map(|d| d.value),
            required: self.boolean(&f, "required").unwrap_or(false),
            required_span: f.get("required").map(|m| m.key.span),
            minimum: self.number(&f, "minimum").map(|n| n.value),
            maximum: self.number(&f, "maximum").map(|n| n.value),
            values: Vec::new(),
            span: arg.value.span,
        };
        let errors_before = self.diags.len();
        let spec_error = |l: &mut Lowerer, span: Span, msg: String, label: &str, help: String| {
            l.push(
                Diagnostic::new(Code::InvalidArgSpec, format!("Argument '{name}' {msg}"))
                    .at(span)
                    .with_label(label.to_owned())
                    .help(help),
            );
        };
        for key in ["minimum", "maximum"] {
            if let Some(m) = f.get(key)
                && ty != Some(ArgType::Number)
            {
                spec_error(
                    self,
                    m.key.span,
                    format!("has '{key}', which applies only to type number"),
                    "only for numbers",
                    format!("remove '{key}', or add \"type\": \"number\""),
                );
            }
        }
        if let (Some(lo), Some(hi)) = (spec.minimum, spec.maximum)
            && lo > hi
        {
            spec_error(
                self,
                f["minimum"].value.span.to(f["maximum"].value.span),
                format!(
                    "has minimum {} > maximum {}",
                    format_number(lo),
                    format_number(hi)
                ),
                "no number fits this range",
                "swap the two bounds, or fix the one that is wrong".to_owned(),
            );
        }
        match (f.get("values"), ty) {
            (Some(m), Some(ArgType::Enum)) => match &m.value.kind {
                Kind::Array(items) if !items.is_empty() => {
                    for item in items {
                        let v = item.to_value();
                        if !matches!(
                            v,
                            crate::value::Value::String(_) | crate::value::Value::Number(_)
                        ) {
                            spec_error(
                                self,
                                item.span,
                                format!(
                                    "enum values must be strings or numbers, found {}",
                                    v.type_name()
                                ),
                                "not a string or number",
                                "list only strings and numbers in 'values'".to_owned(),
                            );
                        } else if spec.values.contains(&v) {
                            spec_error(
                                self,
                                item.span,
                                format!("lists the enum value {} twice", v.to_json()),
                                "listed before",
                                "remove the repeated value".to_owned(),
                            );
                        } else {
                            spec.values.push(v);
                        }
                    }
                }
                _ => spec_error(
                    self,
                    m.value.span,
                    "needs 'values': a non-empty array of strings or numbers".into(),
                    "expected a non-empty array",
                    "list the allowed values, e.g. \"values\": [\"low\", \"high\"]".to_owned(),
                ),
            },
            (None, Some(ArgType::Enum)) => spec_error(
                self,
                arg.value.span,
                "of type enum needs 'values': a non-empty array".into(),
                "no 'values'",
                "list the allowed values, e.g. \"values\": [\"low\", \"high\"]".to_owned(),
            ),
            (Some(m), _) => spec_error(
                self,
                m.key.span,
                "has 'values', which applies only to type enum".into(),
                "only for enums",
                "remove 'values', or add \"type\": \"enum\"".to_owned(),
            ),
            (None, _) => {}
        }
        // A default is judged only against a spec that is itself sound.
        if self.diags.len() == errors_before
            && let Some(d) = &spec.default
            && let Err(why) = super::args::check_value(&spec, &d.value)
        {
            let help = match ty {
                Some(ArgType::Enum) => "use one of the listed values as the default".to_owned(),
                _ => "change the default so it fits the declaration, or remove it".to_owned(),
            };
            spec_error(
                self,
                d.span,
                format!("default must {why}"),
                "does not fit the declaration",
                help,
            );
        }
        Some(spec)
    }

    fn budget(&mut self, m: &Member) -> Option<Field<Budget>> {
        let members = self.object_members(m, "an object {\"maxUSD\"?: n, \"maxTokens\"?: n}")?;
        let f = self.fields(members, ObjectKind::Budget, |_| false);
        let mut b = Budget {
            empty: members.is_empty(),
            ..Budget::default()
        };
        for (key, slot) in [("maxUSD", &mut b.max_usd), ("maxTokens", &mut b.max_tokens)] {
            if let Some(n) = self.number(&f, key) {
                if n.value < 0.0 || !n.value.is_finite() {
                    self.invalid_value(f[key], "a number >= 0");
                } else {
                    *slot = Some(n.value);
                }
            }
        }
        Some(Field::new(b, m.key.span, m.value.span))
    }

    /// The `phases` array, and whether some entry could not be read (not an object, no id)
    /// and was left out.
    pub(super) fn phases(&mut self, node: &Node) -> (bool, Vec<Phase>) {
        let Kind::Array(items) = &node.kind else {
            return (false, Vec::new());
        };
        // Phases are large (~2.9 KB): reserve once and lower each in place, instead of moving
        // them on every doubling.
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            self.phase(item, i, &mut out);
        }
        (out.len() < items.len(), out)
    }

    /// One phase, lowered in place at the end of `out`.
    fn phase(&mut self, node: &Node, index: usize, out: &mut Vec<Phase>) {
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
        let f: PhaseFields<'_> = self
            .fields(members, ObjectKind::Phase, |_| false)
            .into_iter()
            .collect();
        let (id, id_span) = match f.get("id").map(|m| (&m.value.kind, m)) {
            Some((Kind::String(s), m)) if !s.value.is_empty() => (s.value.clone(), m.value.span),
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
        if id.contains('_') {
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
        out.push(Phase::new(id.clone(), id_span, node.span, PhaseType::Agent));
        let Some(p) = out.last_mut() else { return };
        p.written = f.iter().map(|(k, m)| (*k, m.key.span)).collect();
        // A misspelt key (`dependOn`) stands for the field it resembles: later checks treat
        // that field as present-but-invalid instead of reporting it missing or its edges gone.
        for m in members {
            if field_name(ObjectKind::Phase, &m.key.value).is_none()
                && let Some(near) = did_you_mean(
                    &m.key.value,
                    fields_of(ObjectKind::Phase).iter().map(|f| f.name),
                )
            {
                p.invalid.push(near);
            }
        }
        if let Some(m) = f.get("type") {
            p.ty_span = Some(m.value.span);
            match &m.value.kind {
                Kind::String(s) => match PhaseType::parse(&s.value) {
                    Some(t) => p.ty = t,
                    None => {
                        let names = PhaseType::ALL.map(PhaseType::as_str);
                        let mut d = Diagnostic::new(
                            Code::UnknownType,
                            format!("{id}: unknown phase type '{}'", s.value),
                        )
                        .at(m.value.span)
                        .with_label("not a phase type")
                        .phase(&id);
                        d = match did_you_mean(&s.value, names) {
                            Some(s) => d.help(format!("did you mean '{s}'?")),
                            None => d.help(format!("phase types: {}", names.join(", "))),
                        };
                        self.push(d);
                        p.invalid.push("type");
                    }
                },
                _ => {
                    self.wrong_type(m, "a string");
                    p.invalid.push("type");
                }
            }
        }
        let before = self.diags.len();
        self.phase_fields(p, &f);
        for d in &mut self.diags[before..] {
            d.phase.get_or_insert_with(|| id.clone());
        }
    }

    fn phase_fields(&mut self, p: &mut Phase, f: &PhaseFields<'_>) {
        macro_rules! invalid_if_none {
            ($key:literal, $e:expr) => {{
                let v = $e;
                if v.is_none() && f.contains_key($key) {
                    p.invalid.push($key);
                }
                v
            }};
        }
        if let Some(a) = invalid_if_none!("agent", self.agent_name(f, "agent", &p.id)) {
            p.agent = a;
        }
        p.task = invalid_if_none!("task", self.text(f, "task"));
        p.depends_on =
            invalid_if_none!("dependsOn", self.strings(f, "dependsOn")).unwrap_or_default();
        p.from = invalid_if_none!("from", self.strings(f, "from")).unwrap_or_default();
        p.join = self
            .one_of(f, "join", &[("all", Join::All), ("any", Join::Any)])
            .unwrap_or_default();
        p.when =
            invalid_if_none!("when", self.str_node(f, "when")).map(|(_, s)| Cond::new(s.clone()));
        p.retry = invalid_if_none!("retry", self.retry(f));
        p.timeout = invalid_if_none!("timeout", self.timeout(f, p.ty));
        p.idle_timeout = invalid_if_none!("idleTimeout", self.idle_timeout(f));
        p.output = self
            .one_of(
                f,
                "output",
                &[("text", OutputMode::Text), ("json", OutputMode::Json)],
            )
            .unwrap_or_default();
        if let Some(m) = f.get("expect") {
            p.expect = invalid_if_none!("expect", self.contract(m, "expect"));
        }
        p.model = self.string(f, "model");
        if f.contains_key("thinking")
            && let Some(t) = self.one_of(
                f,
                "thinking",
                &THINKING.iter().map(|t| (*t, *t)).collect::<Vec<_>>(),
            )
        {
            p.thinking = Some(Field::new(
                t.to_owned(),
                f["thinking"].key.span,
                f["thinking"].value.span,
            ));
        }
        p.tools = self.tools(f);
        if let Some((m, s)) = self.str_node(f, "cwd") {
            p.cwd_text = Some(Text::new(s.clone()));
            p.cwd = invalid_if_none!("cwd", self.cwd_of(m, s));
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
        p.concurrency = self.number(f, "concurrency");
        if let Some(m) = f.get("cache") {
            p.cache = invalid_if_none!("cache", self.cache(m));
        }
        if let Some(m) = f.get("branches") {
            p.branches = invalid_if_none!("branches", self.branches(m, &p.id)).unwrap_or_default();
        }
        if let Some(m) = f.get("over") {
            let literal = match &m.value.kind {
                Kind::String(s) => {
                    let text = Text::new(s.clone());
                    // A string without a placeholder is a literal too (`"[\"a\", \"b\"]"`).
                    let literal = p.ty == PhaseType::Map && !text.template.has_placeholders();
                    p.over = Some(text);
                    literal.then_some("a string without a placeholder")
                }
                _ => Some(m.value.type_name()),
            };
            if let Some(found) = literal {
                p.invalid.push("over");
                let spaced = p.over.as_ref().and_then(|t| spaced_placeholder(t.as_str()));
                let help = match spaced {
                    Some(fixed) => format!("a placeholder has no spaces inside its braces: write \"over\": \"{fixed}\""),
                    None => "emit the array from an upstream phase (output: \"json\") and reference it: \"over\": \"{steps.list.json}\"".to_owned(),
                };
                self.push(
                    Diagnostic::new(Code::MapOverLiteral, format!("{}: 'over' must be a placeholder string such as \"{{steps.scan.json}}\", found {found}", p.id))
                        .at(m.value.span)
                        .with_label("a literal, not a reference to upstream output")
                        .help(help),
                );
            }
        }
        if let Some(name) = self.string(f, "as") {
            let ok = is_placeholder_path(&name.value) && !name.value.contains('.');
            if !ok || ["args", "steps", "previous", "reflexion"].contains(&name.value.as_str()) {
                p.invalid.push("as");
                self.push(
                    Diagnostic::new(Code::InvalidLocalName, format!("{}: 'as' name '{}' cannot be used as a placeholder head", p.id, name.value))
                        .at(name.span)
                        .with_label(if ok { "a reserved placeholder family" } else { "not a single placeholder segment" })
                        .help("use letters, digits, '_' or '-', and not args, steps, previous or reflexion (e.g. \"file\")"),
                );
            } else {
                p.as_name = Some(name);
            }
        }
        if let Some(list) = self.str_nodes(f, "eval") {
            p.eval = list.into_iter().map(|s| eval_entry(s.clone())).collect();
        }
        if let Some(m) = f.get("score") {
            p.score = invalid_if_none!("score", self.score(m));
        }
        p.on_block = self
            .one_of(
                f,
                "onBlock",
                &[("halt", OnBlock::Halt), ("retry", OnBlock::Retry)],
            )
            .unwrap_or_default();
        p.reduce_strategy = self
            .one_of(
                f,
                "reduceStrategy",
                &[
                    ("one-shot", ReduceStrategy::OneShot),
                    ("tree", ReduceStrategy::Tree),
                ],
            )
            .unwrap_or_default();
        if let Some(n) = self.number(f, "batchSize") {
            if n.value >= 2.0 && n.value.fract() == 0.0 && n.value.is_finite() {
                p.batch_size = Some(n);
            } else {
                self.invalid_value(f["batchSize"], "an integer >= 2");
            }
        }
        p.use_flow = self.string(f, "use");
        if let Some(m) = f.get("def") {
            p.def = invalid_if_none!("def", self.def(m, &p.id));
        }
        if let Some(m) = f.get("with")
            && let Some(members) = self.object_members(m, "an object of sub-flow arguments")
        {
            for w in members {
                let value = match &w.value.kind {
                    Kind::String(s) => WithValue::Template(Text::new(s.clone())),
                    _ => WithValue::Literal(w.value.to_value()),
                };
                p.with.insert(
                    w.key.value.clone(),
                    Field::new(value, w.key.span, w.value.span),
                );
            }
        }
        p.expand_mode = self
            .one_of(
                f,
                "expandMode",
                &[("nested", ExpandMode::Nested), ("graft", ExpandMode::Graft)],
            )
            .unwrap_or_default();
        if let Some(n) = self.ranged(f, "maxNodes", 1.0, 100.0) {
            p.max_nodes = n;
        }
        p.until =
            invalid_if_none!("until", self.str_node(f, "until")).map(|(_, s)| Cond::new(s.clone()));
        if let Some(n) = self.ranged(f, "maxIterations", 1.0, 100.0) {
            p.max_iterations = n;
        }
        p.convergence = self.boolean(f, "convergence").unwrap_or(true);
        p.reflexion = self.boolean(f, "reflexion").unwrap_or(false);
        if let Some(n) = self.ranged(f, "variants", 2.0, 20.0) {
            p.variants = n;
        }
        p.mode = self
            .one_of(
                f,
                "mode",
                &[
                    ("best", TournamentMode::Best),
                    ("aggregate", TournamentMode::Aggregate),
                ],
            )
            .unwrap_or_default();
        p.judge = self.text(f, "judge");
        p.judge_agent = self.agent_name(f, "judgeAgent", &p.id);
        if let Some(m) = f.get("run") {
            p.run = invalid_if_none!("run", self.run(m));
        }
        p.input = self.text(f, "input");
        p.cancel_losers = self.boolean(f, "cancelLosers").unwrap_or(true);
    }

    /// An agent name field: `^[a-z][a-z0-9-]*$` (E0112).
    fn agent_name<S: BuildHasher>(
        &mut self,
        f: &Fields<'_, S>,
        name: &str,
        phase: &str,
    ) -> Option<Field<String>> {
        let a = self.string(f, name)?;
        if valid_agent_name(&a.value) {
            return Some(a);
        }
        self.push(invalid_agent(&a, name, phase));
        None
    }

    fn retry(&mut self, f: &PhaseFields<'_>) -> Option<Field<Retry>> {
        let m = f.get("retry")?;
        let members = self.object_members(
            m,
            "an object {\"max\": n, \"backoffMs\"?: n, \"factor\"?: n}",
        )?;
        let rf = self.fields(members, ObjectKind::Retry, |_| false);
        let mut ok = true;
        let mut range = |l: &mut Lowerer, key: &str, lo: f64, hi: f64| -> Option<Field<f64>> {
            let n = l.number(&rf, key);
            if n.is_none() && rf.contains_key(key) {
                ok = false;
            }
            let n = n?;
            if n.value < lo || n.value > hi {
                ok = false;
                l.push(
                    Diagnostic::new(
                        Code::InvalidRetry,
                        format!(
                            "retry.{key} must be from {} to {}, found {}",
                            format_number(lo),
                            format_number(hi),
                            format_number(n.value)
                        ),
                    )
                    .at(n.span)
                    .with_label(format!(
                        "outside {}..{}",
                        format_number(lo),
                        format_number(hi)
                    ))
                    .help(format!(
                        "use a value from {} to {}",
                        format_number(lo),
                        format_number(hi)
                    )),
                );
                return None;
            }
            Some(n)
        };
        let max = range(self, "max", 0.0, 20.0);
        let backoff = range(self, "backoffMs", 0.0, 60000.0);
        let factor = range(self, "factor", 1.0, 10.0);
        let misspelt_max = members.iter().any(|r| {
            field_name(ObjectKind::Retry, &r.key.value).is_none()
                && did_you_mean(&r.key.value, ["max"]).is_some()
        });
        if !rf.contains_key("max") {
            if !misspelt_max {
                self.push(
                    Diagnostic::new(Code::InvalidRetry, "retry requires 'max' (0..20)")
                        .at(m.value.span)
                        .with_label("no 'max'")
                        .help("say how many extra attempts to make, e.g. \"retry\": {\"max\": 2, \"backoffMs\": 1000}"),
                );
            }
            return None;
        }
        if !ok {
            return None;
        }
        Some(Field::new(
            Retry {
                max: max.map_or(0.0, |n| n.value),
                backoff_ms: backoff.map(|n| n.value),
                factor: factor.as_ref().map(|n| n.value),
                factor_span: factor.map(|n| n.key),
            },
            m.key.span,
            m.value.span,
        ))
    }

    fn timeout(&mut self, f: &PhaseFields<'_>, ty: PhaseType) -> Option<Field<f64>> {
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
        let cwd = match v {
            "temp" => Cwd::Temp,
            "dedicated" => Cwd::Dedicated,
            "worktree" => Cwd::Worktree,
            _ => {
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

    fn cache(&mut self, m: &Member) -> Option<Field<CacheSpec>> {
        let bad = |l: &mut Lowerer, span: Span, msg: String| {
            l.push(
                Diagnostic::new(Code::InvalidCache, msg)
                    .at(span)
                    .with_label("invalid cache setting")
                    .help("e.g. \"cache\": {\"scope\": \"cross-run\", \"fingerprint\": [\"git:HEAD\", \"glob:src/**/*.rs\"], \"ttl\": \"6h\"}"),
            );
        };
        let Kind::Object(members) = &m.value.kind else {
            bad(
                self,
                m.value.span,
                format!("'cache' must be an object, found {}", m.value.type_name()),
            );
            return None;
        };
        let f = self.fields(members, ObjectKind::Cache, |_| false);
        let mut spec = CacheSpec::default();
        let mut ok = true;
        if let Some(sm) = f.get("scope") {
            let scope = match &sm.value.kind {
                Kind::String(s) => match s.value.as_str() {
                    "run-only" => Some(CacheScope::RunOnly),
                    "cross-run" => Some(CacheScope::CrossRun),
                    "off" => Some(CacheScope::Off),
                    _ => None,
                },
                _ => None,
            };
            match scope {
                Some(s) => spec.scope = Some(Field::new(s, sm.key.span, sm.value.span)),
                None => {
                    ok = false;
                    bad(
                        self,
                        sm.value.span,
                        "cache.scope must be one of run-only, cross-run, off".into(),
                    );
                }
            }
        }
        if let Some(fm) = f.get("fingerprint") {
            match &fm.value.kind {
                Kind::Array(items) => {
                    for item in items {
                        match &item.kind {
                            Kind::String(s)
                                if ["git:", "glob:", "glob!:", "file:", "env:"]
                                    .iter()
                                    .any(|p| s.value.starts_with(p)) =>
                            {
                                spec.fingerprint.push(Field::new(
                                    s.value.clone(),
                                    fm.key.span,
                                    item.span,
                                ));
                            }
                            _ => {
                                ok = false;
                                bad(self, item.span, "cache.fingerprint entries must be strings starting with git:, glob:, glob!:, file: or env:".into());
                            }
                        }
                    }
                }
                _ => {
                    ok = false;
                    bad(
                        self,
                        fm.value.span,
                        "cache.fingerprint must be an array of strings".into(),
                    );
                }
            }
        }
        if let Some(tm) = f.get("ttl") {
            match tm.value.as_str().and_then(|s| parse_ttl(&s.value)) {
                Some(ms) if ms > 0.0 => spec.ttl_ms = Some(ms),
                _ => {
                    ok = false;
                    bad(
                        self,
                        tm.value.span,
                        "cache.ttl must be a positive duration such as \"30m\", \"6h\" or \"7d\""
                            .into(),
                    );
                }
            }
        }
        ok.then(|| Field::new(spec, m.key.span, m.value.span))
    }

    fn branches(&mut self, m: &Member, phase: &str) -> Option<Vec<Branch>> {
        let Kind::Array(items) = &m.value.kind else {
            self.wrong_type(m, "an array of branch objects");
            return None;
        };
        let mut out = Vec::new();
        for item in items {
            let Kind::Object(members) = &item.kind else {
                self.push(
                    Diagnostic::new(
                        Code::WrongType,
                        format!(
                            "a branch must be an object {{\"task\": …}}, found {}",
                            item.type_name()
                        ),
                    )
                    .at(item.span)
                    .with_label("expected a branch object")
                    .help(match &item.kind {
                        Kind::String(s) => {
                            format!("write {{\"task\": \"{}\"}}", s.value.replace('"', "\\\""))
                        }
                        _ => "write {\"task\": \"…\", \"agent\": \"…\"}".to_owned(),
                    }),
                );
                continue;
            };
            let f = self.fields(members, ObjectKind::Branch, |_| false);
            out.push(Branch {
                task: self.text(&f, "task"),
                agent: self.agent_name(&f, "agent", phase),
                cwd: self.string(&f, "cwd"),
                span: item.span,
            });
        }
        Some(out)
    }

    /// An `expect` contract or a json-schema scorer's schema (E0407 for every problem).
    fn contract(&mut self, m: &Member, path: &str) -> Option<Contract> {
        let Kind::Object(members) = &m.value.kind else {
            self.push(
                Diagnostic::new(
                    Code::InvalidContract,
                    format!("{path} must be an object, found {}", m.value.type_name()),
                )
                .at(m.value.span)
                .with_label("expected a contract object")
                .help(
                    "write a contract such as {\"type\": \"object\", \"required\": [\"severity\"]}",
                ),
            );
            return None;
        };
        let f = self.fields_at(members, ObjectKind::Expect, |_| false, path);
        let mut c = Contract {
            span: m.value.span,
            ..Contract::default()
        };
        let bad = |l: &mut Lowerer, span: Span, msg: String, help: String| {
            l.push(
                Diagnostic::new(Code::InvalidContract, msg)
                    .at(span)
                    .with_label("invalid contract")
                    .help(help),
            );
        };
        if let Some(tm) = f.get("type") {
            const TYPES: &[&str] = &[
                "object", "array", "string", "number", "integer", "boolean", "null",
            ];
            match tm.value.as_str() {
                Some(s) if TYPES.contains(&s.value.as_str()) => {
                    c.ty = Some(Field::new(s.value.clone(), tm.key.span, tm.value.span));
                }
                other => {
                    let near = other.and_then(|s| did_you_mean(&s.value, TYPES.iter().copied()));
                    bad(
                        self,
                        tm.value.span,
                        format!("{path}.type must be one of {}", TYPES.join(", ")),
                        match near {
                            Some(n) => format!("did you mean \"{n}\"?"),
                            None => "for a fixed set of values use \"enum\": [\"a\", \"b\"] instead of a type".to_owned(),
                        },
                    )
                }
            }
        }
        if let Some(pm) = f.get("properties") {
            match &pm.value.kind {
                Kind::Object(props) => {
                    for prop in props {
                        let sub = format!("{path}.properties.{}", prop.key.value);
                        if let Some(pc) = self.contract(prop, &sub) {
                            c.properties.insert(
                                prop.key.value.clone(),
                                Field::new(pc, prop.key.span, prop.value.span),
                            );
                        }
                    }
                }
                _ => bad(
                    self,
                    pm.value.span,
                    format!("{path}.properties must be an object of contracts"),
                    "write \"properties\": {\"severity\": {\"type\": \"string\"}}".to_owned(),
                ),
            }
        }
        if let Some(rm) = f.get("required") {
            match &rm.value.kind {
                Kind::Array(items) if items.iter().all(|i| i.as_str().is_some()) => {
                    c.required = items
                        .iter()
                        .filter_map(|i| {
                            i.as_str()
                                .map(|s| Field::new(s.value.clone(), rm.key.span, i.span))
                        })
                        .collect();
                }
                _ => bad(
                    self,
                    rm.value.span,
                    format!("{path}.required must be an array of strings"),
                    "list the key names: \"required\": [\"severity\", \"reason\"]".to_owned(),
                ),
            }
        }
        if let Some(im) = f.get("items")
            && let Some(ic) = self.contract(im, &format!("{path}.items"))
        {
            c.items = Some(Box::new(Field::new(ic, im.key.span, im.value.span)));
        }
        if let Some(em) = f.get("enum") {
            match &em.value.kind {
                Kind::Array(items) if !items.is_empty() => {
                    c.enum_values = Some(items.iter().map(Node::to_value).collect())
                }
                _ => bad(
                    self,
                    em.value.span,
                    format!("{path}.enum must be a non-empty array of literals"),
                    "list the allowed values: \"enum\": [\"low\", \"high\"]".to_owned(),
                ),
            }
        }
        Some(c)
    }

    fn score(&mut self, m: &Member) -> Option<Score> {
        let bad = |l: &mut Lowerer, span: Span, msg: String, label: &str, help: &str| {
            l.push(
                Diagnostic::new(Code::InvalidScore, msg)
                    .at(span)
                    .with_label(label.to_owned())
                    .help(help.to_owned()),
            );
        };
        let Kind::Object(members) = &m.value.kind else {
            bad(
                self,
                m.value.span,
                format!("score must be an object, found {}", m.value.type_name()),
                "expected an object",
                "write \"score\": {\"scorers\": [{\"type\": \"contains\", \"value\": \"…\"}]}",
            );
            return None;
        };
        let f = self.fields(members, ObjectKind::Score, |_| false);
        let mut ok = true;
        let target = match f.get("target").map(|t| (t, &t.value.kind)) {
            Some((_, Kind::String(s)))
                if crate::compile::Template::parse(&s.value).has_placeholders() =>
            {
                Some(Text::new(s.clone()))
            }
            Some((t, _)) => {
                ok = false;
                bad(
                    self,
                    t.value.span,
                    "score.target must be a string holding a placeholder".into(),
                    "no placeholder here",
                    "reference the text to score, e.g. \"target\": \"{steps.draft.output}\" (the default is {previous.output})",
                );
                None
            }
            None => None,
        };
        let mut scorers = Vec::new();
        let mut scorer_count = 0;
        match f.get("scorers").map(|s| (s, &s.value.kind)) {
            Some((_, Kind::Array(items))) if !items.is_empty() => {
                scorer_count = items.len();
                for (i, item) in items.iter().enumerate() {
                    match self.scorer(item, i) {
                        Some(s) => scorers.push(s),
                        None => ok = false,
                    }
                }
            }
            Some((s, _)) => {
                ok = false;
                bad(
                    self,
                    s.value.span,
                    "score.scorers must be a non-empty array of scorers".into(),
                    "expected at least one scorer",
                    "e.g. \"scorers\": [{\"type\": \"contains\", \"value\": \"…\"}]",
                );
            }
            None => {
                ok = false;
                bad(
                    self,
                    m.value.span,
                    "score requires 'scorers': a non-empty array".into(),
                    "no 'scorers'",
                    "add \"scorers\": [{\"type\": \"contains\", \"value\": \"…\"}]",
                );
            }
        }
        let combine = match f
            .get("combine")
            .map(|c| (c, c.value.as_str().map(|s| s.value.as_str())))
        {
            None => Combine::All,
            Some((_, Some("all"))) => Combine::All,
            Some((_, Some("any"))) => Combine::Any,
            Some((_, Some("weighted"))) => Combine::Weighted,
            Some((c, _)) => {
                ok = false;
                bad(
                    self,
                    c.value.span,
                    "score.combine must be one of all, any, weighted".into(),
                    "expected all, any or weighted",
                    "use \"all\" (every scorer passes), \"any\" (one passes) or \"weighted\" (with \"weights\")",
                );
                Combine::All
            }
        };
        let threshold = match f.get("threshold").map(|t| (t, &t.value.kind)) {
            None => 0.5,
            Some((_, Kind::Number(n))) if *n > 0.0 && *n <= 1.0 => *n,
            Some((t, _)) => {
                ok = false;
                bad(
                    self,
                    t.value.span,
                    "score.threshold must be a number in (0, 1]".into(),
                    "expected a number above 0 and at most 1",
                    "scores run from 0 to 1; e.g. \"threshold\": 0.7",
                );
                0.5
            }
        };
        let judge = match f.get("judge") {
            None => None,
            Some(jm) => match &jm.value.kind {
                Kind::Object(jmembers) => {
                    let jf = self.fields(jmembers, ObjectKind::Judge, |_| false);
                    let task = self.text(&jf, "task");
                    if task.is_none() && !jf.contains_key("task") {
                        ok = false;
                        bad(
                            self,
                            jm.value.span,
                            "score.judge requires 'task'".into(),
                            "no 'task'",
                            "tell the judge what to look for: \"judge\": {\"task\": \"Is the summary accurate?\"}",
                        );
                    }
                    Some(ScoreJudge {
                        agent: self.agent_name(&jf, "agent", ""),
                        task,
                    })
                }
                _ => {
                    ok = false;
                    bad(
                        self,
                        jm.value.span,
                        "score.judge must be an object {\"task\": …}".into(),
                        "expected an object",
                        "write \"judge\": {\"task\": \"…\", \"agent\": \"…\"}",
                    );
                    None
                }
            },
        };
        let weights = match f.get("weights") {
            None => None,
            Some(wm) => match &wm.value.kind {
                Kind::Array(items) => {
                    let ws: Vec<f64> = items
                        .iter()
                        .filter_map(|i| match i.kind {
                            Kind::Number(n) => Some(n),
                            _ => None,
                        })
                        .collect();
                    if ws.len() != items.len() || ws.iter().any(|w| *w <= 0.0 || !w.is_finite()) {
                        ok = false;
                        bad(
                            self,
                            wm.value.span,
                            "score.weights must be numbers > 0".into(),
                            "expected positive numbers",
                            "give each scorer a positive weight, e.g. \"weights\": [2, 1]",
                        );
                        None
                    } else {
                        Some(Field::new(ws, wm.key.span, wm.value.span))
                    }
                }
                _ => {
                    ok = false;
                    bad(
                        self,
                        wm.value.span,
                        "score.weights must be an array of numbers".into(),
                        "expected an array",
                        "give each scorer a positive weight, e.g. \"weights\": [2, 1]",
                    );
                    None
                }
            },
        };
        // Counted over the scorers as written, so a broken scorer does not hide a wrong count.
        let want = scorer_count + usize::from(judge.is_some());
        let judge_note = if judge.is_some() {
            " plus one for the judge"
        } else {
            ""
        };
        if combine == Combine::Weighted && scorer_count > 0 {
            match &weights {
                None if !f.contains_key("weights") => {
                    ok = false;
                    bad(
                        self,
                        f["combine"].value.span,
                        format!(
                            "score.combine \"weighted\" needs 'weights': one per scorer{judge_note} ({want})"
                        ),
                        "weighted without weights",
                        &format!("add \"weights\" with {want} positive numbers"),
                    );
                }
                Some(w) if w.value.len() != want => {
                    ok = false;
                    bad(
                        self,
                        w.span,
                        format!(
                            "score.weights has {} but needs {want} (one per scorer{judge_note})",
                            match w.value.len() {
                                1 => "1 entry".to_owned(),
                                n => format!("{n} entries"),
                            },
                        ),
                        &format!("expected {want} weights"),
                        &format!(
                            "give exactly {want} weights, in scorer order{}",
                            if judge.is_some() {
                                ", the judge's last"
                            } else {
                                ""
                            }
                        ),
                    );
                }
                _ => {}
            }
        }
        ok.then_some(Score {
            target,
            scorers,
            combine,
            weights,
            threshold,
            judge,
            span: m.value.span,
        })
    }

    fn scorer(&mut self, node: &Node, i: usize) -> Option<Scorer> {
        const TYPES: [&str; 6] = [
            "exact-match",
            "contains",
            "regex",
            "json-schema",
            "length-range",
            "code-compiles",
        ];
        let at = format!("score.scorers[{i}]");
        let bad = |l: &mut Lowerer, span: Span, msg: String, label: &str, help: String| {
            l.push(
                Diagnostic::new(Code::InvalidScore, msg)
                    .at(span)
                    .with_label(label.to_owned())
                    .help(help),
            );
        };
        let Kind::Object(members) = &node.kind else {
            bad(
                self,
                node.span,
                format!("{at} must be an object, found {}", node.type_name()),
                "expected a scorer object",
                "write {\"type\": \"contains\", \"value\": \"…\"}".to_owned(),
            );
            return None;
        };
        let f = self.fields(members, ObjectKind::Scorer, |_| false);
        let ty = match f.get("type").map(|t| (t, t.value.as_str())) {
            Some((_, Some(s))) => s.value.clone(),
            Some((t, None)) => {
                bad(
                    self,
                    t.value.span,
                    format!("{at}.type must be a string"),
                    "expected a string",
                    format!("scorer types: {}", TYPES.join(", ")),
                );
                return None;
            }
            None => {
                bad(
                    self,
                    node.span,
                    format!("{at} requires 'type'"),
                    "no 'type'",
                    format!("scorer types: {}", TYPES.join(", ")),
                );
                return None;
            }
        };
        let allowed: &[&str] = match ty.as_str() {
            "exact-match" | "contains" => &["value"],
            "regex" => &["pattern", "negate"],
            "json-schema" => &["schema"],
            "length-range" => &["min", "max"],
            "code-compiles" => &["language"],
            other => {
                let help = match did_you_mean(other, TYPES) {
                    Some(s) => format!("did you mean '{s}'?"),
                    None => format!("scorer types: {}", TYPES.join(", ")),
                };
                bad(
                    self,
                    f["type"].value.span,
                    format!("{at}.type: unknown scorer type '{other}'"),
                    "unknown scorer type",
                    help,
                );
                return None;
            }
        };
        let mut ok = true;
        for (key, m) in &f {
            if !["type", "name"].contains(key) && !allowed.contains(key) {
                ok = false;
                bad(
                    self,
                    m.key.span,
                    format!("{at}.{key} does not apply to a {ty} scorer"),
                    "not used by this scorer type",
                    format!("a {ty} scorer takes: {}", allowed.join(", ")),
                );
            }
        }
        let string = |l: &mut Lowerer, key: &str| -> Option<String> {
            match f.get(key).map(|m| (m, m.value.as_str())) {
                Some((_, Some(s))) => Some(s.value.clone()),
                Some((m, None)) => {
                    bad(
                        l,
                        m.value.span,
                        format!("{at}.{key} must be a string"),
                        "expected a string",
                        format!("write \"{key}\": \"…\""),
                    );
                    None
                }
                None => {
                    bad(
                        l,
                        node.span,
                        format!("{at}.{key} is required for a {ty} scorer"),
                        &format!("no '{key}'"),
                        format!("add \"{key}\": \"…\""),
                    );
                    None
                }
            }
        };
        let kind = match ty.as_str() {
            "exact-match" => string(self, "value").map(|value| ScorerKind::ExactMatch { value }),
            "contains" => string(self, "value").map(|value| ScorerKind::Contains { value }),
            "regex" => {
                let negate = match f.get("negate").map(|m| (m, &m.value.kind)) {
                    None => false,
                    Some((_, Kind::Bool(b))) => *b,
                    Some((m, _)) => {
                        ok = false;
                        bad(
                            self,
                            m.value.span,
                            format!("{at}.negate must be true or false"),
                            "expected true or false",
                            "write \"negate\": true to pass when the pattern does not match"
                                .to_owned(),
                        );
                        false
                    }
                };
                string(self, "pattern").map(|pattern| ScorerKind::Regex { pattern, negate })
            }
            "json-schema" => match f.get("schema") {
                Some(m) => self
                    .contract(m, &format!("{at}.schema"))
                    .map(|schema| ScorerKind::JsonSchema { schema }),
                None => {
                    bad(
                        self,
                        node.span,
                        format!("{at}.schema is required for a json-schema scorer"),
                        "no 'schema'",
                        "add a contract: \"schema\": {\"type\": \"object\", \"required\": [\"…\"]}"
                            .to_owned(),
                    );
                    None
                }
            },
            "length-range" => {
                let num = |key: &str| match f.get(key).map(|m| &m.value.kind) {
                    Some(Kind::Number(n)) => Ok(Some(*n)),
                    None => Ok(None),
                    Some(_) => Err(key.to_owned()),
                };
                match (num("min"), num("max")) {
                    (Ok(min), Ok(max)) => {
                        if let (Some(lo), Some(hi)) = (min, max)
                            && lo > hi
                        {
                            ok = false;
                            bad(
                                self,
                                f["min"].value.span.to(f["max"].value.span),
                                format!(
                                    "{at}: min {} > max {}",
                                    format_number(lo),
                                    format_number(hi)
                                ),
                                "no length fits this range",
                                "swap the two bounds, or fix the one that is wrong".to_owned(),
                            );
                        }
                        Some(ScorerKind::LengthRange { min, max })
                    }
                    (Err(k), _) | (_, Err(k)) => {
                        bad(
                            self,
                            f[k.as_str()].value.span,
                            format!("{at}.{k} must be a number"),
                            "expected a number",
                            format!("write a length in characters, e.g. \"{k}\": 200"),
                        );
                        None
                    }
                }
            }
            _ => match string(self, "language") {
                Some(l) if l == "javascript" || l == "typescript" => {
                    Some(ScorerKind::CodeCompiles { language: l })
                }
                Some(_) => {
                    bad(
                        self,
                        f["language"].value.span,
                        format!("{at}.language must be javascript or typescript"),
                        "unsupported language",
                        "use \"javascript\" or \"typescript\"".to_owned(),
                    );
                    None
                }
                None => None,
            },
        };
        let name = f
            .get("name")
            .and_then(|m| m.value.as_str())
            .map_or_else(|| format!("{ty}-{i}"), |s| s.value.clone());
        match kind {
            Some(kind) if ok => Some(Scorer {
                name,
                kind,
                span: node.span,
            }),
            _ => None,
        }
    }

    fn def(&mut self, m: &Member, phase: &str) -> Option<Field<Def>> {
        let def = match &m.value.kind {
            Kind::String(s) => Def::Template(Text::new(s.clone())),
            Kind::Object(_) | Kind::Array(_) => {
                let inline = format!("{phase}-inline");
                let flow = self.document(&m.value, None, Some(&inline))?;
                Def::Inline(Box::new(flow))
            }
            _ => {
                self.wrong_type(m, "a flow object, a phases array, or a JSON string");
                return None;
            }
        };
        Some(Field::new(def, m.key.span, m.value.span))
    }

    fn run(&mut self, m: &Member) -> Option<Field<Run>> {
        let run = match &m.value.kind {
            Kind::String(s) => Run::Shell(s.clone()),
            Kind::Array(items) => {
                let mut argv = Vec::new();
                for item in items {
                    match &item.kind {
                        Kind::String(s) => argv.push(Text::new(s.clone())),
                        _ => {
                            self.push(
                                Diagnostic::new(
                                    Code::WrongType,
                                    format!(
                                        "'run' elements must be strings, found {}",
                                        item.type_name()
                                    ),
                                )
                                .at(item.span)
                                .with_label("expected a string")
                                .help(element_help(item)),
                            );
                            return None;
                        }
                    }
                }
                Run::Argv(argv)
            }
            _ => {
                self.wrong_type(m, "a shell command string or an argv array");
                return None;
            }
        };
        Some(Field::new(run, m.key.span, m.value.span))
    }
}

/// The first `{ path }` in `text` whose content, trimmed, is a placeholder path: the
/// placeholder the author meant (`{steps.a.json}`).
pub(crate) fn spaced_placeholder(text: &str) -> Option<String> {
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let close = after.find('}')?;
        let inner = after[..close].trim();
        if is_placeholder_path(inner) {
            return Some(format!("{{{inner}}}"));
        }
        rest = &after[close + 1..];
    }
    None
}

/// `a string`, `an array`.
fn a_type_name(node: &Node) -> &'static str {
    match node.kind {
        Kind::Null => "null",
        Kind::Bool(_) => "a boolean",
        Kind::Number(_) => "a number",
        Kind::String(_) => "a string",
        Kind::Array(_) => "an array",
        Kind::Object(_) => "an object",
    }
}

/// How to fix a non-string element of a string list.
fn element_help(item: &Node) -> String {
    match &item.kind {
        Kind::Null => "remove the null entry".to_owned(),
        Kind::Number(n) => format!("quote it: \"{}\"", format_number(*n)),
        Kind::Bool(b) => format!("quote it: \"{b}\""),
        _ => "every entry must be a string in double quotes".to_owned(),
    }
}

/// How to write `key` with the `expected` type, using what was written when it helps
/// (`"dependsOn": "scan"` ⇒ `"dependsOn": ["scan"]`).
fn type_help(key: &str, expected: &str, found: &Node) -> String {
    let found_text = match &found.kind {
        Kind::String(s) => Some(s.value.as_str()),
        _ => None,
    };
    match expected {
        "a string" => format!("write the value in double quotes: \"{key}\": \"…\""),
        "true or false" => match found_text.map(str::trim) {
            Some(t @ ("true" | "false")) => format!("drop the quotes: \"{key}\": {t}"),
            _ => format!("write \"{key}\": true or \"{key}\": false (without quotes)"),
        },
        "a number" => match found_text.map(|t| (t, t.trim().parse::<f64>())) {
            Some((t, Ok(_))) => format!("drop the quotes: \"{key}\": {}", t.trim()),
            _ => format!("write a plain number, e.g. \"{key}\": 3"),
        },
        "an array of phases" if matches!(found.kind, Kind::Object(_)) => {
            "wrap the phase in a list: \"phases\": [{…}]".to_owned()
        }
        e if e.starts_with("an array of strings") || e.starts_with("a string or an array") => {
            match found_text {
                Some(t) => format!("wrap it in a list: \"{key}\": [\"{t}\"]"),
                None => format!("write a list of strings: \"{key}\": [\"…\", \"…\"]"),
            }
        }
        _ => format!("change '{key}' to {expected}"),
    }
}

pub(super) fn valid_agent_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

pub(super) fn invalid_agent(a: &Field<String>, field: &str, phase: &str) -> Diagnostic {
    let d = Diagnostic::new(
        Code::InvalidAgentName,
        format!(
            "{}{field} '{}' is not a valid agent name",
            if phase.is_empty() {
                String::new()
            } else {
                format!("{phase}: ")
            },
            a.value
        ),
    )
    .at(a.span)
    .with_label("not a valid agent name");
    d.help(format!(
        "agent names are lowercase letters, digits and hyphens, starting with a letter (e.g. \"{}\")",
        agent_name_suggestion(&a.value)
    ))
}

/// A valid agent name close to `name`: lowercase, other characters as single hyphens, and
/// `agent-` in front when it would not start with a letter.
fn agent_name_suggestion(name: &str) -> String {
    let mut out = String::new();
    for c in name.trim().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-');
    if out.starts_with(|c: char| c.is_ascii_lowercase()) {
        out.to_owned()
    } else if out.is_empty() {
        "reviewer".to_owned()
    } else {
        format!("agent-{out}")
    }
}

/// Classify one gate `eval` entry.
fn eval_entry(src: Str) -> EvalEntry {
    let text = src.value.as_str();
    let kind = if crate::value::js_trim(text).is_empty() {
        EvalKind::Empty
    } else if let Some(at) = text.find(" contains ").filter(|&i| i > 0) {
        let lhs_raw = &text[..at];
        let lead = lhs_raw.len()
            - lhs_raw
                .trim_start_matches(crate::value::is_js_whitespace)
                .len();
        let lhs = crate::value::js_trim(lhs_raw);
        EvalKind::Contains {
            lhs: crate::compile::Template::parse(lhs),
            lhs_start: lead,
        }
    } else {
        EvalKind::Condition(crate::compile::Condition::parse(text))
    };
    EvalEntry { src, kind }
}

/// `^\d+(\.\d+)?\s*(ms|s|m|h|d)?$`i → milliseconds (no unit: ms).
pub fn parse_ttl(text: &str) -> Option<f64> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let valid_num = !num.is_empty()
        && !num.starts_with('.')
        && !num.ends_with('.')
        && num.matches('.').count() <= 1;
    if !valid_num {
        return None;
    }
    let n: f64 = num.parse().ok()?;
    let factor = match unit.trim_start().to_ascii_lowercase().as_str() {
        "" | "ms" => 1.0,
        "s" => 1000.0,
        "m" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        _ => return None,
    };
    Some(n * factor)
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
        agent_scope: AgentScope::Both,
        strict_interpolation: false,
        context_sharing: false,
        incremental: false,
        idle_timeout: None,
        lint_allow: Vec::new(),
        phases: Vec::new(),
        incomplete: false,
        inline: false,
        shorthand: None,
        span,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_forms() {
        assert_eq!(parse_ttl("30m"), Some(1_800_000.0));
        assert_eq!(parse_ttl("6 h"), Some(21_600_000.0));
        assert_eq!(parse_ttl("7D"), Some(604_800_000.0));
        assert_eq!(parse_ttl("1500"), Some(1500.0));
        assert_eq!(parse_ttl("1.5s"), Some(1500.0));
        for bad in ["", "m", "1.s", ".5s", "1y", "-1s", "1..2s"] {
            assert_eq!(parse_ttl(bad), None, "{bad}");
        }
    }

    use crate::check::testing::{check, codes, find, spans};

    #[test]
    fn only_a_literal_empty_budget_is_w0309() {
        assert_eq!(
            codes(r#"{"budget": {}, "phases": [{"id": "a", "task": "x"}]}"#),
            ["W0309"]
        );
        for budget in [r#"{"maxUsd": 1}"#, r#"{"maxUSD": -1}"#] {
            let text = format!(r#"{{"budget": {budget}, "phases": [{{"id": "a", "task": "x"}}]}}"#);
            let got = codes(&text);
            assert!(!got.contains(&"W0309"), "{budget}: {got:?}");
        }
    }

    #[test]
    fn wrong_types_say_how_to_write_the_field() {
        let help = |phase: &str| {
            let text = format!(r#"[{{"id": "a", "task": "x", {phase}}}]"#);
            find(&check(&text), "E0004").help.unwrap()
        };
        assert_eq!(
            help(r#""dependsOn": "b""#),
            r#"wrap it in a list: "dependsOn": ["b"]"#
        );
        assert_eq!(
            help(r#""optional": "true""#),
            r#"drop the quotes: "optional": true"#
        );
        assert_eq!(
            help(r#""timeout": "60000""#),
            r#"drop the quotes: "timeout": 60000"#
        );
        assert_eq!(help(r#""tools": [1]"#), r#"quote it: "1""#);
        assert_eq!(
            help(r#""tools": "read""#),
            r#"write it as a list: "tools": ["read"]"#
        );
        assert_eq!(
            help(r#""tools": "read, grep""#),
            r#"write it as a list: "tools": ["read", "grep"]"#
        );
        assert_eq!(
            help(r#""tools": true"#),
            r#"write a list of strings: "tools": ["…", "…"]"#
        );
        assert_eq!(
            help(r#""model": 3"#),
            r#"write the value in double quotes: "model": "…""#
        );
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
    fn map_over_must_reference_something() {
        let text = r#"[{"id": "m", "type": "map", "over": "[\"a\", \"b\"]", "task": "{item}"}]"#;
        assert_eq!(spans(text), [("E0204", r#""[\"a\", \"b\"]""#.to_owned())]);
        // On another type 'over' is only ignored.
        assert_eq!(
            codes(r#"[{"id": "a", "task": "x", "over": "[1]"}]"#),
            ["W0308"]
        );
    }

    #[test]
    fn contract_keywords_are_named_by_their_path() {
        let text = r#"[{"id": "a", "task": "x", "output": "json",
            "expect": {"properties": {"a": {"items": {"minimum": 1}}}}}]"#;
        let d = find(&check(text), "E0407");
        assert!(
            d.message
                .starts_with("expect.properties.a.items.minimum: unknown contract keyword"),
            "{}",
            d.message
        );
    }

    #[test]
    fn weights_are_counted_over_every_scorer() {
        let text = r#"[{"id": "g", "type": "gate", "task": "x", "score": {"combine": "weighted",
            "weights": [1], "scorers": [{"type": "contains", "value": "a"}, {"type": "regex"}]}}]"#;
        let messages: Vec<String> = check(text).into_iter().map(|d| d.message).collect();
        assert_eq!(
            messages,
            [
                "score.weights has 1 entry but needs 2 (one per scorer)",
                "score.scorers[1].pattern is required for a regex scorer"
            ]
        );
    }

    #[test]
    fn defaults_are_judged_only_against_sound_specs() {
        let text = r#"{"args": {"n": {"type": "number", "minimum": 5, "maximum": 1, "default": 3}},
            "phases": [{"id": "a", "task": "{args.n}"}]}"#;
        let d = find(&check(text), "E0501");
        assert_eq!(d.message, "Argument 'n' has minimum 5 > maximum 1");
        assert_eq!(codes(text), ["E0501"]);
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
    fn agent_name_suggestions_are_valid() {
        for (bad, good) in [
            ("Code_Reviewer", "code-reviewer"),
            ("Judge 1", "judge-1"),
            ("2nd-fixer", "agent-2nd-fixer"),
            ("--X--", "x"),
            ("日本", "reviewer"),
        ] {
            assert_eq!(agent_name_suggestion(bad), good);
            assert!(valid_agent_name(good));
        }
    }

    #[test]
    fn agent_names() {
        assert!(valid_agent_name("risk-reviewer2"));
        assert!(!valid_agent_name("Risk"));
        assert!(!valid_agent_name("2x"));
        assert!(!valid_agent_name("a_b"));
        assert!(!valid_agent_name(""));
    }
}
