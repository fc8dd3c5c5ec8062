//! SPEC §7.5 "One mistake, one error" for map elements: a wrong `{item.F}` (or `{item.0}` on
//! an object item) is reported once, at the read, naming the item type and the contract that
//! fixed it — not the map.

use crate::check::testing::check;
use crate::diag::Diagnostic;

/// A list phase whose contract types the map's items as `object{path}`.
const SCAN: &str = r#"{"id": "scan", "task": "list", "output": "json",
    "expect": {"type": "array", "items": {"type": "object", "required": ["path"],
               "properties": {"path": {"type": "string"}}}}}"#;

fn type_diags(task: &str) -> (String, Vec<Diagnostic>) {
    let text = format!(
        r#"[{SCAN}, {{"id": "each", "type": "map", "dependsOn": ["scan"], "over": "{{steps.scan.json}}", "task": "{task}"}}]"#
    );
    let diags = check(&text)
        .into_iter()
        .filter(|d| matches!(d.code.as_str(), "W0106" | "E0209"))
        .collect();
    (text, diags)
}

#[test]
fn a_wrong_item_property_names_the_item_type_and_its_contract() {
    let (text, diags) = type_diags("Review {item.pth}, then {item.pth} again.");
    assert_eq!(diags.len(), 1, "{diags:#?}");
    let d = &diags[0];
    assert_eq!(
        d.message,
        "each: {item.pth} reads property 'pth' of the item (object{path}), which the contract of 'scan' does not declare (it has: path): it resolves only if the agent happens to emit 'pth', else the placeholder stays verbatim in the prompt at run time"
    );
    assert_eq!(&text[d.span.unwrap().range()], "{item.pth}");
    assert_eq!(
        d.help.as_deref(),
        Some(
            "did you mean {item.path}? If 'pth' is meant, add \"pth\" under \"properties\" of the contract of 'scan'"
        )
    );
    // The contract's declaration of the item, then the repeated read.
    assert_eq!(d.labels.len(), 2, "{d:#?}");
    assert_eq!(&text[d.labels[0].span.range()], r#""items""#);
    assert_eq!(
        d.labels[0].message,
        "the contract of 'scan' declares the item here, without 'pth'"
    );
    assert_eq!(d.labels[1].message, "the same read (task)");
    assert!(!d.message.contains("map 'each'"), "{}", d.message);
}

#[test]
fn an_index_on_an_object_item_names_the_contract() {
    let (_, diags) = type_diags("Review {item.0}.");
    assert_eq!(diags.len(), 1, "{diags:#?}");
    let d = &diags[0];
    assert_eq!(
        d.message,
        "each: {item.0} indexes the item (object{path}) with 0, but the contract of 'scan' types it as an object, not an array, so the placeholder stays verbatim in the prompt at run time"
    );
    assert_eq!(
        d.help.as_deref(),
        Some(
            "fix the path: read one of its properties (path), or type it as an array in the contract of 'scan'"
        )
    );
}

#[test]
fn a_path_past_a_string_item_names_the_item() {
    let text = r#"[{"id": "scan", "task": "list", "output": "json",
        "expect": {"type": "array", "items": {"type": "string"}}},
        {"id": "each", "type": "map", "dependsOn": ["scan"], "over": "{steps.scan.json}", "task": "Review {item.path}."}]"#;
    let d = crate::check::testing::find(&check(text), "E0209");
    assert_eq!(
        d.message,
        "each: task reads {item.path}, which never resolves: the item of map 'each' is a string, which has no 'path'"
    );
    assert_eq!(
        d.labels[0].message,
        "the contract of 'scan' declares the item here as a string"
    );
}

/// W0107 speaks of an array *property* (not of the JSON Schema keyword `items`), in both its
/// message and its help.
#[test]
fn w0107_names_array_properties() {
    let text = r#"[{"id": "scan", "task": "list", "output": "json",
        "expect": {"type": "object", "properties": {"total": {"type": "number"}}}},
        {"id": "each", "type": "map", "dependsOn": ["scan"], "over": "{steps.scan.json}", "task": "Fix {item}."}]"#;
    let d = crate::check::testing::find(&check(text), "W0107");
    assert!(
        d.message
            .contains("with no array property named items, results, list, data or findings,"),
        "{}",
        d.message
    );
    assert_eq!(
        d.help.as_deref(),
        Some(
            r#"declare the list as a property of the contract, e.g. "properties": {"items": {"type": "array"}}, or point 'over' at an array"#
        )
    );
}
