//! Invocation arguments against the declarations (SPEC §2.2): E0502, E0503, E0504, W0203,
//! W0204.

use crate::diag::{Code, Diagnostic};
use crate::flow::{Flow, check_value, value_help};
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

/// Values given at invocation against the declarations.
pub fn invocation(flow: &Flow, given: &Map, out: &mut Vec<Diagnostic>) {
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
                        .help(value_help(spec)),
                    );
                }
            }
            None => {
                if spec.ty.is_some() && spec.required && spec.default.is_none() {
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
            out.push(undeclared(flow, name));
        }
    }
}

/// An invocation argument the flow does not declare. A flow that writes `args` closes the set:
/// a name outside it is a typo or a leftover, and passing it would silently change nothing, so
/// it is an error (E0504). A flow without an `args` object passes every argument through to
/// `{args.X}` (SPEC §2.2); there the name is only noted, and only in strict mode (W0203).
fn undeclared(flow: &Flow, name: &str) -> Diagnostic {
    let declared: Vec<&str> = flow.args.keys().map(String::as_str).collect();
    let near = crate::diag::did_you_mean(name, declared.iter().copied());
    let Some(key) = flow.args_key else {
        return Diagnostic::new(
            Code::UndeclaredArg,
            format!("the invocation passes '{name}', which the flow does not declare"),
        )
        .help(format!(
            "declare it under \"args\" (e.g. \"args\": {{\"{name}\": {{\"type\": \"string\"}}}}), or drop it"
        ));
    };
    let list = if declared.is_empty() {
        "the flow declares no arguments".to_owned()
    } else {
        format!("declared: {}", declared.join(", "))
    };
    let message = match near {
        Some(n) => format!("unknown argument '{name}' (did you mean '{n}'?); {list}"),
        None => format!("unknown argument '{name}'; {list}"),
    };
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
