//! `tfc run`: a `when` that fails to parse runs its phase (fail-open) and still records, in the
//! run record's `reads`, the phases its placeholders read before a parser error — and none
//! after a tokenizer error, since the whole expression is tokenized before any operand is
//! resolved (SPEC §6).

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
         "when": "{steps.triage.json.severity} ==\thigh {steps.other.output}",
         "task": "Go."},
        {"id": "c", "dependsOn": ["triage", "other"],
         "when": "{steps.triage.output} >== broken",
         "task": "Go."},
        {"id": "d", "dependsOn": ["triage", "other"],
         "when": "{steps.triage.output}\u00a0== {steps.other.output}",
         "task": "Go."},
        {"id": "end", "dependsOn": ["b", "c", "d"], "final": true, "task": "End."}
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
    let phase = |id: &str| {
        record
            .as_object()
            .and_then(|r| r.get("phases"))
            .and_then(|p| p.as_object())
            .and_then(|p| p.get(id))
            .map(|b| b.to_json())
            .unwrap_or_default()
    };
    let b = phase("b");
    // Fail-open: it ran, warned, and read `triage` (before the error), not `other` (after).
    assert!(b.contains(r#""status":"done""#), "{b}");
    assert!(b.contains(r#""reads":["triage"]"#), "{b}");
    assert!(
        b.contains("when condition could not be parsed (treated as true): trailing tokens"),
        "{b}"
    );
    // A tokenizer error (here `=`, and an NBSP between tokens): fail-open, no reads.
    for (id, error) in [
        ("c", "unexpected char '='"),
        ("d", "unexpected char '\u{a0}'"),
    ] {
        let p = phase(id);
        assert!(p.contains(r#""status":"done""#), "{id}: {p}");
        assert!(p.contains(r#""reads":[]"#), "{id}: {p}");
        assert!(
            p.contains(&format!(
                "when condition could not be parsed (treated as true): {error}"
            )),
            "{id}: {p}"
        );
    }
}
