//! Invocation arguments against the declarations (SPEC §2.2): E0502, E0503, W0203, W0204.

use crate::diag::{Code, Diagnostic};
use crate::flow::{Flow, check_value};
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
                        .help("pass a value that fits the declaration"),
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
                        .help(format!("pass it: {}=…", spec.name)),
                    );
                }
            }
        }
    }
    for name in given.keys() {
        if !flow.args.contains_key(name) {
            let mut d = Diagnostic::new(
                Code::UndeclaredArg,
                format!("the invocation passes '{name}', which the flow does not declare"),
            )
            .help("declare it under \"args\", or drop it");
            d.span = flow.name_field.as_ref().map(|n| n.key);
            out.push(d);
        }
    }
}
