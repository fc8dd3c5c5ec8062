//! The mock model provider (`../shared/mockllm/server.py`) for tests that run the real agent
//! CLIs against it: started on a free 127.0.0.1 port, killed when dropped.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A running mock provider.
pub struct Mock {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    log: PathBuf,
}

impl Mock {
    /// Start `server.py` of `mockllm` with scripted `answers`; its files go in `dir`.
    pub fn start(mockllm: &Path, dir: &Path, answers: &Value) -> Mock {
        let answers_file = dir.join("answers.json");
        fs::write(&answers_file, answers.to_string()).unwrap();
        let log = dir.join("requests.jsonl");
        let port_file = dir.join("port");
        let _ = fs::remove_file(&port_file);
        let child = Command::new("python3")
            .arg(mockllm.join("server.py"))
            .args(["--port", "0", "--answers"])
            .arg(&answers_file)
            .arg("--log")
            .arg(&log)
            .arg("--port-file")
            .arg(&port_file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the mock server");
        let mut mock = Mock {
            child,
            url: String::new(),
            log,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(port) = fs::read_to_string(&port_file)
                && !port.trim().is_empty()
            {
                mock.url = format!("http://127.0.0.1:{}", port.trim());
                return mock;
            }
            assert!(Instant::now() < deadline, "the mock server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The requests it logged, in order.
    pub fn requests(&self) -> Vec<Value> {
        fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
