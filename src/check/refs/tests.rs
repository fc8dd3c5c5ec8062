use crate::check::testing::{check, check_args, find, spans};

#[test]
fn arg_references_without_known_arguments_warn_only_on_near_misses() {
    let text = r#"{"args": {"base": {"default": "main"}},
            "phases": [{"id": "a", "task": "{args.base} {args.bsae} {args.team}"}]}"#;
    assert_eq!(spans(text), [("W0202", "{args.bsae}".to_owned())]);
    let d = find(&check(text), "W0202");
    assert_eq!(d.help.as_deref(), Some("did you mean {args.base}?"));
}

#[test]
fn arg_references_with_known_arguments_must_resolve() {
    let text = r#"{"args": {"base": {"default": "main"}, "pr": {"description": "n"}, "team": {}},
            "phases": [{"id": "a", "task": "{args.base} {args.pr} {args.team} {args.pr}"}]}"#;
    let got: Vec<_> = check_args(text, &[("team", "x")])
        .into_iter()
        .map(|d| (d.code.as_str(), text[d.span.unwrap().range()].to_owned()))
        .collect();
    assert_eq!(got, [("W0202", "{args.pr}".to_owned())]);
    // A required typed argument that is missing is E0503 alone.
    let text = r#"{"args": {"pr": {"type": "string", "required": true}},
            "phases": [{"id": "a", "task": "{args.pr}"}]}"#;
    let got: Vec<_> = check_args(text, &[])
        .iter()
        .map(|d| d.code.as_str())
        .collect();
    assert_eq!(got, ["E0503"]);
}

#[test]
fn references_to_later_phases_do_not_suggest_a_cycle() {
    let text = r#"[{"id": "a", "task": "{steps.b.output}"}, {"id": "b", "dependsOn": ["a"], "task": "x"}]"#;
    let d = find(&check(text), "E0201");
    assert_eq!(
        d.label.as_deref(),
        Some("'b' runs after 'a' (it depends on it)")
    );
    assert!(d.labels.is_empty());
    let text = r#"[{"id": "a", "task": "x"}, {"id": "c", "task": "y"},
            {"id": "b", "dependsOn": ["a"], "task": "{steps.c.output}"}]"#;
    let d = find(&check(text), "E0201");
    assert_eq!(
        d.help.as_deref(),
        Some(r#"write "dependsOn": ["a", "c"] (or depend on a phase downstream of 'c')"#)
    );
}

#[test]
fn unknown_references_suggest_the_whole_placeholder() {
    let text = r#"[{"id": "scan", "task": "x"}, {"id": "b", "dependsOn": ["scan"], "task": "{steps.scna.json.a}"}]"#;
    let d = find(&check(text), "E0202");
    assert_eq!(d.help.as_deref(), Some("did you mean {steps.scan.json.a}?"));
    let d = find(&check(r#"{"task": "{steps.x.output}"}"#), "E0202");
    assert!(d.help.unwrap().starts_with("this flow has no other phase"));
}

#[test]
fn unknown_step_fields_are_errors_at_the_placeholder() {
    let text = r#"[{"id": "a", "output": "json", "task": "t"},
            {"id": "b", "dependsOn": ["a"], "when": "{steps.a.jsn.ok} == true",
             "task": "{steps.a.outptu} {steps.a.json.x} {steps.a.output} {steps.a} {steps.a.status} {steps}"}]"#;
    let found: Vec<(&str, String)> = spans(text)
        .into_iter()
        .filter(|(c, _)| *c == "E0208")
        .collect();
    assert_eq!(
        found,
        [
            ("E0208", "{steps.a.jsn.ok}".to_owned()),
            ("E0208", "{steps.a.outptu}".to_owned()),
            ("E0208", "{steps.a}".to_owned()),
            ("E0208", "{steps.a.status}".to_owned()),
        ]
    );
    let diags = check(text);
    let helps: Vec<&str> = diags
        .iter()
        .filter(|d| d.code.as_str() == "E0208")
        .map(|d| d.help.as_deref().unwrap_or(""))
        .collect();
    assert_eq!(helps[0], "did you mean {steps.a.json.ok}?");
    assert_eq!(helps[1], "did you mean {steps.a.output}?");
    assert!(
        helps[2].starts_with("write {steps.a.output} for its text"),
        "{}",
        helps[2]
    );
    assert!(helps[3].contains("{steps.a.json.<path>}"), "{}", helps[3]);
    assert!(
        find(&diags, "E0208")
            .message
            .starts_with("b: when references {steps.a.jsn.ok}")
    );
}

#[test]
fn a_map_may_name_its_element_loop() {
    let text = r#"[{"id": "a", "output": "json", "task": "x"},
            {"id": "m", "type": "map", "dependsOn": ["a"], "over": "{steps.a.json}", "as": "loop", "task": "{loop.name}"}]"#;
    assert_eq!(spans(text), []);
}

#[test]
fn inline_defs_cannot_see_the_outer_flow() {
    let text = r#"[{"id": "a", "task": "x"}, {"id": "f", "type": "flow", "dependsOn": ["a"],
            "def": [{"id": "in", "task": "{steps.a.output}"}]}]"#;
    let d = find(&check(text), "E0202");
    assert!(
        d.help
            .unwrap()
            .starts_with("an inline def is a flow of its own")
    );
}

#[test]
fn condition_errors_say_how_to_fix_them() {
    let text = r#"[{"id": "a", "task": "x"}, {"id": "b", "dependsOn": ["a"], "when": "{steps.a.output} = x", "task": "y"}]"#;
    let d = find(&check(text), "W0201");
    assert!(d.help.unwrap().starts_with("compare with '=='"));
    assert_eq!(&text[d.span.unwrap().range()], "=");
    // A no-break space between tokens (here escaped in the JSON string) is not a separator.
    let text = r#"[{"id": "a", "task": "x"}, {"id": "b", "dependsOn": ["a"], "when": "{steps.a.output}\u00a0== x", "task": "y"}]"#;
    let d = find(&check(text), "W0201");
    assert_eq!(
        d.message,
        "b: when does not parse: unexpected char '\u{a0}'"
    );
    assert!(
        d.help
            .unwrap()
            .starts_with("only space, tab and line breaks separate tokens")
    );
    assert_eq!(&text[d.span.unwrap().range()], "\\u00a0");
}

#[test]
fn brace_prose_is_what_the_run_leaves_intact() {
    // "{path}" matches the placeholder grammar: the run leaves it intact and warns, and so
    // does the check (W0207). JSON-looking text is no placeholder at all.
    let text = r#"[{"id": "a", "task": "Output ONLY a JSON array of {path} objects."}]"#;
    assert_eq!(spans(text), [("W0207", "{path}".to_owned())]);
    let text = r#"[{"id": "a", "task": "Output ONLY {\"path\": \"…\"} objects, or {}."}]"#;
    assert_eq!(spans(text), []);
}

#[test]
fn misspelt_heads_and_locals_are_reported_at_the_placeholder() {
    let text = r#"[
            {"id": "a", "output": "json", "task": "list {arg.dir}"},
            {"id": "m", "type": "map", "dependsOn": ["a"], "over": "{steps.a.json}", "as": "file",
             "task": "audit {fiel.path} and {item}"},
            {"id": "z", "dependsOn": ["m"], "task": "{file.path}", "when": "{steps.m.output} != {stpes.m.output}"}
        ]"#;
    // A misspelt family is W0207 in a text (the run warns about it there), W0206 in a
    // condition (where the run says nothing). (The guard also makes the final phase
    // skippable: W0109, not what this is about.)
    let found: Vec<_> = spans(text)
        .into_iter()
        .filter(|(c, _)| *c != "W0109")
        .collect();
    assert_eq!(
        found,
        [
            ("W0207", "{arg.dir}".to_owned()),
            ("W0207", "{fiel.path}".to_owned()),
            ("W0206", "{item}".to_owned()),
            ("W0206", "{file.path}".to_owned()),
            ("W0206", "{stpes.m.output}".to_owned()),
        ]
    );
}

/// A did-you-mean never offers the phase that holds the read (it would be E0203), except to a
/// loop, which may read itself.
#[test]
fn unknown_references_do_not_suggest_the_reader() {
    let text = r#"[{"id": "alpha", "task": "a"},
        {"id": "beta", "dependsOn": ["alpha"], "task": "{steps.betaa.output}"}]"#;
    let d = find(&check(text), "E0202");
    assert_eq!(
        d.help.as_deref(),
        Some("reference an existing phase: alpha")
    );
    let text = r#"[{"id": "fix", "type": "loop", "maxIterations": 2, "task": "f",
        "until": "{steps.fixx.json.passed} == true"}]"#;
    let d = find(&check(text), "E0202");
    assert_eq!(
        d.help.as_deref(),
        Some("did you mean {steps.fix.json.passed}?")
    );
    // Nor a dependency on itself (E0105).
    let text =
        r#"[{"id": "alpha", "task": "a"}, {"id": "beta", "dependsOn": ["betaa"], "task": "b"}]"#;
    let d = find(&check(text), "E0103");
    assert_eq!(
        d.help.as_deref(),
        Some("depend on the id of a phase in this flow, or remove 'betaa'")
    );
}
