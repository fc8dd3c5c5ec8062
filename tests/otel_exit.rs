//! Traces never in the way (SPEC §16): with a collector that accepts the connection and never
//! answers, the run's stdout is written and closed, and its summary printed with the run's
//! own duration, before the exit waits (at most 2 s) for the collector; the exit says once
//! how many spans were dropped.

mod common;

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A collector that takes every connection and never says a word; its address.
fn silent_collector() -> (String, Arc<Mutex<Vec<TcpStream>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let held = Arc::new(Mutex::new(Vec::new()));
    let keep = held.clone();
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            keep.lock().unwrap().push(s);
        }
    });
    (format!("http://{addr}"), held)
}

#[test]
fn a_collector_that_never_answers_never_delays_the_output() {
    let dir = common::scratch("otel-exit-silent-collector");
    std::fs::create_dir_all(dir.join(".tfc")).expect(".tfc");
    std::fs::write(
        dir.join("flow.json"),
        r#"{"name":"one","phases":[{"id":"a","task":"hello from the flow"}]}"#,
    )
    .expect("flow");
    let (endpoint, held) = silent_collector();
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tfc"))
        .args(["run", "flow.json", "--agent-cmd", "cat"])
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_TIMEOUT")
        .env_remove("OTEL_SDK_DISABLED")
        .env_remove("TRACEPARENT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tfc");
    let mut err = child.stderr.take().expect("stderr");
    let stderr = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    // A pipeline reading stdout: it gets its end (EOF) while tfc still waits.
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut stdout)
        .expect("read stdout");
    let eof = started.elapsed();
    let status = child.wait().expect("wait");
    let exited = started.elapsed();
    let stderr = stderr.join().expect("stderr thread");
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("hello from the flow"), "{stdout:?}");
    assert!(
        !held.lock().unwrap().is_empty(),
        "the export was tried: {stderr}"
    );
    // The exit waited for the collector after stdout ended, at most 2 s, not the 10 s
    // export timeout.
    assert!(
        exited >= eof + Duration::from_millis(1500),
        "stdout ended at {eof:?}, the process at {exited:?}"
    );
    assert!(exited < Duration::from_secs(8), "{exited:?}: {stderr}");
    // The summary line tells the run's own time, not the wait.
    let summary = stderr
        .lines()
        .find(|l| l.starts_with("run one-"))
        .expect("a summary line");
    let secs: f64 = summary
        .split(" · ")
        .find_map(|p| p.strip_suffix('s').and_then(|n| n.parse().ok()))
        .expect("a duration");
    assert!(secs < 1.5, "{summary}");
    // The spans not exported are counted once, after the summary.
    let dropped: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains(" dropped: "))
        .collect();
    assert_eq!(dropped.len(), 1, "{stderr}");
    assert!(
        dropped[0].starts_with("warning: telemetry: ")
            && dropped[0].ends_with("the collector did not take them within 2.0s"),
        "{stderr}"
    );
    let lines: Vec<&str> = stderr.lines().collect();
    let at = |needle: &str| lines.iter().position(|l| l.contains(needle));
    assert!(at("run one-") < at(" dropped: "), "{stderr}");
}

/// A collector that answers every request with `status` (reading it whole first).
fn answering(status: u16) -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut r = BufReader::new(stream);
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            let _ = r.read_exact(&mut body);
            let _ = write!(
                r.get_mut(),
                "HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
        }
    });
    format!("http://{addr}")
}

/// `tfc doctor` names the protocol to set when the endpoint refuses the one tfc sends (as
/// Phoenix answers `http/json` with 415).
#[test]
fn doctor_names_the_protocol_an_endpoint_refuses() {
    let dir = common::scratch("otel-exit-doctor-415");
    std::fs::create_dir_all(dir.join(".tfc")).expect(".tfc");
    let endpoint = answering(415);
    let out = Command::new(env!("CARGO_BIN_EXE_tfc"))
        .arg("doctor")
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env_remove("OTEL_SDK_DISABLED")
        .output()
        .expect("tfc doctor");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("endpoint:"))
        .unwrap_or_else(|| panic!("an endpoint line: {stdout}"));
    assert!(line.contains("answered HTTP 415"), "{line}");
    assert!(
        line.contains("it does not take http/json: set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"),
        "{line}"
    );
    assert!(!line.contains("not answering"), "{line}");
}
