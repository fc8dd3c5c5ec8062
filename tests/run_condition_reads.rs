//! `tfc run`: a `when` that fails to parse runs its phase (fail-open) and still records, in the
//! run record's `reads`, the phases its placeholders read before the error.

mod common;

use common::{root, scratch, tfc_in};

#[test]
fn unparsable_when_records_the_reads_before_its_error() {
    let dir = scratch("run-when-reads");
    std::fs::create_dir_all(dir.join(".tfc")).expect("create .tfc");
    let flow = r#"{"name": "reads", "phases": [
        {"id": "triage", "output": "json", "task": "Classify."},
        {"id": "other", "task": "Other."},
        {"id": "b", "dependsOn": ["triage", "other"],
         "when": "{steps.triage.json.severity}\u00a0==\u3000high {steps.other.output}",
         "task": "Go."}
    ]}"#;
    std::fs::write(dir.join("flow.json"), flow).expect("write flow");
    let agent = root().join("tests/fixtures/agents/scripted.sh");
    let out = tfc_in(
        Some(&dir),
        &[
            "run",
            "flow.json",
            "--agent-cmd",
            agent.to_str().expect("utf-8"),
            "--format",
            "json",
        ],
        b"",
    );
    assert_eq!(out.code, 0, "{out:?}");
    let record = tfc::value::parse_json(&out.stdout).expect("a run record");
    let b = record
        .as_object()
        .and_then(|r| r.get("phases"))
        .and_then(|p| p.as_object())
        .and_then(|p| p.get("b"))
        .map(|b| b.to_json())
        .unwrap_or_default();
    // Fail-open: it ran, warned, and read `triage` (before the error), not `other` (after).
    assert!(b.contains(r#""status":"done""#), "{b}");
    assert!(b.contains(r#""reads":["triage"]"#), "{b}");
    assert!(
        b.contains("when condition could not be parsed (treated as true): trailing tokens"),
        "{b}"
    );
}
