//! Scenarios for every control-flow rule, driven by in-process agents (no processes).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use super::*;
use crate::agent::{FnAgent, Outcome, Request, StopReason, Usage};
use crate::value::Value;

fn run_with(
    flow: &str,
    args: Map,
    f: impl Fn(&Request) -> Outcome + Send + Sync + 'static,
) -> RunRecord {
    eval_replayed(Interpreter::with_agent(FnAgent::new("test", f)), flow, args)
}

/// Run `flow`, then replay the run's journal of inputs (written out as journal lines and
/// read back) into a fresh machine: the record must be the same.
fn eval_replayed(interp: Interpreter, flow: &str, args: Map) -> RunRecord {
    let interp = interp.keep_inputs();
    let r = interp
        .eval_text("t", flow, args)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_replays(&interp, &r);
    r
}

/// The last run of `interp` replays to `record`, through the journal's text.
fn assert_replays(interp: &Interpreter, record: &RunRecord) {
    let recorded = interp.recorded().expect("kept inputs");
    let text: String = recorded
        .inputs
        .iter()
        .map(|i| driver::input_line(i) + "\n")
        .collect();
    let inputs = journal::inputs(&text).expect("journal lines parse");
    assert_eq!(inputs, recorded.inputs, "inputs survive the journal");
    let replayed = journal::replay(
        recorded.flow.clone(),
        recorded.args.clone(),
        recorded.config.clone(),
        &inputs,
    )
    .expect("the inputs end the run");
    assert_eq!(
        &replayed, record,
        "replaying the journal gives the same record"
    );
}

fn run(flow: &str, f: impl Fn(&Request) -> Outcome + Send + Sync + 'static) -> RunRecord {
    run_with(flow, Map::default(), f)
}

fn status(r: &RunRecord, id: &str) -> &'static str {
    r.phases[id].status.as_str()
}

#[test]
fn if_else_routing_with_join_any() {
    let flow = r#"{"phases": [
        {"id": "triage", "output": "json", "task": "Classify."},
        {"id": "deep", "when": "{steps.triage.json.severity} == high", "dependsOn": ["triage"], "task": "Deep analysis."},
        {"id": "quick", "when": "{steps.triage.json.severity} != high", "dependsOn": ["triage"], "task": "Quick summary."},
        {"id": "merge", "type": "reduce", "from": ["deep", "quick"], "join": "any", "dependsOn": ["deep", "quick"], "task": "Combine: {previous.output}"}
    ]}"#;
    let r = run(flow, |req| match req.phase_id.as_str() {
        "triage" => Outcome::ok(r#"Result: {"severity": "high"}"#),
        "deep" => Outcome::ok("DEEP"),
        _ => Outcome::ok(format!("[{}]", req.prompt)),
    });
    assert_eq!(r.status, RunStatus::Completed);
    assert_eq!(status(&r, "deep"), "done");
    assert_eq!(status(&r, "quick"), "skipped");
    assert_eq!(
        r.phases["quick"].skip_reason.as_deref(),
        Some("Condition not met: {steps.triage.json.severity} != high")
    );
    assert_eq!(r.final_output, "[Combine: DEEP]");
    assert_eq!(r.phases["merge"].reads, ["deep"]);
    assert_eq!(r.output_phase.as_deref(), Some("merge"));
}

#[test]
fn optional_failure_and_fallback() {
    let flow = r#"{"phases": [
        {"id": "enrich", "optional": true, "idempotent": false, "task": "Enrich."},
        {"id": "fallback", "when": "{steps.enrich.output} == \"[previous phase failed]\"", "dependsOn": ["enrich"], "task": "Minimal record."}
    ]}"#;
    let r = run(flow, |req| match req.phase_id.as_str() {
        "enrich" => Outcome {
            output: "partial".into(),
            ..Outcome::failed(StopReason::Failed, "upstream exploded")
        },
        _ => Outcome::ok("minimal"),
    });
    assert_eq!(r.status, RunStatus::Completed);
    assert_eq!(status(&r, "enrich"), "failed");
    assert_eq!(r.phases["enrich"].output, "partial");
    assert_eq!(
        r.phases["enrich"].error.as_deref(),
        Some("upstream exploded")
    );
    assert_eq!(
        r.phases["enrich"].attempts, 1,
        "idempotent: false ⇒ no transient retry"
    );
    assert_eq!(r.final_output, "minimal");
}

#[test]
fn non_optional_failure_cascades() {
    let flow = r#"{"phases": [
        {"id": "a", "task": "A", "retry": {"max": 0}, "idempotent": false},
        {"id": "b", "dependsOn": ["a"], "task": "B"},
        {"id": "c", "dependsOn": ["b"], "task": "C"},
        {"id": "d", "task": "independent", "final": true}
    ]}"#;
    let r = run(flow, |req| {
        if req.phase_id == "a" {
            Outcome::failed(StopReason::Failed, "boom")
        } else {
            Outcome::ok("ok")
        }
    });
    assert_eq!(r.status, RunStatus::Failed);
    assert_eq!(status(&r, "b"), "skipped");
    assert_eq!(
        r.phases["c"].skip_reason.as_deref(),
        Some("Upstream dependency not satisfied")
    );
    assert_eq!(status(&r, "d"), "done");
    assert_eq!(r.reason, None);
}

/// A skipped final phase: the fallback output stays (SPEC §8.9), and one run-level warning
/// says why, following the cascade to its cause.
#[test]
fn a_skipped_final_phase_is_explained() {
    let flow = r#"{"phases": [
        {"id": "a", "task": "A", "retry": {"max": 0}, "idempotent": false},
        {"id": "b", "dependsOn": ["a"], "task": "B"},
        {"id": "c", "dependsOn": ["b"], "task": "C", "final": true},
        {"id": "d", "task": "independent"}
    ]}"#;
    let r = run(flow, |req| match req.phase_id.as_str() {
        "a" => Outcome::failed(StopReason::Failed, "boom"),
        _ => Outcome::ok("ok"),
    });
    assert_eq!(r.output_phase.as_deref(), Some("d"));
    assert_eq!(
        FinalSkip::of(&r),
        Some(FinalSkip {
            phase: "c".into(),
            why: "its ancestor 'a' failed".into(),
            output_phase: Some("d".into()),
        })
    );
    // No phase done at all.
    let flow = r#"{"phases": [{"id": "a", "when": "no", "task": "A"}]}"#;
    let r = run(flow, |_| Outcome::ok("ok"));
    assert_eq!(
        r.warnings,
        [
            "a: final phase skipped: its when was false: no; no phase finished, so the run has no output"
        ]
    );
    // A final phase that ran, or a halt that explains itself: no such warning.
    let r = run(r#"{"phases": [{"id": "a", "task": "A"}]}"#, |_| {
        Outcome::ok("ok")
    });
    assert_eq!(FinalSkip::of(&r), None);
}

#[test]
fn transient_errors_retry_and_hard_ones_do_not() {
    let calls = std::sync::Arc::new(AtomicU32::new(0));
    let c = calls.clone();
    let flow = r#"{"phases": [{"id": "a", "task": "A", "retry": {"max": 0, "backoffMs": 0}}]}"#;
    let r = run(flow, move |_| {
        if c.fetch_add(1, Ordering::SeqCst) < 2 {
            Outcome::failed(StopReason::Failed, "HTTP 429: rate limited")
        } else {
            Outcome::ok("fine")
        }
    });
    assert_eq!(r.status, RunStatus::Completed);
    assert_eq!(r.phases["a"].attempts, 3);
    let r = run(flow, |_| {
        Outcome::failed(StopReason::Failed, "syntax error in prompt")
    });
    assert_eq!(r.phases["a"].attempts, 1);
    let flow = r#"{"phases": [{"id": "a", "task": "A", "retry": {"max": 2, "backoffMs": 0}}]}"#;
    let r = run(flow, |_| Outcome::failed(StopReason::Failed, "hard"));
    assert_eq!(
        r.phases["a"].attempts, 3,
        "explicit layer retries hard failures"
    );
    let flow = r#"{"phases": [{"id": "a", "task": "A", "idempotent": false, "retry": {"max": 0, "backoffMs": 0}}]}"#;
    let r = run(flow, |_| {
        Outcome::failed(StopReason::Failed, "503 overloaded")
    });
    assert_eq!(
        r.phases["a"].attempts, 1,
        "idempotent: false disables the transient layer"
    );
    assert!(r.phases["a"].side_effect);
}

#[test]
fn gate_blocks_the_run() {
    let flow = r#"{"phases": [
        {"id": "impl", "task": "Implement."},
        {"id": "check", "type": "gate", "dependsOn": ["impl"], "task": "Review {steps.impl.output}"},
        {"id": "ship", "dependsOn": ["check"], "task": "Ship."}
    ]}"#;
    let r = run(flow, |req| match req.phase_id.as_str() {
        "check" => {
            assert!(
                req.prompt.ends_with("VERDICT: PASS\nor\nVERDICT: BLOCK"),
                "{}",
                req.prompt
            );
            Outcome::ok("Missing tests.\nVERDICT: BLOCK")
        }
        _ => Outcome::ok("done"),
    });
    assert_eq!(r.status, RunStatus::Blocked);
    assert_eq!(r.reason.as_deref(), Some("Gate blocked"));
    assert_eq!(
        r.final_output,
        "Gate blocked the workflow.\n\nMissing tests.\nVERDICT: BLOCK"
    );
    assert_eq!(
        r.phases["ship"].skip_reason.as_deref(),
        Some("Gate blocked")
    );
    assert_eq!(r.output_phase.as_deref(), Some("check"));
    let r = run(flow, |req| {
        if req.phase_id == "check" {
            Outcome::ok(r#"{"verdict":"reject","reason":"x"}"#)
        } else {
            Outcome::ok("ok")
        }
    });
    assert_eq!(r.reason.as_deref(), Some("Gate blocked: x"));
    assert_eq!(
        r.final_output,
        "Gate blocked the workflow.\nReason: x\n\n{\"verdict\":\"reject\",\"reason\":\"x\"}"
    );
}

#[test]
fn gate_eval_fast_path() {
    let flow = r#"{"phases": [
        {"id": "lint", "task": "Lint."},
        {"id": "g", "type": "gate", "dependsOn": ["lint"], "eval": ["{steps.lint.output} contains no errors"], "task": "Judge"}
    ]}"#;
    let r = run(flow, |req| {
        assert_ne!(req.phase_id, "g", "eval passed: no LLM call");
        Outcome::ok("lint: no errors")
    });
    assert_eq!(r.final_output, "PASS (eval checks passed — no LLM call)");
    assert_eq!(r.phases["g"].attempts, 0);
}

#[test]
fn on_block_retry_reworks_direct_dependencies() {
    let rounds = std::sync::Arc::new(AtomicU32::new(0));
    let rr = rounds.clone();
    let flow = r#"{"phases": [
        {"id": "implement", "task": "Implement."},
        {"id": "quality", "type": "gate", "onBlock": "retry", "retry": {"max": 3, "backoffMs": 0}, "dependsOn": ["implement"], "task": "Check {steps.implement.output}. VERDICT: PASS or BLOCK"}
    ]}"#;
    let r = run(flow, move |req| match req.phase_id.as_str() {
        "implement" => Outcome::ok(format!("v{}", rr.load(Ordering::SeqCst))),
        _ => {
            let n = rr.fetch_add(1, Ordering::SeqCst);
            Outcome::ok(if n < 2 {
                "VERDICT: BLOCK"
            } else {
                "VERDICT: PASS"
            })
        }
    });
    assert_eq!(r.status, RunStatus::Completed, "{r:#?}");
    let g = r.phases["quality"].gate.clone().expect("gate info");
    assert_eq!((g.verdict, g.rounds), ("pass", Some(2)));
    assert_eq!(r.phases["quality"].attempts, 3);
    assert_eq!(r.phases["implement"].output, "v2");
    assert_eq!(r.phases["implement"].attempts, 3);
}

#[test]
fn loops_until_and_converge() {
    let flow = r#"{"phases": [{"id": "refine", "type": "loop", "maxIterations": 4, "until": "{loop.iteration} >= 3",
        "task": "Iteration {loop.iteration}/{loop.maxIterations}. Previous: {loop.lastOutput}"}]}"#;
    let r = run(flow, |req| {
        Outcome::ok(format!("draft {}", req.iteration.unwrap_or(0)))
    });
    let l = r.phases["refine"].loop_info.clone().expect("loop");
    assert_eq!((l.iterations, l.stop), (3, "until"));
    assert_eq!(r.final_output, "draft 3");
    let flow = r#"{"phases": [{"id": "l", "type": "loop", "until": "false", "task": "x"}]}"#;
    let r = run(flow, |_| Outcome::ok("same"));
    let l = r.phases["l"].loop_info.clone().expect("loop");
    assert_eq!((l.iterations, l.stop), (2, "converged"));
    let flow = r#"{"phases": [{"id": "l", "type": "loop", "until": "{steps.l.json.passed} == true", "output": "json", "convergence": false, "task": "x"}]}"#;
    let n = std::sync::Arc::new(AtomicU32::new(0));
    let r = run(flow, move |_| {
        Outcome::ok(format!(
            r#"{{"passed": {}}}"#,
            n.fetch_add(1, Ordering::SeqCst) >= 1
        ))
    });
    let l = r.phases["l"].loop_info.clone().expect("loop");
    assert_eq!((l.iterations, l.stop), (2, "until"));
}

#[test]
fn reflexion_feeds_back_failures() {
    let prompts = std::sync::Arc::new(Mutex::new(Vec::new()));
    let p = prompts.clone();
    let flow = r#"{"phases": [{"id": "fix", "type": "loop", "reflexion": true, "maxIterations": 3, "until": "{steps.fix.json.passed} == true",
        "output": "json", "expect": {"type": "object", "required": ["passed"]}, "retry": {"max": 0, "backoffMs": 0}, "idempotent": false, "task": "Fix it. {reflexion}"}]}"#;
    let r = run(flow, move |req| {
        p.lock().expect("lock").push(req.prompt.clone());
        match req.iteration {
            Some(1) => Outcome::ok(r#"{"oops": 1}"#),
            _ => Outcome::ok(r#"{"passed": true}"#),
        }
    });
    let prompts = prompts.lock().expect("lock");
    assert_eq!(
        prompts[0],
        "Fix it. _(first iteration — no prior feedback yet)_"
    );
    assert!(prompts[1].starts_with("Fix it. ## Reflexion: iteration 1 (prior)\n- Outcome: FAILED — output contract violated\n- Contract diagnostics:\n  - $.passed: required key is missing\n"), "{}", prompts[1]);
    assert_eq!(r.status, RunStatus::Completed);
    let l = r.phases["fix"].loop_info.clone().expect("loop");
    assert_eq!((l.iterations, l.stop, l.failures.len()), (2, "until", 1));
}

#[test]
fn map_over_a_wrapped_array() {
    let flow = r#"{"phases": [
        {"id": "discover", "task": "List files."},
        {"id": "audit", "type": "map", "over": "{steps.discover.json}", "as": "file", "dependsOn": ["discover"], "concurrency": 2, "task": "Audit {file.path}."},
        {"id": "sum", "type": "reduce", "from": ["audit"], "dependsOn": ["audit"], "task": "{previous.output}"}
    ]}"#;
    let r = run(flow, |req| match req.phase_id.as_str() {
        "discover" => {
            Outcome::ok("```json\n{\"results\": [{\"path\": \"a.rs\"}, {\"path\": \"b.rs\"}]}\n```")
        }
        "audit" => {
            assert!(req.item_index.is_some() && req.node.starts_with("audit#"));
            Outcome::ok(format!("ok {}", req.prompt))
        }
        _ => Outcome::ok(req.prompt.clone()),
    });
    assert_eq!(r.status, RunStatus::Completed);
    assert_eq!(
        r.phases["audit"].output,
        "### [1/2] default\n\nok Audit a.rs.\n\n---\n\n### [2/2] default\n\nok Audit b.rs."
    );
    assert_eq!(
        r.phases["audit"]
            .json
            .as_ref()
            .map(Value::to_json)
            .as_deref(),
        Some(r#"["ok Audit a.rs.","ok Audit b.rs."]"#)
    );
    assert_eq!(r.final_output, r.phases["audit"].output);
    let r = run(flow, |req| {
        if req.phase_id == "discover" {
            Outcome::ok("no list")
        } else {
            Outcome::ok("x")
        }
    });
    assert_eq!(
        r.phases["audit"].error.as_deref(),
        Some("map phase 'audit': 'over' ({steps.discover.json}) did not resolve to an array")
    );
}

/// An agent that answers after a delay given in the prompt (`sleep:<ms>:<answer>`), and
/// reports cancellation.
struct Sleepy;

impl crate::agent::Agent for Sleepy {
    fn name(&self) -> &str {
        "sleepy"
    }
    fn call<'a>(
        &'a self,
        req: Request,
        cancel: crate::agent::Cancel,
    ) -> crate::agent::BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let mut parts = req.prompt.splitn(3, ':');
            let (_, ms, answer) = (
                parts.next(),
                parts.next().and_then(|m| m.parse().ok()).unwrap_or(0u64),
                parts.next().unwrap_or("").to_owned(),
            );
            let slept = futures_lite::future::or(
                async {
                    smol::Timer::after(std::time::Duration::from_millis(ms)).await;
                    true
                },
                async {
                    cancel.cancelled().await;
                    false
                },
            )
            .await;
            if !slept {
                Outcome::failed(StopReason::Cancelled, "cancelled")
            } else if answer == "fail" {
                Outcome::failed(StopReason::Failed, "nope")
            } else {
                Outcome::ok(answer)
            }
        })
    }
}

#[test]
fn race_first_success_wins_and_losers_are_cancelled() {
    let flow = r#"{"phases": [{"id": "r", "type": "race", "branches": [{"task": "sleep:5000:SLOW"}, {"task": "sleep:20:FAST"}, {"task": "sleep:1:fail"}]}]}"#;
    let started = std::time::Instant::now();
    let r = eval_replayed(Interpreter::with_agent(Sleepy), flow, Map::default());
    assert!(
        started.elapsed() < std::time::Duration::from_secs(3),
        "the slow loser was cancelled"
    );
    assert_eq!(r.status, RunStatus::Completed);
    assert_eq!(r.final_output, "FAST");
    let items = r.phases["r"].items.clone().expect("items");
    assert_eq!(
        items[0].error.as_deref(),
        Some("cancelled: another branch won")
    );
    assert_eq!(items[2].error.as_deref(), Some("nope"));
}

#[test]
fn wall_timeouts_fail_without_retry() {
    let flow = r#"{"phases": [{"id": "a", "timeout": 1000, "retry": {"max": 2, "backoffMs": 0}, "task": "sleep:5000:late"}]}"#;
    let r = eval_replayed(Interpreter::with_agent(Sleepy), flow, Map::default());
    assert_eq!(
        r.phases["a"].error.as_deref(),
        Some("Phase timed out after 1000ms (subagent aborted)")
    );
    assert!(r.phases["a"].timed_out);
    assert_eq!(r.phases["a"].attempts, 1);
}

#[test]
fn abort_pauses_the_run() {
    let flow = r#"{"phases": [{"id": "a", "task": "sleep:5000:x"}, {"id": "b", "dependsOn": ["a"], "task": "y"}]}"#;
    let source = crate::agent::CancelSource::new();
    let interp = Interpreter::with_agent(Sleepy)
        .cancel_on(source.token())
        .keep_inputs();
    let invocation = Invocation::default();
    let r = smol::block_on(async {
        let run = interp.run(
            FlowSource::Text {
                name: "t".into(),
                text: flow.into(),
            },
            invocation,
        );
        let fire = async {
            smol::Timer::after(std::time::Duration::from_millis(100)).await;
            source.cancel();
            futures_lite::future::pending::<()>().await;
        };
        futures_lite::future::or(run, async {
            fire.await;
            unreachable!()
        })
        .await
    })
    .expect("runs");
    assert_eq!(r.status, RunStatus::Paused);
    assert_eq!(r.reason.as_deref(), Some("interrupted"));
    assert_eq!(r.phases["a"].error.as_deref(), Some("Aborted"));
    assert_eq!(
        r.phases["b"].skip_reason.as_deref(),
        Some("Aborted before execution")
    );
    assert_replays(&interp, &r);
}

#[test]
fn approvals_pause_or_proceed() {
    let flow = r#"{"phases": [
        {"id": "plan", "task": "Plan."},
        {"id": "ok", "type": "approval", "dependsOn": ["plan"], "task": "Deploy {steps.plan.output}?"},
        {"id": "deploy", "dependsOn": ["ok"], "task": "Deploy."},
        {"id": "docs", "task": "Docs.", "final": true}
    ]}"#;
    let r = run(flow, |_| Outcome::ok("x"));
    assert_eq!(r.status, RunStatus::Paused);
    assert_eq!(r.reason.as_deref(), Some("awaiting approval: ok"));
    assert_eq!(status(&r, "deploy"), "pending");
    assert_eq!(status(&r, "docs"), "done");
    assert!(
        r.final_output
            .starts_with("Run paused — awaiting approval: ok.\nResume with: tfc resume "),
        "{}",
        r.final_output
    );
    let opts = RunOptions {
        settings: RunSettings {
            approve: vec!["ok".into()],
            ..RunSettings::default()
        },
        ..RunOptions::default()
    };
    let rec = eval_replayed(
        Interpreter::with_agent(FnAgent::new("t", |_| Outcome::ok("x"))).options(opts),
        flow,
        Map::default(),
    );
    assert_eq!(rec.status, RunStatus::Completed);
    assert_eq!(rec.phases["ok"].output, "(approve)");
    let opts = RunOptions {
        settings: RunSettings {
            reject: vec!["ok".into()],
            ..RunSettings::default()
        },
        ..RunOptions::default()
    };
    let rec = eval_replayed(
        Interpreter::with_agent(FnAgent::new("t", |_| Outcome::ok("x"))).options(opts),
        flow,
        Map::default(),
    );
    assert_eq!(rec.status, RunStatus::Blocked);
    assert_eq!(
        rec.reason.as_deref(),
        Some("Gate blocked: Rejected by user")
    );
}

#[test]
fn budget_stops_the_run() {
    let flow = r#"{"budget": {"maxTokens": 100}, "phases": [
        {"id": "a", "task": "A"}, {"id": "b", "dependsOn": ["a"], "task": "B"}]}"#;
    let r = run(flow, |_| Outcome {
        usage: Usage {
            input: 80,
            output: 40,
            ..Usage::default()
        },
        ..Outcome::ok("spent")
    });
    assert_eq!(r.status, RunStatus::Paused);
    assert_eq!(
        r.reason.as_deref(),
        Some("budget exceeded: tokens 120 exceeded cap 100")
    );
    assert_eq!(
        r.phases["b"].skip_reason.as_deref(),
        Some("Budget exceeded: tokens 120 exceeded cap 100")
    );
    assert_eq!(
        r.final_output,
        "Budget exceeded — run halted.\nReason: tokens 120 exceeded cap 100\n\nspent"
    );
}

#[test]
fn tournament_judges_variants() {
    let flow =
        r#"{"phases": [{"id": "t", "type": "tournament", "variants": 3, "task": "Name it."}]}"#;
    let r = run(flow, |req| {
        if req.node == "t#judge" {
            assert!(
                req.prompt.contains("### Variant 2\n\nname-1"),
                "{}",
                req.prompt
            );
            Outcome::ok("The second.\nWINNER: 2")
        } else {
            Outcome::ok(format!("name-{}", req.item_index.unwrap_or(9)))
        }
    });
    assert_eq!(r.final_output, "name-1");
    assert_eq!(r.phases["t"].tournament, Some((2, 3)));
    assert_eq!(r.phases["t"].attempts, 4);
}

#[test]
fn tree_reduce_batches() {
    let flow = r#"{"phases": [
        {"id": "a", "task": "a"}, {"id": "b", "task": "b"}, {"id": "c", "task": "c"},
        {"id": "r", "type": "reduce", "from": ["a", "b", "c"], "dependsOn": ["a", "b", "c"], "reduceStrategy": "tree", "batchSize": 2, "task": "<{previous.output}>"}
    ]}"#;
    let r = run(flow, |req| {
        if req.phase_id == "r" {
            Outcome::ok(format!("R({})", req.prompt.replace('\n', " ")))
        } else {
            Outcome::ok(req.prompt.to_uppercase())
        }
    });
    assert_eq!(r.phases["r"].attempts, 3);
    assert!(
        r.final_output.starts_with("R(<### round-1-batch-1"),
        "{}",
        r.final_output
    );
}

#[test]
fn scripts_run_and_fail() {
    let flow = r#"{"phases": [
        {"id": "list", "type": "script", "run": ["sh", "-c", "printf '[1,2]\\n'"]},
        {"id": "count", "type": "script", "dependsOn": ["list"], "run": "cat; echo; exit 3", "input": "{steps.list.json.1}", "optional": true},
        {"id": "end", "dependsOn": ["count"], "task": "{steps.count.output}"}
    ]}"#;
    let r = run(flow, |req| Outcome::ok(req.prompt.clone()));
    assert_eq!(r.phases["list"].output, "[1,2]");
    assert_eq!(status(&r, "count"), "failed");
    assert_eq!(
        r.phases["count"].error.as_deref(),
        Some("Script exited with code 3")
    );
    assert_eq!(r.phases["count"].output, "2\n");
    assert_eq!(r.final_output, "[previous phase failed]");
}

#[test]
fn inline_sub_flows() {
    let flow = r#"{"phases": [
        {"id": "sub", "type": "flow", "with": {"topic": "rust"}, "def": {"args": {"topic": {"default": "x"}}, "phases": [
            {"id": "inner", "task": "About {args.topic}"}]}},
        {"id": "after", "dependsOn": ["sub"], "task": "Got {steps.sub.output}"}
    ]}"#;
    let r = run(flow, |req| {
        Outcome::ok(format!("{}|{}", req.node, req.prompt))
    });
    assert_eq!(r.phases["sub"].output, "sub/inner|About rust");
    assert_eq!(r.final_output, "after|Got sub/inner|About rust");
}

#[test]
fn when_parse_errors_fail_open_with_a_warning() {
    let flow = r#"{"phases": [{"id": "a", "when": "a == b == c", "task": "A"}]}"#;
    let checked =
        crate::check::check_source(flow, &LowerOptions::default(), &CheckOptions::default());
    assert!(!checked.has_errors());
    let r = run(flow, |_| Outcome::ok("ran"));
    assert_eq!(r.final_output, "ran");
    assert_eq!(
        r.phases["a"].warnings,
        ["when condition could not be parsed (treated as true): trailing tokens"]
    );
}

#[test]
fn unresolved_refs_are_warned_once_per_field() {
    let flow = r#"{"args": {"x": {"type": "string"}}, "phases": [{"id": "a", "task": "{args.x} {args.x} {args.y}"}]}"#;
    let r = run(flow, |req| Outcome::ok(req.prompt.clone()));
    assert_eq!(r.final_output, "{args.x} {args.x} {args.y}");
    assert_eq!(
        r.phases["a"].warnings,
        [
            "unresolved refs in task: {args.x}, {args.y} — left intact (check dependsOn / placeholder spelling)"
        ]
    );
    assert_eq!(
        r.warnings,
        [
            "a: unresolved refs in task: {args.x}, {args.y} — left intact (check dependsOn / placeholder spelling)"
        ]
    );
}

#[test]
fn invalid_flows_do_not_run() {
    let err = Interpreter::with_agent(FnAgent::new("t", |_| panic!("must not be called")))
        .eval_text(
            "t",
            r#"{"phases": [{"id": "a", "dependsOn": ["nope"], "task": "x"}]}"#,
            Map::default(),
        )
        .expect_err("invalid");
    assert!(matches!(err, RunError::Invalid { .. }), "{err:?}");
}

#[test]
fn script_timeouts_stop_the_process() {
    let flow = r#"{"phases": [{"id": "slow", "type": "script", "run": "echo started; sleep 20", "timeout": 1000}]}"#;
    let started = std::time::Instant::now();
    let r = run(flow, |_| Outcome::ok("unused"));
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(
        r.phases["slow"].error.as_deref(),
        Some("Script timed out after 1000ms")
    );
    assert_eq!(r.phases["slow"].output, "started\n");
    assert!(r.phases["slow"].timed_out);
}

#[test]
fn expand_graft_makes_fragment_phases_part_of_the_run() {
    let flow = r#"{"phases": [
        {"id": "plan", "task": "plan"},
        {"id": "x", "type": "expand", "expandMode": "graft", "dependsOn": ["plan"], "def": "{steps.plan.output}"}
    ]}"#;
    let r = run(flow, |req| match req.phase_id.as_str() {
        "plan" => Outcome::ok(
            r#"Here: [{"id": "one", "task": "first"}, {"id": "two", "dependsOn": ["one"], "task": "second {steps.one.output}"}]"#,
        ),
        _ => Outcome::ok(format!("{}={}", req.node, req.prompt)),
    });
    assert_eq!(r.status, RunStatus::Completed, "{r:#?}");
    assert_eq!(r.phases["x-one"].output, "x-one=first");
    assert_eq!(r.phases["x-two"].output, "x-two=second x-one=first");
    assert!(r.phases["x"].sub_run.is_none());
    assert_eq!(r.final_output, "x-two=second x-one=first");
}

#[test]
fn generated_flows_obey_the_dynamic_limits() {
    let flow = r#"{"phases": [
        {"id": "plan", "task": "plan"},
        {"id": "x", "type": "flow", "dependsOn": ["plan"], "def": "{steps.plan.output}"}
    ]}"#;
    let r = run(flow, |req| match req.phase_id.as_str() {
        "plan" => Outcome::ok(r#"[{"id": "evil", "type": "script", "run": "rm -rf ~"}]"#),
        _ => Outcome::ok("x"),
    });
    assert_eq!(r.phases["x"].status, PhaseStatus::Done, "fail-open");
    assert_eq!(r.phases["x"].output, "");
    assert_eq!(
        r.phases["x"].def_error.as_deref(),
        Some(
            "inline def failed validation: [E0603] phase 'evil' uses script, which a generated flow may not"
        )
    );
}

#[test]
fn a_panicking_backend_fails_the_run_instead_of_crashing_it() {
    let flow = r#"{"phases": [{"id": "a", "task": "boom"}, {"id": "m", "type": "map", "over": "{args.xs}", "dependsOn": ["a"], "task": "{item}", "optional": true}]}"#;
    let r = run(flow, |req| {
        if req.phase_id == "a" {
            panic!("backend bug")
        } else {
            Outcome::ok("x")
        }
    });
    assert_eq!(r.status, RunStatus::Failed);
    assert_eq!(
        r.reason.as_deref(),
        Some("Taskflow 't' crashed: backend bug")
    );
    assert_eq!(
        r.phases["a"].error.as_deref(),
        Some("internal error: backend bug")
    );
    let flow = r#"{"args": {"xs": {"default": [1, 2]}}, "phases": [{"id": "m", "type": "map", "over": "{args.xs}", "task": "{item}"}]}"#;
    let r = run(flow, |req| {
        if req.prompt == "2" {
            panic!("item bug")
        } else {
            Outcome::ok("fine")
        }
    });
    assert_eq!(r.status, RunStatus::Failed);
    assert_eq!(
        r.phases["m"].error.as_deref(),
        Some("default: internal error: item bug")
    );
}

#[test]
fn reworks_nest() {
    // g2's rework re-runs g1, which blocks again and reworks `impl` one level deeper.
    let (impl_calls, g1_calls, g2_calls) = (
        std::sync::Arc::new(AtomicU32::new(0)),
        std::sync::Arc::new(AtomicU32::new(0)),
        std::sync::Arc::new(AtomicU32::new(0)),
    );
    let (a, b, c) = (impl_calls.clone(), g1_calls.clone(), g2_calls.clone());
    let flow = r#"{"phases": [
        {"id": "impl", "task": "Implement."},
        {"id": "g1", "type": "gate", "onBlock": "retry", "retry": {"max": 3, "backoffMs": 0}, "dependsOn": ["impl"], "task": "Check {steps.impl.output}. VERDICT?"},
        {"id": "g2", "type": "gate", "onBlock": "retry", "retry": {"max": 2, "backoffMs": 0}, "dependsOn": ["g1"], "task": "Final check. VERDICT?"}
    ]}"#;
    let r = run(flow, move |req| match req.phase_id.as_str() {
        "impl" => Outcome::ok(format!("v{}", a.fetch_add(1, Ordering::SeqCst))),
        "g1" => Outcome::ok(if b.fetch_add(1, Ordering::SeqCst) % 2 == 0 {
            "VERDICT: BLOCK"
        } else {
            "VERDICT: PASS"
        }),
        _ => Outcome::ok(if c.fetch_add(1, Ordering::SeqCst) == 0 {
            "VERDICT: BLOCK"
        } else {
            "VERDICT: PASS"
        }),
    });
    assert_eq!(r.status, RunStatus::Completed, "{r:#?}");
    assert_eq!(r.phases["impl"].output, "v2");
    assert_eq!(
        (
            impl_calls.load(Ordering::SeqCst),
            g1_calls.load(Ordering::SeqCst),
            g2_calls.load(Ordering::SeqCst)
        ),
        (3, 4, 2)
    );
    assert_eq!(r.phases["g2"].gate.as_ref().and_then(|g| g.rounds), Some(1));
}

#[test]
fn the_stray_key_hint_reaches_the_phase_that_reads_the_json() {
    let flow = r#"{"phases": [
        {"id": "a", "task": "list"},
        {"id": "b", "dependsOn": ["a"], "task": "Use {steps.a.json}"}
    ]}"#;
    let r = run(flow, |req| match req.phase_id.as_str() {
        "a" => Outcome::ok("[{\"id\": \"D-001\"}],\n\"deferred\": [{\"id\": \"D-002\"}]"),
        _ => Outcome::ok(req.prompt.clone()),
    });
    assert_eq!(r.final_output, "Use {steps.a.json}");
    assert!(
        r.phases["b"].warnings.iter().any(|w| w.starts_with(
            "safeParse: input looks like a JSON array followed by a stray top-level key"
        )),
        "{:?}",
        r.phases["b"].warnings
    );
    assert!(r.phases["a"].warnings.is_empty());
}

#[test]
fn checked_sources_run_without_a_second_check_and_errors_do_not_become_sources() {
    use crate::check::{CheckOptions, check_source};
    let bad = r#"{"phases": [{"id": "a", "dependsOn": ["zz"], "task": "x"}]}"#;
    let checked = check_source(bad, &LowerOptions::default(), &CheckOptions::default());
    assert!(FlowSource::checked(checked, Source::new("bad", bad)).is_none());
    let good = r#"{"phases": [{"id": "a", "task": "hello"}]}"#;
    let checked = check_source(good, &LowerOptions::default(), &CheckOptions::default());
    let source = FlowSource::checked(checked, Source::new("good", good)).expect("no errors");
    let interp = Interpreter::with_agent(FnAgent::new("t", |req| Outcome::ok(req.prompt.clone())))
        .keep_inputs();
    let r = smol::block_on(interp.run(source, Invocation::default())).expect("runs");
    assert_replays(&interp, &r);
    assert_eq!(r.final_output, "hello");
}

/// Without a store the record's arguments are filled in when the run ends (moved from the
/// shared state, not copied at the start): still the invocation's, defaults included; a map's
/// items, failures among them, merge in order.
#[test]
fn record_args_and_map_merge_without_store() {
    let flow = r#"{"args": {"xs": {}, "mode": {"default": "fast"}}, "phases": [
        {"id": "m", "type": "map", "over": "{args.xs}", "as": "x", "optional": true, "task": "Do {x.n} {args.mode}"},
        {"id": "end", "dependsOn": ["m"], "task": "done"}
    ]}"#;
    let mut args = Map::default();
    let xs: Vec<Value> = (1..=3)
        .map(|n| {
            let mut m = Map::default();
            m.insert("n".into(), Value::Number(n as f64));
            Value::Object(m)
        })
        .collect();
    args.insert("xs".into(), Value::Array(xs));
    let r = run_with(flow, args.clone(), |req| match req.prompt.as_str() {
        "Do 2 fast" => Outcome::failed(StopReason::Failed, "no"),
        p => Outcome::ok(format!("<{p}>")),
    });
    args.insert("mode".into(), Value::from("fast"));
    assert_eq!(r.args, args);
    assert_eq!(r.status, RunStatus::Completed);
    assert_eq!(
        r.phases["m"].output,
        "### [1/3] default\n\n<Do 1 fast>\n\n---\n\n### [2/3] default (failed)\n\nno\n\n---\n\n### [3/3] default\n\n<Do 3 fast>"
    );
    assert_eq!(r.phases["end"].output, "<done>");
}

/// A checked source carries the document its check parsed; the run stores that as `run.json`'s
/// `def` instead of parsing the source text again (the text here is not even JSON, so a second
/// parse would leave `def` out).
#[test]
fn a_checked_source_keeps_its_parsed_document_as_the_def() {
    use crate::check::{CheckOptions, check_document, check_source};
    let text = r#"{"name": "kept", "phases": [{"id": "a", "task": "hello"}]}"#;
    // `tfc check` does not keep it (its peak memory is that of the IR alone).
    let plain = check_source(text, &LowerOptions::default(), &CheckOptions::default());
    assert!(plain.document.is_none());
    let checked = check_document(text, &LowerOptions::default(), &CheckOptions::default());
    let expected = checked.document.as_ref().expect("parsed").to_value();
    let source = FlowSource::checked(checked, Source::new("kept", "not json")).expect("no errors");
    let root = tempfile::tempdir().expect("tmp");
    let interp = Interpreter::with_agent(FnAgent::new("t", |req| Outcome::ok(req.prompt.clone())))
        .options(RunOptions {
            settings: RunSettings {
                project_root: Some(root.path().to_path_buf()),
                ..RunSettings::default()
            },
            cwd: Some(root.path().to_path_buf()),
            run_id: Some("def-kept".into()),
            ..RunOptions::default()
        });
    let r = smol::block_on(interp.run(source, Invocation::default())).expect("runs");
    assert_eq!(r.final_output, "hello");
    let run_json = root.path().join(".tfc/runs/kept/def-kept/run.json");
    let text = std::fs::read_to_string(&run_json).expect("run.json written");
    let stored = crate::json::parse(&text)
        .root
        .expect("run.json parses")
        .to_value();
    let Value::Object(ref stored) = stored else {
        panic!("run.json is an object")
    };
    assert_eq!(stored.get("def"), Some(&expected));
}
