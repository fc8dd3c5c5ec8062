//! Helpers for end-to-end tests that drive the real `tfc` binary.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub mod golden;

/// What one `tfc` invocation did.
#[derive(Debug)]
pub struct Outcome {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Run `tfc args…` with `stdin` and `NO_COLOR` set, from `cwd` (the crate root by default).
pub fn tfc_in(cwd: Option<&Path>, args: &[&str], stdin: &[u8]) -> Outcome {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tfc"));
    cmd.args(args)
        .env("NO_COLOR", "1")
        .current_dir(cwd.map(Path::to_path_buf).unwrap_or_else(root))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn tfc");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("wait for tfc");
    writer.join().expect("stdin writer");
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub fn tfc(args: &[&str]) -> Outcome {
    tfc_in(None, args, b"")
}

pub fn tfc_stdin(args: &[&str], stdin: &str) -> Outcome {
    tfc_in(None, args, stdin.as_bytes())
}

/// The crate root (where `examples/` lives).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh scratch directory under the target dir, removed first if it exists.
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// A scratch project holding a copy of `examples/` and an empty `.tfc/`.
pub fn with_examples(name: &str) -> PathBuf {
    let dir = scratch(name);
    let st = Command::new("cp")
        .arg("-R")
        .arg(root().join("examples"))
        .arg(&dir)
        .status()
        .expect("cp");
    assert!(st.success());
    std::fs::create_dir_all(dir.join(".tfc")).expect(".tfc");
    dir
}

/// The `[W0101]`-style codes in a text report, in order.
pub fn shown_codes(stderr: &str) -> Vec<String> {
    stderr
        .match_indices('[')
        .filter_map(|(i, _)| stderr.get(i + 1..i + 6))
        .filter(|c| c.len() == 5 && c[1..].bytes().all(|b| b.is_ascii_digit()))
        .map(str::to_owned)
        .collect()
}

/// The run id a `tfc run`/`tfc resume` printed last on stderr (`run <id> …`).
pub fn printed_run_id(o: &Outcome) -> String {
    o.stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("run "))
        .and_then(|l| l.split_whitespace().next())
        .expect("a run line")
        .to_owned()
}

/// The variable that makes a missing real part fail a test instead of skipping it. `.ci/run`
/// sets it, so a green CI means every such test really ran.
pub const REQUIRE_REAL_PARTS: &str = "TFC_REQUIRE_REAL_PARTS";

/// A test that needs a real part — an agent CLI, the mock model provider, chromium, Graphviz,
/// the MCP Python SDK, a Temporal server, `script`, an OpenTelemetry receiver — found it
/// missing. With `TFC_REQUIRE_REAL_PARTS` set (and not `0`), as in CI, the test fails here.
/// Otherwise it prints `SKIPPED: <test>: <why>` on stderr — written past the test harness's
/// capture, so the line shows even though the test then passes — and the caller returns.
#[track_caller]
pub fn skip(why: &str) {
    let required = std::env::var_os(REQUIRE_REAL_PARTS).is_some_and(|v| !v.is_empty() && v != "0");
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    match skip_line(required, &test, why) {
        Ok(line) => {
            let _ = writeln!(std::io::stderr(), "{line}");
        }
        Err(message) => panic!("{message}"),
    }
}

/// What [`skip`] does: the line to print, or (`required`) the failure.
pub fn skip_line(required: bool, test: &str, why: &str) -> Result<String, String> {
    if required {
        Err(format!(
            "{test}: {why} — and {REQUIRE_REAL_PARTS} is set, so a missing part fails the test"
        ))
    } else {
        Ok(format!("SKIPPED: {test}: {why}"))
    }
}

/// A scratch project `name` with `.tfc/`, `flow.json` = `flow` and an executable `agent.sh`
/// = `agent` (a shell script; the e2e tests' fake agents log `$TFC_NODE` to `calls.log`, read
/// back by [`calls`]).
pub fn agent_project(name: &str, flow: &str, agent: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join(".tfc")).expect("mkdir .tfc");
    std::fs::write(dir.join("flow.json"), flow).expect("write flow");
    let path = dir.join("agent.sh");
    std::fs::write(&path, agent).expect("write agent");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
}

/// The nodes a logging test agent wrote to `calls.log` in `dir`, one per call, in order.
pub fn calls(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("calls.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Every run record under the project `dir`, oldest first.
pub fn records(dir: &Path) -> Vec<serde_json::Value> {
    let mut out: Vec<serde_json::Value> = Vec::new();
    for f in std::fs::read_dir(dir.join(".tfc/runs"))
        .into_iter()
        .flatten()
        .flatten()
    {
        for r in std::fs::read_dir(f.path()).into_iter().flatten().flatten() {
            if let Ok(t) = std::fs::read_to_string(r.path().join("run.json")) {
                out.push(serde_json::from_str(&t).expect("run.json is JSON"));
            }
        }
    }
    out.sort_by_key(|r| r["startedAt"].as_str().unwrap_or("").to_owned());
    out
}
