//! Flows and arguments shared by the run benches.

use tfc::value::{Map, Value};

/// A chain of `n` agent phases, each continuing from its predecessor's output.
pub fn chain_flow(n: usize) -> String {
    let phases: Vec<String> = (0..n)
        .map(|i| match i {
            0 => r#"{"id": "p0", "task": "start"}"#.to_string(),
            _ => format!(
                r#"{{"id": "p{i}", "dependsOn": ["p{}"], "task": "Continue from {{previous.output}}"}}"#,
                i - 1
            ),
        })
        .collect();
    format!(
        r#"{{"name": "bench-chain", "phases": [{}]}}"#,
        phases.join(",")
    )
}

/// `{"files": [{"path": "src/f0.rs"}, …]}` with `items` entries, for a map over `{args.files}`.
pub fn map_args(items: usize) -> Map {
    let list = (0..items).map(|i| {
        let mut m = Map::default();
        m.insert("path".into(), Value::from(format!("src/f{i}.rs")));
        Value::Object(m)
    });
    let mut args = Map::default();
    args.insert("files".into(), Value::Array(list.collect()));
    args
}

/// A live OTLP/HTTP endpoint on 127.0.0.1 for the export benches: it reads each request whole
/// and answers `200 OK`, on threads of its own. Returns its base URL.
#[allow(dead_code)]
pub fn otlp_sink() -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the OTLP sink");
    let port = listener.local_addr().expect("its address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream);
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let lower = line.to_ascii_lowercase();
                    if let Some(v) = lower.strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    if line == "\r\n" {
                        break;
                    }
                }
                let mut body = vec![0; length];
                if reader.read_exact(&mut body).is_ok() {
                    let _ = reader.get_mut().write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    );
                }
            });
        }
    });
    format!("http://127.0.0.1:{port}")
}
