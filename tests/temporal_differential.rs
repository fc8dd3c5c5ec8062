//! The runtime scenarios run locally and on Temporal (two workers) give equal records,
//! ignoring ids, timestamps and durations.
#![cfg(feature = "temporal")]

mod temporal_env;

use temporal_env::*;

const SCENARIOS: &[(&str, &str)] = &[
    (
        "chain",
        r#"{"name": "chain", "phases": [{"id": "a", "task": "one"},
            {"id": "b", "dependsOn": ["a"], "task": "two {steps.a.output}"},
            {"id": "c", "dependsOn": ["b"], "task": "three {steps.b.output}"}]}"#,
    ),
    (
        "map",
        r#"{"name": "map", "phases": [{"id": "list", "output": "json", "task": "LIST files"},
            {"id": "each", "type": "map", "over": "{steps.list.json}", "dependsOn": ["list"],
             "concurrency": 2, "task": "look at {item}"},
            {"id": "sum", "dependsOn": ["each"], "task": "sum up {steps.each.output}"}]}"#,
    ),
    (
        "gate",
        r#"{"name": "gate", "phases": [{"id": "implement", "task": "Implement."},
            {"id": "quality", "type": "gate", "onBlock": "retry", "retry": {"max": 3, "backoffMs": 10},
             "dependsOn": ["implement"], "task": "Check {steps.implement.output}. VERDICT?"}]}"#,
    ),
    (
        "retry",
        r#"{"name": "retry", "phases": [{"id": "f", "retry": {"max": 1, "backoffMs": 20},
            "task": "FLAKY work"}, {"id": "g", "dependsOn": ["f"], "task": "after {steps.f.output}"}]}"#,
    ),
    (
        "when",
        r#"{"name": "when", "args": {"mode": {"default": "fast"}}, "phases": [
            {"id": "t", "task": "triage"},
            {"id": "fast", "dependsOn": ["t"], "when": "{args.mode} == fast", "task": "quick"},
            {"id": "deep", "dependsOn": ["t"], "when": "{args.mode} == deep", "task": "deep"},
            {"id": "end", "dependsOn": ["fast", "deep"], "join": "any", "task": "end"}]}"#,
    ),
    (
        "race",
        r#"{"name": "race", "phases": [{"id": "r", "type": "race", "branches": [
            {"task": "SLOW:4 tortoise"}, {"task": "hare"}]}]}"#,
    ),
    (
        // The loser answers about a second after the race is decided: locally it is stopped;
        // on Temporal the cancel request reaches its activity at its next heartbeat, after it
        // has completed, and the late result must be recorded the same way.
        "race-late",
        r#"{"name": "race-late", "phases": [{"id": "r", "type": "race", "branches": [
            {"task": "SLOW:1 tortoise"}, {"task": "hare"}]}]}"#,
    ),
    (
        "loop",
        r#"{"name": "loop", "phases": [{"id": "refine", "type": "loop", "maxIterations": 4,
            "until": "{loop.iteration} >= 3", "task": "Iteration {loop.iteration}. Previous: {loop.lastOutput}"}]}"#,
    ),
    (
        "subflow",
        r#"{"name": "subflow", "phases": [
            {"id": "sub", "type": "flow", "with": {"topic": "rust"}, "def": {"args": {"topic": {"default": "x"}},
             "phases": [{"id": "inner", "task": "About {args.topic}"}]}},
            {"id": "after", "dependsOn": ["sub"], "task": "Got {steps.sub.output}"}]}"#,
    ),
    (
        "fanout",
        r#"{"name": "fanout", "args": {"xs": {"default": [1, 2, 3]}}, "phases": [
            {"id": "a", "task": "start"},
            {"id": "m", "type": "map", "dependsOn": ["a"], "over": "{args.xs}", "task": "item {item}"},
            {"id": "p", "type": "parallel", "dependsOn": ["a"], "branches": [{"task": "x"}, {"task": "y"}]},
            {"id": "r", "type": "reduce", "from": ["m", "p"], "dependsOn": ["m", "p"],
             "task": "sum {previous.output}"}]}"#,
    ),
    (
        "script",
        r#"{"name": "script", "phases": [{"id": "s", "type": "script", "run": "echo hi from $TFC_PHASE_ID"},
            {"id": "a", "dependsOn": ["s"], "task": "use {steps.s.output}"}]}"#,
    ),
    (
        "optional",
        r#"{"name": "optional", "phases": [{"id": "a", "task": "start"},
            {"id": "once", "dependsOn": ["a"], "optional": true, "idempotent": false, "task": "FLAKY once"},
            {"id": "end", "dependsOn": ["once"], "task": "end {steps.once.output}"}]}"#,
    ),
    (
        "tournament",
        r#"{"name": "tournament", "phases": [{"id": "best", "type": "tournament", "variants": 3,
            "task": "Write it", "judge": "Pick the clearest"}]}"#,
    ),
    (
        "large",
        // Outputs over 64 KiB go to files of their own (`outputFile`), on Temporal too.
        r#"{"name": "large", "args": {"pad": {"default": "PAD"}}, "phases": [
            {"id": "big", "task": "{args.pad}"},
            {"id": "end", "dependsOn": ["big"], "task": "end"}]}"#,
    ),
    (
        "expand",
        r#"{"name": "expand", "phases": [{"id": "a", "task": "start"},
            {"id": "grow", "type": "expand", "dependsOn": ["a"], "expandMode": "graft", "maxNodes": 10,
             "def": [{"id": "g", "task": "grown"}]},
            {"id": "end", "dependsOn": ["grow"], "task": "end"}]}"#,
    ),
];

#[test]
fn every_scenario_gives_the_same_record_locally_and_on_temporal() {
    let Some((server, base)) = server_in("differential") else {
        return;
    };
    let remote = project(&base.join("remote"));
    let _w1 = Worker::start(&server, &base.join("remote"), &remote, "1");
    let _w2 = Worker::start(&server, &base.join("remote"), &remote, "2");
    let pad = "0123456789abcdef".repeat(70 * 64);
    for (name, flow) in SCENARIOS {
        let flow = &flow.replace("PAD", &pad);
        let local_dir = base.join(format!("local-{name}"));
        let remote_dir = base.join(format!("remote-{name}"));
        let local_agent = project(&local_dir);
        let remote_agent = project(&remote_dir);
        // The workers answer with the agent of the remote project: each run's calls run in
        // its own directory, where the agent keeps its state.
        let _ = remote_agent;
        std::fs::write(local_dir.join("flow.json"), flow).expect("flow");
        std::fs::write(remote_dir.join("flow.json"), flow).expect("flow");
        let agent = local_agent.display().to_string();
        let local = tfc(&local_dir, &["run", "flow.json", "--agent-cmd", &agent]);
        let on_temporal = run_on(&server, &remote_dir, &local_agent);
        assert_eq!(
            (local.code, &local.stdout),
            (on_temporal.code, &on_temporal.stdout),
            "{name}: exit code and output\nlocal: {}\ntemporal: {}",
            local.stderr,
            on_temporal.stderr
        );
        let a = normalized(record(&local_dir));
        let b = normalized(record(&remote_dir));
        assert_eq!(
            a,
            b,
            "{name}: the records differ\nlocal: {}\ntemporal: {}",
            serde_json::to_string_pretty(&a).unwrap_or_default(),
            serde_json::to_string_pretty(&b).unwrap_or_default()
        );
        if *name == "large" {
            let file = b["phases"]["big"]["outputFile"]
                .as_str()
                .expect("outputFile");
            let text = std::fs::read_to_string(run_dir(&remote_dir).expect("run").join(file))
                .expect("the output's file");
            assert!(text.contains(&pad), "{name}: the output is in its file");
        }
        // The same calls were made.
        let phases = |d: &std::path::Path| {
            let mut v: Vec<String> = calls(d).into_iter().map(|c| c.0).collect();
            v.sort();
            v
        };
        assert_eq!(phases(&local_dir), phases(&remote_dir), "{name}: calls");
    }
}
