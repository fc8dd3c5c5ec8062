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
    let strict = r#"{"strictInterpolation": true, "phases": [{"id": "a", "task": "{args.pr}"}]}"#;
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

#[test]
fn an_undeclared_argument_that_a_placeholder_reads_passes_through() {
    let codes = |text: &str, pairs: &[(&str, &str)]| -> Vec<String> {
        check_args(text, pairs)
            .iter()
            .map(|d| d.code.as_str().to_owned())
            .collect()
    };
    for text in [
        // A task, a `when`, one that does not parse, a gate `eval` entry, an inline def.
        r#"{"args": {"t": {}}, "phases": [{"id": "a", "task": "{args.t} {args.note}"}]}"#,
        r#"{"args": {}, "phases": [{"id": "a", "task": "x", "when": "{ args.note } == hi"}]}"#,
        r#"{"args": {}, "phases": [{"id": "a", "task": "x", "when": "{args.note} = hi"}]}"#,
        r#"{"args": {}, "phases": [{"id": "a", "type": "gate", "task": "x", "eval": ["{args.note.x} contains y"]}]}"#,
        r#"{"args": {}, "phases": [{"id": "a", "type": "flow", "def": {"phases": [{"id": "b", "task": "{args.note}"}]}}]}"#,
        // A bare `{args}` reads every argument.
        r#"{"args": {}, "phases": [{"id": "a", "task": "All: {args}"}]}"#,
    ] {
        let found = codes(text, &[("note", "hi there")]);
        assert!(!found.contains(&"E0504".to_owned()), "{text}: {found:?}");
        // An argument nothing reads is still an error.
        if !text.contains("{args}") {
            let found = codes(text, &[("note", "x"), ("nope", "1")]);
            assert_eq!(found.iter().filter(|c| *c == "E0504").count(), 1, "{text}");
        }
    }
    // Strict mode notes the pass-through at the `args` key (W0203, as an error).
    let text = r#"{"strictInterpolation": true, "args": {}, "phases": [{"id": "a", "task": "{args.note}"}]}"#;
    let d = find(&check_args(text, &[("note", "x")]), "W0203");
    assert!(d.is_error());
    assert_eq!(&text[d.span.unwrap().range()], r#""args""#);
}

/// A value that does not convert is one mistake: E0502 alone, not also E0503 for the same
/// argument (SPEC §7.5 "One mistake, one error"), whether given as a pair or positionally.
#[test]
fn a_bad_value_of_a_required_argument_is_only_e0502() {
    let text = r#"{"args": {"n": {"type": "number", "required": true}},
        "phases": [{"id": "a", "task": "{args.n}"}]}"#;
    let codes = |pairs: &[(&str, &str)]| -> Vec<&'static str> {
        check_args(text, pairs)
            .iter()
            .map(|d| d.code.as_str())
            .collect()
    };
    assert_eq!(codes(&[("n", "abc")]), ["E0502"]);
    // A value out of range is the same mistake.
    let ranged = text.replace(r#""required": true"#, r#""required": true, "maximum": 5"#);
    let diags = check_args(&ranged, &[("n", "9")]);
    let codes: Vec<&str> = diags.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes, ["E0502"]);
    // Not giving it at all is still E0503.
    let diags = check_args(text, &[]);
    assert_eq!(
        find(&diags, "E0503").message,
        "Missing required argument 'n'"
    );
    let inv = crate::flow::Invocation {
        positional: Some("abc".into()),
        ..Default::default()
    };
    let opts = crate::check::CheckOptions {
        args: Some(&inv),
        ..Default::default()
    };
    let diags = crate::check::check_source(text, &Default::default(), &opts).diagnostics;
    let codes: Vec<&str> = diags.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes, ["E0502"]);
}
