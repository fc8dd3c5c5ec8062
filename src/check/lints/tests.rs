use super::*;

#[test]
fn guards_are_single_comparisons_with_a_placeholder() {
    let g = |s: &str| guard_of(s).map(|(ops, eq)| (ops.0, ops.1, eq));
    assert_eq!(
        g("{steps.t.json.severity} == high"),
        Some(("high".into(), "{steps.t.json.severity}".into(), true))
    );
    assert_eq!(
        g("(high != { steps.t.json.severity })").map(|x| x.2),
        Some(false)
    );
    assert_eq!(g("{a} == b"), g("b == {a}"));
    assert_eq!(g("{a} >= 1"), None);
    assert_eq!(g("{a} == 1 && {b} != 2"), None);
    assert_eq!(g("x == y"), None);
    assert_eq!(g("{a} =="), None);
}

mod flow_tests {
    use crate::check::testing::codes;

    const IF_ELSE: &str = r#"[
        {"id": "t", "output": "json", "task": "classify"},
        {"id": "deep", "dependsOn": ["t"], "when": "{steps.t.json.severity} == high", "task": "deep"},
        {"id": "quick", "dependsOn": ["t"], "when": "{steps.t.json.severity} != high", "task": "quick"},
        {"id": "merge", "type": "reduce", "from": ["deep", "quick"], "JOIN": "all", "task": "{previous.output}"}
    ]"#;

    #[test]
    fn if_else_joined_with_any_is_not_a_warning() {
        let joined = IF_ELSE.replace(r#""JOIN": "all""#, r#""join": "any""#);
        assert_eq!(codes(&joined), Vec::<&str>::new());
        // Waiting for both: never runs (W0105), and so the final phase is skipped (W0109).
        let waits_for_both = IF_ELSE.replace(r#""JOIN": "all""#, r#""join": "all""#);
        assert_eq!(codes(&waits_for_both), ["W0105", "W0109"]);
    }

    #[test]
    fn different_comparisons_do_not_oppose() {
        let text = IF_ELSE
            .replace("!= high", "!= low")
            .replace(r#""JOIN": "all""#, r#""join": "all""#);
        // (The merge waits for both guarded branches: W0109, not W0105.)
        assert_eq!(codes(&text), ["W0109"]);
    }
}

mod final_guarded {
    use crate::check::testing::{check, codes, find};

    fn w0109(text: &str) -> Vec<&'static str> {
        codes(text).into_iter().filter(|c| *c == "W0109").collect()
    }

    #[test]
    fn a_guard_on_every_route_to_the_final_phase_is_named() {
        let text = r#"[
            {"id": "draft", "task": "d"},
            {"id": "review", "dependsOn": ["draft"], "when": "{steps.draft.output} == ready", "task": "r"},
            {"id": "polish", "dependsOn": ["review"], "task": "p"},
            {"id": "publish", "dependsOn": ["polish"], "final": true, "task": "x"}
        ]"#;
        // A second, unguarded route to the final phase: not every route passes a guard.
        let two_routes = text.replace(
            r#""dependsOn": ["polish"]"#,
            r#""dependsOn": ["polish", "draft"]"#,
        );
        assert!(
            check(&two_routes)
                .iter()
                .all(|d| d.code.as_str() != "W0109")
        );
        let d = find(&check(text), "W0109");
        assert!(!d.is_error());
        assert_eq!(
            d.message,
            "the final phase 'publish' runs only if the 'when' of 'review' holds: otherwise it is skipped, and the run still completes, with another phase's output"
        );
        assert_eq!(
            &text[d.span.unwrap().range()],
            r#""{steps.draft.output} == ready""#
        );
        assert_eq!(d.phase.as_deref(), Some("publish"));
        assert_eq!(&text[d.labels[0].span.range()], r#""publish""#);
        assert!(d.help.unwrap().contains("\"join\": \"any\""));
        // Strict mode never promotes a graph lint.
        let strict = format!(r#"{{"strictInterpolation": true, "phases": {text}}}"#);
        assert!(!find(&check(&strict), "W0109").is_error());
    }

    #[test]
    fn the_final_phase_s_own_when_counts() {
        let text = r#"[{"id": "a", "task": "a"},
            {"id": "b", "dependsOn": ["a"], "when": "{steps.a.output} != skip", "task": "b"}]"#;
        let d = find(&check(text), "W0109");
        assert!(d.message.starts_with("the final phase 'b' has a 'when'"));
        assert_eq!(d.labels.len(), 0);
    }

    #[test]
    fn flows_that_always_reach_the_final_phase_stay_silent() {
        for text in [
            // No guard at all; a guard on a side branch that is not final.
            r#"[{"id": "a", "task": "a"}, {"id": "b", "dependsOn": ["a"], "task": "b"}]"#,
            r#"[{"id": "a", "task": "a"},
                {"id": "side", "dependsOn": ["a"], "when": "{steps.a.output} == x", "task": "s"},
                {"id": "b", "dependsOn": ["a", "side"], "join": "any", "final": true, "task": "b"}]"#,
            // If/else routing merged with join any.
            r#"[{"id": "t", "task": "t"},
                {"id": "deep", "dependsOn": ["t"], "when": "{steps.t.output} == high", "task": "d"},
                {"id": "quick", "dependsOn": ["t"], "when": "{steps.t.output} != high", "task": "q"},
                {"id": "merge", "dependsOn": ["deep", "quick"], "join": "any", "task": "m"}]"#,
            // A `when` that cannot be false: empty, constant true, or one that does not parse
            // (fail-open).
            r#"[{"id": "a", "task": "a"}, {"id": "b", "dependsOn": ["a"], "when": " ", "task": "b"}]"#,
            r#"[{"id": "a", "task": "a"}, {"id": "b", "dependsOn": ["a"], "when": "true", "task": "b"}]"#,
            r#"[{"id": "a", "task": "a"}, {"id": "b", "dependsOn": ["a"], "when": "{steps.a.output} = x", "task": "b"}]"#,
        ] {
            assert_eq!(w0109(text), Vec::<&str>::new(), "{text}");
        }
    }

    #[test]
    fn join_any_counts_only_a_guard_shared_by_every_branch() {
        // Both branches behind the same upstream guard: the merge needs it too.
        let text = r#"[{"id": "t", "task": "t"},
            {"id": "g", "dependsOn": ["t"], "when": "{steps.t.output} == go", "task": "g"},
            {"id": "x", "dependsOn": ["g"], "when": "{steps.g.output} == x", "task": "x"},
            {"id": "y", "dependsOn": ["g"], "task": "y"},
            {"id": "merge", "dependsOn": ["x", "y"], "join": "any", "task": "m"}]"#;
        let d = find(&check(text), "W0109");
        assert!(d.message.contains("the 'when' of 'g'"), "{}", d.message);
        // A constant-false guard is a guard.
        let text = r#"[{"id": "a", "task": "a"}, {"id": "b", "dependsOn": ["a"], "when": "false", "task": "b"}]"#;
        assert_eq!(w0109(text), ["W0109"]);
    }

    /// 100 000 guarded phases in a chain: linear, not quadratic.
    #[test]
    fn long_guarded_chains_are_cheap() {
        let mut phases = vec![r#"{"id": "p0", "task": "t"}"#.to_owned()];
        for i in 1..100_000 {
            phases.push(format!(
                r#"{{"id": "p{i}", "dependsOn": ["p{}"], "when": "{{steps.p{}.output}} == ok", "task": "t"}}"#,
                i - 1,
                i - 1
            ));
        }
        let text = format!("[{}]", phases.join(","));
        let started = std::time::Instant::now();
        let d = find(&check(&text), "W0109");
        assert!(
            d.message
                .starts_with("the final phase 'p99999' has a 'when'")
        );
        assert_eq!(d.labels.len(), 3);
        assert!(started.elapsed().as_secs() < 60);
    }
}

mod join_any_reads {
    use crate::check::testing::{check, codes, find};

    fn w0110(text: &str) -> Vec<&'static str> {
        codes(text).into_iter().filter(|c| *c == "W0110").collect()
    }

    #[test]
    fn a_dependency_that_may_still_run_is_flagged_at_the_placeholder() {
        let text = r#"[{"id": "list", "task": "l"},
            {"id": "scan", "dependsOn": ["list"], "task": "s"},
            {"id": "lint", "type": "script", "dependsOn": ["list"], "run": ["true"]},
            {"id": "judge", "join": "any", "dependsOn": ["scan", "lint"], "when": "{steps.scan.output} != x",
             "task": "Judge {steps.scan.output}, {steps.list.output}, {previous.output}"}]"#;
        let diags = check(text);
        let found: Vec<_> = diags
            .iter()
            .filter(|d| d.code.as_str() == "W0110")
            .collect();
        // Once for 'scan', read in the `when` and in the task: at the first read, with a label
        // on the other (SPEC §7.5 "One mistake, one error").
        assert_eq!(found.len(), 1, "{found:#?}");
        let d = found[0];
        let when_read = text.find("{steps.scan.output} !=").unwrap();
        assert_eq!(d.span.unwrap().start as usize, when_read);
        assert_eq!(
            d.message,
            "'judge' joins \"any\" and reads {steps.scan.output}: it starts as soon as one dependency is satisfied, and 'scan' may not have finished by then (then the placeholder stays verbatim in the prompt, and is undefined in the condition)"
        );
        let task_read = text.rfind("{steps.scan.output}").unwrap();
        assert_eq!(d.labels[0].span.start as usize, task_read);
        assert_eq!(d.labels[0].message, "reads 'scan' here too (task)");
        assert_eq!(&text[d.labels[1].span.range()], r#""join""#);
        assert!(d.labels[1].message.ends_with("e.g. 'lint'"));
        assert!(
            d.help
                .as_deref()
                .unwrap()
                .starts_with("read only the dependency that triggers it")
        );
        assert!(!d.is_error());
    }

    #[test]
    fn reads_certain_to_have_finished_stay_silent() {
        for text in [
            // One dependency: join any is join all.
            r#"[{"id": "a", "task": "a"}, {"id": "b", "join": "any", "dependsOn": ["a"], "task": "{steps.a.output}"}]"#,
            // Every other dependency waits for the one read.
            r#"[{"id": "a", "task": "a"}, {"id": "b", "dependsOn": ["a"], "task": "b"},
                {"id": "c", "join": "any", "dependsOn": ["a", "b"], "task": "{steps.a.output}"}]"#,
            // ... through a join-any phase whose dependencies all wait for it.
            r#"[{"id": "a", "task": "a"}, {"id": "b", "dependsOn": ["a"], "task": "b"},
                {"id": "b2", "dependsOn": ["a"], "task": "b"},
                {"id": "m", "join": "any", "dependsOn": ["b", "b2"], "task": "{steps.a.output}"},
                {"id": "c", "join": "any", "dependsOn": ["a", "m"], "task": "{steps.a.output}"}]"#,
            // The triggering dependency through {previous.output}; join all.
            r#"[{"id": "a", "task": "a"}, {"id": "b", "task": "b"},
                {"id": "c", "join": "any", "dependsOn": ["a", "b"], "task": "{previous.output}"}]"#,
            r#"[{"id": "a", "task": "a"}, {"id": "b", "task": "b"},
                {"id": "c", "dependsOn": ["a", "b"], "task": "{steps.a.output} {steps.b.output}"}]"#,
        ] {
            assert_eq!(w0110(text), Vec::<&str>::new(), "{text}");
        }
    }

    #[test]
    fn an_ancestor_behind_one_branch_is_flagged() {
        let text = r#"[{"id": "a", "task": "a"}, {"id": "z", "task": "z"},
            {"id": "b", "dependsOn": ["z"], "task": "b"},
            {"id": "c", "join": "any", "dependsOn": ["a", "b"], "task": "{steps.z.json.x}"}]"#;
        let d = find(&check(text), "W0110");
        assert!(
            d.message.contains("'z' may not have finished"),
            "{}",
            d.message
        );
        // Reading both branches of if/else routing: the one that did not run stays literal.
        let text = r#"[{"id": "t", "task": "t"},
            {"id": "deep", "dependsOn": ["t"], "when": "{steps.t.output} == high", "task": "d"},
            {"id": "quick", "dependsOn": ["t"], "when": "{steps.t.output} != high", "task": "q"},
            {"id": "merge", "dependsOn": ["deep", "quick"], "join": "any", "task": "{steps.deep.output} {steps.quick.output}"}]"#;
        assert_eq!(w0110(text), ["W0110", "W0110"]);
    }
}
