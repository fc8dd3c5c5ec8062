//! Invocation arguments against the declarations (SPEC §2.2): E0502, E0503, E0504, W0203,
//! W0204.

use std::borrow::Cow;

use crate::compile::Template;
use crate::diag::{Code, Diagnostic};
use crate::flow::{Def, EvalKind, Flow, Notation, PhaseKind, check_value, value_help};
use crate::syntax::{RefPath, Target};
use crate::value::Map;

/// Declarations alone: legacy `required` (W0204).
pub fn declarations(flow: &Flow, out: &mut Vec<Diagnostic>) {
    for spec in flow.args.values() {
        if spec.ty.is_none() && spec.required {
            out.push(
                Diagnostic::new(
                    Code::LegacyRequiredArg,
                    format!(
                        "argument '{}' is marked required but has no type, so nothing enforces it",
                        spec.name
                    ),
                )
                .at(spec.required_span.unwrap_or(spec.name_span))
                .with_label("not enforced without a type")
                .help("add a type, e.g. \"type\": \"string\", to make tfc refuse a run without it"),
            );
        }
    }
}

/// Values given at invocation against the declarations. `rejected` names the arguments whose
/// value did not convert (already E0502): they are not missing too.
pub fn invocation(flow: &Flow, given: &Map, rejected: &[&str], out: &mut Vec<Diagnostic>) {
    let read = ArgReads::of(flow);
    for spec in flow.args.values() {
        match given.get(&spec.name) {
            Some(v) => {
                if let Err(why) = check_value(spec, v) {
                    out.push(
                        Diagnostic::new(
                            Code::InvalidArgValue,
                            format!("Argument '{}' invocation must {why}", spec.name),
                        )
                        .at(spec.name_span)
                        .with_label("declared here")
                        .help(value_help(spec, Notation::Pair)),
                    );
                }
            }
            None => {
                if spec.ty.is_some()
                    && spec.required
                    && spec.default.is_none()
                    && !rejected.contains(&spec.name.as_str())
                {
                    out.push(
                        Diagnostic::new(
                            Code::MissingArg,
                            format!("Missing required argument '{}'", spec.name),
                        )
                        .at(spec.name_span)
                        .with_label("required, with no default")
                        .help(format!("pass it: {}=…", spec.name)),
                    );
                }
            }
        }
    }
    for name in given.keys() {
        if !flow.args.contains_key(name) {
            out.push(undeclared(flow, name, read.reads(name)));
        }
    }
}

/// The argument names the flow's `{args.X…}` placeholders read: every templated field,
/// condition (one that does not parse too) and gate `eval` entry of every phase, inline defs
/// included. A bare `{args}` renders the whole object, so it reads every name.
#[derive(Default)]
pub(crate) struct ArgReads<'f> {
    names: Vec<Cow<'f, str>>,
    all: bool,
}

impl<'f> ArgReads<'f> {
    pub(crate) fn of(flow: &'f Flow) -> ArgReads<'f> {
        let mut read = ArgReads::default();
        read.flow(flow);
        read
    }

    pub(crate) fn reads(&self, name: &str) -> bool {
        self.all || self.names.iter().any(|n| n == name)
    }

    fn flow(&mut self, flow: &'f Flow) {
        // A hook's arguments are read when the run ends (SPEC §8.10).
        for hook in flow.hooks.iter().flat_map(|h| &h.value.hooks) {
            hook.argv.iter().for_each(|a| self.template(&a.template));
        }
        for p in &flow.phases {
            p.each_text(|_, text| self.template(&text.template));
            for (_, cond) in p.conditions() {
                match &cond.parsed {
                    Ok(c) => c.refs().for_each(|(_, path)| self.path(path)),
                    // Whatever the text names, as a template would find it.
                    Err(_) => self.parsed(cond.src.value.as_str()),
                }
            }
            if let PhaseKind::Gate(g) = &p.kind {
                for e in &g.eval {
                    match &e.kind {
                        EvalKind::Contains { lhs, .. } => self.template(lhs),
                        EvalKind::Condition(Ok(c)) => {
                            c.refs().for_each(|(_, path)| self.path(path))
                        }
                        EvalKind::Condition(Err(_)) => self.parsed(e.src.value.as_str()),
                        EvalKind::Empty => {}
                    }
                }
            }
            if let Some(def) = p.def()
                && let Def::Inline(child) = &def.value
            {
                self.flow(child);
            }
        }
    }

    fn template(&mut self, t: &'f Template) {
        t.paths().iter().for_each(|path| self.path(path));
    }

    /// The placeholders of a text that is not a condition, found as a template finds them.
    fn parsed(&mut self, text: &str) {
        for path in Template::parse(text).paths() {
            self.name(path, |n| Cow::Owned(n.to_owned()));
        }
    }

    fn path(&mut self, path: &'f RefPath) {
        self.name(path, Cow::Borrowed);
    }

    fn name<'p>(&mut self, path: &'p RefPath, own: impl FnOnce(&'p str) -> Cow<'f, str>) {
        if path.target != Target::Args {
            return;
        }
        match path.keys().nth(1) {
            Some(name) if !self.names.iter().any(|n| n == name) => self.names.push(own(name)),
            Some(_) => {}
            None => self.all = true,
        }
    }
}

/// An invocation argument the flow does not declare. A flow that writes `args` closes the set:
/// a name outside it that no `{args.X…}` reads is a typo or a leftover, and passing it would
/// silently change nothing, so it is an error (E0504). One that some placeholder reads passes
/// through to it (SPEC §2.2), as in a flow without an `args` object; there the name is only
/// noted, and only in strict mode (W0203).
fn undeclared(flow: &Flow, name: &str, read: bool) -> Diagnostic {
    let declared: Vec<&str> = flow.args.keys().map(String::as_str).collect();
    let near = crate::diag::did_you_mean(name, declared.iter().copied());
    let key = match flow.args_key {
        Some(key) if !read => key,
        _ => {
            let d = Diagnostic::new(
                Code::UndeclaredArg,
                format!("the invocation passes '{name}', which the flow does not declare"),
            )
            .help(format!(
                "declare it under \"args\" (e.g. \"args\": {{\"{name}\": {{\"type\": \"string\"}}}}), or drop it"
            ));
            return match flow.args_key {
                Some(key) => d.at(key).with_label("not declared here"),
                None => d,
            };
        }
    };
    let message = crate::flow::unknown_arg_message(flow, name);
    let label = if declared.is_empty() {
        "declares no arguments".to_owned()
    } else {
        format!("declares only: {}", declared.join(", "))
    };
    Diagnostic::new(Code::UnknownArg, message)
        .at(key)
        .with_label(label)
        .help(match near {
            Some(n) => format!("pass it as '{n}', or declare '{name}' under \"args\""),
            None => format!("pass only declared arguments, or declare '{name}' under \"args\""),
        })
}

#[cfg(test)]
mod tests;
