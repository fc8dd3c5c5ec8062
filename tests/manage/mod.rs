//! Helpers for the `tfc runs/show/list/init/doctor` end-to-end tests: isolated projects (their
//! own `HOME`, `XDG_CONFIG_HOME` and `PATH`), hand-written run stores, and goldens.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub use crate::common::{Outcome, scratch};

/// A fresh project: `<scratch>/proj` (with `.tfc/`), `<scratch>/home` (its `HOME`) and
/// `<scratch>/xdg` (its `XDG_CONFIG_HOME`).
pub struct Project {
    pub base: PathBuf,
    pub dir: PathBuf,
    pub home: PathBuf,
    pub xdg: PathBuf,
    /// `PATH` for tfc (default: the system's programs only).
    pub path: String,
}

impl Project {
    pub fn new(name: &str) -> Project {
        let base = scratch(name);
        let dir = base.join("proj");
        let home = base.join("home");
        let xdg = base.join("xdg");
        for d in [&dir.join(".tfc"), &home, &xdg] {
            std::fs::create_dir_all(d).expect("create project dirs");
        }
        Project {
            base,
            dir,
            home,
            xdg,
            path: "/usr/bin:/bin".into(),
        }
    }

    /// `tfc args…` in the project, with a clean environment.
    pub fn tfc(&self, args: &[&str]) -> Outcome {
        let out = self.command(args).output().expect("run tfc");
        Outcome {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// The command `tfc args…` would run (for tests that manage the process themselves).
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tfc"));
        cmd.args(args)
            .env_clear()
            .env("NO_COLOR", "1")
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.xdg)
            .env("PATH", &self.path)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// Write `rel` (relative to the project) with `text`, creating folders.
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.dir.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, text).expect("write");
        p
    }

    /// `text` with this project's paths replaced by `<BASE>`.
    pub fn mask(&self, text: &str) -> String {
        text.replace(&self.base.display().to_string(), "<BASE>")
    }
}

/// An executable shell script `dir/name`.
pub fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).expect("mkdir");
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).expect("write script");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    p
}

/// `<name>-<ms base36>-<hex>`, the shape of a run id.
pub fn run_id(flow: &str, ms: u64, hex: &str) -> String {
    let mut b36 = Vec::new();
    let mut n = ms;
    while n > 0 {
        b36.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[(n % 36) as usize]);
        n /= 36;
    }
    b36.reverse();
    format!("{flow}-{}-{hex}", String::from_utf8(b36).expect("ascii"))
}

/// RFC 3339 UTC with ms, as records write them.
pub fn ts(ms: u64) -> String {
    let secs = (ms / 1000) as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60,
        ms % 1000
    )
}

/// One hand-written run.
pub struct Fake<'a> {
    pub flow: &'a str,
    pub ms: u64,
    pub hex: &'a str,
    pub status: &'a str,
    pub reason: Option<&'a str>,
    pub took_ms: u64,
    pub cost: Option<f64>,
    pub tokens: (u64, u64),
    /// (id, status, attempts, extra JSON members)
    pub phases: Vec<(&'a str, &'a str, u64, &'a str)>,
}

impl Fake<'_> {
    pub fn new(flow: &str, ms: u64, hex: &str, status: &str) -> Fake<'static> {
        // Leaked: tests write a handful of these.
        let leak = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
        Fake {
            flow: leak(flow),
            ms,
            hex: leak(hex),
            status: leak(status),
            reason: None,
            took_ms: 83_500,
            cost: None,
            tokens: (0, 0),
            phases: vec![("a", "done", 1, "")],
        }
    }

    /// Write it under `root/.tfc/runs/<flow>/<id>/run.json`; returns the id.
    pub fn write(&self, root: &Path) -> String {
        let id = run_id(self.flow, self.ms, self.hex);
        let dir = root.join(".tfc/runs").join(self.flow).join(&id);
        std::fs::create_dir_all(&dir).expect("mkdir run");
        let ended = if self.status == "running" {
            "null".to_owned()
        } else {
            format!("\"{}\"", ts(self.ms + self.took_ms))
        };
        let cost = self.cost.map_or("null".to_owned(), |c| c.to_string());
        let usage = format!(
            r#"{{"input": {}, "output": {}, "cacheRead": 0, "cacheWrite": 0, "costUSD": {cost}, "turns": 1}}"#,
            self.tokens.0, self.tokens.1
        );
        let phases: Vec<String> = self
            .phases
            .iter()
            .map(|(pid, st, attempts, extra)| {
                let (s, e) = match *st {
                    "pending" => ("null".to_owned(), "null".to_owned()),
                    "running" => (format!("\"{}\"", ts(self.ms + 10)), "null".to_owned()),
                    _ => (
                        format!("\"{}\"", ts(self.ms + 10)),
                        format!("\"{}\"", ts(self.ms + 10 + 1500 * attempts)),
                    ),
                };
                format!(
                    r#""{pid}": {{"status": "{st}", "output": "out of {pid}", "warnings": [], "attempts": {attempts}, "reads": [], "usage": {usage}, "startedAt": {s}, "endedAt": {e}{extra}}}"#
                )
            })
            .collect();
        let reason = self
            .reason
            .map_or("null".to_owned(), |r| format!("{:?}", r));
        let record = format!(
            r#"{{"schemaVersion": 1, "runId": "{id}", "flow": "{flow}", "parentRunId": null, "status": "{status}", "reason": {reason}, "finalOutput": "done", "outputPhase": null, "args": {{"topic": "x"}}, "startedAt": "{start}", "endedAt": {ended}, "usage": {usage}, "spentBefore": null, "warnings": [], "backends": {{}}, "phases": {{{phases}}}, "def": {{"phases": []}}}}"#,
            flow = self.flow,
            status = self.status,
            start = ts(self.ms),
            phases = phases.join(", "),
        );
        std::fs::write(dir.join("run.json"), record).expect("write run.json");
        id
    }
}

/// Compare `actual` with `tests/manage/golden/<name>` (`TFC_BLESS=1` rewrites it).
pub fn golden(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/manage/golden")
        .join(name);
    if std::env::var_os("TFC_BLESS").is_some() {
        std::fs::write(&path, actual).expect("write golden");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (TFC_BLESS=1 writes it)", path.display()));
    assert_eq!(actual, expected, "golden {name} differs");
}

/// A pid no process has (one that ran and was reaped).
pub fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().expect("spawn true");
    let pid = child.id();
    child.wait().expect("wait");
    pid
}
