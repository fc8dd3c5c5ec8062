//! The span tree of a run, for every phase kind, through an in-memory sink: what a tracing
//! backend would show, and the laws every trace keeps (one trace, one root, parents exist,
//! children inside their parents' time).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::*;
use crate::agent::{FnAgent, Outcome, Request, Usage};
use crate::telemetry::settings::{Protocol, Settings, Target};
use crate::telemetry::{Collected, SpanContext, Telemetry};

fn settings(content: Option<usize>) -> Settings {
    let target = Target {
        url: "http://127.0.0.1:9/v1/traces".into(),
        protocol: Protocol::Protobuf,
        headers: Vec::new(),
    };
    Settings {
        traces: Some(target.clone()),
        metrics: Some(target),
        timeout: Duration::from_secs(1),
        resource: Vec::new(),
        content,
        trace_url: None,
    }
}

struct Traced {
    record: RunRecord,
    got: Arc<Mutex<Collected>>,
}

impl Traced {
    fn spans(&self) -> Vec<Span> {
        self.got.lock().unwrap().spans.clone()
    }

    fn named(&self, name: &str) -> Span {
        let spans = self.spans();
        let found: Vec<&Span> = spans.iter().filter(|s| s.name == name).collect();
        assert_eq!(
            found.len(),
            1,
            "one span named {name:?} in {:#?}",
            names(&spans)
        );
        found[0].clone()
    }
}

fn names(spans: &[Span]) -> Vec<&str> {
    spans.iter().map(|s| s.name.as_str()).collect()
}

fn traced_with(
    flow: &str,
    opts: RunOptions,
    content: Option<usize>,
    f: impl Fn(&Request) -> Outcome + Send + Sync + 'static,
) -> Traced {
    let (tel, got) = Telemetry::in_memory(settings(content));
    let opts = RunOptions {
        telemetry: Some(tel),
        ..opts
    };
    let record = Interpreter::with_agent(FnAgent::new("fn", f))
        .options(opts)
        .eval_text("t", flow, Map::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let t = Traced { record, got };
    laws(&t.spans());
    t
}

fn traced(flow: &str, f: impl Fn(&Request) -> Outcome + Send + Sync + 'static) -> Traced {
    traced_with(flow, RunOptions::default(), None, f)
}

use crate::telemetry::Span;

/// What every trace keeps.
fn laws(spans: &[Span]) {
    assert!(!spans.is_empty(), "a traced run exports spans");
    let trace = spans[0].trace;
    assert!(spans.iter().all(|s| s.trace == trace), "one trace per run");
    // The root's parent, if any, is the caller's span, in another process.
    let roots: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name.starts_with("run "))
        .collect();
    assert_eq!(roots.len(), 1, "one root: {:?}", names(spans));
    let root = roots[0].id;
    let mut ids = std::collections::HashSet::new();
    for s in spans {
        assert!(ids.insert(s.id), "span ids are unique");
        assert!(s.end_ns >= s.start_ns, "{} ends after it starts", s.name);
    }
    for s in spans.iter().filter(|s| s.id != root) {
        let p = s
            .parent
            .unwrap_or_else(|| panic!("{} has a parent", s.name));
        {
            let parent = spans
                .iter()
                .find(|o| o.id == p)
                .unwrap_or_else(|| panic!("{}: its parent was exported", s.name));
            assert!(
                s.start_ns >= parent.start_ns && s.end_ns <= parent.end_ns,
                "{} lies inside {}",
                s.name,
                parent.name
            );
        }
    }
}

/// The spans as an indented tree, children by name (their order of ending varies).
fn tree(spans: &[Span]) -> String {
    fn walk(
        spans: &[Span],
        parent: Option<crate::telemetry::SpanId>,
        depth: usize,
        out: &mut String,
    ) {
        let mut kids: Vec<&Span> = spans.iter().filter(|s| s.parent == parent).collect();
        kids.sort_by(|a, b| a.name.cmp(&b.name).then(a.start_ns.cmp(&b.start_ns)));
        for k in kids {
            out.push_str(&"  ".repeat(depth));
            out.push_str(&k.name);
            if let crate::telemetry::span::Status::Error(_) = k.status {
                out.push_str(" !");
            }
            out.push('\n');
            walk(spans, Some(k.id), depth + 1, out);
        }
    }
    let mut out = String::new();
    let root = spans
        .iter()
        .find(|s| s.name.starts_with("run "))
        .map(|s| s.parent);
    walk(spans, root.flatten(), 0, &mut out);
    out
}

fn echo(req: &Request) -> Outcome {
    Outcome::ok(format!("{} ok", req.node))
}

#[test]
fn agent_and_chain() {
    let t = traced(
        r#"{"phases": [{"id": "a", "task": "one"}, {"id": "b", "dependsOn": ["a"], "task": "two {steps.a.output}"}]}"#,
        |_| Outcome {
            usage: Usage {
                input: 12,
                output: 5,
                cost_usd: Some(0.01),
                ..Usage::default()
            },
            ..Outcome::ok("x")
        },
    );
    assert_eq!(
        tree(&t.spans()),
        "run t\n  phase a\n    invoke_agent default\n  phase b\n    invoke_agent default\n"
    );
    let call = t
        .spans()
        .into_iter()
        .find(|s| s.name.starts_with("invoke_agent"))
        .unwrap();
    assert_eq!(call.kind, crate::telemetry::span::Kind::Client);
    assert_eq!(call.attr_str("gen_ai.operation.name"), Some("invoke_agent"));
    assert_eq!(call.attr_str("gen_ai.provider.name"), Some("fn"));
    assert_eq!(call.attr_str("gen_ai.agent.name"), Some("default"));
    assert_eq!(call.attr_int("gen_ai.usage.input_tokens"), Some(12));
    assert_eq!(call.attr_int("gen_ai.usage.output_tokens"), Some(5));
    assert_eq!(call.attr_int("tfc.attempt"), Some(1));
    assert_eq!(
        call.attr("gen_ai.input.messages"),
        None,
        "no prompts unless asked"
    );
    let phase = t.named("phase a");
    assert_eq!(phase.attr_str("tfc.phase.kind"), Some("agent"));
    assert_eq!(phase.attr_str("tfc.phase.status"), Some("done"));
    assert_eq!(phase.attr_int("tfc.phase.attempts"), Some(1));
    let root = t.named("run t");
    assert_eq!(root.attr_str("tfc.run.status"), Some("completed"));
    assert_eq!(root.attr_str("tfc.run.id"), Some(t.record.run_id.as_str()));
    assert_eq!(root.attr_int("gen_ai.usage.input_tokens"), Some(24));
    let m = t.got.lock().unwrap().metrics.clone().expect("metrics");
    assert_eq!(m.duration.iter().map(|(_, h)| h.count).sum::<u64>(), 2);
    assert_eq!(m.tokens.len(), 2, "input and output token histograms");
}

#[test]
fn map_items_and_a_retried_item() {
    let tries = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let seen = tries.clone();
    let t = traced(
        r#"{"args": {"items": {"default": [1, 2]}}, "phases": [{"id": "m", "type": "map", "over": "{args.items}", "retry": {"max": 1, "backoffMs": 1}, "task": "do {item}"}]}"#,
        move |req| {
            if req.node == "m#1" && seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                return Outcome::failed(crate::agent::StopReason::Failed, "flaky");
            }
            echo(req)
        },
    );
    assert_eq!(
        tree(&t.spans()),
        "run t\n  phase m\n    item m#0\n      invoke_agent default\n    item m#1\n      invoke_agent default !\n      invoke_agent default\n"
    );
    let phase = t.named("phase m");
    assert_eq!(phase.attr_str("tfc.phase.kind"), Some("map"));
    assert_eq!(phase.attr_int("tfc.phase.items"), Some(2));
    let item = t.named("item m#1");
    assert_eq!(item.attr_int("tfc.item.index"), Some(1));
    let attempts: Vec<i64> = t
        .spans()
        .iter()
        .filter(|s| s.attr_str("tfc.node") == Some("m#1"))
        .filter_map(|s| s.attr_int("tfc.attempt"))
        .collect();
    assert_eq!(attempts.len(), 2);
    assert!(attempts.contains(&1) && attempts.contains(&2));
}

#[test]
fn parallel_reduce_and_script() {
    let t = traced(
        r#"{"phases": [
            {"id": "p", "type": "parallel", "branches": [{"task": "x"}, {"task": "y"}]},
            {"id": "s", "type": "script", "run": ["sh", "-c", "echo $TRACEPARENT"]},
            {"id": "r", "type": "reduce", "from": ["p", "s"], "task": "merge {steps.p.output}"}
        ]}"#,
        echo,
    );
    assert_eq!(
        tree(&t.spans()),
        "run t\n  phase p\n    item p#0\n      invoke_agent default\n    item p#1\n      invoke_agent default\n  phase r\n    invoke_agent default\n  phase s\n    script s\n"
    );
    // The script got the traceparent of its own span.
    let script = t.named("script s");
    let got =
        SpanContext::from_traceparent(t.record.phases["s"].output.trim()).expect("TRACEPARENT");
    assert_eq!((got.trace, got.span), (script.trace, script.id));
    assert_eq!(script.attr_int("process.exit.code"), Some(0));
}

#[test]
fn gate_blocks_and_dependents_are_skipped() {
    let t = traced(
        r#"{"phases": [
            {"id": "impl", "task": "build"},
            {"id": "check", "type": "gate", "dependsOn": ["impl"], "task": "Review {steps.impl.output}"},
            {"id": "ship", "dependsOn": ["check"], "task": "Ship."}
        ]}"#,
        |req| match req.phase_id.as_str() {
            "check" => Outcome::ok("VERDICT: BLOCK\nnot yet"),
            _ => echo(req),
        },
    );
    assert_eq!(
        tree(&t.spans()),
        "run t !\n  phase check\n    invoke_agent default\n  phase impl\n    invoke_agent default\n  phase ship\n"
    );
    let gate = t.named("phase check");
    assert_eq!(gate.attr_str("tfc.gate.verdict"), Some("block"));
    let ship = t.named("phase ship");
    assert_eq!(ship.attr_str("tfc.phase.status"), Some("skipped"));
    assert!(ship.attr_str("tfc.phase.skip_reason").is_some());
    assert_eq!(ship.end_ns, ship.start_ns, "a skipped phase never ran");
}

#[test]
fn loop_iterations() {
    let t = traced(
        r#"{"phases": [{"id": "l", "type": "loop", "maxIterations": 4, "until": "{loop.iteration} >= 2", "task": "draft {loop.iteration}"}]}"#,
        |req| Outcome::ok(format!("draft {}", req.iteration.unwrap_or(0))),
    );
    assert_eq!(
        tree(&t.spans()),
        "run t\n  phase l\n    iteration l@1\n      invoke_agent default\n    iteration l@2\n      invoke_agent default\n"
    );
    let phase = t.named("phase l");
    assert_eq!(phase.attr_int("tfc.loop.iterations"), Some(2));
    assert_eq!(phase.attr_str("tfc.loop.stop"), Some("until"));
}

#[test]
fn tournament_variants_and_judge() {
    let t = traced(
        r#"{"phases": [{"id": "t", "type": "tournament", "variants": 2, "task": "Name it."}]}"#,
        |req| {
            if req.node == "t#judge" {
                Outcome::ok(r#"{"winner": 1}"#)
            } else {
                echo(req)
            }
        },
    );
    assert_eq!(
        tree(&t.spans()),
        "run t\n  phase t\n    invoke_agent default\n    item t#0\n      invoke_agent default\n    item t#1\n      invoke_agent default\n"
    );
}

#[test]
fn race_losers_end_cancelled() {
    let t = traced(
        r#"{"phases": [{"id": "r", "type": "race", "branches": [{"task": "a"}, {"task": "b"}]}]}"#,
        echo,
    );
    let spans = t.spans();
    let calls = spans
        .iter()
        .filter(|s| s.name.starts_with("invoke_agent"))
        .count();
    assert!((1..=2).contains(&calls), "{}", tree(&spans));
    assert_eq!(t.named("phase r").attr_str("tfc.phase.kind"), Some("race"));
}

#[test]
fn sub_flow_phases_are_under_their_flow_phase() {
    let t = traced(
        r#"{"phases": [
            {"id": "sub", "type": "flow", "def": {"phases": [{"id": "inner", "task": "About"}]}},
            {"id": "after", "dependsOn": ["sub"], "task": "Got {steps.sub.output}"}
        ]}"#,
        echo,
    );
    assert_eq!(
        tree(&t.spans()),
        "run t\n  phase after\n    invoke_agent default\n  phase sub\n    phase sub/inner\n      invoke_agent default\n"
    );
    // The sub-flow's call is the run's: two in all.
    assert_eq!(t.named("run t").attr_int("tfc.run.agent_calls"), Some(2));
    // The flow phase's own record says 0 attempts (SPEC §11.1).
    assert_eq!(t.named("phase sub").attr_int("tfc.phase.attempts"), Some(0));
}

#[test]
fn expand_grafts_phases_under_the_expand_phase() {
    let t = traced(
        r#"{"phases": [
            {"id": "plan", "task": "plan"},
            {"id": "x", "type": "expand", "expandMode": "graft", "dependsOn": ["plan"], "def": "{steps.plan.output}"}
        ]}"#,
        |req| match req.phase_id.as_str() {
            "plan" => Outcome::ok(r#"[{"id": "one", "task": "first"}]"#),
            _ => echo(req),
        },
    );
    let text = tree(&t.spans());
    assert!(text.starts_with("run t\n"), "{text}");
    assert!(
        text.contains("  phase plan\n    invoke_agent default\n"),
        "{text}"
    );
    assert!(text.contains("phase x"), "{text}");
    assert_eq!(
        t.spans()
            .iter()
            .filter(|s| s.name.starts_with("invoke_agent"))
            .count(),
        2,
        "{text}"
    );
}

#[test]
fn an_approval_that_waits_ends_with_the_paused_run() {
    let t = traced(
        r#"{"phases": [
            {"id": "ok", "type": "approval", "task": "Deploy?"},
            {"id": "deploy", "dependsOn": ["ok"], "task": "Deploy."}
        ]}"#,
        echo,
    );
    assert_eq!(t.record.status, RunStatus::Paused);
    let root = t.named("run t");
    assert_eq!(root.attr_str("tfc.run.status"), Some("paused"));
    let text = tree(&t.spans());
    assert!(text.contains("  phase ok"), "{text}");
    // A pause is not an error: the run, the waiting approval and what waits on it are
    // UNSET, each saying why.
    assert!(!text.contains('!'), "{text}");
    assert_eq!(root.status, crate::telemetry::span::Status::Unset);
    assert!(
        root.attr_str("tfc.run.reason")
            .is_some_and(|r| r.starts_with("awaiting approval: ok")),
        "{root:?}"
    );
    let ok = t.named("phase ok");
    assert_eq!(ok.attr_str("tfc.phase.status"), Some("pending"));
    assert_eq!(ok.attr("error.type"), None);
}

#[test]
fn a_run_paused_by_its_budget_is_no_error() {
    let t = traced_with(
        r#"{"phases": [{"id": "a", "task": "x"}, {"id": "b", "dependsOn": ["a"], "task": "y"}]}"#,
        RunOptions {
            max_tokens: Some(10.0),
            ..RunOptions::default()
        },
        None,
        |_| Outcome {
            usage: Usage {
                input: 50,
                output: 5,
                ..Usage::default()
            },
            ..Outcome::ok("x")
        },
    );
    assert_eq!(t.record.status, RunStatus::Paused, "{:?}", t.record.reason);
    let text = tree(&t.spans());
    assert!(!text.contains('!'), "{text}");
    let b = t.named("phase b");
    assert_eq!(b.attr_str("tfc.phase.status"), Some("skipped"));
    assert_eq!(t.named("run t").attr_str("tfc.run.status"), Some("paused"));
}

#[test]
fn a_failed_runs_root_names_its_first_failed_phase() {
    let t = traced(
        r#"{"phases": [{"id": "a", "task": "x"}, {"id": "b", "task": "y"}]}"#,
        |req| match req.phase_id.as_str() {
            "b" => Outcome::failed(crate::agent::StopReason::Failed, "HTTP 429: slow down"),
            _ => echo(req),
        },
    );
    assert_eq!(t.record.status, RunStatus::Failed);
    assert_eq!(t.record.reason, None);
    let root = t.named("run t");
    assert_eq!(
        root.status,
        crate::telemetry::span::Status::Error("b: HTTP 429: slow down".into())
    );
}

#[test]
fn a_script_phase_says_one_attempt_as_its_record_does() {
    let t = traced(
        r#"{"phases": [{"id": "s", "type": "script", "run": ["true"]}]}"#,
        echo,
    );
    assert_eq!(t.record.phases["s"].attempts, 1);
    assert_eq!(t.named("phase s").attr_int("tfc.phase.attempts"), Some(1));
    assert_eq!(t.named("script s").attr_int("tfc.attempt"), Some(1));
}

#[test]
fn a_pre_read_counts_only_the_files_it_read() {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(dir.path().join("here.txt"), "content").expect("write");
    std::fs::create_dir(dir.path().join("adir")).expect("dir");
    let t = traced_with(
        r#"{"phases": [{"id": "a", "task": "x", "context": ["here.txt", "missing.txt", "adir"]}]}"#,
        RunOptions {
            cwd: Some(dir.path().to_path_buf()),
            ..RunOptions::default()
        },
        None,
        echo,
    );
    let read = t.named("pre_read a");
    assert_eq!(read.attr_int("tfc.context.files"), Some(1));
    assert_eq!(read.attr_int("tfc.context.files_skipped"), Some(2));
}

#[test]
fn a_failed_calls_error_type_is_its_class_and_it_has_no_response_model() {
    use crate::agent::StopReason;
    let cases: [(Outcome, &str); 7] = [
        (
            Outcome {
                exit_code: Some(3),
                ..Outcome::failed(StopReason::Failed, "the agent broke down")
            },
            "exit_status",
        ),
        (
            Outcome::failed(StopReason::Failed, "HTTP 503: overloaded"),
            "http_503",
        ),
        (
            Outcome::failed(StopReason::Failed, "command exited with code 3"),
            "exit_status",
        ),
        (
            Outcome::failed(StopReason::WallTimeout, "too slow"),
            "timeout",
        ),
        (
            Outcome::failed(StopReason::IdleTimeout, "quiet"),
            "idle_timeout",
        ),
        (
            Outcome::failed(StopReason::ProtocolError, "bad JSON"),
            "protocol-error",
        ),
        (
            Outcome::failed(StopReason::Failed, "the model is down"),
            "failed",
        ),
    ];
    for (outcome, class) in cases {
        let outcome = Outcome {
            model: Some("m-2025".into()),
            ..outcome
        };
        let t = traced(
            r#"{"phases": [{"id": "a", "task": "x", "retry": {"max": 0}, "idempotent": false}]}"#,
            move |_| outcome.clone(),
        );
        let call = t.named("invoke_agent default");
        assert_eq!(call.attr_str("error.type"), Some(class), "{call:?}");
        assert_eq!(call.attr("gen_ai.response.model"), None, "{call:?}");
    }
    let t = traced(r#"{"phases": [{"id": "a", "task": "x"}]}"#, |_| Outcome {
        model: Some("m-2025".into()),
        ..Outcome::ok("x")
    });
    let call = t.named("invoke_agent default");
    assert_eq!(call.attr_str("gen_ai.response.model"), Some("m-2025"));
    assert_eq!(call.attr("error.type"), None);
}

#[test]
fn a_failed_call_marks_its_span_phase_and_run() {
    let t = traced(r#"{"phases": [{"id": "a", "task": "x"}]}"#, |_| {
        Outcome::failed(crate::agent::StopReason::Failed, "the model is down")
    });
    assert_eq!(
        tree(&t.spans()),
        "run t !\n  phase a !\n    invoke_agent default !\n"
    );
    let call = t.named("invoke_agent default");
    assert_eq!(
        call.status,
        crate::telemetry::span::Status::Error("the model is down".into())
    );
    assert_eq!(call.attr_str("error.type"), Some("failed"));
    assert_eq!(
        t.named("run t").status,
        crate::telemetry::span::Status::Error("a: the model is down".into())
    );
}

#[test]
fn content_is_opt_in_and_cut() {
    let t = traced_with(
        r#"{"phases": [{"id": "a", "task": "a long prompt"}]}"#,
        RunOptions::default(),
        Some(6),
        |_| Outcome::ok("the answer"),
    );
    let call = t.named("invoke_agent default");
    let input = call.attr_str("gen_ai.input.messages").expect("prompt kept");
    let v = crate::value::parse_json(input).expect("JSON messages");
    assert_eq!(
        v.to_json(),
        r#"[{"role":"user","parts":[{"type":"text","content":"a long… [7 more characters]"}]}]"#
    );
    assert!(
        call.attr_str("gen_ai.output.messages")
            .unwrap()
            .contains("the an")
    );
}

#[test]
fn a_caller_traceparent_makes_the_run_its_child() {
    let caller =
        SpanContext::from_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
            .unwrap();
    let t = traced_with(
        r#"{"phases": [{"id": "a", "task": "x"}]}"#,
        RunOptions {
            trace_parent: Some(caller),
            ..RunOptions::default()
        },
        None,
        echo,
    );
    let root = t.named("run t");
    assert_eq!(root.trace, caller.trace);
    assert_eq!(root.parent, Some(caller.span));
}

#[test]
fn command_agents_get_the_traceparent_of_their_call() {
    let t = traced(r#"{"phases": [{"id": "a", "task": "x"}]}"#, echo);
    drop(t);
    // The request the backend receives carries it (TRACEPARENT for process backends).
    let seen = Arc::new(Mutex::new(None));
    let keep = seen.clone();
    let t = traced(r#"{"phases": [{"id": "a", "task": "x"}]}"#, move |req| {
        *keep.lock().unwrap() = req.traceparent.clone();
        Outcome::ok("x")
    });
    let tp = seen.lock().unwrap().clone().expect("a traceparent");
    let call = t.named("invoke_agent default");
    assert_eq!(
        SpanContext::from_traceparent(&tp).map(|c| (c.trace, c.span)),
        Some((call.trace, call.id))
    );
}

#[test]
fn without_telemetry_nothing_is_recorded() {
    let r = Interpreter::with_agent(FnAgent::new("fn", echo))
        .eval_text(
            "t",
            r#"{"phases": [{"id": "a", "task": "x"}]}"#,
            Map::default(),
        )
        .unwrap();
    assert_eq!(r.status, RunStatus::Completed);
}

/// The answer of an agent that fails the first attempt of a `FLAKY` item and answers
/// everything else at once.
fn sharded_answer(r: &machine::CallRequest) -> machine::CallEnd {
    let flaky = r.prompt.contains("FLAKY") && r.attempt == 1;
    machine::CallEnd::Outcome(Box::new(machine::CallOutcome {
        output: "ok".into(),
        usage: machine::UsageData {
            input: 10,
            output: 5,
            ..machine::UsageData::default()
        },
        model: Some("m1".into()),
        stop: if flaky { "failed" } else { "completed" }.into(),
        error: flaky.then(|| "connection reset".to_owned()),
        stderr: String::new(),
        warnings: Vec::new(),
        backend: "test".into(),
        elapsed_ms: 1,
        exit_code: None,
    }))
}

/// What a machine was given or said.
enum Step<'a> {
    In(&'a machine::Event),
    Out(&'a machine::Command),
}

/// Drive `m`, answering calls and timers first in, first out, from time `at` (ms) on; shards
/// run in machines of their own, as child workflows do. `seen` is told every input and
/// command; the last command comes back.
fn drive(
    m: &mut machine::Machine,
    run: &(Arc<crate::flow::Flow>, machine::Config),
    at: &mut u64,
    seen: &mut dyn FnMut(Step<'_>, u64),
) -> machine::Command {
    use machine::{Command, Event, Input};
    let mut queue = std::collections::VecDeque::from([Event::Start]);
    while let Some(what) = queue.pop_front() {
        *at += 1;
        seen(Step::In(&what), *at);
        for c in m.handle(Input { at: *at, what }) {
            seen(Step::Out(&c), *at);
            match c {
                Command::StartCall { op, request } => queue.push_back(Event::CallEnded {
                    op,
                    node: request.node.clone(),
                    attempt: request.attempt,
                    end: sharded_answer(&request),
                }),
                Command::StartTimer { op, .. } => queue.push_back(Event::TimerFired { op }),
                Command::StartShard { op, shard } => {
                    // The child's calls are not the run's: its trace never sees them start.
                    let mut child = machine::Machine::shard(run.0.clone(), run.1.clone(), *shard);
                    let Command::EndShard(result) = drive(&mut child, run, at, &mut |_, _| {})
                    else {
                        panic!("a shard ends with its result");
                    };
                    queue.push_back(Event::ShardEnded { op, result });
                }
                c @ (Command::Finish(_) | Command::EndShard(_)) => return c,
                _ => {}
            }
        }
    }
    panic!("the machine stopped asking before it finished");
}

/// What the Temporal worker holding a run's workflow has: the run's machine, what it was
/// built from, the run's trace and where its spans go.
struct Holder {
    machine: machine::Machine,
    run: (Arc<crate::flow::Flow>, machine::Config),
    trace: trace::RunTrace,
    got: Arc<Mutex<Collected>>,
}

/// The holder of a run of `flow` (large maps sharded by `shard_items`), its trace as `plan`
/// says (quiet at first when `quiet`).
fn holder(flow: &str, shard_items: Option<usize>, plan: &trace::TracePlan, quiet: bool) -> Holder {
    let checked = crate::check::check_source(
        flow,
        &crate::flow::LowerOptions::default(),
        &crate::check::CheckOptions::default(),
    );
    let flow = Arc::new(checked.flow.expect("flow"));
    let args = crate::flow::effective_args(&flow, Map::default());
    let cfg = machine::Config {
        run_id: "r".into(),
        max_output: 1 << 20,
        max_prompt: 1 << 20,
        journaling: true,
        progress: true,
        cwd: "/t".into(),
        shard_items,
        ..machine::Config::default()
    };
    let (tel, got) = Telemetry::in_memory(settings(None));
    let who = trace::RunIdentity::of(&cfg, "m");
    let trace = trace::RunTrace::start(tel, who, plan, quiet);
    let machine = machine::Machine::new(flow.clone(), args, cfg.clone());
    Holder {
        machine,
        run: (flow, cfg),
        trace,
        got,
    }
}

/// When the runs of these tests start (ms).
const T0: u64 = 1_700_000_000_000;

/// The spans of a run of `flow` as a Temporal worker records them: the run's inputs and
/// commands, with large maps sharded (`shard_items`) into child machines.
fn followed(flow: &str, shard_items: Option<usize>) -> Vec<Span> {
    let plan = trace::TracePlan::new(None, None, None, T0 * 1_000_000);
    let spans = told(flow, shard_items, &plan, Told::Whole);
    laws(&spans);
    spans
}

/// How much of a run a worker's trace is told.
#[derive(Clone, Copy)]
enum Told {
    /// All of it.
    Whole,
    /// Its first steps (machine inputs and commands), then the worker is lost: only what it
    /// flushed was exported.
    Lost(usize),
    /// All of it, the first steps quietly: they were the lost worker's.
    TakenOver(usize),
}

/// The spans a worker's trace of a run of `flow` exports, told as `told` says.
fn told(flow: &str, shard_items: Option<usize>, plan: &trace::TracePlan, told: Told) -> Vec<Span> {
    let ms = |at: u64| at * 1_000_000;
    let mut at = T0;
    let Holder {
        mut machine,
        run,
        trace: mut t,
        got,
    } = holder(flow, shard_items, plan, matches!(told, Told::TakenOver(_)));
    let mut step = 0;
    let end = drive(&mut machine, &run, &mut at, &mut |s, at| {
        match told {
            Told::Lost(k) if step >= k => return,
            Told::Lost(k) if step + 1 == k => {
                // The end of the lost worker's last activation.
                t.flush(ms(at));
            }
            Told::TakenOver(k) if step == k => t.live(ms(at)),
            _ => {}
        }
        step += 1;
        match s {
            Step::In(i) => t.input(i, ms(at)),
            Step::Out(c) => {
                t.command(c, ms(at));
            }
        }
    });
    let machine::Command::Finish(record) = end else {
        panic!("a run ends with its record");
    };
    match told {
        Told::Lost(_) => t.flush(ms(at)),
        _ => t.finish(&record, ms(at)),
    }
    got.lock().unwrap().spans.clone()
}

#[test]
fn a_trace_plan_travels_as_json() {
    let caller =
        SpanContext::from_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    let link =
        SpanContext::from_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    for plan in [
        trace::TracePlan::new(None, None, None, 1_700_000_000_123_456_789),
        trace::TracePlan::new(caller, link, Some(4096), u64::MAX),
    ] {
        assert_eq!(
            trace::TracePlan::from_json(&plan.to_json()),
            Some(plan.clone())
        );
    }
    assert_eq!(trace::TracePlan::from_json("{\"traceId\": \"00\"}"), None);
    assert_eq!(trace::TracePlan::from_json("not json"), None);
}

#[test]
fn a_worker_taking_a_run_over_exports_what_the_lost_one_had_not() {
    // Calls, a map with a retried item and a backoff timer, a loop: phase, item, iteration
    // and call spans that open on one worker and end on the other.
    let flow = r#"{"name": "m", "args": {"items": {"default": [1, "FLAKY 2", 3]}},
        "phases": [{"id": "a", "task": "x"},
            {"id": "each", "type": "map", "dependsOn": ["a"], "over": "{args.items}",
             "retry": {"max": 1, "backoffMs": 5}, "task": "do {item}"},
            {"id": "l", "type": "loop", "dependsOn": ["a"], "maxIterations": 3,
             "until": "{loop.iteration} >= 2", "task": "again {loop.iteration}"},
            {"id": "z", "dependsOn": ["each", "l"], "task": "end"}]}"#;
    let plan = trace::TracePlan::new(None, None, None, T0 * 1_000_000);
    let by_id = |mut v: Vec<Span>| {
        v.sort_by_key(|s| s.id.0);
        v
    };
    let whole = by_id(told(flow, None, &plan, Told::Whole));
    laws(&whole);
    assert!(whole.len() > 15, "{}", tree(&whole));
    // The same plan names the same spans: a second worker told the whole run exports it
    // alike.
    assert_eq!(whole, by_id(told(flow, None, &plan, Told::Whole)));
    let mut steps = 0;
    {
        let Holder {
            mut machine, run, ..
        } = holder(flow, None, &plan, false);
        drive(&mut machine, &run, &mut T0.clone(), &mut |_, _| steps += 1);
    }
    for k in 1..steps {
        let lost = told(flow, None, &plan, Told::Lost(k));
        let taken = told(flow, None, &plan, Told::TakenOver(k));
        assert!(
            lost.iter().all(|s| !taken.iter().any(|t| t.id == s.id)),
            "step {k}: no span is exported twice"
        );
        let mut both = lost;
        both.extend(taken);
        assert_eq!(
            by_id(both),
            whole,
            "step {k}: the two workers export the run's trace between them"
        );
    }
}

#[test]
fn a_sharded_maps_calls_are_spans_under_their_items() {
    let flow = r#"{"name": "m",
        "args": {"items": {"default": [1, "FLAKY 2", 3, 4, 5]}},
        "phases": [{"id": "each", "type": "map", "retry": {"max": 1, "backoffMs": 5},
                    "over": "{args.items}", "task": "do {item}"}]}"#;
    let sorted = |spans: &[Span]| {
        let mut v: Vec<String> = spans.iter().map(|s| s.name.clone()).collect();
        v.sort();
        v
    };
    let plain = followed(flow, None);
    for size in [1, 2, 10] {
        let sharded = followed(flow, Some(size));
        assert_eq!(sorted(&plain), sorted(&sharded), "shards of {size}");
        let calls: Vec<&Span> = sharded
            .iter()
            .filter(|s| s.name.starts_with("invoke_agent"))
            .collect();
        assert_eq!(calls.len(), 6, "five items, one retried");
        for c in &calls {
            let item = sharded
                .iter()
                .find(|s| Some(s.id) == c.parent)
                .expect("a parent");
            assert!(item.name.starts_with("item each#"), "{}", item.name);
            assert_eq!(c.attr_str("gen_ai.provider.name"), Some("test"));
            assert_eq!(c.attr_int("gen_ai.usage.input_tokens"), Some(10));
            // Only a call that answered names the model that responded.
            let answered = c.status == crate::telemetry::span::Status::Unset;
            assert_eq!(
                c.attr_str("gen_ai.response.model"),
                answered.then_some("m1"),
                "{}",
                c.name
            );
            if size < 10 {
                // The span a shard's worker names in the call's TRACEPARENT.
                let (node, attempt) = (c.attr_str("tfc.node"), c.attr_int("tfc.attempt"));
                let named = crate::telemetry::SpanId::of_call(
                    c.trace,
                    node.expect("node"),
                    u32::try_from(attempt.expect("attempt")).expect("small"),
                );
                assert_eq!(c.id, named, "{}", c.name);
            }
        }
        let failed: Vec<&&Span> = calls
            .iter()
            .filter(|c| c.status != crate::telemetry::span::Status::Unset)
            .collect();
        assert_eq!(failed.len(), 1, "the flaky item's first attempt");
        assert_eq!(failed[0].attr_int("tfc.attempt"), Some(1));
        assert_eq!(failed[0].attr_str("tfc.node"), Some("each#1"));
    }
}

/// An agent whose call is interrupted (Ctrl-C) while it runs: it stops when cancelled.
struct Interrupting(Arc<crate::agent::CancelSource>);

impl crate::agent::Agent for Interrupting {
    fn name(&self) -> &str {
        "interrupting"
    }
    fn call<'a>(
        &'a self,
        _req: Request,
        cancel: crate::agent::Cancel,
    ) -> crate::agent::BoxFuture<'a, Outcome> {
        Box::pin(async move {
            self.0.cancel();
            cancel.cancelled().await;
            Outcome::failed(crate::agent::StopReason::Cancelled, "cancelled")
        })
    }
}

#[test]
fn an_interrupted_run_is_paused_not_an_error() {
    let source = Arc::new(crate::agent::CancelSource::new());
    let (tel, got) = Telemetry::in_memory(settings(None));
    let record = Interpreter::with_agent(Interrupting(source.clone()))
        .options(RunOptions {
            telemetry: Some(tel),
            ..RunOptions::default()
        })
        .cancel_on(source.token())
        .eval_text(
            "t",
            r#"{"phases": [{"id": "a", "task": "x"}, {"id": "b", "dependsOn": ["a"], "task": "y"}]}"#,
            Map::default(),
        )
        .expect("runs");
    assert_eq!(record.status, RunStatus::Paused);
    assert_eq!(record.reason.as_deref(), Some("interrupted"));
    let t = Traced { record, got };
    laws(&t.spans());
    let root = t.named("run t");
    assert_eq!(root.status, crate::telemetry::span::Status::Unset);
    assert_eq!(root.attr_str("tfc.run.status"), Some("paused"));
    // The call that was cut is what failed, as its class says.
    let call = t.named("invoke_agent default");
    assert_eq!(call.attr_str("error.type"), Some("cancelled"));
    let b = t.named("phase b");
    assert_eq!(b.status, crate::telemetry::span::Status::Unset);
    assert_eq!(b.attr_str("tfc.phase.status"), Some("skipped"));
}
