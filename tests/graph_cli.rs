//! `tfc graph` end to end (SPEC §11.3): the whole chart of a flow, marked problems, exit codes.

mod common;

use common::{scratch, tfc_in};

const REVIEW: &str = r#"{
  // A small review flow: every edge style and a sub-flow.
  "name": "review",
  "phases": [
    {"id": "triage", "output": "json", "task": "Classify the PR. Output JSON {severity, reason}."},
    {"id": "deep", "dependsOn": ["triage"], "agent": "reviewer",
     "when": "{steps.triage.json.severity} == \"high\"",
     "task": "Deep-dive. Reason: {steps.triage.json.reason}"},
    {"id": "quick", "dependsOn": ["triage"],
     "when": "{steps.triage.json.severity} != \"high\"",
     "task": "Write a one-paragraph summary."},
    {"id": "tests", "type": "flow", "dependsOn": ["triage"], "def": {"phases": [
      {"id": "unit", "type": "script", "run": ["cargo", "test"]},
      {"id": "report", "dependsOn": ["unit"], "task": "Summarise {steps.unit.output}"}
    ]}},
    {"id": "summary", "type": "reduce", "join": "any", "from": ["deep", "quick"], "dependsOn": ["tests"],
     "task": "Combine {previous.output}", "final": true},
    {"id": "notes", "dependsOn": ["triage"], "task": "Take notes."}
  ]
}
"#;

const REVIEW_CHART: &str = r##"flowchart TD
    p_triage["triage<br/>agent"]
    p_deep["deep<br/>agent · reviewer"]
    p_quick["quick<br/>agent"]
    p_tests[("tests<br/>flow")]
    p_summary[\"summary<br/>reduce"/]
    p_notes["notes<br/>agent"]
    subgraph p_tests_def["tests (inline)"]
        p_tests__unit("unit<br/>script")
        p_tests__report["report<br/>agent"]
        p_tests__unit --> p_tests__report
    end
    p_triage -->|"when: {steps.triage.json.severity} == #quot;high#quot;"| p_deep
    p_triage -->|"when: {steps.triage.json.severity} != #quot;high#quot;"| p_quick
    p_triage --> p_tests
    p_tests -.-> p_summary
    p_deep -.-> p_summary
    p_quick -.-> p_summary
    p_triage --> p_notes
    classDef error fill:#fdd,stroke:#c00
    classDef warning fill:#ffd,stroke:#b80
    classDef final stroke-width:3px
    class p_notes warning
    class p_summary,p_tests__report final
%% W0101 Phase 'notes' is a terminal phase (no dependents) but not marked as 'final'. Its output will be discarded.
"##;

/// Write `files` into a fresh scratch directory and run `tfc args…` there.
fn graph(dir: &str, files: &[(&str, &str)], args: &[&str]) -> common::Outcome {
    let cwd = scratch(dir);
    for (name, text) in files {
        std::fs::write(cwd.join(name), text).expect("write flow");
    }
    tfc_in(Some(&cwd), args, b"")
}

#[test]
fn chart_of_a_flow_with_warnings() {
    let out = graph(
        "graph-review",
        &[("review.jsonc", REVIEW)],
        &["graph", "review.jsonc"],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, REVIEW_CHART);
    // The warning is rendered on stderr too.
    assert!(out.stderr.contains("W0101"), "{}", out.stderr);
}

#[test]
fn left_to_right() {
    let out = graph(
        "graph-lr",
        &[("review.json", REVIEW)],
        &["graph", "review.json", "--direction", "lr"],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout,
        REVIEW_CHART.replacen("flowchart TD", "flowchart LR", 1)
    );
}

#[test]
fn check_errors_still_draw_the_chart_marked() {
    let flow = r#"[
  {"id": "a", "task": "x"},
  {"id": "b", "dependsOn": ["a", "c"], "task": "y"},
  {"id": "c", "dependsOn": ["b"], "task": "{steps.b.output}"},
  {"id": "d", "dependsOn": ["a"], "task": "{item}", "final": true}
]"#;
    let out = graph(
        "graph-errors",
        &[("bad.json", flow)],
        &["graph", "bad.json"],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stdout,
        r#"flowchart TD
    p_a["a<br/>agent"]
    p_b["b<br/>agent"]
    p_c["c<br/>agent"]
    p_d["d<br/>agent"]
    p_a --> p_b
    p_c --> p_b
    p_b --> p_c
    p_a --> p_d
    classDef error fill:#fdd,stroke:#c00
    classDef warning fill:#ffd,stroke:#b80
    classDef final stroke-width:3px
    class p_b error
    class p_d warning
    class p_d final
%% E0104 Dependency cycle detected: b -> c -> b
%% W0206 d: task uses {item}, but {item} is bound only inside a map phase
"#
    );
    assert!(out.stderr.contains("E0104"), "{}", out.stderr);
}

#[test]
fn documents_that_are_not_flows_print_only_diagnostics() {
    let out = graph(
        "graph-syntax",
        &[("s.json", "{\"phases\": [")],
        &["graph", "s.json"],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("E0001"), "{}", out.stderr);

    let out = graph(
        "graph-not-a-flow",
        &[("n.json", "42")],
        &["graph", "n.json"],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("E0006"), "{}", out.stderr);
}

#[test]
fn usage_and_unreadable_files_exit_2() {
    let out = graph("graph-missing", &[], &["graph", "missing.json"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("cannot read flow"), "{}", out.stderr);

    let out = graph(
        "graph-bad-dir",
        &[("f.json", r#"[{"id": "a", "task": "x"}]"#)],
        &["graph", "f.json", "--direction", "up"],
    );
    assert_eq!(out.code, 2, "{out:?}");

    let out = graph("graph-no-arg", &[], &["graph"]);
    assert_eq!(out.code, 2, "{out:?}");
}
