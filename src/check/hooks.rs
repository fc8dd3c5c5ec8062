//! The placeholders of the flow's `hooks` (SPEC §8.10). A hook runs after the run, outside
//! every phase: its elements after the first may read `{args.X}` and the hook-only heads
//! `{run.id}`, `{run.status}`, `{run.dir}` — nothing else resolves there (W0207, with the
//! run's own wording), an argument the invocation does not give stays literal (W0202), and
//! the first element, the command word, holds no placeholder at all (W0314).

use crate::check::refs::ArgsKnown;
use crate::diag::{Code, Diagnostic, did_you_mean};
use crate::flow::{Field, Flow, Hook, Hooks};
use crate::syntax::RefPath;

/// The fields of `{run.…}` a hook may read.
pub(crate) const RUN_FIELDS: [&str; 3] = ["id", "status", "dir"];

/// W0314, W0207 and W0202 for every hook of `flow`.
pub fn check(flow: &Flow, args: &ArgsKnown<'_>, out: &mut Vec<Diagnostic>) {
    let Some(hooks) = &flow.hooks else {
        return;
    };
    for hook in &hooks.value.hooks {
        command_word(hook, out);
        let mut seen: Vec<&str> = Vec::new();
        for arg in &hook.argv[1..] {
            for r in arg.template.refs() {
                let path = &arg.template.paths()[r.path as usize];
                if seen.contains(&&*path.text) {
                    continue;
                }
                seen.push(&path.text);
                let at = arg.file_span(r.span);
                if let Some(d) = placeholder(flow, hook, path, args) {
                    out.push(d.at(at));
                }
            }
        }
    }
}

/// W0315: `hooks` written in an inline `def` never run — a run's hooks are its top-level
/// flow's, run once when the whole run ends (SPEC §8.10). `phase` holds the def.
pub fn in_inline_def(phase: &str, hooks: &Field<Hooks>) -> Diagnostic {
    Diagnostic::new(
        Code::SubflowHooks,
        format!(
            "the flow defined inline in phase '{phase}' has hooks, which never run: hooks run once, when the top-level run ends"
        ),
    )
    .at(hooks.key)
    .with_label("not run for a sub-flow")
    .help("move the hooks to the top-level flow's `hooks` (they receive the whole run's record on stdin), or remove them")
}

/// W0314: the program is fixed text; a value there would choose what runs.
fn command_word(hook: &Hook, out: &mut Vec<Diagnostic>) {
    let Some(first) = hook.argv.first() else {
        return;
    };
    let key = hook.event.key();
    for r in first.template.refs() {
        let text = &first.as_str()[r.span.range()];
        out.push(
            Diagnostic::new(
                Code::HookCommandPlaceholder,
                format!(
                    "hooks.{key}: the command {text} is a placeholder: the program a hook runs must be written out"
                ),
            )
            .at(first.file_span(r.span))
            .with_label("the command word is fixed")
            .help(format!(
                "write the program itself first and pass {text} as a later element, or read TFC_RUN_ID, TFC_RUN_STATUS, TFC_RUN_DIR in the command"
            )),
        );
    }
}

/// The problem with one placeholder of a hook's arguments, without its span.
fn placeholder(
    flow: &Flow,
    hook: &Hook,
    path: &RefPath,
    args: &ArgsKnown<'_>,
) -> Option<Diagnostic> {
    let key = hook.event.key();
    let mut keys = path.keys();
    let head = keys.next().unwrap_or_default();
    let second = keys.next();
    let unresolved = |help: String| {
        Diagnostic::new(
            Code::UnknownPlaceholder,
            format!(
                "unresolved refs in hooks.{key}: {{{}}} — left intact (a hook reads only {{args.X}}, {{run.id}}, {{run.status}}, {{run.dir}})",
                path.text
            ),
        )
        .with_label("stays literal when the hook runs")
        .help(help)
    };
    match head {
        "args" => arg(flow, second?, args),
        "run" => match (second, keys.next()) {
            (None, _) => None,
            (Some(f), None) if RUN_FIELDS.contains(&f) => None,
            (Some(f), _) => Some(unresolved(match did_you_mean(f, RUN_FIELDS) {
                Some(near) => format!("did you mean {{run.{near}}}?"),
                None => "a run has {run.id}, {run.status} and {run.dir}".to_owned(),
            })),
        },
        "steps" | "previous" => Some(unresolved(
            "a hook runs after every phase: read the outputs from the run record on its stdin (e.g. `jq -r .finalOutput`)"
                .to_owned(),
        )),
        _ => Some(unresolved(match did_you_mean(head, ["args", "run"]) {
            Some(near) => format!(
                "did you mean {{{}}}?",
                path.text.replacen(head, near, 1)
            ),
            None if flow.args.contains_key(head) => format!("did you mean {{args.{head}}}?"),
            None => "a hook's placeholders are {args.X}, {run.id}, {run.status} and {run.dir}"
                .to_owned(),
        })),
    }
}

/// W0202 for `{args.<name>}` in a hook, as for a phase: with known arguments, one that is
/// neither given nor defaulted; without, a near miss of a declared one.
fn arg(flow: &Flow, name: &str, args: &ArgsKnown<'_>) -> Option<Diagnostic> {
    if args.suppress || args.invalid {
        return None;
    }
    let declared = flow.args.get(name);
    match args.provided {
        Some(given) => {
            if given.contains_key(name) || declared.is_some_and(|a| a.default.is_some()) {
                return None;
            }
            Some(
                Diagnostic::new(
                    Code::ArgNotProvided,
                    format!("Taskflow references {{args.{name}}} but the invocation did not provide '{name}' and it has no default"),
                )
                .with_label("stays literal at run time")
                .help(format!("pass it ({name}=…), or give it a \"default\"")),
            )
        }
        None => {
            if declared.is_some() {
                return None;
            }
            let near = did_you_mean(name, flow.args.keys().map(String::as_str))?;
            Some(
                Diagnostic::new(
                    Code::ArgNotProvided,
                    format!("Taskflow references {{args.{name}}}, but '{name}' is not declared in \"args\" (it declares '{near}')"),
                )
                .with_label(format!("stays literal at run time unless '{name}' is passed"))
                .help(format!("did you mean {{args.{near}}}?")),
            )
        }
    }
}

#[cfg(test)]
mod tests;
