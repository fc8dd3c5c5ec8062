use super::*;

#[test]
fn relative_paths() {
    for ok in ["src", "src/lib.rs", "a/b-c/d_e.txt", ".hidden/x"] {
        assert_eq!(check_relative_path(ok), Ok(()), "{ok}");
    }
    for bad in [
        "", "/abs", "C:/x", "a\\b", "a//b", "./a", "a/../b", "a.", "a ", "CON", "nul.txt", "com1",
        "a?b", "a\u{1}",
    ] {
        assert!(check_relative_path(bad).is_err(), "{bad:?}");
    }
}

/// A flow declaring `version` (number ≤ 10, required), `mode` (enum with a default),
/// `dry` (boolean), `name` (string), `dir` (relative-path); it reads `{args.extra}`.
fn declaring() -> Flow {
    let text = r#"{"args": {
        "version": {"type": "number", "required": true, "maximum": 10},
        "mode": {"type": "enum", "values": ["fast", "slow", 3], "default": "fast"},
        "dry": {"type": "boolean"}, "name": {"type": "string"}, "dir": {"type": "relative-path"},
        "legacy": {}},
        "phases": [{"id": "a", "task": "{args.extra}"}]}"#;
    let lowered = crate::flow::lower_source(text, &Default::default());
    assert!(lowered.diagnostics.is_empty(), "{:?}", lowered.diagnostics);
    lowered.flow.expect("flow")
}

/// The one conversion rule (SPEC §1, §7.5): strings convert by their text into numbers,
/// booleans and enums; other values into strings are JS-formatted; the rest keep their
/// JSON type and are checked as they are.
#[test]
fn values_convert_as_k_v_pairs_do() {
    let flow = declaring();
    let conv = |name: &str, v: Value| convert_value(flow.args.get(name), v);
    let num = |n: f64| Value::Number(n);
    assert_eq!(conv("version", Value::from("5")), Ok(num(5.0)));
    assert_eq!(conv("version", Value::from(" 1e1 ")), Ok(num(10.0)));
    assert_eq!(conv("version", num(2.0)), Ok(num(2.0)));
    assert_eq!(
        conv("version", Value::from("abc")),
        Err("be a finite number, got 'abc'".into())
    );
    assert_eq!(
        conv("version", Value::from("11")),
        Err("be <= 10 (got 11)".into())
    );
    assert_eq!(
        conv("version", Value::Bool(true)),
        Err("be a number, got boolean".into())
    );
    assert_eq!(conv("mode", Value::from("slow")), Ok(Value::from("slow")));
    assert_eq!(conv("mode", Value::from("3")), Ok(num(3.0)));
    assert_eq!(conv("mode", num(3.0)), Ok(num(3.0)));
    assert!(conv("mode", Value::from("medium")).is_err());
    assert_eq!(conv("dry", Value::from("true")), Ok(Value::Bool(true)));
    assert_eq!(conv("dry", Value::Bool(false)), Ok(Value::Bool(false)));
    assert!(conv("dry", Value::from("yes")).is_err());
    assert_eq!(conv("name", num(2.5)), Ok(Value::from("2.5")));
    assert_eq!(conv("name", Value::Bool(true)), Ok(Value::from("true")));
    assert_eq!(conv("dir", num(7.0)), Ok(Value::from("7")));
    assert!(conv("dir", Value::from("/abs")).is_err());
    // Untyped and undeclared arguments take any value as it is.
    assert_eq!(conv("legacy", num(1.0)), Ok(num(1.0)));
    assert_eq!(conv("nope", Value::Null), Ok(Value::Null));
}

#[test]
fn resolve_args_applies_defaults_and_reports_each_argument_once() {
    let flow = declaring();
    let reads = |n: &str| n == "extra";
    let map = |pairs: &[(&str, Value)]| -> crate::value::Map {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect()
    };
    let args = resolve_args(
        &flow,
        map(&[("version", Value::from("4")), ("extra", Value::from("x"))]),
        reads,
    )
    .expect("fits");
    assert_eq!(args.get("version"), Some(&Value::Number(4.0)));
    assert_eq!(args.get("mode"), Some(&Value::from("fast")));
    assert_eq!(args.get("extra"), Some(&Value::from("x")));
    assert_eq!(args.get("dry"), None);
    // A bad value is E0502 alone; a missing one E0503; an unread undeclared one E0504.
    let problems = resolve_args(
        &flow,
        map(&[("version", Value::from("abc")), ("mdoe", Value::from("x"))]),
        reads,
    )
    .expect_err("does not fit");
    let found: Vec<(&str, &str)> = problems
        .iter()
        .map(|p| (p.code.as_str(), p.message.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            (
                "E0502",
                "Argument 'version' invocation must be a finite number, got 'abc'"
            ),
            (
                "E0504",
                "unknown argument 'mdoe' (did you mean 'mode'?); declared: version, mode, dry, name, dir, legacy"
            ),
        ]
    );
    let problems = resolve_args(&flow, map(&[]), reads).expect_err("missing");
    assert_eq!(problems[0].message, "Missing required argument 'version'");
    assert_eq!(problems.len(), 1);
}

/// E0502's help says how to pass a fitting value, as a `K=V` pair for an invocation and as a
/// JSON member for a sub-flow phase's `with`.
#[test]
fn value_help_writes_each_type_in_either_notation() {
    let flow = declaring();
    let help = |name: &str, n: Notation| value_help(flow.args.get(name).expect(name), n);
    let pairs = [
        ("version", "pass a number <= 10, e.g. version=10"),
        ("mode", "pass one of: mode=fast, mode=slow, mode=3"),
        ("dry", "pass dry=true or dry=false"),
        ("name", "pass a string, e.g. name=\"…\""),
        (
            "dir",
            "pass a relative path with '/' separators, e.g. dir=src/lib",
        ),
        ("legacy", "pass a string, e.g. legacy=\"…\""),
    ];
    for (name, want) in pairs {
        assert_eq!(help(name, Notation::Pair), want, "{name}");
    }
    let with = [
        (
            "version",
            "pass a number <= 10 (or a string of one), e.g. \"version\": 10",
        ),
        ("mode", "pass one of \"fast\", \"slow\", 3"),
        ("dry", "pass \"dry\": true or \"dry\": false"),
        ("name", "pass a string, e.g. \"name\": \"…\""),
        (
            "dir",
            "pass a relative path with '/' separators, e.g. \"dir\": \"src/lib\"",
        ),
        ("legacy", "pass a string, e.g. \"legacy\": \"…\""),
    ];
    for (name, want) in with {
        assert_eq!(help(name, Notation::With), want, "{name}");
    }
}
