//! What every kind's lowering and checks share: the lowering context [`Cx`] and the
//! required-field checks. It imports the IR and the kinds' types, never a kind's functions.

use crate::diag::{Code, Diagnostic};
use crate::flow::enums::PhaseType;
use crate::flow::ir::{Cond, Phase};
use crate::flow::kinds::{PhaseKind, Run};
use crate::flow::lowerer::PhaseFields;
use crate::source::Span;

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
fn loop_until(p: &Phase) -> Option<&Cond> {
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
                "task" => p.task.as_ref().map(|t| t.span()),
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

/// E0410 on phase `p`: a working directory that cannot be used.
pub(crate) fn invalid_cwd(p: &Phase, span: Span, msg: String, help: &str) -> Diagnostic {
    Diagnostic::new(Code::InvalidCwd, format!("{}: {msg}", p.id))
        .at(span)
        .with_label("invalid working directory")
        .phase(&p.id)
        .help(help.to_owned())
}
