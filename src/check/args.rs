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
mod tests {
    use crate::check::testing::{check_args, find};

    const FLOW: &str = r#"{"args": {"n": {"type": "number", "maximum": 5}, "codebase": {"type": "string"}},
        "phases": [{"id": "a", "task": "{args.n} {args.codebase}"}]}"#;

    #[test]
    fn invalid_values_say_what_fits() {
        let d = find(&check_args(FLOW, &[("n", "9"), ("codebase", "x")]), "E0502");
        assert_eq!(d.message, "Argument 'n' invocation must be <= 5 (got 9)");
        assert_eq!(d.help.as_deref(), Some("pass a number <= 5, e.g. n=10"));
        assert_eq!(&FLOW[d.span.unwrap().range()], r#""n""#);
    }

    #[test]
    fn unknown_arguments_of_a_declaring_flow_are_errors() {
        let text = r#"{"args": {"pr": {}, "feature": {}}, "phases": [{"id": "a", "task": "{args.pr} {args.feature}"}]}"#;
        let diags = check_args(text, &[("pr", "1"), ("fetaure", "x")]);
        let d = find(&diags, "E0504");
        assert!(d.is_error());
        assert_eq!(
            d.message,
            "unknown argument 'fetaure' (did you mean 'feature'?); declared: pr, feature"
        );
        assert_eq!(&text[d.span.unwrap().range()], r#""args""#);
        assert_eq!(d.label.as_deref(), Some("declares only: pr, feature"));
        // Strict or not: the same error, and no W0203 beside it.
        let strict = text.replacen('{', r#"{"strictInterpolation": true, "#, 1);
        let diags = check_args(&strict, &[("pr", "1"), ("feature", "y"), ("zzz", "2")]);
        assert_eq!(
            find(&diags, "E0504").message,
            "unknown argument 'zzz'; declared: pr, feature"
        );
        assert!(diags.iter().all(|d| d.code.as_str() != "W0203"));
        // `"args": {}` declares that there are none.
        let none = r#"{"args": {}, "phases": [{"id": "a", "task": "t"}]}"#;
        let d = find(&check_args(none, &[("x", "1")]), "E0504");
        assert_eq!(
            d.message,
            "unknown argument 'x'; the flow declares no arguments"
        );
    }

    #[test]
    fn a_flow_without_declarations_accepts_any_argument() {
        let text = r#"{"phases": [{"id": "a", "task": "{args.pr}"}]}"#;
        assert!(check_args(text, &[("pr", "1"), ("other", "2")]).is_empty());
        let strict =
            r#"{"strictInterpolation": true, "phases": [{"id": "a", "task": "{args.pr}"}]}"#;
        let d = find(&check_args(strict, &[("pr", "1")]), "W0203");
        assert!(d.message.contains("'pr'"), "{}", d.message);
    }

    #[test]
    fn codebase_mismatch_leaves_the_machine_out() {
        let diags = check_args(FLOW, &[("n", "1"), ("codebase", "/elsewhere")]);
        let d = find(&diags, "W0310");
        assert!(!d.message.contains("/work/here"), "{}", d.message);
        assert!(d.span.is_some());
        // Relative or matching paths are fine.
        assert!(check_args(FLOW, &[("n", "1"), ("codebase", "/work/here")]).is_empty());
        assert!(check_args(FLOW, &[("n", "1"), ("codebase", "rel")]).is_empty());
    }
}
