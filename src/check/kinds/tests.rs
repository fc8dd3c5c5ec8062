use crate::check::testing::{check, codes, find, spans};

#[test]
fn ignored_fields_name_the_kinds_whose_tables_hold_them() {
    let help = |field: &str| {
        let text = format!(r#"[{{"id": "a", "task": "x", {field}}}]"#);
        find(&check(&text), "W0308").help.unwrap()
    };
    assert_eq!(
        help(r#""branches": [{"task": "y"}]"#),
        "remove it ('branches' is used by: parallel, tournament, race)"
    );
    assert_eq!(
        help(r#""def": "{steps.a.output}""#),
        "remove it ('def' is used by: flow, expand)"
    );
    assert_eq!(
        help(r#""maxNodes": 3"#),
        "remove it ('maxNodes' is used by: expand)"
    );
}

#[test]
fn string_defs_without_placeholders_must_be_definitions() {
    let def = |ty: &str, def: &str| {
        let text = format!(r#"[{{"id": "sub", "type": "{ty}", "def": {def}}}]"#);
        check(&text)
            .into_iter()
            .find(|d| d.code.as_str() == "E0308")
            .map(|d| {
                assert_eq!(&text[d.span.unwrap().range()], def);
                (d.message, d.help.unwrap_or_default())
            })
    };
    let (message, help) = def("flow", r#""review.json""#).expect("a file name");
    assert!(message.contains("does not parse as JSON"), "{message}");
    assert!(help.contains(r#""use": "review""#), "{help}");
    let (_, help) = def("expand", r#""flows/fragment.json""#).expect("a file name");
    assert!(help.contains(r#""def": {"phases": [...]}"#), "{help}");
    assert!(!help.contains("\"use\""), "{help}");
    let (_, help) = def("flow", r#""{ steps.plan.output }""#).expect("a spaced placeholder");
    assert!(help.contains(r#""def": "{steps.plan.output}""#), "{help}");
    let (message, _) = def("flow", r#""42""#).expect("a number");
    assert!(message.contains("is not a Taskflow"), "{message}");
    let (message, _) = def("flow", r#""[{\"id\": \"x\"}]""#).expect("no task");
    assert!(message.contains("fails validation ([E0301]"), "{message}");
    assert!(def("flow", r#""""#).is_some());
    // Placeholders decide at run time; a fixed valid definition is fine.
    for ok in [
        r#""{steps.plan.output}""#,
        r#""Use this plan: {steps.plan.output}""#,
        r#""{\"phases\": [{\"id\": \"x\", \"task\": \"{args.topic}\"}]}""#,
        r#""[{\"id\": \"x\", \"task\": \"t\"}]""#,
    ] {
        assert_eq!(def("flow", ok), None, "{ok}");
    }
    // Off flow/expand, 'def' is only ignored (W0308).
    assert_eq!(def("agent", r#""review.json""#), None);
}

#[test]
fn empty_required_strings_are_missing() {
    let text = r#"[{"id": "a", "task": " "},
            {"id": "l", "type": "loop", "dependsOn": ["a"], "task": "t", "until": ""},
            {"id": "g", "type": "gate", "dependsOn": ["l"], "task": "t", "eval": ["{steps.l.output} contains x", ""]},
            {"id": "p", "type": "parallel", "dependsOn": ["g"], "branches": [{"task": "x"}, {"task": ""}]}]"#;
    assert_eq!(
        spans(text),
        [
            ("E0301", r#"" ""#.to_owned()),
            ("E0301", r#""""#.to_owned()),
            ("E0301", r#""""#.to_owned()),
            ("E0301", r#""""#.to_owned()),
        ]
    );
    let diags = check(text);
    assert_eq!(
        diags[0].message,
        "a (agent) requires 'task', but 'task' is empty"
    );
    assert_eq!(
        diags[1].message,
        "l (loop) requires 'until', but 'until' is empty"
    );
    assert!(
        diags[2].message.contains("entry 1 is empty"),
        "{}",
        diags[2].message
    );
    assert_eq!(
        diags[3].label.as_deref(),
        Some("this branch's 'task' is empty")
    );
    // A gate judged by scorers needs no task, empty or not.
    let scored = r#"[{"id": "g", "type": "gate", "task": "", "score": {"target": "{args.x}", "scorers": [{"type": "contains", "value": "ok"}]}}]"#;
    assert!(!codes(scored).contains(&"E0301"), "{:?}", codes(scored));
}

#[test]
fn neutral_values_of_foreign_fields_are_only_ignored() {
    let text = r#"[{"id": "a", "task": "t", "reflexion": false},
            {"id": "s", "type": "script", "dependsOn": ["a"], "run": "true", "retry": {"max": 0}}]"#;
    assert_eq!(
        spans(text),
        [
            ("W0308", r#""reflexion""#.to_owned()),
            ("W0308", r#""retry""#.to_owned())
        ]
    );
    assert_eq!(
        find(&check(text), "W0308").message,
        "a: \"reflexion\": false has no effect on an agent phase"
    );
    // Values that ask for something stay errors; on their own types they are fine.
    let text = r#"[{"id": "a", "task": "t", "reflexion": true},
            {"id": "s", "type": "script", "dependsOn": ["a"], "run": "true", "retry": {"max": 1}},
            {"id": "l", "type": "loop", "dependsOn": ["s"], "task": "t", "until": "{loop.iteration} >= 2", "reflexion": false, "retry": {"max": 0}}]"#;
    assert_eq!(codes(text), ["E0302", "E0302"]);
}

#[test]
fn types_take_the_right_article() {
    let d = find(
        &check(r#"[{"id": "a", "task": "x", "reflexion": true}]"#),
        "E0302",
    );
    assert_eq!(d.message, "a: 'reflexion' is not allowed on an agent phase");
}

#[test]
fn ignored_fields_are_not_checked_for_references() {
    // 'until' on an agent and 'over' on an agent do nothing: only the W03xx for them.
    let text = r#"[{"id": "a", "task": "x", "until": "{steps.a.output} == x", "over": "{steps.zz.json}"}]"#;
    assert_eq!(codes(text), ["W0302", "W0308"]);
}

#[test]
fn an_invalid_cache_is_not_also_a_missing_scope() {
    let text = r#"{"incremental": true, "phases": [{"id": "a", "task": "x", "idempotent": false, "cache": {"scope": "never"}}]}"#;
    assert_eq!(codes(text), ["E0405"]);
    let text =
        r#"{"incremental": true, "phases": [{"id": "a", "task": "x", "idempotent": false}]}"#;
    assert_eq!(codes(text), ["W0305"]);
}

#[test]
fn unreferenceable_ids_get_a_suggestion() {
    let d = find(&check(r#"[{"id": "scan.v2", "task": "x"}]"#), "W0205");
    assert_eq!(
        d.help.as_deref(),
        Some("rename it using letters, digits and '-' only, e.g. \"scan-v2\"")
    );
}
