//! W0207 unknown-placeholder (SPEC §7.2): the static counterpart of the run's
//! `unresolved refs in <field>: … — left intact` warning (§4.4), for the refs that no run can
//! resolve whatever upstream produces — a head that is no placeholder family and no map's
//! local name (`{answer}`, `{0}`, `{-x}`), or `{previous.F}` with F ≠ `output`. The rule is
//! [`crate::eval::scope::unresolvable_by_head`], the one resolution uses. Text fields only: a
//! condition never warns at run time (W0201 and the type rules cover conditions).

use std::borrow::Cow;
use std::collections::HashSet;

use crate::check::graph::IdSuggester;
use crate::diag::{Code, Diagnostic, did_you_mean};
use crate::eval::scope::{FAMILY_HEADS, unresolvable_by_head};
use crate::flow::{Flow, Phase, PhaseType};
use crate::syntax::RefPath;

/// W0207 at the first occurrence of each such ref in each text field of each phase (the run
/// names each ref once per field too).
pub fn unknown_placeholders(flow: &Flow, out: &mut Vec<Diagnostic>) {
    let locals: HashSet<&str> = flow
        .phases
        .iter()
        .filter(|p| p.ty() == PhaseType::Map)
        .map(Phase::local_name)
        .collect();
    let mut ids = IdSuggester::new(flow);
    for p in &flow.phases {
        let mut seen: Vec<(Cow<'static, str>, &str)> = Vec::new();
        p.each_text(|field, text| {
            // `cwd` is E0410's. A string `def` is a flow the child parses after this
            // interpolation: what stays literal here may be the child's own (`{file}` of its
            // map), and the child is checked when it is generated.
            if field == "cwd" || field == "def" || !p.reads_field(&field) {
                return;
            }
            let source = text.template.source();
            for r in text.template.refs() {
                let path = &text.template.paths()[r.path as usize];
                if !unresolvable_by_head(path, |h| locals.contains(h))
                    || seen.iter().any(|(f, t)| *f == field && *t == &*path.text)
                {
                    continue;
                }
                seen.push((field.clone(), &path.text));
                let shell = source
                    .get(..r.span.start as usize)
                    .is_some_and(|before| before.ends_with('$'));
                let help = if shell {
                    format!(
                        "${{{0}}} is read as the placeholder {{{0}}}: write ${0} without braces for the shell variable",
                        path.text
                    )
                } else {
                    help(flow, p, path, &mut ids)
                };
                out.push(
                    Diagnostic::new(
                        Code::UnknownPlaceholder,
                        format!(
                            "{}: unresolved refs in {field}: {{{}}} — left intact (check dependsOn / placeholder spelling)",
                            p.id, path.text
                        ),
                    )
                    .at(text.file_span(r.span))
                    .phase(&p.id)
                    .with_label(why(path))
                    .help(help),
                );
            }
        });
    }
}

/// Why the ref never resolves, under it.
fn why(path: &RefPath) -> String {
    match path.head() {
        "previous" => {
            "{previous…} reads only {previous.output}: stays literal at run time".to_owned()
        }
        head => format!("'{head}' is no placeholder family: stays literal at run time"),
    }
}

/// The fix: the ref it probably meant, else what a placeholder can start with.
fn help(flow: &Flow, p: &Phase, path: &RefPath, ids: &mut IdSuggester<'_>) -> String {
    let head = path.head();
    if head == "previous" {
        return "did you mean {previous.output}? (the output of the dependency that ran last)"
            .to_owned();
    }
    let rest: Vec<&str> = path.keys().skip(1).collect();
    let tail = |prefix: &str| {
        let mut s = prefix.to_owned();
        for k in &rest {
            s.push('.');
            s.push_str(k);
        }
        s
    };
    // The name of an argument or of another phase, written without its family.
    let as_arg = |name: &str| format!("{{{}}}", tail(&format!("args.{name}")));
    let as_step = |id: &str| match rest.is_empty() {
        true => format!("{{steps.{id}.output}}"),
        false => format!("{{{}}}", tail(&format!("steps.{id}.json"))),
    };
    let mut meant: Vec<String> = Vec::new();
    if flow.args.contains_key(head) {
        meant.push(as_arg(head));
    }
    if head != p.id && flow.index_of(head).is_some() {
        meant.push(as_step(head));
    }
    if meant.is_empty() {
        // A misspelt family, or a local of this phase.
        let mut heads: Vec<&str> = FAMILY_HEADS.to_vec();
        if p.ty() == PhaseType::Map {
            heads.push(p.local_name());
        }
        if let Some(near) = did_you_mean(head, heads) {
            meant.push(format!("{{{}}}", tail(near)));
        }
    }
    if meant.is_empty() {
        if let Some(near) = did_you_mean(head, flow.args.keys().map(String::as_str)) {
            meant.push(as_arg(near));
        }
        // (Its own id is no misspelling of another phase's: this phase has no output yet.)
        if head != p.id
            && let Some(near) = ids.suggest(head, &p.id)
        {
            meant.push(as_step(near));
        }
    }
    // The first as the did-you-mean (editors offer it as the fix), any other after it.
    let mut meant = meant.into_iter();
    let Some(first) = meant.next() else {
        return "a placeholder starts with steps., args., previous.output, item (the map's element) or loop.; rephrase other brace text without braces, or it reaches the prompt as written".to_owned();
    };
    let more: Vec<String> = meant.collect();
    match more.is_empty() {
        true => format!("did you mean {first}?"),
        false => format!("did you mean {first}? (or {})", more.join(", or ")),
    }
}

#[cfg(test)]
mod tests;
