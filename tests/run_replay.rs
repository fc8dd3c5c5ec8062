//! End-to-end: a run with a store writes one journal line per machine input; reading those
//! lines back from `journal.jsonl` and feeding them into a fresh machine reproduces the
//! run's record exactly (SPEC §14.1).

mod common;

use tfc::agent::{FnAgent, Outcome, StopReason, Usage};
use tfc::run::{Interpreter, RunOptions, RunRecord, RunSettings, RunStatus, journal};
use tfc::value::Map;

/// Run `flow` with a store under a fresh project directory; check the journal replays to the
/// record; return the record.
fn run_and_replay(name: &str, flow: &str, opts: RunOptions) -> RunRecord {
    let dir = common::scratch(name);
    let opts = RunOptions {
        settings: RunSettings {
            project_root: Some(dir.clone()),
            ..opts.settings
        },
        cwd: Some(dir.clone()),
        run_id: Some(format!("{name}-run")),
        ..opts
    };
    let gate_calls = std::sync::atomic::AtomicU32::new(0);
    let interp = Interpreter::with_agent(FnAgent::new("echo", move |req| {
        if req.prompt.contains("fail") {
            return Outcome::failed(StopReason::Failed, "asked to fail");
        }
        if req.prompt.contains("VERDICT") {
            let first = gate_calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0;
            let verdict = if first {
                "VERDICT: BLOCK"
            } else {
                "VERDICT: PASS"
            };
            return Outcome::ok(verdict);
        }
        Outcome {
            usage: Usage {
                input: 3,
                output: 2,
                ..Usage::default()
            },
            ..Outcome::ok(format!("{}: {}", req.node, req.prompt))
        }
    }))
    .options(opts)
    .keep_inputs();
    let record = interp
        .eval_text(name, flow, Map::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let runs = dir.join(".tfc/runs").join(name);
    let run_dir = std::fs::read_dir(&runs)
        .expect("the flow's runs")
        .next()
        .expect("one run")
        .expect("entry")
        .path();
    let text = std::fs::read_to_string(run_dir.join("journal.jsonl")).expect("journal");
    assert!(
        text.lines()
            .next()
            .is_some_and(|l| l.contains("\"type\":\"run-start\""))
    );
    assert!(
        text.lines()
            .last()
            .is_some_and(|l| l.contains("\"type\":\"run-end\""))
    );
    let inputs = journal::inputs(&text).expect("input lines parse");
    let recorded = interp.recorded().expect("kept");
    assert_eq!(
        inputs, recorded.inputs,
        "the journal holds every input, in order"
    );
    let replayed = journal::replay(recorded.flow, recorded.args, recorded.config, &inputs)
        .expect("the journal's inputs end the run");
    assert_eq!(
        replayed, record,
        "replaying the journal gives the same record"
    );
    record
}

#[test]
fn chains_and_fan_outs_replay() {
    let flow = r#"{"args": {"xs": {"default": [1, 2, 3]}}, "phases": [
        {"id": "a", "task": "start"},
        {"id": "m", "type": "map", "dependsOn": ["a"], "over": "{args.xs}", "task": "item {item}"},
        {"id": "p", "type": "parallel", "dependsOn": ["a"], "branches": [{"task": "x"}, {"task": "y"}]},
        {"id": "r", "type": "reduce", "from": ["m", "p"], "dependsOn": ["m", "p"], "task": "sum {previous.output}"}
    ]}"#;
    let r = run_and_replay("replay-fanout", flow, RunOptions::default());
    assert_eq!(r.status, RunStatus::Completed);
}

#[test]
fn failures_gates_and_approvals_replay() {
    let flow = r#"{"phases": [
        {"id": "impl", "task": "build"},
        {"id": "g", "type": "gate", "onBlock": "retry", "retry": {"max": 2, "backoffMs": 0}, "dependsOn": ["impl"], "task": "Check. VERDICT?"},
        {"id": "opt", "dependsOn": ["g"], "optional": true, "task": "fail please"},
        {"id": "ok", "type": "approval", "dependsOn": ["opt"], "join": "any"},
        {"id": "after", "dependsOn": ["ok"], "task": "ship"},
        {"id": "sub", "type": "flow", "def": {"phases": [{"id": "inner", "task": "deep"}]}}
    ]}"#;
    let r = run_and_replay("replay-gates", flow, RunOptions::default());
    assert_eq!(r.status, RunStatus::Paused);
    let approved = RunOptions {
        settings: RunSettings {
            approve: vec!["ok".into()],
            ..RunSettings::default()
        },
        ..RunOptions::default()
    };
    let r = run_and_replay("replay-gates-approved", flow, approved);
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.reason);
}

#[test]
fn scripts_and_budgets_replay() {
    let flow = r#"{"budget": {"maxTokens": 12}, "phases": [
        {"id": "s", "type": "script", "run": "echo hi"},
        {"id": "a", "dependsOn": ["s"], "task": "one"},
        {"id": "b", "dependsOn": ["a"], "task": "two"},
        {"id": "c", "dependsOn": ["b"], "task": "three"}
    ]}"#;
    let r = run_and_replay("replay-budget", flow, RunOptions::default());
    assert_eq!(r.status, RunStatus::Paused);
    assert_eq!(r.phases["s"].output, "hi");
}
