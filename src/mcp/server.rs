//! The server loop: read a line, answer it. Quick methods (`initialize`, `ping`,
//! `tools/list`, `logging/setLevel`) are answered on the reading thread; every `tools/call`
//! runs on a thread of its own, so a ten-minute `tfc_wait` never holds up anything else.
//! Responses and notifications share one writer, a line at a time.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde_json::{Map, Value, json};

use super::call::{Call, Cancel};
use super::rpc::{self, Incoming, code};
use super::runs::Runner;

/// The protocol revisions `initialize` accepts, newest first.
pub const PROTOCOL_VERSIONS: [&str; 3] = ["2025-06-18", "2025-03-26", "2024-11-05"];

/// MCP logging levels, least severe first.
const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// How the server is set up.
pub struct Config {
    /// The project root: flow paths resolve against it and must stay inside it.
    pub root: PathBuf,
    /// The `tfc` binary that runs are started with.
    pub exe: PathBuf,
}

/// Calls in progress by request id (as JSON text): each one's cancellation, and the flag
/// set when the client cancelled it.
type InFlight = HashMap<String, (Cancel, Arc<AtomicBool>)>;

/// The shared output: one JSON message per line, flushed at once.
#[derive(Clone)]
struct Out(Arc<Mutex<Box<dyn Write + Send>>>);

impl Out {
    fn send(&self, message: &Value) {
        let mut w = self.0.lock().unwrap_or_else(|p| p.into_inner());
        // A client that went away is noticed as EOF on stdin; nothing to do here.
        let _ = writeln!(w, "{message}").and_then(|()| w.flush());
    }
}

/// Serve MCP on `input`/`output` until `input` ends. Calls still running then are
/// cancelled and answered (runs they started go on), and the function returns.
pub fn serve(config: Config, input: impl BufRead, output: impl Write + Send + 'static) {
    let out = Out(Arc::new(Mutex::new(Box::new(output))));
    let runner = Runner::new(config.root, config.exe);
    // The least severe level sent as `notifications/message`.
    let level = Arc::new(Mutex::new(1usize));
    // Calls in progress by request id: their cancellation, and whether the client asked for
    // it (then no response is sent) rather than the server stopping.
    let calls: Arc<Mutex<InFlight>> = Arc::default();
    let mut threads: Vec<JoinHandle<()>> = Vec::new();
    let mut input = input;
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = trim(&line);
        if text.is_empty() {
            continue;
        }
        threads.retain(|t| !t.is_finished());
        match rpc::parse(text) {
            Incoming::Malformed(m) => out.send(&rpc::error(&Value::Null, code::PARSE_ERROR, &m)),
            Incoming::Invalid { id, message } => {
                out.send(&rpc::error(&id, code::INVALID_REQUEST, &message))
            }
            Incoming::Response => {}
            Incoming::Notification { method, params } => {
                if method == "notifications/cancelled" {
                    let key = params["requestId"].to_string();
                    if let Some((c, by_client)) =
                        calls.lock().unwrap_or_else(|p| p.into_inner()).get(&key)
                    {
                        crate_log(&format!("request {key} cancelled by the client"));
                        by_client.store(true, Ordering::SeqCst);
                        c.cancel();
                    }
                }
            }
            Incoming::Request { id, method, params } => match method.as_str() {
                "initialize" => out.send(&rpc::response(&id, initialize(&params))),
                "ping" => out.send(&rpc::response(&id, json!({}))),
                "tools/list" => out.send(&rpc::response(
                    &id,
                    json!({"tools": super::schema::tools()}),
                )),
                "logging/setLevel" => match params["level"]
                    .as_str()
                    .and_then(|l| LEVELS.iter().position(|x| *x == l))
                {
                    Some(i) => {
                        *level.lock().unwrap_or_else(|p| p.into_inner()) = i;
                        out.send(&rpc::response(&id, json!({})));
                    }
                    None => out.send(&rpc::error(
                        &id,
                        code::INVALID_PARAMS,
                        &format!("level must be one of {}", LEVELS.join(", ")),
                    )),
                },
                "tools/call" => {
                    let Some(name) = params["name"].as_str().map(str::to_owned) else {
                        out.send(&rpc::error(
                            &id,
                            code::INVALID_PARAMS,
                            "tools/call needs params.name",
                        ));
                        continue;
                    };
                    if !super::tools::exists(&name) {
                        out.send(&rpc::error(
                            &id,
                            code::INVALID_PARAMS,
                            &format!("Unknown tool: {name} (tools/list names them)"),
                        ));
                        continue;
                    }
                    let key = id.to_string();
                    let cancel = Cancel::default();
                    let by_client = Arc::new(AtomicBool::new(false));
                    calls
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(key.clone(), (cancel.clone(), Arc::clone(&by_client)));
                    let call = Call {
                        cancel: cancel.clone(),
                        progress: progress_fn(&out, &params),
                        log: log_fn(&out, &level),
                    };
                    let (out, runner, calls) = (out.clone(), runner.clone(), Arc::clone(&calls));
                    threads.push(std::thread::spawn(move || {
                        let result =
                            super::tools::call(&runner, &name, params.get("arguments"), &call);
                        calls.lock().unwrap_or_else(|p| p.into_inner()).remove(&key);
                        // A cancelled request gets no response (MCP cancellation).
                        if !by_client.load(Ordering::SeqCst) {
                            out.send(&rpc::response(&id, result));
                        }
                    }));
                }
                other => out.send(&rpc::error(
                    &id,
                    code::METHOD_NOT_FOUND,
                    &format!("Method not found: {other}"),
                )),
            },
        }
    }
    // EOF: waiting calls stop waiting (and still answer: they were not cancelled by the
    // client); the runs they follow go on.
    for (c, _) in calls.lock().unwrap_or_else(|p| p.into_inner()).values() {
        c.cancel();
    }
    for t in threads {
        let _ = t.join();
    }
}

/// The line without its line ending and surrounding blanks.
fn trim(line: &[u8]) -> &[u8] {
    let start = line
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(line.len());
    let end = line
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |i| i + 1);
    &line[start..end]
}

/// A log line on stderr (stdout carries only protocol messages).
fn crate_log(message: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "tfc mcp: {message}");
}

/// The `initialize` result: the client's revision when supported, else the newest.
fn initialize(params: &Value) -> Value {
    let asked = params["protocolVersion"].as_str().unwrap_or("");
    let version = PROTOCOL_VERSIONS
        .iter()
        .find(|v| **v == asked)
        .unwrap_or(&PROTOCOL_VERSIONS[0]);
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}, "logging": {}},
        "serverInfo": {"name": "tfc", "title": "tfc — taskflow checker and runner",
                       "version": env!("CARGO_PKG_VERSION")},
        "instructions": "tfc checks and runs taskflow flows (JSON graphs of agent phases). \
            Check a flow with tfc_check before running it; tfc_run starts a background run and \
            returns its runId at once; follow it with tfc_wait or tfc_status, read it with \
            tfc_show. Runs outlive this server.",
    })
}

/// `notifications/progress` for a call whose request carried `_meta.progressToken`.
fn progress_fn(out: &Out, params: &Value) -> Option<super::call::ProgressFn> {
    let token = params["_meta"]["progressToken"].clone();
    if !(token.is_string() || token.is_number()) {
        return None;
    }
    let out = out.clone();
    Some(Arc::new(move |progress, total, message| {
        let mut p = Map::new();
        p.insert("progressToken".into(), token.clone());
        p.insert("progress".into(), Value::from(progress));
        p.insert("total".into(), Value::from(total));
        p.insert("message".into(), Value::from(message));
        out.send(&rpc::notification("notifications/progress", p));
    }))
}

/// `notifications/message` at or above the level the client set (default `info`), and the
/// same line on stderr.
fn log_fn(out: &Out, level: &Arc<Mutex<usize>>) -> super::call::LogFn {
    let (out, level) = (out.clone(), Arc::clone(level));
    Arc::new(move |at, message| {
        crate_log(message);
        let rank = LEVELS.iter().position(|l| *l == at).unwrap_or(1);
        if rank >= *level.lock().unwrap_or_else(|p| p.into_inner()) {
            let mut p = Map::new();
            p.insert("level".into(), Value::from(at));
            p.insert("logger".into(), Value::from("tfc"));
            p.insert("data".into(), Value::from(message));
            out.send(&rpc::notification("notifications/message", p));
        }
    })
}
