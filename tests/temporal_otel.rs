//! A run on Temporal is traced by the worker holding its workflow: its trace, received by
//! the strict OTLP validator (tests/otel/receiver.py), has the same shape as the trace of the
//! same flow run locally — the same spans by name, kind and status, under parents of the
//! same names, with the same phase kinds and statuses, its map's item calls included
//! although they run in shards (child workflows of their own) — and run.json's `traceId` /
//! `rootSpanId` are those of the trace exported. The process that starts a run decides
//! whether it is traced; the trace goes on when that process leaves, and across the loss of
//! the worker holding the run (kill -9), whole, with no span twice.
//!
//! Needs the `temporal` binary (tests/temporal_env) and the Python of the validator
//! (`TFC_OTEL_PYTHON`, else `target/otel-venv`); without them the test says SKIPPED (or fails,
//! with `TFC_REQUIRE_REAL_PARTS=1`, as in CI).
#![cfg(feature = "temporal")]

mod temporal_env;
// tests/common, once: the harness of tests/otel reaches it as `crate::common`.
use temporal_env::common;
#[path = "otel/mod.rs"]
mod otel;

use std::collections::BTreeMap;

use otel::{Receiver, Span, TfcRun, assert_clean, dump, of_trace, one, run_tfc};
use serde_json::Value;
use temporal_env::{
    HOLD, Worker, calls, kill_the_holder, project, record, run_id, server_in, wait_for,
};

/// Agent phases, a map (item spans), a loop (iteration spans) and scripts, answered by the
/// fake agent of tests/temporal_env (`LIST` answers a JSON array); script `tp` prints the
/// `TRACEPARENT` it was given (on Temporal, by the worker).
const FLOW: &str = r#"{"name": "shape", "phases": [
    {"id": "list", "output": "json", "task": "LIST files"},
    {"id": "each", "type": "map", "over": "{steps.list.json}", "dependsOn": ["list"],
     "concurrency": 2, "task": "look at {item}"},
    {"id": "s", "type": "script", "dependsOn": ["list"], "run": "echo hi from $TFC_PHASE_ID"},
    {"id": "tp", "type": "script", "run": "echo $TRACEPARENT"},
    {"id": "refine", "type": "loop", "maxIterations": 4, "until": "{loop.iteration} >= 2",
     "task": "Iteration {loop.iteration}. Previous: {loop.lastOutput}"},
    {"id": "sum", "dependsOn": ["each", "s", "refine"], "final": true,
     "task": "sum up {steps.each.output} {steps.s.output} {steps.refine.output}"}]}"#;

/// What a span is, without ids and times: its name, its parent's name (`""` for none), its
/// kind, its status code, and the attributes that say what it did (values as JSON text).
type Shape = (String, String, i64, i64, BTreeMap<String, String>);

/// The attributes compared between the two runs.
const COMPARED: &[&str] = &[
    "tfc.phase.id",
    "tfc.phase.kind",
    "tfc.phase.status",
    "tfc.phase.attempts",
    "tfc.phase.items",
    "tfc.phase.items_done",
    "tfc.phase.items_failed",
    "tfc.item.index",
    "tfc.loop.iteration",
    "tfc.loop.iterations",
    "tfc.loop.stop",
    "tfc.flow.name",
    "tfc.run.status",
    "gen_ai.operation.name",
    "gen_ai.agent.name",
    "gen_ai.provider.name",
    "tfc.call.outcome",
    "tfc.attempt",
    "tfc.node",
    "process.exit.code",
];

fn shapes(spans: &[Span]) -> Vec<Shape> {
    let name_of = |id: &Option<String>| -> String {
        id.as_ref()
            .and_then(|id| spans.iter().find(|s| &s.span_id == id))
            .map_or_else(String::new, |p| p.name.clone())
    };
    let mut out: Vec<Shape> = spans
        .iter()
        .map(|s| {
            let attrs = COMPARED
                .iter()
                .filter_map(|k| Some(((*k).to_owned(), s.attributes.get(*k)?.to_string())))
                .collect();
            (
                s.name.clone(),
                name_of(&s.parent),
                s.kind.unwrap_or(-1),
                s.status.unwrap_or(-1),
                attrs,
            )
        })
        .collect();
    out.sort();
    out
}

/// The spans of `run`'s trace; its root is run.json's `rootSpanId`, with no parent, and every
/// other span has its parent in the trace.
fn trace_of(all: &[Span], run: &TfcRun, what: &str) -> Vec<Span> {
    let trace_id = run.record["traceId"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: run.json has no traceId: {}", run.record));
    let spans = of_trace(all, trace_id);
    let tree = dump(&spans);
    assert!(!spans.is_empty(), "{what}: no span of trace {trace_id}");
    let root = one(&spans, "run shape");
    assert_eq!(
        Some(root.span_id.as_str()),
        run.record["rootSpanId"].as_str(),
        "{what}: the root is run.json's rootSpanId\n{tree}"
    );
    assert_eq!(root.parent, None, "{what}\n{tree}");
    assert_eq!(
        root.attributes.get("tfc.run.id").and_then(Value::as_str),
        run.run_id.as_deref(),
        "{what}\n{tree}"
    );
    for s in spans.iter().filter(|s| s.span_id != root.span_id) {
        assert!(
            spans.iter().any(|p| Some(&p.span_id) == s.parent.as_ref()),
            "{what}: {:?} has its parent in the trace\n{tree}",
            s.name
        );
    }
    // Each phase span says what run.json says of the phase.
    for (id, phase) in run.record["phases"].as_object().expect("phases") {
        let span = one(&spans, &format!("phase {id}"));
        for (key, field) in [("tfc.phase.kind", "type"), ("tfc.phase.status", "status")] {
            assert_eq!(
                span.attributes.get(key),
                phase.get(field),
                "{what}: phase {id}: {key}\n{tree}"
            );
        }
    }
    spans
}

/// A dev server in the scratch directory `name`, and the OTLP validator; `None` after a
/// printed note when either cannot run.
fn traced_server(name: &str) -> Option<(temporal_env::Server, std::path::PathBuf, Receiver)> {
    let py = otel::require_python()?;
    let (server, base) = server_in(name)?;
    let rx = Receiver::start(&py, &base.join("otel"), &[]);
    Some((server, base, rx))
}

#[test]
fn a_run_on_temporal_has_the_trace_of_the_same_run_done_locally() {
    let Some((server, base, rx)) = traced_server("otel") else {
        return;
    };
    let endpoint = rx.endpoint();
    let env = [("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str())];
    let (local_dir, remote_dir) = (base.join("local"), base.join("remote"));
    let local_agent = project(&local_dir);
    let remote_agent = project(&remote_dir);
    std::fs::write(local_dir.join("flow.json"), FLOW).expect("flow");
    std::fs::write(remote_dir.join("flow.json"), FLOW).expect("flow");
    // The map's three items go in shards of two: the follower sees their calls only in the
    // shards' results.
    std::fs::write(
        remote_dir.join(".tfc").join("config.toml"),
        "[engine]\nshard_items = 2\n",
    )
    .expect("config");
    // The worker runs the calls and the script, and exports the run's spans.
    let _worker = Worker::start_env(&server, &remote_dir, &remote_agent, "1", &env);

    let local_agent = local_agent.display().to_string();
    let local = run_tfc(
        &local_dir,
        &["run", "flow.json", "--agent-cmd", &local_agent],
        &env,
    );
    assert_eq!(local.outcome.code, 0, "local: {:?}", local.outcome);
    let remote_agent = remote_agent.display().to_string();
    let address = server.address();
    let remote = run_tfc(
        &remote_dir,
        &[
            "run",
            "flow.json",
            "--agent-cmd",
            &remote_agent,
            "--engine",
            "temporal",
            "--temporal",
            &address,
        ],
        &env,
    );
    assert_eq!(remote.outcome.code, 0, "temporal: {:?}", remote.outcome);
    assert_eq!(remote.record["engine"]["kind"], "temporal");
    assert_eq!(
        local.outcome.stdout, remote.outcome.stdout,
        "the same output"
    );

    // The worker sends the run's last spans as the run ends, in the background.
    let remote_trace = remote.record["traceId"].as_str().unwrap_or("").to_owned();
    let root_sent = || {
        of_trace(&rx.spans(), &remote_trace)
            .iter()
            .any(|s| s.name == "run shape")
    };
    assert!(
        wait_for(30, root_sent),
        "the worker sends the run's root span"
    );
    let all = rx.spans();
    let a = trace_of(&all, &local, "local");
    let b = trace_of(&all, &remote, "temporal");
    assert_ne!(a[0].trace_id, b[0].trace_id, "two runs, two traces");
    assert_eq!(
        a.len() + b.len(),
        all.len(),
        "no span of another trace\n{}",
        dump(&all)
    );
    // The flow's spans are all there: a non-empty shape that is the same twice proves little
    // if both runs lost the same spans.
    for name in [
        "phase each",
        "item each#2",
        "script s",
        "iteration refine@2",
        "invoke_agent default",
    ] {
        assert!(
            b.iter().any(|s| s.name == name),
            "the Temporal run has {name:?}\n{}",
            dump(&b)
        );
    }
    let (local_shape, remote_shape) = (shapes(&a), shapes(&b));
    let missing = |from: &[Shape], of: &[Shape]| -> Vec<Shape> {
        let mut left = of.to_vec();
        from.iter()
            .filter(|s| match left.iter().position(|x| x == *s) {
                Some(i) => {
                    left.remove(i);
                    false
                }
                None => true,
            })
            .cloned()
            .collect()
    };
    assert!(
        local_shape == remote_shape,
        "the same spans under the same parents\nonly local: {:#?}\nonly on Temporal: {:#?}\n\
         local:\n{}\ntemporal:\n{}",
        missing(&local_shape, &remote_shape),
        missing(&remote_shape, &local_shape),
        dump(&a),
        dump(&b)
    );
    // Each run's script got the traceparent of the span recorded for it.
    for (run, spans, what) in [(&local, &a, "local"), (&remote, &b, "temporal")] {
        let printed = run.record["phases"]["tp"]["output"]
            .as_str()
            .unwrap_or("")
            .trim()
            .to_owned();
        let script = one(spans, "script tp");
        assert_eq!(
            printed,
            format!("00-{}-{}-01", script.trace_id, script.span_id),
            "{what}: TRACEPARENT of script tp
{}",
            dump(spans)
        );
    }
    // A run started without the variables is not traced, though its worker exports.
    let untraced = run_tfc(
        &remote_dir,
        &[
            "run",
            "flow.json",
            "--agent-cmd",
            &remote_agent,
            "--engine",
            "temporal",
            "--temporal",
            &address,
        ],
        &[],
    );
    assert_eq!(untraced.outcome.code, 0, "{:?}", untraced.outcome);
    assert_eq!(
        untraced.record["traceId"],
        Value::Null,
        "{}",
        untraced.record
    );
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(
        rx.spans().len(),
        all.len(),
        "nothing is sent for an untraced run"
    );
    assert_clean(&rx);
}

#[test]
fn the_workers_trace_a_run_its_caller_left_across_the_loss_of_the_one_holding_it() {
    let Some((server, base, rx)) = traced_server("otel-takeover") else {
        return;
    };
    let endpoint = rx.endpoint();
    let env = [("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str())];
    let dir = base.join("p");
    let agent = project(&dir);
    std::fs::write(dir.join("flow.json"), HOLD).expect("flow");
    let mut workers = [
        Worker::start_env(&server, &dir, &agent, "a", &env),
        Worker::start_env(&server, &dir, &agent, "b", &env),
    ];
    // The caller starts the run and is gone (kill -9) once its first call runs.
    let mut caller = std::process::Command::new(env!("CARGO_BIN_EXE_tfc"));
    caller
        .args(["run", "flow.json", "--agent-cmd"])
        .arg(&agent)
        .args(["--engine", "temporal", "--temporal", &server.address()])
        .current_dir(&dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    otel::clear_otel_env(&mut caller);
    let mut caller = caller.envs(env).spawn().expect("tfc run");
    assert!(
        wait_for(180, || calls(&dir).iter().any(|c| c.0 == "s1")),
        "s1 never ran"
    );
    let _ = caller.kill();
    let _ = caller.wait();
    assert!(
        wait_for(180, || calls(&dir).iter().any(|c| c.0 == "f")),
        "f never ran"
    );
    let id = run_id(&dir).expect("the run's directory");
    let trace_id = record(&dir)["traceId"]
        .as_str()
        .expect("run.json has the trace id")
        .to_owned();
    // What the holder ended (s1, the failed attempt of f) reaches the receiver before it
    // is lost.
    let calls_sent = || {
        of_trace(&rx.spans(), &trace_id)
            .iter()
            .filter(|s| s.name == "invoke_agent default")
            .count()
    };
    assert!(
        wait_for(30, || calls_sent() >= 2),
        "the holder sent its spans: {}",
        dump(&rx.spans())
    );
    kill_the_holder(&server, &id, &mut workers);
    let killed_ns = otel::now_ns();
    assert!(
        wait_for(180, || record(&dir)["status"] == "completed"),
        "the run completes on the other worker: {}",
        record(&dir)
    );
    let ended = || {
        of_trace(&rx.spans(), &trace_id)
            .iter()
            .any(|s| s.name == "run hold")
    };
    assert!(wait_for(30, ended), "the root span arrives");
    std::thread::sleep(std::time::Duration::from_secs(1));

    let spans = of_trace(&rx.spans(), &trace_id);
    let tree = dump(&spans);
    let mut ids: Vec<&str> = spans.iter().map(|s| s.span_id.as_str()).collect();
    ids.sort_unstable();
    let before = ids.len();
    ids.dedup();
    assert_eq!(
        ids.len(),
        before,
        "no span is sent twice
{tree}"
    );
    let root = one(&spans, "run hold");
    assert_eq!(
        Some(root.span_id.as_str()),
        record(&dir)["rootSpanId"].as_str(),
        "{tree}"
    );
    assert_eq!(
        root.attributes
            .get("tfc.run.status")
            .and_then(Value::as_str),
        Some("completed"),
        "{tree}"
    );
    for s in spans.iter().filter(|s| s.span_id != root.span_id) {
        assert!(
            spans.iter().any(|p| Some(&p.span_id) == s.parent.as_ref()),
            "{:?} has its parent in the trace
{tree}",
            s.name
        );
    }
    for phase in ["s1", "f", "s3"] {
        let span = one(&spans, &format!("phase {phase}"));
        assert_eq!(
            span.attributes
                .get("tfc.phase.status")
                .and_then(Value::as_str),
            Some("done"),
            "{tree}"
        );
        let attempts: Vec<i64> = spans
            .iter()
            .filter(|s| s.parent.as_deref() == Some(span.span_id.as_str()))
            .filter_map(|s| s.attributes.get("tfc.attempt").and_then(Value::as_i64))
            .collect();
        let want: &[i64] = if phase == "f" { &[1, 2] } else { &[1] };
        let mut got = attempts.clone();
        got.sort_unstable();
        assert_eq!(
            got, want,
            "{phase}'s calls are under its span
{tree}"
        );
    }
    // `f`'s span opened on the lost worker (its first call, sent by that worker, is under
    // it) and was ended by the other.
    let f = one(&spans, "phase f");
    assert!(
        f.start.expect("start") < killed_ns && f.end.expect("end") > killed_ns,
        "phase f spans the loss
{tree}"
    );
    assert_clean(&rx);
}
