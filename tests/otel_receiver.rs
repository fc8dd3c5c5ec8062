//! `tfc run` exports its trace and metrics over OTLP/HTTP to real receivers, and the trace has
//! the contract's shape (see `otel::assert_changelog_trace`):
//!
//! - a strict validator (tests/otel/receiver.py: every request parsed with the official
//!   `opentelemetry-proto` messages, protobuf and OTLP/JSON) that records each span;
//! - Arize Phoenix (PyPI `arize-phoenix`), an LLM-tracing server with an OTLP/HTTP endpoint,
//!   queried through its REST API.
//!
//! Small flows written in the tests and run with command agents (`--agent-cmd`) show what the
//! changelog example cannot: the TRACEPARENT agents and scripts get, a resumed run's link to
//! its parent's trace, a failure, `--otel-content`; and `tfc doctor` probes the endpoint.
//!
//! The harness itself (both receivers, the query code and the shape assertions) is proven on a
//! trace the official OpenTelemetry Python SDK sends (tests/otel/send_sample.py) and on
//! hand-written requests. Both receivers run on the Python of `target/otel-venv` that `.ci/run`
//! makes (or `TFC_OTEL_PYTHON`); without it the tests say SKIPPED (or fail, with
//! `TFC_REQUIRE_REAL_PARTS=1`, as in CI).

mod common;
#[path = "otel/mod.rs"]
mod otel;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use otel::{
    Expect, Phoenix, Receiver, Span, assert_changelog_trace, assert_clean, assert_genai_metrics,
    dump, extra_stderr_lines, http, of_trace, one, parse_traceparent, run_changelog, run_tfc,
    send_sample,
};
use serde_json::{Value, json};

const PROTOBUF: &str = "application/x-protobuf";
const JSON: &str = "application/json";

/// The changelog example makes 16 spans: the run, 4 phases, 2 scripts, 4 items, 5 agent calls.
const SPANS: usize = 16;

/// Held by the tests that may make traffic to OTLP's default port, 4318.
static DEFAULT_PORT: Mutex<()> = Mutex::new(());

// ---- the harness, on what the official SDK and hand-written requests send ----

/// The validator takes the official SDK's requests in both encodings without an error, and
/// the shape assertions hold on the SDK's trace.
#[test]
fn the_validator_takes_the_official_sdk_in_both_encodings() {
    let Some(py) = otel::require_python() else {
        return;
    };
    for (protocol, content_type) in [("protobuf", PROTOBUF), ("json", JSON)] {
        let dir = common::scratch(&format!("otel-validator-sdk-{protocol}"));
        let rx = Receiver::start(&py, &dir, &[]);
        let (record, window) = send_sample(&py, &rx.endpoint(), protocol, false);
        let mut expect = Expect::from_record(&record);
        expect.window = Some(window);
        let spans = rx.spans();
        assert_changelog_trace(&spans, &expect);
        for s in &spans {
            assert_eq!(s.content_type.as_deref(), Some(content_type));
        }
        assert_genai_metrics(&rx);
        assert_clean(&rx);
    }
}

/// The validator refuses what OTLP/HTTP does not allow, and records what it reads as said.
#[test]
fn the_validator_is_strict() {
    let Some(py) = otel::require_python() else {
        return;
    };
    let dir = common::scratch("otel-validator-strict");
    let rx = Receiver::start(&py, &dir, &[]);
    let span = |trace_id: &str, extra: Value| {
        let mut span = json!({
            "traceId": trace_id, "spanId": "eee19b7ec3c1b174", "parentSpanId": "",
            "name": "run x", "kind": 1,
            "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": 1700000000000000500u64,
            "attributes": [
                {"key": "tfc.attempt", "value": {"intValue": "1"}},
                {"key": "ok", "value": {"boolValue": true}},
                {"key": "list", "value": {"arrayValue": {"values": [{"stringValue": "a"}]}}}
            ],
            "status": {"code": 1}
        });
        span.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        json!({"resourceSpans": [{
            "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "tfc"}}]},
            "scopeSpans": [{"scope": {"name": "tfc"}, "spans": [span]}]
        }]})
        .to_string()
    };
    let good = "5b8efff798038103d269b633813fc60c";

    let post = |port: u16, body: &str| {
        http(port, "POST", "/v1/traces", Some(JSON), body.as_bytes()).unwrap()
    };
    let (status, body) = post(rx.port, &span(good, json!({})));
    assert_eq!((status, body.as_slice()), (200, &b"{}"[..]));
    assert!(rx.errors().is_empty(), "{:#?}", rx.errors());
    let line = &rx.span_lines()[0];
    assert_eq!(line["traceId"], good);
    assert_eq!(line["parentSpanId"], "");
    assert_eq!(line["kind"], 1);
    assert_eq!(line["startTimeUnixNano"], 1700000000000000000u64);
    assert_eq!(
        line["attributes"],
        json!({"tfc.attempt": 1, "ok": true, "list": ["a"]})
    );
    assert_eq!(line["status"]["code"], 1);
    assert_eq!(line["resource"]["service.name"], "tfc");
    assert_eq!(line["contentType"], JSON);
    let parsed = Span::from_validator(line);
    assert_eq!(parsed.parent, None);
    assert_eq!(parsed.start, Some(1_700_000_000_000_000_000));
    assert_eq!(parsed.links, []);
    // Links are recorded with their ids as hex, checked as a span's are.
    let (linked_trace, linked_span) = ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331");
    let link = json!({"links": [{"traceId": linked_trace, "spanId": linked_span,
        "attributes": [{"key": "why", "value": {"stringValue": "resumed"}}]}]});
    let (status, _) = post(rx.port, &span(good, link));
    assert_eq!(status, 200);
    assert!(rx.errors().is_empty(), "{:#?}", rx.errors());
    let line = &rx.span_lines()[1];
    assert_eq!(line["links"][0]["attributes"], json!({"why": "resumed"}));
    assert_eq!(
        Span::from_validator(line).links,
        [(linked_trace.to_owned(), linked_span.to_owned())]
    );

    // What it refuses (a status other than 200) or takes but records as an error.
    let check = |content_type: &str, path: &str, body: &[u8], want: u16, error: &str| {
        let before = rx.errors().len();
        let (status, answer) = http(rx.port, "POST", path, Some(content_type), body).unwrap();
        let answer = String::from_utf8_lossy(&answer);
        assert_eq!(status, want, "{content_type} {path} {answer}");
        let errors = rx.errors();
        assert!(
            errors[before..]
                .iter()
                .any(|e| e["error"].as_str().is_some_and(|e| e.contains(error))),
            "{content_type} {path}: no error {error:?} in {:#?}",
            &errors[before..]
        );
    };
    let traces = "/v1/traces";
    check(PROTOBUF, traces, b"\xff\xff\xff", 400, "not a protobuf");
    // resource_spans holding field 31, which the schema does not have.
    let field_31 = b"\x0a\x03\xf8\x01\x01";
    check(PROTOBUF, traces, field_31, 200, "unknown fields");
    check(PROTOBUF, "/v1/metrics", b"", 200, "nothing in it");
    let base64_id = span("W47/95gDgQPSabYzgT/GDA==", json!({}));
    check(JSON, traces, base64_id.as_bytes(), 400, "not hex");
    let enum_name = span(good, json!({"kind": "SPAN_KIND_CLIENT"}));
    check(JSON, traces, enum_name.as_bytes(), 200, "are integers");
    let snake_case = span(good, json!({"end_time_unix_nano": "1"}));
    check(JSON, traces, snake_case.as_bytes(), 200, "lowerCamelCase");
    let unknown = span(good, json!({"bogus": 1}));
    check(JSON, traces, unknown.as_bytes(), 400, "no field named");
    let zeros = span(&"0".repeat(32), json!({}));
    check(JSON, traces, zeros.as_bytes(), 200, "all zeros");
    let zero_link = span(
        good,
        json!({"links": [{"traceId": good, "spanId": "0".repeat(16)}]}),
    );
    check(
        JSON,
        traces,
        zero_link.as_bytes(),
        200,
        "links[0].spanId: all zeros",
    );
    let short_link = span(
        good,
        json!({"links": [{"traceId": "abcd", "spanId": "b7ad6b7169203331"}]}),
    );
    check(JSON, traces, short_link.as_bytes(), 400, "is not 16 bytes");
    let unspecified = span(good, json!({"kind": 0}));
    check(JSON, traces, unspecified.as_bytes(), 200, "UNSPECIFIED");
    check(JSON, traces, b"[1]", 400, "not a JSON object");
    let with_charset = "application/x-protobuf; charset=utf-8";
    check(with_charset, traces, b"", 415, "content type");
    check("text/plain", traces, b"", 415, "content type");
    check(PROTOBUF, "/v1/logs", b"", 404, "no such path");

    // The broken collectors it plays: recorded, then answered 500; or answered late.
    let dir = common::scratch("otel-validator-broken");
    let failing = Receiver::start(&py, &dir.join("failing"), &["--status", "500"]);
    let (status, _) = post(failing.port, &span(good, json!({})));
    assert_eq!(status, 500);
    assert_eq!(failing.spans().len(), 1);
    let slow = Receiver::start(&py, &dir.join("slow"), &["--delay", "1"]);
    let started = std::time::Instant::now();
    let (status, _) = post(slow.port, &span(good, json!({})));
    assert_eq!(status, 200);
    assert!(started.elapsed() >= Duration::from_secs(1));
}

/// Phoenix starts offline on free ports, takes the official SDK's trace over protobuf, and its
/// REST API gives it back with the contract's shape. It takes traces only as exactly
/// `application/x-protobuf` (OTLP/JSON is refused) and has no `/v1/metrics`.
#[test]
fn phoenix_takes_the_official_sdk_trace() {
    let Some(py) = otel::require_phoenix() else {
        return;
    };
    let dir = common::scratch("otel-phoenix-sdk");
    let phoenix = Phoenix::start(&py, &dir);
    let (record, _) = send_sample(&py, &phoenix.endpoint(), "protobuf", true);
    let expect = Expect::from_record(&record);
    let spans = phoenix.wait_for_spans(&expect.trace_id, SPANS, Duration::from_secs(60));
    assert_changelog_trace(&spans, &expect);
    // No `openinference.project.name` resource attribute: the project `default`.
    assert_eq!(phoenix.projects(), ["default"]);

    let post = |path: &str, content_type: &str, body: &[u8]| {
        http(phoenix.port, "POST", path, Some(content_type), body)
            .unwrap()
            .0
    };
    assert_eq!(post("/v1/traces", JSON, b"{}"), 415, "OTLP/JSON");
    assert_eq!(
        post("/v1/traces", "application/x-protobuf; charset=utf-8", b""),
        415
    );
    assert_eq!(post("/v1/traces", PROTOBUF, b""), 200);
    assert_eq!(post("/v1/metrics", PROTOBUF, b""), 405, "metrics");
}

// ---- tfc's export ----

fn exported_to_the_validator(name: &str, protocol: Option<&str>, content_type: &str) {
    let Some(py) = otel::require_python() else {
        return;
    };
    let dir = common::with_examples(name);
    let rx = Receiver::start(&py, &dir.join(".otel"), &[]);
    let endpoint = rx.endpoint();
    let mut env = vec![("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str())];
    env.extend(protocol.map(|p| ("OTEL_EXPORTER_OTLP_PROTOCOL", p)));
    let run = run_changelog(&dir, &env);
    assert_eq!(run.outcome.code, 0, "{:?}", run.outcome);
    assert_eq!(
        extra_stderr_lines(&run.outcome.stderr),
        Vec::<&str>::new(),
        "a healthy collector adds nothing to stderr"
    );
    let mut expect = Expect::from_record(&run.record);
    expect.window = Some(run.window);
    let spans = rx.spans();
    assert_changelog_trace(&spans, &expect);
    for s in &spans {
        assert_eq!(s.content_type.as_deref(), Some(content_type), "{s:?}");
        let service = s.resource.as_ref().and_then(|r| r.get("service.name"));
        assert_eq!(service, Some(&json!("tfc")), "OTEL_SERVICE_NAME's default");
    }
    assert_genai_metrics(&rx);
    for m in rx.metrics() {
        assert_eq!(m["contentType"], content_type, "{m}");
    }
    assert_clean(&rx);
}

#[test]
fn the_run_is_exported_over_protobuf_by_default() {
    exported_to_the_validator("otel-run-protobuf", None, PROTOBUF);
}

#[test]
fn the_run_is_exported_over_json() {
    exported_to_the_validator("otel-run-json", Some("http/json"), JSON);
}

/// Without an OpenTelemetry variable nothing is sent (a receiver on OTLP's default port 4318,
/// when free, hears nothing) and run.json has no trace.
#[test]
fn nothing_is_sent_without_otel_variables() {
    let Some(py) = otel::require_python() else {
        return;
    };
    let _port = DEFAULT_PORT.lock().unwrap_or_else(|e| e.into_inner());
    let dir = common::with_examples("otel-run-off");
    let rx = Receiver::try_start(&py, &dir.join(".otel-4318"), &["--port", "4318"])
        .unwrap_or_else(|| Receiver::start(&py, &dir.join(".otel"), &[]));
    let run = run_changelog(&dir, &[]);
    assert_eq!(run.outcome.code, 0, "{:?}", run.outcome);
    assert!(run.record.is_object(), "{:?}", run.outcome);
    assert_eq!(run.record.get("traceId"), None);
    assert_eq!(run.record.get("rootSpanId"), None);
    assert_eq!(rx.requests(), Vec::<Value>::new());
    assert_eq!(extra_stderr_lines(&run.outcome.stderr), Vec::<&str>::new());
}

/// A TRACEPARENT in the environment makes the run part of that trace, under that span.
#[test]
fn a_traceparent_is_the_parent_of_the_run() {
    let Some(py) = otel::require_python() else {
        return;
    };
    let (trace_id, parent) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let dir = common::with_examples("otel-run-traceparent");
    let rx = Receiver::start(&py, &dir.join(".otel"), &[]);
    let endpoint = rx.endpoint();
    let traceparent = format!("00-{trace_id}-{parent}-01");
    let run = run_changelog(
        &dir,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
            ("TRACEPARENT", &traceparent),
        ],
    );
    assert_eq!(run.outcome.code, 0, "{:?}", run.outcome);
    let mut expect = Expect::from_record(&run.record);
    assert_eq!(
        expect.trace_id, trace_id,
        "run.json's traceId is TRACEPARENT's"
    );
    expect.root_parent = Some(parent.to_owned());
    expect.window = Some(run.window);
    assert_changelog_trace(&rx.spans(), &expect);
    assert_clean(&rx);
}

/// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is the URL the spans go to, as it is (no `/v1/traces`
/// appended).
#[test]
fn a_traces_endpoint_is_used_as_is() {
    let Some(py) = otel::require_python() else {
        return;
    };
    // Where the metrics go with only a traces endpoint is not said: maybe the default port.
    let _port = DEFAULT_PORT.lock().unwrap_or_else(|e| e.into_inner());
    let dir = common::with_examples("otel-run-traces-endpoint");
    let rx = Receiver::start(&py, &dir.join(".otel"), &["--traces-path", "/otlp/spans"]);
    let url = format!("{}/otlp/spans", rx.endpoint());
    let run = run_changelog(&dir, &[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", &url)]);
    assert_eq!(run.outcome.code, 0, "{:?}", run.outcome);
    let mut expect = Expect::from_record(&run.record);
    expect.window = Some(run.window);
    let lines = rx.span_lines();
    assert!(
        lines.iter().all(|l| l["path"] == "/otlp/spans"),
        "spans went to {:?}",
        lines.iter().map(|l| &l["path"]).collect::<Vec<_>>()
    );
    assert_changelog_trace(&rx.spans(), &expect);
    assert!(rx.errors().is_empty(), "{:#?}", rx.errors());
}

/// A collector that hangs or fails never holds the run up nor fails it, and says so in one
/// stderr line at most.
fn a_bad_collector_does_not_hold_the_run(name: &str, options: &[&str]) {
    let Some(py) = otel::require_python() else {
        return;
    };
    let dir = common::with_examples(name);
    let rx = Receiver::start(&py, &dir.join(".otel"), options);
    let endpoint = rx.endpoint();
    let run = run_changelog(
        &dir,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2000"),
        ],
    );
    assert_eq!(run.outcome.code, 0, "{:?}", run.outcome);
    assert!(run.outcome.stdout.contains("# 2.0.0"), "{:?}", run.outcome);
    assert!(
        run.elapsed < Duration::from_secs(15),
        "the run took {:?} with a collector {options:?}",
        run.elapsed
    );
    let extra = extra_stderr_lines(&run.outcome.stderr);
    // The first problem, told when it happens; and, at the exit, how many spans were
    // dropped, once.
    let (dropped, problems): (Vec<&str>, Vec<&str>) = extra
        .iter()
        .copied()
        .partition(|l| l.starts_with("warning: telemetry: ") && l.contains(" dropped: "));
    assert!(
        problems.len() <= 1 && dropped.len() <= 1,
        "one line about the exporter at most, and one count of dropped spans: {extra:#?}"
    );
    assert_eq!(run.record["status"], "completed");
    let requests = rx.requests();
    assert!(
        requests.iter().any(|r| r["path"] == "/v1/traces"),
        "the export was tried: {requests:#?}"
    );
}

#[test]
fn a_slow_collector_does_not_hold_the_run() {
    a_bad_collector_does_not_hold_the_run("otel-run-slow", &["--delay", "20"]);
}

#[test]
fn a_failing_collector_does_not_fail_the_run() {
    a_bad_collector_does_not_hold_the_run("otel-run-failing", &["--status", "500"]);
}

/// The run's trace, exported over protobuf to Phoenix, comes back from its REST API with the
/// contract's shape.
#[test]
fn phoenix_shows_the_run() {
    let Some(py) = otel::require_phoenix() else {
        return;
    };
    let dir = common::with_examples("otel-phoenix-run");
    let phoenix = Phoenix::start(&py, &dir.join(".otel"));
    let endpoint = phoenix.endpoint();
    let run = run_changelog(
        &dir,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        ],
    );
    assert_eq!(run.outcome.code, 0, "{:?}", run.outcome);
    // Phoenix answers 405 to /v1/metrics: one line about it at most.
    let extra = extra_stderr_lines(&run.outcome.stderr);
    assert!(extra.len() <= 1, "{extra:#?}");
    let expect = Expect::from_record(&run.record);
    let spans = phoenix.wait_for_spans(&expect.trace_id, SPANS, Duration::from_secs(60));
    assert_changelog_trace(&spans, &expect);
}

// ---- small flows written here, run with command agents ----

/// A scratch project with this `flow.json` and an empty `.tfc/`.
fn project(name: &str, flow: &str) -> PathBuf {
    let dir = common::scratch(name);
    std::fs::create_dir_all(dir.join(".tfc")).expect(".tfc");
    std::fs::write(dir.join("flow.json"), flow).expect("flow.json");
    dir
}

/// `run.json`'s id `key` (`traceId`, `rootSpanId`).
fn id_of<'a>(record: &'a Value, key: &str) -> &'a str {
    record[key]
        .as_str()
        .unwrap_or_else(|| panic!("run.json has no {key}: {record}"))
}

fn under(child: &Span, parent: &Span, spans: &[Span]) {
    assert_eq!(
        child.parent.as_deref(),
        Some(parent.span_id.as_str()),
        "{:?} is under {:?}\n{}",
        child.name,
        parent.name,
        dump(spans)
    );
}

/// An agent command that answers with the TRACEPARENT it was given.
const ECHO_TRACEPARENT: &str = r#"sh -c 'cat > /dev/null; echo "$TRACEPARENT"'"#;

/// A command agent gets its call span as TRACEPARENT and a script phase its script span: what
/// each prints names the run's trace and exactly the span the validator received for it.
#[test]
fn command_agents_and_scripts_get_their_own_span_as_traceparent() {
    let Some(py) = otel::require_python() else {
        return;
    };
    let dir = project(
        "otel-traceparent-env",
        r#"{"name": "tp", "phases": [
            {"id": "ask", "task": "Say your TRACEPARENT."},
            {"id": "sh", "type": "script", "dependsOn": ["ask"], "run": "echo \"$TRACEPARENT\""}]}"#,
    );
    let rx = Receiver::start(&py, &dir.join(".otel"), &[]);
    let endpoint = rx.endpoint();
    let run = run_tfc(
        &dir,
        &["run", "flow.json", "--agent-cmd", ECHO_TRACEPARENT],
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)],
    );
    assert_eq!(run.outcome.code, 0, "{:?}", run.outcome);
    let trace_id = id_of(&run.record, "traceId");
    let spans = rx.spans();
    assert!(
        spans.iter().all(|s| s.trace_id == trace_id),
        "one trace, run.json's\n{}",
        dump(&spans)
    );
    let root = one(&spans, "run tp");
    assert_eq!(root.span_id, id_of(&run.record, "rootSpanId"));
    let call = one(&spans, "invoke_agent default");
    let script = one(&spans, "script sh");
    under(call, one(&spans, "phase ask"), &spans);
    under(script, one(&spans, "phase sh"), &spans);
    for (phase, span) in [("ask", call), ("sh", script)] {
        let printed = run.record["phases"][phase]["output"]
            .as_str()
            .unwrap_or_else(|| panic!("phase {phase}'s output in {}", run.record));
        let (trace, span_id, flags) = parse_traceparent(printed);
        assert_eq!(
            trace, trace_id,
            "{phase}: TRACEPARENT names the run's trace"
        );
        assert_eq!(
            span_id,
            span.span_id,
            "{phase}: TRACEPARENT names the span of {:?}\n{}",
            span.name,
            dump(&spans)
        );
        assert_eq!(flags, "01", "{phase}: sampled");
    }
    assert_clean(&rx);
}

/// A resumed run is a trace of its own whose root links to the root of the run it resumes
/// (run.json's `traceId` / `rootSpanId` of the parent) and names the parent run.
#[test]
fn a_resumed_run_links_to_the_parent_runs_trace() {
    let Some(py) = otel::require_python() else {
        return;
    };
    let dir = project(
        "otel-resume-link",
        r#"{"name": "gated", "phases": [
            {"id": "a", "task": "first"},
            {"id": "ok", "type": "approval", "dependsOn": ["a"], "task": "go?"},
            {"id": "b", "dependsOn": ["ok"], "task": "second {steps.a.output}"}]}"#,
    );
    let rx = Receiver::start(&py, &dir.join(".otel"), &[]);
    let endpoint = rx.endpoint();
    let env = [("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str())];

    let first = run_tfc(&dir, &["run", "flow.json", "--agent-cmd", "cat"], &env);
    assert_eq!(first.outcome.code, 5, "paused: {:?}", first.outcome);
    assert_eq!(first.record["status"], "paused");
    let first_id = first.run_id.clone().expect("the first run's id");
    let (first_trace, first_root) = (
        id_of(&first.record, "traceId"),
        id_of(&first.record, "rootSpanId"),
    );
    let spans = of_trace(&rx.spans(), first_trace);
    let root = one(&spans, "run gated");
    assert_eq!(root.span_id, first_root);
    attr(root, "tfc.run.status", "paused", &spans);
    assert_eq!(root.links, [], "a fresh run links to nothing");
    assert_eq!(root.attributes.get("tfc.run.parent_id"), None);

    let second = run_tfc(&dir, &["resume", &first_id, "--approve", "ok"], &env);
    assert_eq!(second.outcome.code, 0, "{:?}", second.outcome);
    assert_eq!(second.record["parentRunId"], first_id.as_str());
    let second_trace = id_of(&second.record, "traceId");
    assert_ne!(
        second_trace, first_trace,
        "a resumed run is a trace of its own"
    );
    let all = rx.spans();
    let spans = of_trace(&all, second_trace);
    let root = one(&spans, "run gated");
    assert_eq!(root.span_id, id_of(&second.record, "rootSpanId"));
    assert_eq!(root.parent, None, "linked, not a child\n{}", dump(&all));
    assert_eq!(
        root.links,
        [(first_trace.to_owned(), first_root.to_owned())],
        "the root links to the parent run's root\n{}",
        dump(&all)
    );
    attr(root, "tfc.run.parent_id", &first_id, &spans);
    attr(root, "tfc.run.status", "completed", &spans);
    for s in spans.iter().filter(|s| s.span_id != root.span_id) {
        assert!(
            spans.iter().any(|p| Some(&p.span_id) == s.parent.as_ref()),
            "{:?} has its parent in the resumed run's trace\n{}",
            s.name,
            dump(&all)
        );
        assert_eq!(s.links, [], "only the root links\n{}", dump(&all));
    }
    assert_eq!(
        all.len(),
        of_trace(&all, first_trace).len() + spans.len(),
        "two traces\n{}",
        dump(&all)
    );
    assert_clean(&rx);
}

/// A run killed with SIGKILL in the middle of an agent call sends nothing more (its root span
/// never ends), but `run.json` kept its trace ids from the start: the run that resumes it is
/// a whole trace of its own, its root linked to the killed run's.
#[test]
fn a_run_killed_mid_call_resumes_as_a_trace_linked_to_the_killed_one() {
    let Some(py) = otel::require_python() else {
        return;
    };
    let dir = project(
        "otel-kill-resume",
        r#"{"name": "killed", "phases": [
            {"id": "a", "task": "first"},
            {"id": "b", "dependsOn": ["a"], "task": "slow second"}]}"#,
    );
    // `b` hangs until the file `go` exists; `a` answers at once.
    std::fs::write(
        dir.join("agent.sh"),
        "#!/bin/sh\np=$(cat)\ncase \"$p\" in *slow*) [ -f go ] || sleep 5;; esac\necho ok\n",
    )
    .expect("agent.sh");
    let _ = Command::new("chmod")
        .arg("+x")
        .arg(dir.join("agent.sh"))
        .status();
    let rx = Receiver::start(&py, &dir.join(".otel"), &[]);
    let endpoint = rx.endpoint();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tfc"));
    cmd.args(["run", "flow.json", "--agent-cmd", "./agent.sh"])
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    otel::clear_otel_env(&mut cmd);
    cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint);
    let mut child = cmd.spawn().expect("spawn tfc run");
    // Killed once `b`'s call is under way (its phase's start is in the journal: written
    // before the call is made).
    let started = std::time::Instant::now();
    let run = loop {
        let found = std::fs::read_dir(dir.join(".tfc/runs/killed"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                std::fs::read_to_string(p.join("journal.jsonl")).is_ok_and(|j| {
                    j.contains(r#""type":"phase-start","#) && j.contains(r#""phase":"b""#)
                })
            });
        if let Some(run) = found {
            break run;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "b's call never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(100));
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    let killed: Value = serde_json::from_str(
        &std::fs::read_to_string(run.join("run.json")).expect("the killed run's run.json"),
    )
    .expect("run.json is whole");
    let killed_id = killed["runId"].as_str().expect("runId").to_owned();
    let (killed_trace, killed_root) = (id_of(&killed, "traceId"), id_of(&killed, "rootSpanId"));
    std::fs::write(dir.join("go"), "").expect("go");

    let second = run_tfc(
        &dir,
        &["resume", &killed_id],
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str())],
    );
    assert_eq!(second.outcome.code, 0, "{:?}", second.outcome);
    assert_eq!(second.record["parentRunId"], killed_id.as_str());
    let all = rx.spans();
    assert!(
        !of_trace(&all, killed_trace)
            .iter()
            .any(|s| s.name == "run killed"),
        "the killed run never ended its root\n{}",
        dump(&all)
    );
    let spans = of_trace(&all, id_of(&second.record, "traceId"));
    let root = one(&spans, "run killed");
    assert_eq!(
        root.links,
        [(killed_trace.to_owned(), killed_root.to_owned())],
        "linked to the killed run's root\n{}",
        dump(&all)
    );
    attr(root, "tfc.run.status", "completed", &spans);
    attr(root, "tfc.run.parent_id", &killed_id, &spans);
    let b = one(&spans, "phase b");
    under(b, root, &spans);
    attr(b, "tfc.phase.status", "done", &spans);
    under(one(&spans, "invoke_agent default"), b, &spans);
    // `a` finished before the kill: reused, not called again.
    let a = one(&spans, "phase a");
    under(a, root, &spans);
    attr(a, "tfc.phase.status", "done", &spans);
    assert!(
        !spans
            .iter()
            .any(|s| s.parent.as_deref() == Some(a.span_id.as_str())),
        "a is not called again\n{}",
        dump(&all)
    );
}

/// The text attribute `key` of `span` is `want`.
fn attr(span: &Span, key: &str, want: &str, spans: &[Span]) {
    assert_eq!(
        span.attributes.get(key).and_then(Value::as_str),
        Some(want),
        "{:?}: {key}\n{}",
        span.name,
        dump(spans)
    );
}

const ERROR: i64 = 2;

/// An agent command that fails: its call span and its phase span are errors that say what
/// went wrong, and the run's root says the run failed.
#[test]
fn a_failed_agent_call_is_an_error_in_the_trace() {
    let Some(py) = otel::require_python() else {
        return;
    };
    let dir = project(
        "otel-failed-phase",
        r#"{"name": "broken", "phases": [{"id": "work", "task": "do it"}]}"#,
    );
    let rx = Receiver::start(&py, &dir.join(".otel"), &[]);
    let endpoint = rx.endpoint();
    let failing = r#"sh -c 'cat > /dev/null; echo "the agent broke down" >&2; exit 3'"#;
    let run = run_tfc(
        &dir,
        &["run", "flow.json", "--agent-cmd", failing],
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)],
    );
    assert_eq!(run.outcome.code, 1, "{:?}", run.outcome);
    assert_eq!(run.record["status"], "failed");
    let error = run.record["phases"]["work"]["error"]
        .as_str()
        .expect("the phase's error in run.json");
    assert!(error.contains("the agent broke down"), "{error}");
    let spans = rx.spans();
    let tree = dump(&spans);

    let call = one(&spans, "invoke_agent default");
    assert_eq!(call.status, Some(ERROR), "the call is an error\n{tree}");
    assert!(
        call.status_message
            .as_deref()
            .is_some_and(|m| m.contains("the agent broke down")),
        "the call's status says what went wrong\n{tree}"
    );
    // The command exited with 3: an exit status, never the bare word `error` (SPEC §16).
    attr(call, "error.type", "exit_status", &spans);

    let phase = one(&spans, "phase work");
    under(call, phase, &spans);
    assert_eq!(phase.status, Some(ERROR), "the phase is an error\n{tree}");
    assert_eq!(
        phase.status_message.as_deref(),
        Some(error),
        "the phase's status message is run.json's error\n{tree}"
    );
    attr(phase, "tfc.phase.status", "failed", &spans);

    let root = one(&spans, "run broken");
    attr(root, "tfc.run.status", "failed", &spans);
    assert_eq!(root.status, Some(ERROR), "a failed run is an error\n{tree}");
    assert_clean(&rx);
}

/// Prompts and answers are span attributes only with `--otel-content`: then the call span has
/// `gen_ai.input.messages` and `gen_ai.output.messages` (GenAI message lists as JSON text);
/// without it neither, and no attribute anywhere holds the prompt or the answer.
#[test]
fn prompts_and_answers_are_exported_only_with_otel_content() {
    let Some(py) = otel::require_python() else {
        return;
    };
    let (prompt, answer) = ("Summarize PROMPT-MARKER-42.", "ANSWER-MARKER-7");
    let flow = format!(r#"{{"name": "content", "phases": [{{"id": "ask", "task": "{prompt}"}}]}}"#);
    let agent = format!("sh -c 'cat > /dev/null; echo {answer}'");
    for with_content in [true, false] {
        let dir = project(&format!("otel-content-{with_content}"), &flow);
        let rx = Receiver::start(&py, &dir.join(".otel"), &[]);
        let endpoint = rx.endpoint();
        let mut args = vec!["run", "flow.json", "--agent-cmd", &agent];
        if with_content {
            args.push("--otel-content");
        }
        let run = run_tfc(&dir, &args, &[("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)]);
        assert_eq!(run.outcome.code, 0, "{:?}", run.outcome);
        assert_eq!(run.outcome.stdout.trim(), answer);
        let spans = rx.spans();
        let tree = dump(&spans);
        let call = one(&spans, "invoke_agent default");
        let messages = |key: &str| -> Option<Value> {
            let text = call.attributes.get(key)?.as_str();
            let text = text.unwrap_or_else(|| panic!("{key} is a string\n{tree}"));
            Some(serde_json::from_str(text).unwrap_or_else(|e| panic!("{key}: {e}\n{tree}")))
        };
        let (input, output) = (
            messages("gen_ai.input.messages"),
            messages("gen_ai.output.messages"),
        );
        if with_content {
            let text_of = |m: Option<Value>, role: &str| -> String {
                let m = m.unwrap_or_else(|| panic!("{role}'s messages\n{tree}"));
                assert_eq!(m[0]["role"], role, "{m}");
                assert_eq!(m[0]["parts"][0]["type"], "text", "{m}");
                m[0]["parts"][0]["content"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{m}"))
                    .to_owned()
            };
            let asked = text_of(input, "user");
            assert!(asked.contains(prompt), "the prompt in {asked:?}");
            let answered = text_of(output, "assistant");
            assert_eq!(answered.trim(), answer);
        } else {
            assert_eq!((input, output), (None, None), "no content\n{tree}");
            for s in &spans {
                let all = Value::Object(s.attributes.clone()).to_string();
                assert!(
                    !all.contains("PROMPT-MARKER") && !all.contains(answer),
                    "{:?} holds content: {all}",
                    s.name
                );
            }
        }
        assert_clean(&rx);
    }
}

/// `tfc doctor` says where runs go and whether the endpoint answers: a validator that is
/// running answers (and gets the probe), a closed port does not; without a variable, off.
#[test]
fn doctor_tells_where_runs_go_and_whether_the_endpoint_answers() {
    let Some(py) = otel::require_python() else {
        return;
    };
    let dir = project("otel-doctor", "{}");
    let doctor = |env: &[(&str, &str)]| {
        let run = run_tfc(&dir, &["doctor"], env);
        run.outcome.stdout
    };

    let rx = Receiver::start(&py, &dir.join(".otel"), &[]);
    let endpoint = rx.endpoint();
    let out = doctor(&[("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)]);
    let traces = format!("{endpoint}/v1/traces");
    assert!(
        out.lines()
            .any(|l| l.trim() == format!("traces   → {traces} (http/protobuf)")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.trim() == format!("endpoint: {traces} answers")),
        "{out}"
    );
    let probes: Vec<Value> = rx.requests();
    assert_eq!(probes.len(), 1, "one probe: {probes:#?}");
    assert_eq!(probes[0]["path"], "/v1/traces");
    assert_eq!(probes[0]["contentType"], PROTOBUF);
    assert_eq!(probes[0]["status"], 200);

    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port")
        .port();
    let out = doctor(&[(
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        &format!("http://127.0.0.1:{closed}"),
    )]);
    assert!(
        out.lines()
            .any(|l| l.trim().starts_with("endpoint: not answering")),
        "{out}"
    );

    let out = doctor(&[]);
    assert!(out.lines().any(|l| l.trim().starts_with("off: ")), "{out}");
    assert!(
        !out.lines().any(|l| l.trim().starts_with("endpoint:")),
        "no endpoint probed: {out}"
    );
}
