//! Static checking (SPEC §7): every problem of a flow, collected in one pass per concern —
//! `dag` (graph structure), `refs` (placeholders against the DAG), `types` (every placeholder
//! and comparison against the types the DAG infers), `kinds` (per-type field rules), `lints` (graph lints), `args` (invocation
//! arguments), plus sub-flows. Nothing stops at the first problem.

mod args;
mod dag;
mod dynamic;
mod graph;
mod hooks;
mod kinds;
mod lints;
mod loader;
#[cfg(test)]
mod proptests;
mod refs;
pub mod types;
mod with;

pub use crate::flow::kinds::reduce::tree_calls;
pub(crate) use args::ArgReads;
pub use dynamic::{MAX_DYNAMIC_NESTING, dynamic_limits};
pub use graph::{Adjacency, Graph, ancestors};
pub use loader::FlowLoader;

use std::borrow::Cow;
use std::path::PathBuf;

use crate::diag::{Code, Diagnostic, Severity};
use crate::flow::{
    Def, Flow, Invocation, LowerOptions, PhaseKind, lower_source, resolve_invocation,
};
use crate::source::Source;
use crate::value::Map;

/// What a check may know besides the document.
#[derive(Default)]
pub struct CheckOptions<'a> {
    /// `--strict` / `--no-strict`; `None` = the flow's `strictInterpolation`.
    pub strict: Option<bool>,
    /// The invocation's arguments, when known (`tfc run`, `check --arg/--args`).
    pub args: Option<&'a Invocation>,
    /// Saved flows for `use`; without one, `use` targets are not checked.
    pub loader: Option<&'a dyn FlowLoader>,
    /// The invocation directory (W0310).
    pub cwd: Option<PathBuf>,
    /// Warnings not to report (`--allow`), besides the flow's own `lint.allow`.
    pub allow: Vec<Code>,
}

/// A checked document: its IR (when it lowered) and every diagnostic, in file order.
pub struct Checked {
    /// The IR, when the document lowered (it may still have errors).
    pub flow: Option<Flow>,
    /// Every problem found, errors and warnings, in file order.
    pub diagnostics: Vec<Diagnostic>,
    /// The parsed document the flow was lowered from, kept by [`check_document`] (a run
    /// stores it as its definition instead of parsing the text a second time); `None` from
    /// [`check_source`], after a syntax error, or when the check did not start from text.
    pub document: Option<crate::json::Node>,
}

impl Checked {
    /// Did any diagnostic have error severity?
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Read, lower and check a flow document.
pub fn check_source(text: &str, lower_opts: &LowerOptions, opts: &CheckOptions<'_>) -> Checked {
    check_text(text, lower_opts, opts, false)
}

/// [`check_source`], keeping the parsed document in [`Checked::document`] (for a run, which
/// stores it as its definition).
pub fn check_document(text: &str, lower_opts: &LowerOptions, opts: &CheckOptions<'_>) -> Checked {
    check_text(text, lower_opts, opts, true)
}

/// Read, lower and check; unless `keep`, each phase is lowered as soon as the reader has it and
/// its part of the tree dropped then, so the tree never holds the phases (the checks do not
/// need it: the peak memory stays near that of the IR).
fn check_text(
    text: &str,
    lower_opts: &LowerOptions,
    opts: &CheckOptions<'_>,
    keep: bool,
) -> Checked {
    let (lowered, document) = crate::flow::lower::lower_text(text, lower_opts, keep);
    let mut diagnostics = lowered.diagnostics;
    if let Some(flow) = &lowered.flow {
        check_into(
            flow,
            opts,
            &mut vec![flow.name.clone()],
            false,
            &mut diagnostics,
        );
    }
    finish(&mut diagnostics, lowered.flow.as_ref(), opts);
    Checked {
        flow: lowered.flow,
        diagnostics,
        document,
    }
}

/// One placeholder of a flow, as editors see it: the phase and field it is in, where it is in
/// the file (braces included) and its path as written.
#[derive(Clone, Debug, PartialEq)]
pub struct Placeholder {
    /// The index of its phase in [`Flow::phases`].
    pub phase: usize,
    /// The field it is in (`task`, `when`, `branches[0].task`, …).
    pub field: String,
    /// The placeholder in the file.
    pub span: crate::source::Span,
    /// Its path, without braces (`steps.scan.json.items`).
    pub path: String,
}

/// Every placeholder of every templated field and condition of `flow` (not of its inline
/// sub-flows), phase by phase: the ones the checks read, whether or not their root is bound.
pub fn placeholders(flow: &Flow) -> Vec<Placeholder> {
    let mut out = Vec::new();
    for (i, p) in flow.phases.iter().enumerate() {
        placeholders_into(i, p, &mut out);
    }
    out
}

/// The placeholders of phase `p` (at `index` of its flow), appended to `out`.
pub fn placeholders_into(index: usize, p: &crate::flow::Phase, out: &mut Vec<Placeholder>) {
    let mut uses = Vec::new();
    refs::uses_into(index, p, &mut uses);
    out.extend(uses.into_iter().map(|u| Placeholder {
        phase: u.phase,
        field: u.field.into_owned(),
        span: u.span,
        path: u.path.text.to_string(),
    }));
}

/// Check an already-lowered flow.
pub fn check_flow(flow: &Flow, opts: &CheckOptions<'_>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    check_into(flow, opts, &mut vec![flow.name.clone()], false, &mut out);
    finish(&mut out, Some(flow), opts);
    out
}

/// Check `flow` into `out`. `chain` names the flows being checked, outermost first (for
/// recursive `use`); `nested` is set for inline defs and saved sub-flows.
fn check_into(
    flow: &Flow,
    opts: &CheckOptions<'_>,
    chain: &mut Vec<String>,
    nested: bool,
    out: &mut Vec<Diagnostic>,
) {
    let check_def = |def: &Flow| {
        let mut found = dynamic_limits(def, 1);
        found.extend(check_flow(def, &CheckOptions::default()));
        found
    };
    // One pass over the phases for the per-phase rules and the placeholder uses (which report
    // nothing themselves): each phase is read while it is in cache.
    let mut all: Vec<refs::Use<'_>> = Vec::with_capacity(flow.phases.len());
    for (i, p) in flow.phases.iter().enumerate() {
        kinds::phase_rules(flow, p, &check_def, out);
        refs::uses_into(i, p, &mut all);
    }
    args::declarations(flow, out);
    let before = out.len();
    let given: Option<Cow<'_, Map>> = opts.args.map(|inv| {
        // Without `K=V` pairs or a positional value the JSON arguments are the given ones
        // as they are: borrowed, not copied (they may be large, e.g. a map's items).
        let mut rejected: Vec<&str> = Vec::new();
        let given = if inv.pairs.is_empty() && inv.positional.is_none() {
            Cow::Borrowed(&inv.json)
        } else {
            let (given, mut problems) = resolve_invocation(flow, inv);
            out.append(&mut problems);
            // A value that did not convert is E0502 alone, not also a missing argument.
            let positional = inv
                .positional
                .as_ref()
                .and_then(|_| flow.args.keys().next());
            rejected = inv
                .pairs
                .iter()
                .map(|(k, _)| k)
                .chain(positional)
                .filter(|k| !given.contains_key(*k))
                .map(String::as_str)
                .collect();
            Cow::Owned(given)
        };
        args::invocation(flow, &given, &rejected, out);
        codebase_mismatch(flow, &given, opts, out);
        given
    });
    lints::budget(flow, opts.loader, out);
    refs::condition_errors(flow, out);
    let reliable = dag::identity(flow, out);
    dag::finals(flow, out);
    let graph = Graph::new(flow);
    let args_known = refs::ArgsKnown {
        provided: given.as_deref(),
        suppress: nested && opts.args.is_none(),
        invalid: out[before..].iter().any(|d| {
            matches!(
                d.code,
                Code::InvalidArgValue | Code::MissingArg | Code::UnknownArg
            )
        }),
    };
    refs::scope_refs(flow, &all, &args_known, out);
    hooks::check(flow, &args_known, out);
    refs::unknown_placeholders(flow, out);
    if reliable {
        dag::cycles(flow, &graph, out);
        if graph.topo.is_some() {
            refs::steps_refs(flow, &graph, &all, out);
            types::check(flow, &all, opts.loader, out);
            let disconnected = dag::connectivity(flow, &graph, out);
            dag::dead_ends(flow, &graph, &disconnected, out);
            dag::gate_sole_path(flow, &graph, out);
            lints::branch_width(flow, out);
            lints::opposing_guards(flow, &graph, out);
            lints::final_guarded(flow, &graph, out);
            lints::join_any_reads(flow, &graph, &all, out);
        }
    }
    subflows(flow, opts, chain, out);
}

/// Inline `def` objects are flows of their own; `use` targets are loaded and checked
/// recursively (E0305 missing or recursive, E0306 target with errors).
fn subflows(
    flow: &Flow,
    opts: &CheckOptions<'_>,
    chain: &mut Vec<String>,
    out: &mut Vec<Diagnostic>,
) {
    const RECURSIVE: &str = "recursive sub-flow ";
    let child_opts = CheckOptions {
        strict: opts.strict,
        args: None,
        loader: opts.loader,
        cwd: opts.cwd.clone(),
        allow: opts.allow.clone(),
    };
    for (index, p) in flow.phases.iter().enumerate() {
        if let Some(def) = p.def()
            && let Def::Inline(child) = &def.value
        {
            // Part of this file: its problems are reported in place.
            check_into(child, &child_opts, chain, true, out);
            if let Some(h) = &child.hooks {
                out.push(hooks::in_inline_def(&p.id, h));
            }
            if matches!(p.kind, PhaseKind::Flow(_)) {
                let child = with::Child {
                    flow: child,
                    name: &child.name,
                    file: None,
                };
                with::check(flow, index, &child, opts.loader, out);
            }
        }
        let use_flow = match &p.kind {
            PhaseKind::Flow(k) => k.use_flow.as_ref(),
            _ => None,
        };
        let (Some(name), Some(loader)) = (use_flow, opts.loader) else {
            continue;
        };
        if p.def().is_some() || p.invalid.contains(&"def") {
            // E0303 already: which of the two was meant is unknown.
            continue;
        }
        let target = &name.value;
        let recursion = |text: String| {
            Diagnostic::new(Code::UnknownSubflow, format!("{}: {RECURSIVE}{text}", p.id))
                .at(name.span)
                .with_label("recursive use")
                .phase(&p.id)
                .help("a flow cannot use itself, directly or through other flows: inline the shared phases or split the flow")
        };
        if chain.contains(target) {
            out.push(recursion(format!("{} -> {target}", chain.join(" -> "))));
            continue;
        }
        match loader.load(target) {
            Err(places) => {
                let looked: Vec<String> = places
                    .iter()
                    .map(|p| display_path(p, opts.cwd.as_deref()))
                    .collect();
                let names = loader.names();
                let near = crate::diag::did_you_mean(target, names.iter().map(String::as_str));
                let (message, help) = match near {
                    Some(n) => (
                        format!(
                            "{}: saved flow not found: '{target}' (did you mean '{n}'?)",
                            p.id
                        ),
                        format!(
                            "use '{n}', or save '{target}' as one of: {} (project first)",
                            looked.join(", ")
                        ),
                    ),
                    None => (
                        format!("{}: saved flow not found: '{target}'", p.id),
                        format!("save it as one of: {} (project first)", looked.join(", ")),
                    ),
                };
                out.push(
                    Diagnostic::new(Code::UnknownSubflow, message)
                        .at(name.span)
                        .with_label("no saved flow of this name")
                        .phase(&p.id)
                        .help(help),
                );
            }
            Ok((path, text)) => {
                let lowered = lower_source(
                    &text,
                    &LowerOptions {
                        default_name: Some(target.clone()),
                    },
                );
                let mut nested = lowered.diagnostics;
                if let Some(child) = &lowered.flow
                    && !p.invalid.contains(&"with")
                {
                    let file = Source::new(display_path(&path, opts.cwd.as_deref()), text);
                    let child = with::Child {
                        flow: child,
                        name: target,
                        file: Some(std::sync::Arc::new(file)),
                    };
                    with::check(flow, index, &child, opts.loader, out);
                }
                if let Some(child) = &lowered.flow {
                    chain.push(target.clone());
                    check_into(child, &child_opts, chain, true, &mut nested);
                    chain.pop();
                }
                finish(&mut nested, lowered.flow.as_ref(), &child_opts);
                let Some(first) = nested.iter().find(|d| d.is_error()) else {
                    continue;
                };
                // A recursion further down is this use's problem: report the whole chain.
                if first.code == Code::UnknownSubflow
                    && let Some(at) = first.message.find(RECURSIVE)
                {
                    out.push(recursion(first.message[at + RECURSIVE.len()..].to_owned()));
                    continue;
                }
                out.push(
                    Diagnostic::new(
                        Code::InvalidSubflow,
                        format!(
                            "{}: saved flow '{target}' has errors: [{}] {}",
                            p.id,
                            first.code.as_str(),
                            first.message
                        ),
                    )
                    .at(name.span)
                    .with_label("this saved flow has errors")
                    .phase(&p.id)
                    .help(format!(
                        "run `tfc check {}` and fix it",
                        display_path(&path, opts.cwd.as_deref())
                    )),
                );
            }
        }
    }
}

/// A path as messages show it: relative to the invocation directory when under it, `~/…`
/// under the home directory, else as is (so reports do not depend on the machine).
fn display_path(path: &std::path::Path, cwd: Option<&std::path::Path>) -> String {
    if let Some(rel) = cwd.and_then(|c| path.strip_prefix(c).ok()) {
        return rel.display().to_string();
    }
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty())
        && let Ok(rel) = path.strip_prefix(&home)
    {
        return format!("~/{}", rel.display());
    }
    path.display().to_string()
}

/// W0310: agents would inspect another repository than the one tfc runs in. `args` are the
/// effective arguments (provided, else defaults). The message leaves the invocation
/// directory out, so reports do not depend on where tfc ran.
/// `given`: the provided arguments; a declared default stands in for a missing `codebase`
/// (as in [`crate::flow::effective_args`]).
fn codebase_mismatch(flow: &Flow, given: &Map, opts: &CheckOptions<'_>, out: &mut Vec<Diagnostic>) {
    let codebase = given.get("codebase").or_else(|| {
        flow.args
            .get("codebase")
            .and_then(|spec| spec.default.as_ref())
            .map(|d| &d.value)
    });
    let (Some(crate::value::Value::String(cb)), Some(cwd)) = (codebase, &opts.cwd) else {
        return;
    };
    let path = std::path::Path::new(cb);
    if path.is_absolute() && path != cwd.as_path() {
        let mut d = Diagnostic::new(
            Code::CwdMismatch,
            format!(
                "args.codebase is '{cb}' but tfc runs in another directory: agents may inspect the wrong repository"
            ),
        )
        .help(format!(
            "run tfc from {cb}, or set each phase's \"cwd\""
        ));
        if let Some(spec) = flow.args.get("codebase") {
            d = d
                .at(spec.name_span)
                .with_label("not the invocation directory");
        }
        out.push(d);
    }
}

/// Allowed warnings, strict mode, the strict-only W0203, de-duplication, and file order.
/// Allowed warnings go first, so strict mode cannot turn one into an error. The flow's
/// `lint.allow` covers the whole file (inline defs included).
fn finish(diags: &mut Vec<Diagnostic>, flow: Option<&Flow>, opts: &CheckOptions<'_>) {
    let strict = opts
        .strict
        .unwrap_or_else(|| flow.is_some_and(|f| f.strict_interpolation));
    let lint = flow.map_or(&[][..], |f| &f.lint_allow[..]);
    diags.retain(|d| d.is_error() || !(opts.allow.contains(&d.code) || lint.contains(&d.code)));
    diags.retain(|d| d.code != Code::UndeclaredArg || strict);
    if strict {
        for d in diags.iter_mut() {
            if d.severity == Severity::Warning
                && d.code.is_strict_promotable()
                && !d.message.starts_with("Strict interpolation: ")
            {
                d.severity = Severity::Error;
                d.message = format!("Strict interpolation: {}", d.message);
            }
        }
    }
    diags.sort_by_key(|d| (d.span.map_or(0, |s| s.start), d.span.map_or(0, |s| s.end)));
    diags.dedup();
}

/// Helpers for the unit tests of every check module.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// Check `text` with default options.
    pub fn check(text: &str) -> Vec<Diagnostic> {
        check_source(text, &LowerOptions::default(), &CheckOptions::default()).diagnostics
    }

    /// Check `text` against invocation arguments `K=V`.
    pub fn check_args(text: &str, pairs: &[(&str, &str)]) -> Vec<Diagnostic> {
        let inv = Invocation {
            pairs: pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            ..Invocation::default()
        };
        let opts = CheckOptions {
            args: Some(&inv),
            cwd: Some(PathBuf::from("/work/here")),
            ..CheckOptions::default()
        };
        check_source(text, &LowerOptions::default(), &opts).diagnostics
    }

    /// The contract of phase `a` in a one-phase flow (which must lower cleanly).
    pub fn contract(json: &str) -> crate::flow::Contract {
        let flow =
            format!(r#"{{"phases":[{{"id":"a","task":"t","output":"json","expect":{json}}}]}}"#);
        let lowered = lower_source(&flow, &LowerOptions::default());
        assert!(lowered.diagnostics.is_empty(), "{:?}", lowered.diagnostics);
        *lowered.flow.expect("flow").phases[0]
            .expect
            .clone()
            .expect("contract")
    }

    /// The diagnostic with `code` (the first), for looking at its texts.
    pub fn find(diags: &[Diagnostic], code: &str) -> Diagnostic {
        diags
            .iter()
            .find(|d| d.code.as_str() == code)
            .unwrap_or_else(|| panic!("no {code} in {diags:#?}"))
            .clone()
    }

    /// The codes reported for `text`, in order.
    pub fn codes(text: &str) -> Vec<&'static str> {
        check(text).iter().map(|d| d.code.as_str()).collect()
    }

    /// The text under each diagnostic's primary span, with its code.
    pub fn spans(text: &str) -> Vec<(&'static str, String)> {
        check(text)
            .iter()
            .map(|d| {
                let s = d.span.map_or(String::new(), |s| text[s.range()].to_owned());
                (d.code.as_str(), s)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Saved flows from memory.
    struct Saved(HashMap<&'static str, &'static str>);

    impl FlowLoader for Saved {
        fn load(&self, name: &str) -> Result<(PathBuf, String), Vec<PathBuf>> {
            match self.0.get(name) {
                Some(text) => Ok((
                    PathBuf::from(format!("/p/.tfc/flows/{name}.json")),
                    (*text).to_owned(),
                )),
                None => Err(vec![PathBuf::from(format!("/p/.tfc/flows/{name}.json"))]),
            }
        }
    }

    fn check_saved(text: &str, saved: &Saved) -> Vec<Diagnostic> {
        let opts = CheckOptions {
            loader: Some(saved),
            cwd: Some(PathBuf::from("/p")),
            ..CheckOptions::default()
        };
        let lower = LowerOptions {
            default_name: Some("root".into()),
        };
        check_source(text, &lower, &opts).diagnostics
    }

    /// W0310 from a declared `codebase` default, with the JSON arguments given as they are
    /// (borrowed) and with a `K=V` pair (resolved): the pair wins over the default.
    #[test]
    fn codebase_default_and_given_arguments() {
        let text = r#"{"args": {"codebase": {"default": "/elsewhere"}}, "phases": [{"id": "a", "task": "t"}]}"#;
        let codes = |inv: &Invocation| -> Vec<Code> {
            let opts = CheckOptions {
                args: Some(inv),
                cwd: Some(PathBuf::from("/p")),
                ..CheckOptions::default()
            };
            check_source(text, &LowerOptions::default(), &opts)
                .diagnostics
                .iter()
                .map(|d| d.code)
                .collect()
        };
        assert_eq!(codes(&Invocation::default()), [Code::CwdMismatch]);
        let mut json = Map::default();
        json.insert("codebase".into(), crate::value::Value::from("/p"));
        let given = Invocation {
            json,
            ..Invocation::default()
        };
        assert_eq!(codes(&given), []);
        let pair = Invocation {
            json: given.json.clone(),
            pairs: vec![("codebase".into(), "/other".into())],
            ..Invocation::default()
        };
        assert_eq!(codes(&pair), [Code::CwdMismatch]);
    }

    #[test]
    fn recursive_uses_report_the_whole_chain_once() {
        let saved = Saved(HashMap::from([
            ("a", r#"[{"id": "x", "type": "flow", "use": "b"}]"#),
            ("b", r#"[{"id": "y", "type": "flow", "use": "a"}]"#),
            ("self", r#"[{"id": "z", "type": "flow", "use": "root"}]"#),
        ]));
        let diags = check_saved(r#"[{"id": "s", "type": "flow", "use": "a"}]"#, &saved);
        let messages: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(messages, ["s: recursive sub-flow root -> a -> b -> a"]);
        let diags = check_saved(r#"[{"id": "s", "type": "flow", "use": "self"}]"#, &saved);
        assert_eq!(
            diags[0].message,
            "s: recursive sub-flow root -> self -> root"
        );
    }

    #[test]
    fn missing_and_broken_sub_flows() {
        let saved = Saved(HashMap::from([(
            "bad",
            r#"[{"id": "x", "dependsOn": ["y"], "task": "t"}]"#,
        )]));
        let diags = check_saved(r#"[{"id": "s", "type": "flow", "use": "nope"}]"#, &saved);
        assert_eq!(diags[0].code, Code::UnknownSubflow);
        assert_eq!(
            diags[0].help.as_deref(),
            Some("save it as one of: .tfc/flows/nope.json (project first)")
        );
        let diags = check_saved(r#"[{"id": "s", "type": "flow", "use": "bad"}]"#, &saved);
        assert_eq!(diags[0].code, Code::InvalidSubflow);
        assert_eq!(
            diags[0].message,
            "s: saved flow 'bad' has errors: [E0103] x: dependsOn unknown phase 'y'"
        );
        assert_eq!(
            diags[0].help.as_deref(),
            Some("run `tfc check .tfc/flows/bad.json` and fix it")
        );
    }

    /// A saved sub-flow's final phase types `{steps.X.json…}` in the parent (SPEC §7.5).
    #[test]
    fn used_sub_flows_type_their_output() {
        let saved = Saved(HashMap::from([(
            "judge",
            r#"[{"id": "j", "output": "json", "task": "Judge.",
                 "expect": {"required": ["verdict"], "properties": {"verdict": {"enum": ["pass", "fail"]}}}}]"#,
        )]));
        let diags = check_saved(
            r#"[{"id": "s", "type": "flow", "use": "judge"},
                {"id": "t", "dependsOn": ["s"], "when": "{steps.s.json.verdict} == passed",
                 "task": "{steps.s.json.verdict.reason}"}]"#,
            &saved,
        );
        let codes: Vec<&str> = diags.iter().map(|d| d.code.as_str()).collect();
        // W0109 too: the reader is the final phase, behind its own `when`.
        assert_eq!(codes, ["W0109", "E0212", "E0209"]);
        // The declaration lies in the saved flow's file: no label points into this one.
        assert!(diags[1..].iter().all(|d| d.labels.is_empty()), "{diags:#?}");
    }

    #[test]
    fn use_with_def_is_only_e0303() {
        let saved = Saved(HashMap::new());
        let diags = check_saved(
            r#"[{"id": "s", "type": "flow", "use": "nope", "def": [{"id": "a", "task": "x"}]}]"#,
            &saved,
        );
        let codes: Vec<&str> = diags.iter().map(|d| d.code.as_str()).collect();
        assert_eq!(codes, ["E0303"]);
    }
}
