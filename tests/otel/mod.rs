//! Real OpenTelemetry receivers for tests/otel_receiver.rs, and the shape a run's trace must have.
//!
//! - [`Receiver`]: `tests/otel/receiver.py`, a strict OTLP/HTTP validator (protobuf and JSON,
//!   parsed with the official `opentelemetry-proto` messages) that writes what it received as
//!   JSON lines.
//! - [`Phoenix`]: an Arize Phoenix server (PyPI `arize-phoenix`), an LLM-tracing backend with an
//!   OTLP/HTTP endpoint and a REST API to query the spans it stored.
//!
//! Both run with the Python of the virtual environment `.ci/run` makes (`target/otel-venv`, or
//! `TFC_OTEL_PYTHON`), on 127.0.0.1 at free ports, each stopped by its pid.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use crate::common;

/// The variable naming the Python that has `opentelemetry-proto` and `arize-phoenix`.
pub const PYTHON_VAR: &str = "TFC_OTEL_PYTHON";

/// SpanKind CLIENT in OTLP.
pub const SPAN_KIND_CLIENT: i64 = 3;

fn venv_python() -> PathBuf {
    match std::env::var_os(PYTHON_VAR).filter(|p| !p.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => common::root().join("target/otel-venv/bin/python"),
    }
}

fn python_with(check: &str) -> Option<PathBuf> {
    let p = venv_python();
    let ok = Command::new(&p)
        .args(["-c", check])
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(p)
}

/// The Python with the official OTLP messages and SDK, or [`common::skip`].
pub fn require_python() -> Option<PathBuf> {
    let p = python_with(
        "import google.protobuf, opentelemetry.proto.collector.trace.v1.trace_service_pb2, \
         opentelemetry.exporter.otlp.proto.http.trace_exporter",
    );
    if p.is_none() {
        common::skip(&format!(
            "no Python with opentelemetry-proto and the OTLP/HTTP exporter (run .ci/run, or set \
             {PYTHON_VAR})"
        ));
    }
    p
}

/// The Python with Phoenix installed, or [`common::skip`].
pub fn require_phoenix() -> Option<PathBuf> {
    // Not `import phoenix`: that takes seconds.
    let p = python_with("import importlib.metadata as m; m.version('arize-phoenix')");
    if p.is_none() {
        common::skip(&format!(
            "no Python with arize-phoenix (run .ci/run, or set {PYTHON_VAR})"
        ));
    }
    p
}

fn script(name: &str) -> PathBuf {
    common::root().join("tests/otel").join(name)
}

fn free_ports<const N: usize>() -> [u16; N] {
    let listeners: Vec<TcpListener> = (0..N)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("a free port"))
        .collect();
    std::array::from_fn(|i| listeners[i].local_addr().expect("port").port())
}

/// Nanoseconds since the Unix epoch.
pub fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_nanos()
}

/// Take every OpenTelemetry variable of the test's environment away from `cmd`.
pub fn clear_otel_env(cmd: &mut Command) {
    for (key, _) in std::env::vars_os() {
        let k = key.to_string_lossy();
        if k.starts_with("OTEL_") || k == "TRACEPARENT" || k == "TRACESTATE" {
            cmd.env_remove(&key);
        }
    }
}

/// One HTTP/1.0 exchange with 127.0.0.1:`port`: the status and the body.
pub fn http(
    port: u16,
    method: &str,
    path: &str,
    content_type: Option<&str>,
    body: &[u8],
) -> std::io::Result<(u16, Vec<u8>)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut head = format!(
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(t) = content_type {
        head.push_str(&format!("Content-Type: {t}\r\n"));
    }
    head.push_str("Connection: close\r\n\r\n");
    s.write_all(head.as_bytes())?;
    s.write_all(body)?;
    let mut answer = Vec::new();
    s.read_to_end(&mut answer)?;
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| std::io::Error::other("no end of headers"))?;
    let status = String::from_utf8_lossy(&answer[..split])
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other("no status"))?;
    Ok((status, answer[split + 4..].to_vec()))
}

fn json_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// A span as a receiver stored it.
#[derive(Debug, Clone)]
pub struct Span {
    pub trace_id: String,
    pub span_id: String,
    /// `None` for a span without a parent.
    pub parent: Option<String>,
    pub name: String,
    /// The OTLP SpanKind; `None` where the receiver does not keep it (Phoenix).
    pub kind: Option<i64>,
    /// Start and end, ns since the epoch; `None` where not compared (Phoenix).
    pub start: Option<u128>,
    pub end: Option<u128>,
    /// OTLP status code (0 unset, 1 ok, 2 error).
    pub status: Option<i64>,
    /// The status message (`None` where the receiver does not keep it, or it is empty).
    pub status_message: Option<String>,
    /// The spans of other traces it links to: (trace id, span id); empty where the receiver
    /// does not keep links (Phoenix).
    pub links: Vec<(String, String)>,
    pub attributes: Map<String, Value>,
    /// The resource's attributes; `None` where the receiver does not keep them (Phoenix).
    pub resource: Option<Map<String, Value>>,
    /// The content type it came in (the validator only).
    pub content_type: Option<String>,
}

fn str_of(v: &Value, key: &str) -> String {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("no string {key} in {v}"))
        .to_owned()
}

impl Span {
    /// A line of the validator's spans.jsonl.
    pub fn from_validator(v: &Value) -> Span {
        let parent = str_of(v, "parentSpanId");
        Span {
            trace_id: str_of(v, "traceId"),
            span_id: str_of(v, "spanId"),
            parent: (!parent.is_empty()).then_some(parent),
            name: str_of(v, "name"),
            kind: v["kind"].as_i64(),
            start: v["startTimeUnixNano"].as_u64().map(u128::from),
            end: v["endTimeUnixNano"].as_u64().map(u128::from),
            status: v["status"]["code"].as_i64(),
            status_message: v["status"]["message"]
                .as_str()
                .filter(|m| !m.is_empty())
                .map(str::to_owned),
            links: v["links"]
                .as_array()
                .map(|links| {
                    links
                        .iter()
                        .map(|l| (str_of(l, "traceId"), str_of(l, "spanId")))
                        .collect()
                })
                .unwrap_or_default(),
            attributes: v["attributes"].as_object().cloned().unwrap_or_default(),
            resource: v["resource"].as_object().cloned(),
            content_type: v["contentType"].as_str().map(str::to_owned),
        }
    }

    /// A span of Phoenix's `GET /v1/projects/{project}/spans`.
    pub fn from_phoenix(v: &Value) -> Span {
        Span {
            trace_id: str_of(&v["context"], "trace_id"),
            span_id: str_of(&v["context"], "span_id"),
            parent: v["parent_id"].as_str().map(str::to_owned),
            name: str_of(v, "name"),
            kind: None,
            start: None,
            end: None,
            status: match v["status_code"].as_str() {
                Some("OK") => Some(1),
                Some("ERROR") => Some(2),
                _ => Some(0),
            },
            status_message: v["status_message"]
                .as_str()
                .filter(|m| !m.is_empty())
                .map(str::to_owned),
            links: Vec::new(),
            attributes: v["attributes"].as_object().cloned().unwrap_or_default(),
            resource: None,
            content_type: None,
        }
    }
}

/// `tests/otel/receiver.py`, stopped when dropped.
pub struct Receiver {
    child: Child,
    pub port: u16,
    /// Where its .jsonl files are.
    pub out: PathBuf,
    log: PathBuf,
}

impl Receiver {
    /// Start it in `dir` with these options (`--delay S`, `--status CODE`, `--port N`,
    /// `--traces-path P`); `None` if it could not listen (a `--port` taken).
    pub fn try_start(python: &Path, dir: &Path, options: &[&str]) -> Option<Receiver> {
        std::fs::create_dir_all(dir).expect("receiver dir");
        let out = dir.join("otlp");
        let log = dir.join("receiver.log");
        let mut cmd = Command::new(python);
        cmd.arg(script("receiver.py"))
            .arg(&out)
            .args(options)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("receiver log"));
        clear_otel_env(&mut cmd);
        let mut child = cmd.spawn().expect("start receiver.py");
        let mut first = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut first)
            .expect("read the port");
        let Ok(port) = first.trim().parse() else {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        };
        Some(Receiver {
            child,
            port,
            out,
            log,
        })
    }

    pub fn start(python: &Path, dir: &Path, options: &[&str]) -> Receiver {
        Receiver::try_start(python, dir, options).unwrap_or_else(|| {
            panic!(
                "receiver.py did not start: {}",
                std::fs::read_to_string(dir.join("receiver.log")).unwrap_or_default()
            )
        })
    }

    /// The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn spans(&self) -> Vec<Span> {
        self.span_lines().iter().map(Span::from_validator).collect()
    }

    pub fn span_lines(&self) -> Vec<Value> {
        json_lines(&self.out.join("spans.jsonl"))
    }

    /// One line a data point: name, type, unit, attributes, count/sum/value, contentType.
    pub fn metrics(&self) -> Vec<Value> {
        json_lines(&self.out.join("metrics.jsonl"))
    }

    /// What did not follow OTLP: path, contentType, error.
    pub fn errors(&self) -> Vec<Value> {
        json_lines(&self.out.join("errors.jsonl"))
    }

    /// Every request: path, method, contentType, contentEncoding, bytes, status.
    pub fn requests(&self) -> Vec<Value> {
        json_lines(&self.out.join("requests.jsonl"))
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An Arize Phoenix server on 127.0.0.1 with its database in a directory of the test's;
/// stopped (SIGTERM, then SIGKILL) when dropped.
pub struct Phoenix {
    child: Option<Child>,
    pub port: u16,
    pub grpc_port: u16,
    log: PathBuf,
}

impl Phoenix {
    /// Start it with its working directory (sqlite database) in `dir/phoenix` and wait until
    /// `/healthz` answers.
    pub fn start(python: &Path, dir: &Path) -> Phoenix {
        let [port, grpc_port] = free_ports::<2>();
        std::fs::create_dir_all(dir).expect("phoenix dir");
        let log = dir.join("phoenix.log");
        let file = std::fs::File::create(&log).expect("phoenix log");
        let mut cmd = Command::new(python);
        cmd.args(["-m", "phoenix.server.main", "serve"])
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(file.try_clone().expect("phoenix log"))
            .stderr(file);
        clear_otel_env(&mut cmd);
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("PHOENIX_") {
                cmd.env_remove(&key);
            }
        }
        cmd.env("PHOENIX_WORKING_DIR", dir.join("phoenix"))
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", grpc_port.to_string())
            // Offline and quiet: no telemetry pixels, no downloads, no assistant or MCP server.
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .env("PHOENIX_ALLOW_EXTERNAL_RESOURCES", "false")
            .env("PHOENIX_DISABLE_AGENT_ASSISTANT", "true")
            .env("PHOENIX_ENABLE_MCP_SERVER", "false")
            .env("PHOENIX_LOG_MIGRATIONS", "false")
            .env("PHOENIX_LOGGING_LEVEL", "warning");
        let mut phoenix = Phoenix {
            child: Some(cmd.spawn().expect("start phoenix")),
            port,
            grpc_port,
            log,
        };
        // About 9 s on two idle cores; far more on a loaded machine.
        let until = Instant::now() + Duration::from_secs(180);
        loop {
            if let Ok((200, _)) = http(port, "GET", "/healthz", None, b"") {
                break;
            }
            let exited = phoenix
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            assert!(
                exited.is_none() && Instant::now() < until,
                "Phoenix did not start ({exited:?}); its log:\n{}",
                phoenix.log_tail()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        phoenix
    }

    /// The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT (Phoenix takes `/v1/traces` there).
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    fn get(&self, path: &str) -> Value {
        let (status, body) =
            http(self.port, "GET", path, None, b"").unwrap_or_else(|e| panic!("GET {path}: {e}"));
        assert_eq!(
            status,
            200,
            "GET {path}: {}",
            String::from_utf8_lossy(&body)
        );
        serde_json::from_slice(&body).unwrap_or_else(|e| panic!("GET {path}: {e}"))
    }

    /// The names of Phoenix's projects (the OTLP resource attribute
    /// `openinference.project.name`, else `default`).
    pub fn projects(&self) -> Vec<String> {
        self.get("/v1/projects")["data"]
            .as_array()
            .expect("projects")
            .iter()
            .map(|p| str_of(p, "name"))
            .collect()
    }

    /// The spans of one trace, in whichever project they landed.
    pub fn spans_of_trace(&self, trace_id: &str) -> Vec<Span> {
        let mut spans = Vec::new();
        for project in self.projects() {
            let page = self.get(&format!(
                "/v1/projects/{project}/spans?trace_id={trace_id}&limit=1000"
            ));
            spans.extend(
                page["data"]
                    .as_array()
                    .expect("spans")
                    .iter()
                    .map(Span::from_phoenix),
            );
        }
        spans
    }

    /// Poll until at least `count` spans of the trace are stored (Phoenix inserts them in the
    /// background, in batches) or `timeout` passes; then what is there.
    pub fn wait_for_spans(&self, trace_id: &str, count: usize, timeout: Duration) -> Vec<Span> {
        let until = Instant::now() + timeout;
        loop {
            let spans = self.spans_of_trace(trace_id);
            if spans.len() >= count || Instant::now() >= until {
                return spans;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let until = Instant::now() + Duration::from_secs(10);
        while Instant::now() < until {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// One `tfc` command that runs a flow (`run`, `resume`).
pub struct TfcRun {
    pub outcome: common::Outcome,
    pub elapsed: Duration,
    /// Before the process started and after it ended, ns since the epoch.
    pub window: (u128, u128),
    /// The run id it printed last (`run <id> …` on stderr), if any.
    pub run_id: Option<String>,
    /// Its run.json, `Null` if none was written.
    pub record: Value,
}

/// Run `tfc run examples/changelog/flow.json --replay …` in `dir` (a [`common::with_examples`]
/// project) with no OpenTelemetry variable of the test's environment but these.
pub fn run_changelog(dir: &Path, env: &[(&str, &str)]) -> TfcRun {
    run_tfc(
        dir,
        &[
            "run",
            "examples/changelog/flow.json",
            "--replay",
            "examples/changelog/replay.jsonl",
        ],
        env,
    )
}

/// Run `tfc args…` in `dir` with no OpenTelemetry variable of the test's environment but
/// these; the record of the run it printed, from `dir/.tfc/runs/<flow>/<id>/run.json`.
pub fn run_tfc(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> TfcRun {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tfc"));
    cmd.args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    clear_otel_env(&mut cmd);
    cmd.envs(env.iter().copied());
    let before = now_ns();
    let started = Instant::now();
    let out = cmd.output().expect("run tfc");
    let elapsed = started.elapsed();
    let after = now_ns();
    let outcome = common::Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    let run_id = outcome
        .stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("run "))
        .and_then(|l| l.split_whitespace().next())
        .map(str::to_owned);
    let record = run_id
        .as_deref()
        .and_then(|id| run_record(dir, id))
        .unwrap_or(Value::Null);
    TfcRun {
        outcome,
        elapsed,
        window: (before, after),
        run_id,
        record,
    }
}

/// The run.json of run `id` of any flow under `dir/.tfc/runs/`.
pub fn run_record(dir: &Path, id: &str) -> Option<Value> {
    std::fs::read_dir(dir.join(".tfc/runs"))
        .ok()?
        .flatten()
        .find_map(|flow| std::fs::read(flow.path().join(id).join("run.json")).ok())
        .map(|b| serde_json::from_slice(&b).expect("run.json"))
}

/// The stderr lines of a `tfc run` that are not its progress (`▶ …`, `✓ …`) nor its end line
/// (`run <id> …`): what an exporter problem may add.
pub fn extra_stderr_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| {
            !(l.trim().is_empty()
                || l.starts_with("▶ ")
                || l.starts_with("✓ ")
                || l.starts_with("run "))
        })
        .collect()
}

/// What a run's trace must show, taken from its run.json.
#[derive(Debug, Clone)]
pub struct Expect {
    pub trace_id: String,
    pub root_span_id: String,
    /// The root's parent: `None`, or TRACEPARENT's span id.
    pub root_parent: Option<String>,
    pub run_id: String,
    pub flow: String,
    pub status: String,
    /// Each phase: id, kind (run.json `type`), status.
    pub phases: Vec<(String, String, String)>,
    /// Every span lies within this (ns since the epoch), where known.
    pub window: Option<(u128, u128)>,
}

impl Expect {
    /// From a run.json (or what tests/otel/send_sample.py prints in its stead).
    pub fn from_record(record: &Value) -> Expect {
        let id = |key: &str, len: usize| {
            let v = record[key]
                .as_str()
                .unwrap_or_else(|| panic!("run.json has no string {key:?}"));
            assert!(
                v.len() == len && v.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
                "run.json {key} {v:?} is not {len} lowercase hex digits"
            );
            v.to_owned()
        };
        let phases = record["phases"]
            .as_object()
            .expect("run.json phases")
            .iter()
            .map(|(id, p)| (id.clone(), str_of(p, "type"), str_of(p, "status")))
            .collect();
        Expect {
            trace_id: id("traceId", 32),
            root_span_id: id("rootSpanId", 16),
            root_parent: None,
            run_id: str_of(record, "runId"),
            flow: str_of(record, "flow"),
            status: str_of(record, "status"),
            phases,
            window: None,
        }
    }
}

/// The spans as an indented tree, for failure messages.
pub fn dump(spans: &[Span]) -> String {
    let ids: BTreeSet<&str> = spans.iter().map(|s| s.span_id.as_str()).collect();
    let mut children: BTreeMap<Option<&str>, Vec<&Span>> = BTreeMap::new();
    for s in spans {
        let parent = s.parent.as_deref().filter(|p| ids.contains(p));
        children.entry(parent).or_default().push(s);
    }
    fn walk(
        out: &mut String,
        children: &BTreeMap<Option<&str>, Vec<&Span>>,
        at: Option<&str>,
        depth: usize,
    ) {
        let mut here = children.get(&at).cloned().unwrap_or_default();
        here.sort_by_key(|s| (s.start, s.name.clone()));
        for s in here {
            out.push_str(&format!(
                "{}{} [{} parent {:?} kind {:?}] {}\n",
                "  ".repeat(depth),
                s.name,
                s.span_id,
                s.parent,
                s.kind,
                Value::Object(s.attributes.clone())
            ));
            walk(out, children, Some(&s.span_id), depth + 1);
        }
    }
    let mut out = String::new();
    walk(&mut out, &children, None, 0);
    out
}

fn attr_is(span: &Span, key: &str, want: &str, tree: &str) {
    assert_eq!(
        span.attributes.get(key).and_then(Value::as_str),
        Some(want),
        "span {:?}: attribute {key} should be {want:?}\n{tree}",
        span.name
    );
}

/// The trace of a run of the changelog example (collect: script; classify: map of 4 `analyst`
/// calls; bump: script; notes: one `writer` call), as the export contract says:
///
/// - one trace id, run.json's `traceId`; span ids unique;
/// - the spans are exactly: `run changelog`; `phase collect|classify|bump|notes`;
///   `script collect`, `script bump`; `item classify#0..3`; 4 × `invoke_agent analyst`,
///   1 × `invoke_agent writer`;
/// - root `run changelog`: span id run.json's `rootSpanId`, parent none (or TRACEPARENT's),
///   `tfc.run.id`, `tfc.flow.name`, `tfc.run.status` as in run.json; not status ERROR;
/// - each `phase X`: child of the root, `tfc.phase.id` X, `tfc.phase.kind` run.json's type,
///   `tfc.phase.status` run.json's status;
/// - `script X` under `phase X`; each `item classify#i` under `phase classify`;
/// - each `invoke_agent analyst` under its own item span, `invoke_agent writer` under
///   `phase notes`; kind CLIENT (where the receiver keeps kinds), `gen_ai.operation.name`
///   `invoke_agent`, `gen_ai.provider.name` `replay`, `gen_ai.agent.name`, `tfc.attempt` 1,
///   token counts (if given) whole numbers ≥ 0;
/// - where times are known: every span within the run's wall time, end ≥ start, and within
///   its parent.
pub fn assert_changelog_trace(spans: &[Span], e: &Expect) {
    let tree = dump(spans);
    let trace_ids: BTreeSet<&str> = spans.iter().map(|s| s.trace_id.as_str()).collect();
    assert_eq!(
        trace_ids,
        BTreeSet::from([e.trace_id.as_str()]),
        "one trace, run.json's traceId\n{tree}"
    );
    let span_ids: BTreeSet<&str> = spans.iter().map(|s| s.span_id.as_str()).collect();
    assert_eq!(span_ids.len(), spans.len(), "span ids are unique\n{tree}");

    let mut names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    names.sort_unstable();
    let phase_ids = ["collect", "classify", "bump", "notes"];
    let mut want: Vec<String> = vec![format!("run {}", e.flow)];
    want.extend(phase_ids.iter().map(|p| format!("phase {p}")));
    want.extend(["script collect".into(), "script bump".into()]);
    want.extend((0..4).map(|i| format!("item classify#{i}")));
    want.extend(std::iter::repeat_n("invoke_agent analyst".to_owned(), 4));
    want.push("invoke_agent writer".into());
    want.sort_unstable();
    assert_eq!(names, want, "the spans of the run\n{tree}");

    let one = |name: &str| -> &Span {
        let found: Vec<&Span> = spans.iter().filter(|s| s.name == name).collect();
        assert_eq!(found.len(), 1, "one span {name:?}\n{tree}");
        found[0]
    };
    let by_id: BTreeMap<&str, &Span> = spans.iter().map(|s| (s.span_id.as_str(), s)).collect();

    let root = one(&format!("run {}", e.flow));
    assert_eq!(
        root.parent, e.root_parent,
        "the root's parent (TRACEPARENT's span, or none)\n{tree}"
    );
    assert_eq!(
        root.span_id, e.root_span_id,
        "the root is run.json's rootSpanId\n{tree}"
    );
    attr_is(root, "tfc.run.id", &e.run_id, &tree);
    attr_is(root, "tfc.flow.name", &e.flow, &tree);
    attr_is(root, "tfc.run.status", &e.status, &tree);
    assert_ne!(
        root.status,
        Some(2),
        "a {} run is no error\n{tree}",
        e.status
    );
    for s in spans.iter().filter(|s| s.span_id != root.span_id) {
        let parent = s.parent.as_deref();
        assert!(
            parent.is_some_and(|p| by_id.contains_key(p)),
            "span {:?} has its parent {parent:?} in the trace\n{tree}",
            s.name
        );
    }

    for pid in phase_ids {
        let phase = one(&format!("phase {pid}"));
        assert_eq!(
            phase.parent.as_deref(),
            Some(root.span_id.as_str()),
            "phase {pid} is a child of the root\n{tree}"
        );
        let (_, kind, status) = e
            .phases
            .iter()
            .find(|(id, _, _)| id == pid)
            .unwrap_or_else(|| panic!("run.json has phase {pid}"));
        attr_is(phase, "tfc.phase.id", pid, &tree);
        attr_is(phase, "tfc.phase.kind", kind, &tree);
        attr_is(phase, "tfc.phase.status", status, &tree);
    }
    let under = |child: &Span, parent: &Span| {
        assert_eq!(
            child.parent.as_deref(),
            Some(parent.span_id.as_str()),
            "{:?} is under {:?}\n{tree}",
            child.name,
            parent.name
        );
    };
    for pid in ["collect", "bump"] {
        under(one(&format!("script {pid}")), one(&format!("phase {pid}")));
    }
    let classify = one("phase classify");
    let items: Vec<&Span> = (0..4).map(|i| one(&format!("item classify#{i}"))).collect();
    for item in &items {
        under(item, classify);
    }
    let analysts: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name == "invoke_agent analyst")
        .collect();
    let mut analyst_parents: Vec<&str> = analysts
        .iter()
        .map(|s| s.parent.as_deref().unwrap_or(""))
        .collect();
    analyst_parents.sort_unstable();
    let mut item_ids: Vec<&str> = items.iter().map(|s| s.span_id.as_str()).collect();
    item_ids.sort_unstable();
    assert_eq!(
        analyst_parents, item_ids,
        "each analyst call is under its own item span\n{tree}"
    );
    let writer = one("invoke_agent writer");
    under(writer, one("phase notes"));
    for (agent, span) in analysts
        .iter()
        .map(|s| ("analyst", *s))
        .chain([("writer", writer)])
    {
        if let Some(kind) = span.kind {
            assert_eq!(
                kind, SPAN_KIND_CLIENT,
                "an agent call is a CLIENT span\n{tree}"
            );
        }
        attr_is(span, "gen_ai.operation.name", "invoke_agent", &tree);
        attr_is(span, "gen_ai.provider.name", "replay", &tree);
        attr_is(span, "gen_ai.agent.name", agent, &tree);
        let attempt = span.attributes.get("tfc.attempt");
        assert!(
            attempt.is_some_and(|a| a.as_i64() == Some(1) || a.as_str() == Some("1")),
            "{agent}: tfc.attempt 1, not {attempt:?}\n{tree}"
        );
        for key in ["gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"] {
            if let Some(v) = span.attributes.get(key) {
                assert!(
                    v.as_u64().is_some(),
                    "{agent}: {key} {v} is a count\n{tree}"
                );
            }
        }
    }

    for s in spans {
        let (Some(start), Some(end)) = (s.start, s.end) else {
            continue;
        };
        assert!(start <= end, "{:?} ends before it starts\n{tree}", s.name);
        if let Some((from, to)) = e.window {
            assert!(
                from <= start && end <= to,
                "{:?} ({start}..{end}) lies within the run ({from}..{to})\n{tree}",
                s.name
            );
        }
        if let Some(p) = s.parent.as_deref().and_then(|p| by_id.get(p))
            && let (Some(ps), Some(pe)) = (p.start, p.end)
        {
            assert!(
                ps <= start && end <= pe,
                "{:?} lies within its parent {:?}\n{tree}",
                s.name,
                p.name
            );
        }
    }
}

/// The validator saw nothing wrong: no error recorded, every request answered 200.
pub fn assert_clean(receiver: &Receiver) {
    let errors = receiver.errors();
    assert!(errors.is_empty(), "OTLP errors: {errors:#?}");
    for r in receiver.requests() {
        assert_eq!(r["status"], 200, "a request not answered 200: {r}");
    }
}

/// The GenAI client histograms came as metrics.
pub fn assert_genai_metrics(receiver: &Receiver) {
    let metrics = receiver.metrics();
    let genai: Vec<&Value> = metrics
        .iter()
        .filter(|m| {
            matches!(
                m["name"].as_str(),
                Some("gen_ai.client.token.usage" | "gen_ai.client.operation.duration")
            )
        })
        .collect();
    assert!(
        !genai.is_empty(),
        "no gen_ai.client.token.usage nor gen_ai.client.operation.duration among {metrics:#?}"
    );
    for m in genai {
        assert_eq!(m["type"], "histogram", "{m}");
        assert!(m["count"].as_u64().is_some_and(|c| c > 0), "{m}");
    }
}

/// Send the contract's trace (and metrics, unless `traces_only`) of a changelog run to
/// `endpoint` with the official Python SDK (tests/otel/send_sample.py); what a run.json of
/// it would say, with the time window of the sending.
pub fn send_sample(
    python: &Path,
    endpoint: &str,
    protocol: &str,
    traces_only: bool,
) -> (Value, (u128, u128)) {
    let mut cmd = Command::new(python);
    cmd.arg(script("send_sample.py"))
        .args([endpoint, protocol])
        .args(traces_only.then_some("--traces-only"))
        .stdin(Stdio::null());
    clear_otel_env(&mut cmd);
    let before = now_ns();
    let out = cmd.output().expect("run send_sample.py");
    let after = now_ns();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "send_sample.py {protocol} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout.lines().last().expect("a line");
    (serde_json::from_str(line).expect("JSON"), (before, after))
}

/// The one span named `name`, else a failure showing the tree.
pub fn one<'a>(spans: &'a [Span], name: &str) -> &'a Span {
    let found: Vec<&Span> = spans.iter().filter(|s| s.name == name).collect();
    assert_eq!(found.len(), 1, "one span {name:?}\n{}", dump(spans));
    found[0]
}

/// The spans of trace `trace_id`.
pub fn of_trace(spans: &[Span], trace_id: &str) -> Vec<Span> {
    spans
        .iter()
        .filter(|s| s.trace_id == trace_id)
        .cloned()
        .collect()
}

/// A W3C traceparent `00-<trace id>-<span id>-<flags>`: (trace id, span id, flags).
pub fn parse_traceparent(tp: &str) -> (String, String, String) {
    let parts: Vec<&str> = tp.trim().split('-').collect();
    let hex = |s: &str, len: usize| {
        s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    assert!(
        parts.len() == 4
            && parts[0] == "00"
            && hex(parts[1], 32)
            && hex(parts[2], 16)
            && hex(parts[3], 2),
        "{tp:?} is not a W3C traceparent"
    );
    (parts[1].into(), parts[2].into(), parts[3].into())
}
