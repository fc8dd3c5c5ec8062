use crate::check::testing::{check, find};

#[test]
fn contract_labels_point_at_keys_and_suggest_properties() {
    let text = r#"[
            {"id": "t", "output": "json", "task": "x",
             "expect": {"properties": {"severity": {"type": "string"}, "files": {"type": "array"}}}},
            {"id": "u", "dependsOn": ["t"], "task": "{steps.t.json.severty} {steps.t.json.files.length}"}
        ]"#;
    let diags = check(text);
    assert_eq!(diags.len(), 1, "{diags:#?}");
    let d = find(&diags, "W0106");
    assert_eq!(&text[d.labels[0].span.range()], r#""expect""#);
    assert_eq!(
        d.help.as_deref(),
        Some("did you mean {steps.t.json.severity}?")
    );
}

/// W0106 says what an unresolved placeholder really does: verbatim in a prompt (SPEC §4.4),
/// undefined in a condition (§6) — never "empty" text.
#[test]
fn contract_misses_say_what_happens_at_run_time() {
    let text = r#"[
            {"id": "t", "output": "json", "task": "x",
             "expect": {"properties": {"severity": {"type": "string"}}}},
            {"id": "u", "dependsOn": ["t"], "when": "{steps.t.json.level} == high",
             "task": "Fix {steps.t.json.reason}", "context": ["{steps.t.json.notes}"]}
        ]"#;
    let diags = check(text);
    let messages: Vec<&str> = diags
        .iter()
        .filter(|d| d.code.as_str() == "W0106")
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(
        messages,
        [
            "u: {steps.t.json.level} reads property 'level', which the contract does not declare (it has: severity), so it is undefined when the condition is evaluated (empty text, falsy)",
            "u: {steps.t.json.reason} reads property 'reason', which the contract does not declare (it has: severity), so it stays verbatim in the prompt at run time",
            "u: {steps.t.json.notes} reads property 'notes', which the contract does not declare (it has: severity), so it stays verbatim in the prompt at run time",
        ]
    );
    assert!(messages.iter().all(|m| !m.contains("empty at run")));
}
