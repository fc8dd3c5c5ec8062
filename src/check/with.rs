//! A flow phase's `with` against the child's ArgSpecs (SPEC §7.5 "Sub-flow arguments"): the
//! arguments a `use` target or an object `def` will get, checked as an invocation is (E0502,
//! E0503, E0504), with the conversion rule the run applies ([`convert_value`]).
//!
//! - a literal that cannot convert (`"version": "abc"` into a number) or is outside an enum:
//!   E0502 on the value;
//! - a placeholder value whose inferred type has no value that converts (`{steps.t.json.ok}`,
//!   a boolean, into a number): E0502 on the value; `string` and `any` are never reported;
//! - a required argument without default that `with` does not give: E0503 on `with`;
//! - a key the child neither declares nor reads, when it declares `args`: E0504 on the key.
//!
//! Each has a label on the child's declaration, which for a saved flow is in its own file.

use std::sync::Arc;

use super::args::ArgReads;
use super::loader::FlowLoader;
use super::types::{Ty, type_of_path};
use crate::diag::{Code, Diagnostic};
use crate::flow::{
    ArgSpec, ArgType, Flow, Notation, Phase, PhaseKind, WithValue, convert_value, enum_list,
    unknown_arg_message, value_help,
};
use crate::source::{Source, Span};
use crate::value::Value;

/// The child a `with` is checked against.
pub struct Child<'c> {
    /// The child flow.
    pub flow: &'c Flow,
    /// Its name, as the run's messages say it (`sub-flow '<name>'`).
    pub name: &'c str,
    /// Its file, when it is not the caller's (a saved flow).
    pub file: Option<Arc<Source>>,
}

impl Child<'_> {
    /// A label on the child's declaration at `span`.
    fn label(&self, d: Diagnostic, span: Span, text: String) -> Diagnostic {
        match &self.file {
            Some(file) => d.label_in(file.clone(), span, text),
            None => d.label(span, text),
        }
    }
}

/// Check the `with` of flow phase `index` of `parent` against `child`.
pub fn check(
    parent: &Flow,
    index: usize,
    child: &Child<'_>,
    loader: Option<&dyn FlowLoader>,
    out: &mut Vec<Diagnostic>,
) {
    let p = &parent.phases[index];
    let PhaseKind::Flow(k) = &p.kind else {
        return;
    };
    let args = &child.flow.args;
    let reads = ArgReads::of(child.flow);
    let prefix = format!("{}: sub-flow '{}': ", p.id, child.name);
    for (key, field) in &k.with {
        let Some(spec) = args.get(key) else {
            if let Some(decl) = child.flow.args_key
                && !reads.reads(key)
            {
                out.push(unknown(p, &prefix, child, key, field.key, decl));
            }
            continue;
        };
        let problem = match &field.value {
            WithValue::Literal(v) => convert_value(Some(spec), v.clone()).err().map(|why| {
                (
                    format!("Argument '{key}' invocation must {why}"),
                    format!("{} does not convert to '{key}'", v.to_json()),
                )
            }),
            WithValue::Template(text) => {
                let t = &text.template;
                match t.refs() {
                    [] => convert_value(Some(spec), Value::from(t.source()))
                        .err()
                        .map(|why| {
                            (
                                format!("Argument '{key}' invocation must {why}"),
                                format!("\"{}\" does not convert to '{key}'", t.source()),
                            )
                        }),
                    [only]
                        if only.span.start == 0 && only.span.end as usize == t.source().len() =>
                    {
                        let path = &t.paths()[only.path as usize];
                        let field = format!("with.{key}");
                        type_of_path(parent, loader, index, &field, &path.text)
                            .filter(|ty| !may_convert(spec, ty))
                            .map(|ty| {
                                (
                                    format!(
                                        "Argument '{key}' invocation must {}, but {{{}}} is {}, which never converts",
                                        expected(spec),
                                        path.text,
                                        ty.present().describe()
                                    ),
                                    format!("{} here", ty.present()),
                                )
                            })
                    }
                    // Text around placeholders renders to a string: it may convert.
                    _ => None,
                }
            }
        };
        if let Some((message, label)) = problem {
            let d = Diagnostic::new(Code::InvalidArgValue, format!("{prefix}{message}"))
                .at(field.span)
                .with_label(label)
                .phase(&p.id)
                .help(value_help(spec, Notation::With));
            let declared = format!("'{key}' is declared here: {}", declared_type(spec));
            out.push(child.label(d, spec.name_span, declared));
        }
    }
    for spec in args.values() {
        if spec.ty.is_none()
            || !spec.required
            || spec.default.is_some()
            || k.with.iter().any(|(key, _)| *key == spec.name)
        {
            continue;
        }
        let n = &spec.name;
        let at = p
            .written
            .get("with")
            .copied()
            .or_else(|| k.use_flow.as_ref().map(|u| u.span))
            .or_else(|| p.written.get("def").copied())
            .unwrap_or(p.id_span);
        let d = Diagnostic::new(
            Code::MissingArg,
            format!("{prefix}Missing required argument '{n}'"),
        )
        .at(at)
        .with_label(format!("'{n}' is not given here"))
        .phase(&p.id)
        .help(format!(
            "add it: \"with\": {{\"{n}\": …}}, or give '{n}' a default in the sub-flow"
        ));
        out.push(child.label(d, spec.name_span, "required, with no default".into()));
    }
}

/// E0504: a `with` key the child neither declares nor reads.
fn unknown(
    p: &Phase,
    prefix: &str,
    child: &Child<'_>,
    key: &str,
    at: Span,
    decl: Span,
) -> Diagnostic {
    let declared: Vec<&str> = child.flow.args.keys().map(String::as_str).collect();
    let near = crate::diag::did_you_mean(key, declared.iter().copied());
    let d = Diagnostic::new(
        Code::UnknownArg,
        format!("{prefix}{}", unknown_arg_message(child.flow, key)),
    )
    .at(at)
    .with_label(format!("not an argument of '{}'", child.name))
    .phase(&p.id)
    .help(match near {
        Some(n) => format!("pass it as '{n}', or declare '{key}' under the sub-flow's \"args\""),
        None => {
            format!("pass only the sub-flow's arguments, or declare '{key}' under its \"args\"")
        }
    });
    let label = if declared.is_empty() {
        "declares no arguments".to_owned()
    } else {
        format!("declares only: {}", declared.join(", "))
    };
    child.label(d, decl, label)
}

/// Can some value of type `ty` convert to `spec`'s type? Members that are `missing` say
/// nothing either way; `any` and `string` always may.
fn may_convert(spec: &ArgSpec, ty: &Ty) -> bool {
    let Some(arg) = spec.ty else { return true };
    let converts = |v: Value| convert_value(Some(spec), v).is_ok();
    let mut known = false;
    for m in ty.members() {
        let may = match m {
            Ty::Missing => continue,
            Ty::Any | Ty::String => true,
            Ty::Lits(values) => values.iter().any(|v| converts(v.clone())),
            Ty::Boolean => converts(Value::Bool(true)) || converts(Value::Bool(false)),
            Ty::Null => converts(Value::Null),
            Ty::Number | Ty::Integer => match arg {
                ArgType::Number | ArgType::String | ArgType::RelativePath => true,
                ArgType::Boolean => false,
                ArgType::Enum => spec.values.iter().any(|v| match v {
                    Value::Number(n) => *m == Ty::Number || n.fract() == 0.0,
                    _ => false,
                }),
            },
            // Containers are JS-formatted into strings and convert to nothing else.
            Ty::Array(_) | Ty::Object(_) => {
                matches!(arg, ArgType::String | ArgType::RelativePath)
            }
            Ty::Union(_) => true,
        };
        if may {
            return true;
        }
        known = true;
    }
    !known
}

/// What the argument takes, after `must`: `be a number`, `be one of "fast", "slow"`.
fn expected(spec: &ArgSpec) -> String {
    match spec.ty {
        Some(ArgType::Number) => "be a number".into(),
        Some(ArgType::Boolean) => "be true or false".into(),
        Some(ArgType::Enum) => format!("be one of {}", enum_list(spec)),
        Some(ArgType::RelativePath) => "be a relative path".into(),
        Some(ArgType::String) | None => "be a string".into(),
    }
}

/// The declaration as the label says it: `number`, `enum "fast", "slow"`.
fn declared_type(spec: &ArgSpec) -> String {
    match spec.ty {
        Some(ArgType::Number) => "number".into(),
        Some(ArgType::Boolean) => "boolean".into(),
        Some(ArgType::Enum) => format!("enum {}", enum_list(spec)),
        Some(ArgType::RelativePath) => "relative-path".into(),
        Some(ArgType::String) => "string".into(),
        None => "untyped".into(),
    }
}

#[cfg(test)]
mod tests;
