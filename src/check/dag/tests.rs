use crate::check::testing::{check, codes, find};

#[test]
fn w0102_only_when_the_flow_expects_to_go_on_after_a_block() {
    let gated = |gate_extra: &str, after: &str| {
        format!(
            r#"[{{"id": "draft", "task": "d"}},
                {{"id": "g", "type": "gate", "dependsOn": ["draft"]{gate_extra}, "task": "ok? VERDICT: PASS or BLOCK"}},
                {{"id": "apply", "dependsOn": ["g"]{after}, "final": true, "task": "a"}}]"#
        )
    };
    // A gate on every path to the final phase is what a gate is for.
    assert_eq!(codes(&gated("", "")), Vec::<&str>::new());
    assert_eq!(
        codes(&gated(r#", "onBlock": "retry""#, "")),
        Vec::<&str>::new()
    );
    // optional does not survive a block.
    assert_eq!(codes(&gated(r#", "optional": true"#, "")), ["W0102"]);
    // Routing on the verdict after the gate: only a pass ever gets there.
    // (The final phase's own `when` is W0109 besides.)
    let routed = gated("", r#", "when": "{steps.g.output} == BLOCK""#);
    assert_eq!(codes(&routed), ["W0109", "W0102"]);
    assert_eq!(
        find(&check(&routed), "W0102").phase.as_deref(),
        Some("apply")
    );
    // Reading another phase, or the gate only in the task, is not routing on it.
    assert_eq!(
        codes(&gated("", r#", "when": "{steps.draft.output} == x""#)),
        ["W0109"]
    );
    // An approval that is not on every path to the final phase is not reported.
    let side = r#"[{"id": "a", "task": "x"},
            {"id": "ok", "type": "approval", "dependsOn": ["a"], "optional": true},
            {"id": "b", "dependsOn": ["a", "ok"], "join": "any", "final": true, "task": "y"}]"#;
    assert_eq!(codes(side), Vec::<&str>::new());
}

#[test]
fn w0102_for_each_gate_on_a_chain_names_every_phase_after_it_that_routes_on_it() {
    // Two gates on every path; 'mid' routes on g1 (twice: one report, its first read),
    // 'end' on both. 'draft' is before both gates and reads neither.
    let text = r#"[{"id": "draft", "task": "d"},
        {"id": "g1", "type": "gate", "dependsOn": ["draft"], "task": "ok? VERDICT"},
        {"id": "mid", "dependsOn": ["g1"], "task": "m",
         "when": "{steps.g1.output} == BLOCK || {steps.g1.output} == x"},
        {"id": "g2", "type": "gate", "dependsOn": ["mid"], "task": "ok? VERDICT"},
        {"id": "end", "dependsOn": ["g2"], "final": true, "task": "e",
         "when": "{steps.g2.output} == BLOCK && {steps.g1.output} == PASS"}]"#;
    let checked = check(text);
    let w0102: Vec<_> = checked
        .iter()
        .filter(|d| d.code.as_str() == "W0102")
        .collect();
    let said: Vec<_> = w0102
        .iter()
        .map(|d| {
            let labels: Vec<_> = d.labels.iter().map(|l| l.message.as_str()).collect();
            (d.phase.as_deref().unwrap_or(""), labels)
        })
        .collect();
    // In file order; the report's own label is its main message.
    assert_eq!(
        said,
        [
            (
                "mid",
                vec!["a block here halts the whole run", "'end' routes on it too"]
            ),
            ("end", vec!["a block here halts the whole run"]),
        ]
    );
    // The report points at the first read of the gate in the `when`.
    let first = text
        .find("{steps.g1.output} == BLOCK")
        .expect("in the text") as u32;
    assert_eq!(w0102[0].span.map(|s| s.start), Some(first));
}

#[test]
fn unreadable_edges_silence_graph_and_reference_rules() {
    // A misspelt or mistyped dependsOn: only the schema error, no dead end for 'scan'
    // and no unreachable {steps.scan…}.
    for deps in [
        r#""dependOn": ["scan"]"#,
        r#""dependsOn": "scan""#,
        r#""dependsOn": ["scan", 1]"#,
    ] {
        let text = format!(
            r#"[{{"id": "scan", "task": "list"}}, {{"id": "review", {deps}, "task": "{{steps.scan.output}}"}}]"#
        );
        let got = codes(&text);
        assert_eq!(got.len(), 1, "{deps}: {got:?}");
        assert!(got[0] == "E0003" || got[0] == "E0004", "{deps}: {got:?}");
    }
    // A phase without an id is left out: its dependents' references cannot be judged.
    let text = r#"[{"task": "no id"}, {"id": "b", "task": "{steps.x.output}"}]"#;
    assert_eq!(codes(text), ["E0109"]);
}

#[test]
fn disconnected_phases_are_not_also_dead_ends() {
    let text = r#"[
            {"id": "a", "task": "x"}, {"id": "b", "dependsOn": ["a"], "task": "y"},
            {"id": "c", "dependsOn": ["b"], "task": "z"},
            {"id": "d", "task": "x"}, {"id": "e", "dependsOn": ["d"], "task": "y", "final": true}
        ]"#;
    // 'c' is the main DAG's terminal phase but not final: a dead end. 'd' and 'e' are
    // disconnected (E0107) and not reported again.
    assert_eq!(codes(text), ["W0101", "E0107", "E0107"]);
}

#[test]
fn unknown_dependency_help_without_a_near_id() {
    let d = find(
        &check(r#"[{"id": "a", "task": "x", "dependsOn": ["zzzzzz"]}]"#),
        "E0103",
    );
    assert_eq!(
        d.help.as_deref(),
        Some("depend on the id of a phase in this flow, or remove 'zzzzzz'")
    );
}
