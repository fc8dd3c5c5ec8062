//! A small MCP client for the end-to-end tests: `tfc mcp` over pipes, one JSON message per
//! line, with the messages read on a thread so a test can wait for one id with a timeout.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A running `tfc mcp` and what it has sent that nobody took yet.
pub struct Server {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    /// Notifications (and responses to other ids) seen while waiting for a response.
    pub seen: Vec<Value>,
    pub stderr_path: PathBuf,
}

/// A project folder for one test, with a `command` backend `echo` (cat) and `slow`
/// (sleeps `secs` before answering).
pub fn project(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join(".tfc")).expect("create project");
    std::fs::write(
        dir.join(".tfc/config.toml"),
        "[backends.echo]\nkind = \"command\"\ncommand = [\"cat\"]\n\n\
         [backends.slow]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"sleep 2; cat\"]\n",
    )
    .expect("write config");
    dir
}

impl Server {
    /// `tfc mcp --root <root>`, initialized.
    pub fn start(root: &Path) -> Server {
        let mut s = Server::spawn(root);
        let r = s.request(
            1_000_000,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "tfc-tests", "version": "1"}}),
        );
        assert_eq!(r["result"]["protocolVersion"], "2025-06-18", "{r}");
        s.notify("notifications/initialized", json!({}));
        s
    }

    /// `tfc mcp --root <root>`, not initialized.
    pub fn spawn(root: &Path) -> Server {
        let stderr_path = root.join(format!(
            "mcp-stderr-{}.log",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        let stderr = std::fs::File::create(&stderr_path).expect("stderr file");
        let mut child = Command::new(env!("CARGO_BIN_EXE_tfc"))
            .args(["mcp", "--root"])
            .arg(root)
            .current_dir(root)
            .env("NO_COLOR", "1")
            .env("XDG_CONFIG_HOME", root.join(".xdg"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("spawn tfc mcp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("server wrote a non-JSON line {line:?}: {e}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        Server {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            seen: Vec::new(),
            stderr_path,
        }
    }

    /// Write one raw line.
    pub fn send_line(&mut self, line: &str) {
        let w = self.stdin.as_mut().expect("stdin open");
        writeln!(w, "{line}").expect("write to server");
        w.flush().expect("flush");
    }

    pub fn send(&mut self, id: u64, method: &str, params: Value) {
        let m = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(&m.to_string());
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        let m = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.send_line(&m.to_string());
    }

    /// The next message with this id (other messages go to `seen`).
    pub fn response(&mut self, id: u64, timeout: Duration) -> Option<Value> {
        if let Some(i) = self.seen.iter().position(|m| m["id"] == id) {
            return Some(self.seen.remove(i));
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(m) if m["id"] == id && m.get("method").is_none() => return Some(m),
                Ok(m) => self.seen.push(m),
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => {
                    return None;
                }
            }
        }
    }

    /// Send a request and wait for its response (30 s).
    pub fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(id, method, params);
        self.response(id, Duration::from_secs(30))
            .unwrap_or_else(|| panic!("no response to {method} (id {id})"))
    }

    /// `tools/call` and its result.
    pub fn call(&mut self, id: u64, tool: &str, arguments: Value) -> Value {
        let r = self.request(
            id,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        );
        assert!(r.get("error").is_none(), "{tool}: protocol error {r}");
        r["result"].clone()
    }

    /// Close stdin (the server sees EOF) without waiting.
    pub fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    /// Close stdin and wait for the exit code.
    pub fn finish(mut self) -> i32 {
        drop(self.stdin.take());
        self.child.wait().expect("wait").code().unwrap_or(-1)
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A successful tool result's `structuredContent` (panics with the text on `isError`).
pub fn ok(result: &Value) -> Value {
    assert_eq!(result["isError"], false, "tool failed: {result}");
    assert!(result["content"][0]["text"].is_string(), "{result}");
    result["structuredContent"].clone()
}

/// A failed tool result's message.
pub fn err(result: &Value) -> String {
    assert_eq!(result["isError"], true, "tool did not fail: {result}");
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}
