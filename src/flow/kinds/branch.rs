//! Branches of parallel, race and tournament phases: the type, the shared `branches` field,
//! its lowering and the checks the three kinds share.

use super::common::{Cx, invalid_cwd, is_blank};
use crate::diag::{Code, Diagnostic};
use crate::flow::enums::{CwdKeyword, PhaseType};
use crate::flow::fields::{FieldDef, FieldType, ObjectKind, f};
use crate::flow::ir::{Cwd, Field, Phase, Text};
use crate::flow::lowerer::{Lowerer, PhaseFields};
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

/// `branches`, shared by parallel, race and tournament.
pub(crate) const BRANCHES: FieldDef = f(
    "branches",
    FieldType::ArrayOf(ObjectKind::Branch),
    "parallel/race/tournament branches",
);

/// `branches` of a parallel, race or tournament (empty when absent or invalid).
pub(super) fn lower_branches(l: &mut Lowerer, f: &PhaseFields<'_>, cx: &mut Cx<'_>) -> Vec<Branch> {
    let Some(m) = f.get("branches") else {
        return Vec::new();
    };
    let branches = l.branches(m, cx.id);
    cx.invalid_if_none(f, "branches", branches)
        .unwrap_or_default()
}

/// E0301: every branch of a parallel, race or tournament needs a task.
pub(crate) fn branch_tasks(p: &Phase, branches: &[Branch], out: &mut Vec<Diagnostic>) {
    for b in branches {
        let (span, label) = match &b.task {
            None => (b.span, "this branch has no 'task'"),
            Some(t) if is_blank(t.as_str()) => (t.span(), "this branch's 'task' is empty"),
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

/// E0410: a branch `cwd` must be a literal path, and cannot sit under a keyword or `{args.X}`
/// phase `cwd` (parallel).
pub(crate) fn branch_cwd_literal(p: &Phase, branches: &[Branch], out: &mut Vec<Diagnostic>) {
    let keyword_cwd = matches!(
        p.cwd.as_ref().map(|c| &c.value),
        Some(Cwd::Temp | Cwd::Dedicated | Cwd::Worktree | Cwd::Arg(_))
    );
    let mut bad = |span: Span, msg: String, help: &str| out.push(invalid_cwd(p, span, msg, help));
    for b in branches {
        let Some(c) = &b.cwd else { continue };
        let dynamic = crate::compile::Template::parse(&c.value).has_placeholders()
            || CwdKeyword::parse(&c.value).is_some();
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
}
