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
