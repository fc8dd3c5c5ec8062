use crate::check::testing::{check, spans};

fn w0207(text: &str) -> Vec<(String, String)> {
    check(text)
        .into_iter()
        .filter(|d| d.code.as_str() == "W0207")
        .map(|d| {
            (
                text[d.span.unwrap().range()].to_owned(),
                d.help.unwrap_or_default(),
            )
        })
        .collect()
}

#[test]
fn refs_no_run_resolves_are_reported_with_their_fix() {
    let text = r#"{"args": {"answer": {"type": "string"}}, "phases": [
        {"id": "scan", "task": "x"},
        {"id": "b", "dependsOn": ["scan"], "task": "{answer} {previous.outptu} {previous} {scan} {scan.files} {0} {-x} {prevous.output} {scna}"}]}"#;
    let found = w0207(text);
    let helps: Vec<(&str, &str)> = found
        .iter()
        .map(|(s, h)| (s.as_str(), h.as_str()))
        .collect();
    assert_eq!(
        helps,
        [
            ("{answer}", "did you mean {args.answer}?"),
            (
                "{previous.outptu}",
                "did you mean {previous.output}? (the output of the dependency that ran last)"
            ),
            (
                "{previous}",
                "did you mean {previous.output}? (the output of the dependency that ran last)"
            ),
            ("{scan}", "did you mean {steps.scan.output}?"),
            ("{scan.files}", "did you mean {steps.scan.json.files}?"),
            ("{0}", helps[5].1),
            ("{-x}", helps[5].1),
            ("{prevous.output}", "did you mean {previous.output}?"),
            ("{scna}", "did you mean {steps.scan.output}?"),
        ]
    );
    assert!(helps[5].1.starts_with("a placeholder starts with"));
    let d = check(text)
        .into_iter()
        .find(|d| d.code.as_str() == "W0207")
        .unwrap();
    assert_eq!(
        d.message,
        "b: unresolved refs in task: {answer} — left intact (check dependsOn / placeholder spelling)"
    );
}

#[test]
fn families_locals_json_and_conditions_are_left_alone() {
    let text = r#"[
        {"id": "a", "output": "json", "task": "Reply {\"k\": 1} as JSON; {steps.a} { answer }"},
        {"id": "m", "type": "map", "dependsOn": ["a"], "over": "{steps.a.json}", "as": "file",
         "task": "{file.path} {previous.output} {args.x}"},
        {"id": "z", "dependsOn": ["m"], "when": "{answer} == 1", "task": "{file} {item} {loop.iteration} {steps.m.output}",
         "cwd": "{args.dir}"}
    ]"#;
    assert_eq!(w0207(text), []);
}

#[test]
fn once_per_field_and_a_shell_variable_gets_its_own_help() {
    let text = r#"[{"id": "s", "type": "script", "run": ["sh", "-c", "echo ${HOME}", "{HOME}"],
        "input": "{answer} {answer}"}]"#;
    let found = w0207(text);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].0, "{HOME}");
    assert!(
        found[0].1.contains("write $HOME without braces"),
        "{found:?}"
    );
    assert_eq!(found[1].0, "{answer}");
}

/// A name that is both an argument and a phase: both fixes, the first one alone before the
/// `?` (what an editor's quick fix takes).
#[test]
fn an_argument_and_a_phase_of_one_name() {
    let text = r#"{"args": {"scan": {"type": "string"}}, "phases": [
        {"id": "scan", "task": "x"}, {"id": "b", "dependsOn": ["scan"], "task": "{scan}"}]}"#;
    assert_eq!(
        w0207(text)[0].1,
        "did you mean {args.scan}? (or {steps.scan.output})"
    );
}

#[test]
fn a_phase_is_not_offered_to_itself() {
    let text = r#"[{"id": "scan", "task": "x"}, {"id": "betas", "task": "y"},
        {"id": "beta", "dependsOn": ["scan", "betas"], "task": "{beta} {betaa}"}]"#;
    let found = w0207(text);
    assert_eq!(found.len(), 2, "{found:?}");
    // Not itself; and its own id is no misspelling of 'betas'.
    assert!(
        found[0].1.starts_with("a placeholder starts with"),
        "{found:?}"
    );
    assert_eq!(found[1].1, "did you mean {steps.betas.output}?");
    assert_eq!(spans(text).len(), 2);
}
