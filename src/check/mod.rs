//! Static checking (SPEC §7): every problem of a flow, collected in one pass per concern —
//! `dag` (graph structure), `refs` (placeholders against the DAG), `types` (paths against
//! contracts), `kinds` (per-type field rules), `lints` (graph lints), `args` (invocation
//! arguments), plus sub-flows. Nothing stops at the first problem.

mod args;
mod dag;
mod graph;
mod kinds;
mod lints;
mod refs;
mod types;

pub use graph::{Graph, ancestors};
pub use kinds::tree_calls;

use std::path::PathBuf;

use crate::diag::{Code, Diagnostic, Severity};
use crate::flow::{Def, Flow, Invocation, LowerOptions, lower_source, resolve_invocation};
use crate::value::Map;

/// Where saved flows (`use`) come from.
pub trait FlowLoader {
    /// The file and text of the saved flow `name`, or `None` with the places looked in.
    fn load(&self, name: &str) -> Result<(PathBuf, String), Vec<PathBuf>>;
}

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
}

/// A checked document: its IR (when it lowered) and every diagnostic, in file order.
pub struct Checked {
    pub flow: Option<Flow>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Checked {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Read, lower and check a flow document.
pub fn check_source(text: &str, lower_opts: &LowerOptions, opts: &CheckOptions<'_>) -> Checked {
    let lowered = lower_source(text, lower_opts);
    let mut diagnostics = lowered.diagnostics;
    if let Some(flow) = &lowered.flow {
        check_into(flow, opts, &mut Vec::new(), &mut diagnostics);
    }
    finish(&mut diagnostics, lowered.flow.as_ref(), opts);
    Checked {
        flow: lowered.flow,
        diagnostics,
    }
}

/// Check an already-lowered flow.
pub fn check_flow(flow: &Flow, opts: &CheckOptions<'_>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    check_into(flow, opts, &mut Vec::new(), &mut out);
    finish(&mut out, Some(flow), opts);
    out
}

fn check_into(
    flow: &Flow,
    opts: &CheckOptions<'_>,
    stack: &mut Vec<String>,
    out: &mut Vec<Diagnostic>,
) {
    for p in &flow.phases {
        kinds::phase_rules(flow, p, out);
    }
    args::declarations(flow, out);
    let given: Option<Map> = opts.args.map(|inv| {
        let (given, mut problems) = resolve_invocation(flow, inv);
        out.append(&mut problems);
        args::invocation(flow, &given, out);
        codebase_mismatch(&given, opts, out);
        given
    });
    lints::budget(flow, out);
    refs::condition_errors(flow, out);
    let reliable = dag::identity(flow, out);
    dag::finals(flow, out);
    let graph = Graph::new(flow);
    let all: Vec<refs::Use<'_>> = flow
        .phases
        .iter()
        .enumerate()
        .flat_map(|(i, p)| refs::uses(i, p))
        .collect();
    let args_known = refs::ArgsKnown {
        provided: given.as_ref(),
        suppress: !stack.is_empty() && opts.args.is_none(),
    };
    refs::scope_refs(flow, &all, &args_known, out);
    if reliable {
        dag::cycles(flow, &graph, out);
        if graph.topo.is_some() {
            refs::steps_refs(flow, &graph, &all, out);
            types::contract_paths(flow, &graph, &all, out);
            dag::connectivity(flow, &graph, out);
            dag::dead_ends(flow, &graph, out);
            dag::gate_sole_path(flow, &graph, out);
            lints::branch_width(flow, out);
            lints::opposing_guards(flow, &graph, out);
        }
    }
    subflows(flow, opts, stack, out);
}

/// Inline `def` objects are flows of their own; `use` targets are loaded and checked
/// recursively (E0305 missing or recursive, E0306 target with errors).
fn subflows(
    flow: &Flow,
    opts: &CheckOptions<'_>,
    stack: &mut Vec<String>,
    out: &mut Vec<Diagnostic>,
) {
    for p in &flow.phases {
        if let Some(def) = &p.def
            && let Def::Inline(child) = &def.value
        {
            let child_opts = CheckOptions {
                strict: opts.strict,
                args: None,
                loader: opts.loader,
                cwd: opts.cwd.clone(),
            };
            stack.push(format!("{}#def", p.id));
            check_into(child, &child_opts, stack, out);
            stack.pop();
        }
        let (Some(name), Some(loader)) = (&p.use_flow, opts.loader) else {
            continue;
        };
        let target = &name.value;
        if stack.contains(target) || flow.name == *target {
            let mut chain: Vec<&str> = stack
                .iter()
                .map(String::as_str)
                .filter(|s| !s.contains('#'))
                .collect();
            chain.push(target);
            out.push(
                Diagnostic::new(
                    Code::UnknownSubflow,
                    format!("{}: recursive sub-flow {}", p.id, chain.join(" -> ")),
                )
                .at(name.span)
                .phase(&p.id)
                .help("a flow cannot use itself, directly or through other flows"),
            );
            continue;
        }
        match loader.load(target) {
            Err(places) => {
                let looked: Vec<String> = places.iter().map(|p| p.display().to_string()).collect();
                out.push(
                    Diagnostic::new(
                        Code::UnknownSubflow,
                        format!("{}: saved flow not found: '{target}'", p.id),
                    )
                    .at(name.span)
                    .phase(&p.id)
                    .help(format!("looked in: {}", looked.join(", "))),
                );
            }
            Ok((path, text)) => {
                stack.push(flow.name.clone());
                let child_opts = CheckOptions {
                    strict: opts.strict,
                    args: None,
                    loader: opts.loader,
                    cwd: opts.cwd.clone(),
                };
                let lowered = lower_source(
                    &text,
                    &LowerOptions {
                        default_name: Some(target.clone()),
                    },
                );
                let mut nested = lowered.diagnostics;
                if let Some(child) = &lowered.flow {
                    stack.push(target.clone());
                    check_into(child, &child_opts, stack, &mut nested);
                    stack.pop();
                }
                stack.pop();
                finish(&mut nested, lowered.flow.as_ref(), &child_opts);
                // A recursive use deeper down is reported here as this target's problem.
                if let Some(first) = nested.iter().find(|d| d.is_error()) {
                    let code = if first.code == Code::UnknownSubflow
                        && first.message.contains("recursive")
                    {
                        Code::UnknownSubflow
                    } else {
                        Code::InvalidSubflow
                    };
                    out.push(
                        Diagnostic::new(
                            code,
                            format!(
                                "{}: saved flow '{target}' has errors: [{}] {}",
                                p.id,
                                first.code.as_str(),
                                first.message
                            ),
                        )
                        .at(name.span)
                        .phase(&p.id)
                        .help(format!("run `tfc check {}`", path.display())),
                    );
                }
            }
        }
    }
}

/// W0310: agents would inspect another repository than the one tfc runs in.
fn codebase_mismatch(given: &Map, opts: &CheckOptions<'_>, out: &mut Vec<Diagnostic>) {
    let (Some(crate::value::Value::String(cb)), Some(cwd)) = (given.get("codebase"), &opts.cwd)
    else {
        return;
    };
    let path = std::path::Path::new(cb);
    if path.is_absolute() && path != cwd.as_path() {
        out.push(
            Diagnostic::new(
                Code::CwdMismatch,
                format!(
                    "args.codebase is '{cb}' but tfc runs in '{}'",
                    cwd.display()
                ),
            )
            .help("run tfc from the codebase, or set each phase's \"cwd\""),
        );
    }
}

/// Strict mode, the strict-only W0203, de-duplication, and file order.
fn finish(diags: &mut Vec<Diagnostic>, flow: Option<&Flow>, opts: &CheckOptions<'_>) {
    let strict = opts
        .strict
        .unwrap_or_else(|| flow.is_some_and(|f| f.strict_interpolation));
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
    diags.dedup();
    diags.sort_by_key(|d| (d.span.map_or(0, |s| s.start), d.span.map_or(0, |s| s.end)));
}

/// Helpers for the unit tests of every check module.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// Check `text` with default options.
    pub fn check(text: &str) -> Vec<Diagnostic> {
        check_source(text, &LowerOptions::default(), &CheckOptions::default()).diagnostics
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
