//! Invocation arguments against the declarations (SPEC §2.2): E0502, E0503, W0203, W0204.

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
            let mut d = Diagnostic::new(
                Code::UndeclaredArg,
                format!("the invocation passes '{name}', which the flow does not declare"),
            );
            let near = crate::diag::did_you_mean(name, flow.args.keys().map(String::as_str));
            if let Some(key) = flow.args_key {
                let declared: Vec<&str> = flow.args.keys().map(String::as_str).collect();
                let label = if declared.is_empty() {
                    "declares no arguments".to_owned()
                } else {
                    format!("declares only: {}", declared.join(", "))
                };
                d = d.at(key).with_label(label);
            }
            d = d.help(match near {
                Some(n) => format!(
                    "did you mean '{n}'? Otherwise declare '{name}' under \"args\", or drop it"
                ),
                None => format!("declare '{name}' under \"args\", or drop it"),
            });
            out.push(d);
        }
    }
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
    fn undeclared_arguments_point_at_the_declarations() {
        let text = r#"{"strictInterpolation": true, "args": {"pr": {}}, "phases": [{"id": "a", "task": "{args.pr}"}]}"#;
        let d = find(&check_args(text, &[("pr", "1"), ("rp", "2")]), "W0203");
        assert_eq!(&text[d.span.unwrap().range()], r#""args""#);
        assert_eq!(d.label.as_deref(), Some("declares only: pr"));
        assert!(d.help.unwrap().starts_with("did you mean 'pr'?"));
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
