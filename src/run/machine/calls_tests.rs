//! The call cap (`budget.maxCalls`, SPEC §8.7): the machine takes it before every call, so
//! a run never makes call N+1, whatever the concurrency; it counts items, iterations,
//! retries, judges, race branches and sub-flow calls, never cache hits; a refused call skips
//! the phase that needed it and pauses the run, and the count reaches `usage.calls`.

use std::collections::VecDeque;

use super::io::{CallRequest, ScriptEnd, ScriptOutcome};
use super::test_replies::{routine_reply, test_machine};
use super::{CallEnd, CallOutcome, Command, Config, Event, Input, UsageData};
use crate::run::record::{PhaseStatus, RunRecord, RunStatus};

/// What a driven run did: its record, the calls started (their nodes, in order), and the
/// most calls that were out at once.
struct Ran {
    record: RunRecord,
    calls: Vec<String>,
    most_at_once: usize,
}

/// An answer: prompts with `FAIL` fail with a transient error, the others answer at once.
fn answer(r: &CallRequest) -> CallEnd {
    let fail = r.prompt.contains("FAIL");
    CallEnd::Outcome(Box::new(CallOutcome {
        output: if fail {
            String::new()
        } else {
            format!("answer {}", r.node)
        },
        usage: UsageData {
            input: 1,
            output: 1,
            ..UsageData::default()
        },
        model: None,
        stop: if fail { "failed" } else { "completed" }.into(),
        error: fail.then(|| "503 service unavailable".to_owned()),
        stderr: String::new(),
        warnings: Vec::new(),
        backend: "test".into(),
        elapsed_ms: 1,
        exit_code: None,
    }))
}

/// Run `flow` under `max_calls` (and `spent` calls of earlier runs), answering the calls
/// out one at a time, oldest first, so that as many are out at once as the run allows;
/// timers fire only when no call is out (a race's deadline never comes first).
fn run_with(flow: &str, max_calls: Option<u64>, spent: u64) -> Ran {
    let cfg = Config {
        max_calls,
        spent_before: (spent > 0).then(|| crate::agent::Usage {
            calls: spent,
            ..crate::agent::Usage::default()
        }),
        ..Config::default()
    };
    let mut m = test_machine(flow, cfg);
    let mut events = VecDeque::from([Event::Start]);
    let mut timers = VecDeque::new();
    let mut out: VecDeque<(u64, CallRequest)> = VecDeque::new();
    let (mut calls, mut most_at_once, mut record) = (Vec::new(), 0, None);
    let mut at = 1_000;
    loop {
        let what = match events.pop_front() {
            Some(e) => e,
            None => match out.pop_front() {
                Some((op, request)) => Event::CallEnded {
                    op,
                    node: request.node.clone(),
                    attempt: request.attempt,
                    end: answer(&request),
                },
                None => match timers.pop_front() {
                    Some(op) => Event::TimerFired { op },
                    None => break,
                },
            },
        };
        at += 1;
        for c in m.handle(Input { at, what }) {
            if let Some(e) = routine_reply(&c) {
                events.push_back(e);
                continue;
            }
            match c {
                Command::StartCall { op, request } => {
                    calls.push(request.node.clone());
                    out.push_back((op, *request));
                    most_at_once = most_at_once.max(out.len());
                }
                Command::StartTimer { op, .. } => timers.push_back(op),
                Command::ResolveAgents { op, .. } => events.push_back(Event::AgentsResolved {
                    op,
                    run_id: "sub".into(),
                    backends: Vec::new(),
                    error: None,
                }),
                Command::StartScript { op, .. } => events.push_back(Event::ScriptEnded {
                    op,
                    result: ScriptOutcome {
                        spawn_error: None,
                        end: ScriptEnd::Exited,
                        code: 0,
                        stdout: "scripted".into(),
                        stdout_truncated: false,
                        stderr: String::new(),
                        elapsed_ms: 1,
                    },
                }),
                Command::Finish(r) => record = Some(*r),
                _ => {}
            }
        }
    }
    Ran {
        record: record.expect("the run finished"),
        calls,
        most_at_once,
    }
}

fn run(flow: &str, max_calls: u64) -> Ran {
    run_with(flow, Some(max_calls), 0)
}

const REASON: &str = "budget exceeded: calls 5 reached cap 5";

fn status(r: &Ran, id: &str) -> PhaseStatus {
    r.record.phases[id].status
}

#[test]
fn a_wide_map_makes_exactly_the_capped_calls() {
    let flow = r#"{"concurrency": 4, "args": {"xs": {"default": [0,1,2,3,4,5,6,7,8,9]}},
        "phases": [{"id": "m", "type": "map", "concurrency": 4, "over": "{args.xs}", "task": "do {item}"},
                   {"id": "after", "dependsOn": ["m"], "task": "sum"}]}"#;
    let r = run(flow, 5);
    assert_eq!(r.calls.len(), 5, "{:?}", r.calls);
    assert_eq!(r.most_at_once, 4, "the cap does not serialise the map");
    assert_eq!(r.record.status, RunStatus::Paused);
    assert_eq!(r.record.reason.as_deref(), Some(REASON));
    let m = &r.record.phases["m"];
    assert!(m.budget_truncated);
    let skipped = m
        .items
        .as_ref()
        .expect("items")
        .iter()
        .filter(|i| i.status == PhaseStatus::Skipped)
        .count();
    assert_eq!(skipped, 5);
    assert_eq!(status(&r, "after"), PhaseStatus::Skipped);
    assert_eq!(
        r.record.phases["after"].skip_reason.as_deref(),
        Some("Budget exceeded: calls 5 reached cap 5")
    );
    assert_eq!(r.record.usage.calls, 5);
}

#[test]
fn the_cap_holds_across_concurrent_phases() {
    let phases: Vec<String> = (0..8)
        .map(|i| format!(r#"{{"id": "p{i}", "task": "t{i}"}}"#))
        .collect();
    let flow = format!(r#"{{"phases": [{}]}}"#, phases.join(","));
    let r = run(&flow, 5);
    assert_eq!(r.calls.len(), 5);
    assert_eq!(r.most_at_once, 5, "eight phases at once, five calls");
    let skipped: Vec<&str> = r
        .record
        .phases
        .iter()
        .filter(|(_, p)| p.status == PhaseStatus::Skipped)
        .map(|(id, p)| {
            assert_eq!(
                p.skip_reason.as_deref(),
                Some("Budget exceeded: calls 5 reached cap 5")
            );
            id.as_str()
        })
        .collect();
    assert_eq!(skipped, ["p5", "p6", "p7"]);
    assert_eq!(r.record.reason.as_deref(), Some(REASON));
}

#[test]
fn a_run_that_needs_no_more_calls_than_the_cap_completes() {
    let flow = r#"{"phases": [{"id": "a", "task": "x"}, {"id": "b", "dependsOn": ["a"], "task": "y"},
        {"id": "s", "type": "script", "dependsOn": ["b"], "run": "echo hi"}]}"#;
    let r = run(flow, 2);
    assert_eq!(r.calls.len(), 2);
    assert_eq!(
        r.record.status,
        RunStatus::Completed,
        "{:?}",
        r.record.reason
    );
    assert_eq!(status(&r, "s"), PhaseStatus::Done, "a script needs no call");
    assert_eq!(r.record.usage.calls, 2);
}

#[test]
fn every_retry_is_a_call() {
    // The transient layer would make four attempts: the cap stops at three, and the call
    // ends with its last failure.
    let flow = r#"{"phases": [{"id": "a", "task": "FAIL"}, {"id": "b", "dependsOn": ["a"], "task": "y"}]}"#;
    let r = run(flow, 3);
    assert_eq!(r.calls, ["a", "a", "a"]);
    let a = &r.record.phases["a"];
    assert_eq!(a.attempts, 3);
    assert_eq!(a.status, PhaseStatus::Failed);
    assert_eq!(r.record.status, RunStatus::Paused);
    assert_eq!(
        r.record.reason.as_deref(),
        Some("budget exceeded: calls 3 reached cap 3")
    );
}

#[test]
fn a_loop_stops_before_the_iteration_past_the_cap() {
    let flow = r#"{"phases": [{"id": "l", "type": "loop", "maxIterations": 10, "convergence": false,
        "until": "false", "task": "iterate {loop.iteration}"}]}"#;
    let r = run(flow, 4);
    assert_eq!(r.calls, ["l@1", "l@2", "l@3", "l@4"]);
    let l = &r.record.phases["l"];
    assert_eq!(l.status, PhaseStatus::Done);
    assert!(l.budget_truncated);
    assert_eq!(l.loop_info.as_ref().map(|i| i.stop), Some("budget"));
    assert_eq!(r.record.status, RunStatus::Paused);
}

#[test]
fn race_branches_past_the_cap_are_not_started() {
    let flow = r#"{"phases": [{"id": "first", "task": "x"},
        {"id": "r", "type": "race", "dependsOn": ["first"],
         "branches": [{"task": "a"}, {"task": "b"}, {"task": "c"}]}]}"#;
    let r = run(flow, 3);
    assert_eq!(r.calls, ["first", "r#0", "r#1"]);
    let race = &r.record.phases["r"];
    assert_eq!(race.status, PhaseStatus::Done);
    assert!(race.budget_truncated);
    let items: Vec<PhaseStatus> = race
        .items
        .as_ref()
        .expect("items")
        .iter()
        .map(|i| i.status)
        .collect();
    assert_eq!(items[2], PhaseStatus::Skipped);
    assert_eq!(r.record.status, RunStatus::Paused);
    // With no room for any branch, the race is skipped.
    let r = run(flow, 1);
    assert_eq!(r.calls, ["first"]);
    assert_eq!(status(&r, "r"), PhaseStatus::Skipped);
    assert_eq!(
        r.record.phases["r"].skip_reason.as_deref(),
        Some("Budget exceeded: calls 1 reached cap 1")
    );
}

#[test]
fn a_sub_flow_shares_its_parents_count() {
    let flow = r#"{"phases": [{"id": "a", "task": "x"},
        {"id": "sub", "type": "flow", "dependsOn": ["a"], "def": {"name": "inner", "phases": [
            {"id": "i1", "task": "one"}, {"id": "i2", "task": "two"}, {"id": "i3", "task": "three"}]}},
        {"id": "z", "dependsOn": ["sub"], "task": "z"}]}"#;
    let r = run(flow, 3);
    assert_eq!(r.calls, ["a", "sub/i1", "sub/i2"]);
    assert_eq!(r.record.status, RunStatus::Paused);
    assert_eq!(
        r.record.reason.as_deref(),
        Some("budget exceeded: calls 3 reached cap 3")
    );
    assert_eq!(
        r.record.usage.calls, 3,
        "the sub-flow's calls are the run's"
    );
    let all = run_with(flow, None, 0);
    assert_eq!(all.calls.len(), 5);
    assert_eq!(all.record.usage.calls, 5);
    assert_eq!(all.record.status, RunStatus::Completed);
}

#[test]
fn calls_of_earlier_runs_count_against_the_cap() {
    let flow = r#"{"phases": [{"id": "a", "task": "x"}, {"id": "b", "task": "y"}, {"id": "c", "task": "z"}]}"#;
    let r = run_with(flow, Some(5), 3);
    assert_eq!(r.calls.len(), 2);
    assert_eq!(r.record.usage.calls, 2, "its own calls");
    assert_eq!(
        r.record.reason.as_deref(),
        Some("budget exceeded: calls 5 reached cap 5")
    );
}

#[test]
fn without_a_cap_the_calls_are_counted() {
    let flow = r#"{"phases": [{"id": "a", "task": "FAIL"}, {"id": "b", "task": "y"}]}"#;
    let r = run_with(flow, None, 0);
    // Four attempts of `a` (the transient layer), one of `b`.
    assert_eq!(r.calls.len(), 5);
    assert_eq!(r.record.usage.calls, 5);
    assert_eq!(
        r.record.usage.to_value().to_json(),
        r#"{"input":5,"output":5,"cacheRead":0,"cacheWrite":0,"costUSD":null,"turns":0,"calls":5}"#
    );
}

#[test]
fn gate_rework_rounds_are_calls() {
    // Every answer lacks a verdict: the gate blocks, and each rework round re-runs `a` and
    // asks the gate again; the round past the cap is not started and the last block stands.
    let flow = r#"{"phases": [{"id": "a", "task": "draft"},
        {"id": "g", "type": "gate", "dependsOn": ["a"], "onBlock": "retry", "retry": {"max": 5},
         "task": "check {steps.a.output}"}]}"#;
    let r = run(flow, 4);
    assert_eq!(r.calls, ["a", "g", "a", "g"]);
    assert_eq!(
        r.record.status,
        RunStatus::Blocked,
        "a block outranks the budget"
    );
    assert_eq!(r.record.usage.calls, 4);
}
