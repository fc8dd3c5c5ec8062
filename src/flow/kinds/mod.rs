//! The phase kinds: one file each, holding the kind's fields, its field table (which drives
//! unknown-field detection, did-you-mean and `tfc schema`), its lowering and its checks.
//!
//! Adding a kind means: its file here, one line in [`PhaseType`](crate::flow::PhaseType), and the arms
//! the compiler then asks for ([`PhaseKind`](crate::flow::PhaseKind) and the `match`es below).

mod agent;
mod approval;
mod expand;
mod flow;
mod gate;
#[path = "loop.rs"]
mod loop_kind;
mod map;
mod parallel;
mod race;
mod reduce;
mod script;
mod tournament;

pub use agent::Agent;
pub use approval::Approval;
pub use expand::Expand;
pub use flow::{Def, SubFlow, WithValue};
pub use gate::{EvalEntry, EvalKind, Gate, Score, ScoreJudge, Scorer, ScorerKind};
pub use loop_kind::Loop;
pub use map::Map;
pub use parallel::Parallel;
pub use race::Race;
pub use reduce::{Reduce, tree_calls};
pub use script::{Run, Script};
pub use tournament::Tournament;

use std::sync::OnceLock;

use super::fields::{FieldDef, FieldType, ObjectKind, f};
use super::lower::{Lowerer, PhaseFields};
use super::{Field, Phase, PhaseKind, PhaseType, Text};
use crate::diag::{Code, Diagnostic};
use crate::json::{Kind, Member};
use crate::source::Span;

/// A branch of a parallel, race or tournament phase.
#[derive(Clone, Debug)]
pub struct Branch {
    /// `task`.
    pub task: Option<Text>,
    /// `agent`.
    pub agent: Option<Field<String>>,
    /// `cwd` (parallel only).
    pub cwd: Option<Field<String>>,
    /// The branch object.
    pub span: Span,
}

/// What a kind's lowering knows about its phase.
pub(crate) struct Cx<'p> {
    /// The phase id.
    pub id: &'p str,
    /// The phase's own type (a kind may be lowered only to validate fields written on a
    /// phase of another type).
    pub ty: PhaseType,
    /// Fields present but invalid.
    pub invalid: &'p mut Vec<&'static str>,
}

impl Cx<'_> {
    /// `v`, marking `key` invalid when it was written but did not lower.
    pub fn invalid_if_none<T>(
        &mut self,
        f: &PhaseFields<'_>,
        key: &'static str,
        v: Option<T>,
    ) -> Option<T> {
        if v.is_none() && f.contains_key(key) {
            self.invalid.push(key);
        }
        v
    }
}

/// `branches`, shared by parallel, race and tournament.
pub(super) const BRANCHES: FieldDef = f(
    "branches",
    FieldType::ArrayOf(ObjectKind::Branch),
    "parallel/race/tournament branches",
);

/// `def`, shared by flow and expand.
pub(super) const DEF: FieldDef = f(
    "def",
    FieldType::StringOrObject,
    "flow/expand: inline definition",
);

/// The fields of type `ty` besides the common ones.
pub fn fields_of_type(ty: PhaseType) -> &'static [FieldDef] {
    match ty {
        PhaseType::Agent => agent::FIELDS,
        PhaseType::Parallel => parallel::FIELDS,
        PhaseType::Map => map::FIELDS,
        PhaseType::Gate => gate::FIELDS,
        PhaseType::Reduce => reduce::FIELDS,
        PhaseType::Approval => approval::FIELDS,
        PhaseType::Flow => flow::FIELDS,
        PhaseType::Loop => loop_kind::FIELDS,
        PhaseType::Tournament => tournament::FIELDS,
        PhaseType::Script => script::FIELDS,
        PhaseType::Race => race::FIELDS,
        PhaseType::Expand => expand::FIELDS,
    }
}

/// Is `key` a field of type `ty` (besides the common ones)?
pub(crate) fn is_field_of(ty: PhaseType, key: &str) -> bool {
    fields_of_type(ty).iter().any(|f| f.name == key)
}

/// Is `key` a field of some kind (not a common field)?
pub(crate) fn is_kind_field(key: &str) -> bool {
    PhaseType::ALL.iter().any(|t| is_field_of(*t, key))
}

/// The whole phase table: the common fields, then each kind's own in [`PhaseType::ALL`]
/// order, a field shared by several kinds listed once.
pub(super) fn phase_table(common: &'static [FieldDef]) -> &'static [FieldDef] {
    static TABLE: OnceLock<Vec<FieldDef>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut out = common.to_vec();
        for ty in PhaseType::ALL {
            for field in fields_of_type(*ty) {
                if !out.iter().any(|f| f.name == field.name) {
                    out.push(*field);
                }
            }
        }
        out
    })
}

/// `branches` of a parallel, race or tournament (empty when absent or invalid).
fn lower_branches(l: &mut Lowerer, f: &PhaseFields<'_>, cx: &mut Cx<'_>) -> Vec<Branch> {
    let Some(m) = f.get("branches") else {
        return Vec::new();
    };
    let branches = l.branches(m, cx.id);
    cx.invalid_if_none(f, "branches", branches)
        .unwrap_or_default()
}

/// `def` of a flow or an expand.
fn lower_def(l: &mut Lowerer, f: &PhaseFields<'_>, cx: &mut Cx<'_>) -> Option<Field<Def>> {
    let m = f.get("def")?;
    let def = l.def(m, cx.id);
    cx.invalid_if_none(f, "def", def)
}

/// Lower the fields of kind `ty` found in `f`.
pub(super) fn lower_kind(
    l: &mut Lowerer,
    ty: PhaseType,
    f: &PhaseFields<'_>,
    cx: &mut Cx<'_>,
) -> PhaseKind {
    match ty {
        PhaseType::Agent => PhaseKind::Agent(Agent),
        PhaseType::Parallel => PhaseKind::Parallel(parallel::lower(l, f, cx)),
        PhaseType::Map => PhaseKind::Map(Box::new(map::lower(l, f, cx))),
        PhaseType::Gate => PhaseKind::Gate(Box::new(gate::lower(l, f, cx))),
        PhaseType::Reduce => PhaseKind::Reduce(reduce::lower(l, f, cx)),
        PhaseType::Approval => PhaseKind::Approval(Approval),
        PhaseType::Flow => PhaseKind::Flow(Box::new(flow::lower(l, f, cx))),
        PhaseType::Loop => PhaseKind::Loop(Box::new(loop_kind::lower(l, f, cx))),
        PhaseType::Tournament => PhaseKind::Tournament(Box::new(tournament::lower(l, f, cx))),
        PhaseType::Script => PhaseKind::Script(Box::new(script::lower(l, f, cx))),
        PhaseType::Race => PhaseKind::Race(race::lower(l, f, cx)),
        PhaseType::Expand => PhaseKind::Expand(Box::new(expand::lower(l, f, cx))),
    }
}

/// The kind-specific checks of a phase (SPEC §7.2).
pub fn check_kind(p: &Phase, out: &mut Vec<Diagnostic>) {
    match &p.kind {
        PhaseKind::Agent(_) => agent::check(p, out),
        PhaseKind::Parallel(k) => parallel::check(p, k, out),
        PhaseKind::Map(_) => map::check(p, out),
        PhaseKind::Gate(k) => gate::check(p, k, out),
        PhaseKind::Reduce(k) => reduce::check(p, k, out),
        PhaseKind::Approval(_) => {}
        PhaseKind::Flow(_) => flow::check(p, out),
        PhaseKind::Loop(_) => loop_kind::check(p, out),
        PhaseKind::Tournament(k) => tournament::check(p, k, out),
        PhaseKind::Script(k) => script::check(p, k, out),
        PhaseKind::Race(k) => race::check(p, k, out),
        PhaseKind::Expand(_) => expand::check(p, out),
    }
}

/// Empty once JS-trimmed.
pub(crate) fn is_blank(text: &str) -> bool {
    crate::value::js_trim(text).is_empty()
}

/// Was `key` written with a non-blank value (or written but invalid)? A `task` or `until` that
/// is empty (or only whitespace) is as good as missing.
pub(crate) fn has(p: &Phase, key: &str) -> bool {
    let blank = match key {
        "task" => p.task.as_ref().is_some_and(|t| is_blank(t.as_str())),
        "until" => loop_until(p).is_some_and(|c| is_blank(c.as_str())),
        _ => false,
    };
    (p.has(key) && !blank) || p.invalid.contains(&key)
}

/// A loop's `until` (none for another kind).
fn loop_until(p: &Phase) -> Option<&crate::flow::Cond> {
    match &p.kind {
        PhaseKind::Loop(k) => k.until.as_ref(),
        _ => None,
    }
}

/// E0301: `field` (or `a' or 'b`) is required and not `present`.
pub(crate) fn need(p: &Phase, field: &str, present: bool, help: &str, out: &mut Vec<Diagnostic>) {
    if present {
        return;
    }
    // Written but empty (`"run": []`, `"branches": []`): point at it.
    let written = field
        .split("' or '")
        .find_map(|f| p.written.get(f).map(|s| (f, *s)));
    let argv_program_empty = matches!(
        &p.kind,
        PhaseKind::Script(k) if matches!(k.run.as_ref().map(|r| &r.value), Some(Run::Argv(argv)) if !argv.is_empty())
    );
    let (span, label) = match written {
        Some(("run", span)) if argv_program_empty => {
            (span, "the program (first element) is empty".to_owned())
        }
        Some((f, span)) => {
            // An empty string: point at the string itself.
            let value = match f {
                "task" => p.task.as_ref().map(|t| t.src.span),
                "until" => loop_until(p).map(|c| c.src.span),
                _ => None,
            };
            (value.unwrap_or(span), format!("'{f}' is empty"))
        }
        None => (
            p.id_span,
            format!("{} phase has no '{field}'", p.ty().with_article()),
        ),
    };
    let but = match written {
        Some(_) => format!(", but {label}"),
        None => String::new(),
    };
    out.push(
        Diagnostic::new(
            Code::MissingField,
            format!("{} ({}) requires '{field}'{but}", p.id, p.ty().as_str()),
        )
        .at(span)
        .phase(&p.id)
        .with_label(label)
        .help(help.to_owned()),
    );
}

/// The help of a missing `task` on an agent or a loop.
pub(crate) const TASK_HELP: &str = "add \"task\": the prompt for the agent";

/// E0301: every branch of a parallel, race or tournament needs a task.
pub(crate) fn branch_tasks(p: &Phase, branches: &[Branch], out: &mut Vec<Diagnostic>) {
    for b in branches {
        let (span, label) = match &b.task {
            None => (b.span, "this branch has no 'task'"),
            Some(t) if is_blank(t.as_str()) => (t.src.span, "this branch's 'task' is empty"),
            Some(_) => continue,
        };
        out.push(
            Diagnostic::new(
                Code::MissingField,
                format!(
                    "{} ({}) requires a non-empty 'task' in every branch",
                    p.id,
                    p.ty().as_str()
                ),
            )
            .at(span)
            .with_label(label)
            .phase(&p.id)
            .help("add \"task\": the prompt for this branch"),
        );
    }
}

/// E0309: a race or tournament with fewer than two branches.
pub(crate) fn too_few_branches(
    p: &Phase,
    branches: &[Branch],
    help: &str,
    out: &mut Vec<Diagnostic>,
) {
    out.push(
        Diagnostic::new(
            Code::TooFewBranches,
            format!(
                "{}: a {} needs at least 2 branches, found {}",
                p.id,
                p.ty().as_str(),
                branches.len()
            ),
        )
        .at(p.written["branches"])
        .with_label(format!(
            "{} branch{}",
            branches.len(),
            if branches.len() == 1 { "" } else { "es" }
        ))
        .phase(&p.id)
        .help(help.to_owned()),
    );
}

/// E0302: a branch `cwd` outside a parallel phase.
pub(crate) fn branch_cwd_not_allowed(p: &Phase, branches: &[Branch], out: &mut Vec<Diagnostic>) {
    for b in branches {
        if let Some(c) = &b.cwd {
            out.push(
                Diagnostic::new(
                    Code::FieldNotAllowed,
                    format!(
                        "{}: a branch 'cwd' is allowed only in parallel phases",
                        p.id
                    ),
                )
                .at(c.key)
                .with_label(format!("not allowed in {} branch", p.ty().with_article()))
                .phase(&p.id)
                .help("remove it, and set the phase's own 'cwd' instead"),
            );
        }
    }
}

/// E0410 on phase `p`: a working directory that cannot be used.
pub(crate) fn invalid_cwd(p: &Phase, span: Span, msg: String, help: &str) -> Diagnostic {
    Diagnostic::new(Code::InvalidCwd, format!("{}: {msg}", p.id))
        .at(span)
        .with_label("invalid working directory")
        .phase(&p.id)
        .help(help.to_owned())
}

/// E0410: a branch `cwd` must be a literal path, and cannot sit under a keyword or `{args.X}`
/// phase `cwd` (parallel).
pub(crate) fn branch_cwd_literal(p: &Phase, branches: &[Branch], out: &mut Vec<Diagnostic>) {
    use super::Cwd;
    let keyword_cwd = matches!(
        p.cwd.as_ref().map(|c| &c.value),
        Some(Cwd::Temp | Cwd::Dedicated | Cwd::Worktree | Cwd::Arg(_))
    );
    let mut bad = |span: Span, msg: String, help: &str| out.push(invalid_cwd(p, span, msg, help));
    for b in branches {
        let Some(c) = &b.cwd else { continue };
        let dynamic = crate::compile::Template::parse(&c.value).has_placeholders()
            || super::CwdKeyword::parse(&c.value).is_some();
        if dynamic {
            bad(
                c.span,
                format!(
                    "a branch 'cwd' must be a literal path, found \"{}\"",
                    c.value
                ),
                "use a plain relative path",
            );
        } else if keyword_cwd && p.ty() == PhaseType::Parallel {
            bad(
                c.span,
                "a branch 'cwd' cannot be used under a phase whose 'cwd' is a keyword or {args.X}"
                    .into(),
                "remove the branch cwd or the phase cwd",
            );
        }
    }
}

impl Lowerer {
    /// `branches` (parallel, race, tournament): a list of branch objects.
    pub(super) fn branches(&mut self, m: &Member, phase: &str) -> Option<Vec<Branch>> {
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

    /// `def` (flow, expand): an inline flow or a template string.
    pub(super) fn def(&mut self, m: &Member, phase: &str) -> Option<Field<Def>> {
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
}
