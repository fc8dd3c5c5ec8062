//! `tfc run` exports its trace and metrics over OTLP/HTTP to real receivers, and the trace has
//! the contract's shape (see `otel::assert_changelog_trace`):
//!
//! - a strict validator (tests/otel/receiver.py: every request parsed with the official
//!   `opentelemetry-proto` messages, protobuf and OTLP/JSON) that records each span;
//! - Arize Phoenix (PyPI `arize-phoenix`), an LLM-tracing server with an OTLP/HTTP endpoint,
//!   queried through its REST API.
//!
//! The harness itself (both receivers, the query code and the shape assertions) is proven on a
//! trace the official OpenTelemetry Python SDK sends (tests/otel/send_sample.py) and on
//! hand-written requests. Both receivers run on the Python of `target/otel-venv` that `.ci/run`
//! makes (or `TFC_OTEL_PYTHON`); without it the tests say SKIPPED (or fail, with
//! `TFC_REQUIRE_REAL_PARTS=1`, as in CI).

mod common;
#[path = "otel/mod.rs"]
mod otel;

use std::sync::Mutex;
use std::time::Duration;

use otel::{
    Expect, Phoenix, Receiver, Span, assert_changelog_trace, assert_clean, assert_genai_metrics,
    extra_stderr_lines, http, run_changelog, send_sample,
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
    assert!(
        extra.len() <= 1,
        "one line about the exporter at most: {extra:#?}"
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
