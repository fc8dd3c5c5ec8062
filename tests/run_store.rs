//! `tfc run` persistence and scale, end to end: the real binary on long chains, run
//! directories that cannot be written, long and odd flow names, runs killed at once, and the
//! caps on what an agent may return and a prompt may weigh.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{Outcome, scratch, tfc_in};

/// A fresh project (its own `.tfc/`) holding `flow.json`.
fn project(name: &str, flow: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join(".tfc")).expect("create .tfc");
    std::fs::write(dir.join("flow.json"), flow).expect("write flow");
    dir
}

fn run_in(dir: &Path, args: &[&str]) -> Outcome {
    let mut argv = vec!["run", "flow.json"];
    argv.extend_from_slice(args);
    tfc_in(Some(dir), &argv, b"")
}

/// The run directories (hidden staging directories excluded) under `.tfc/runs/*/`.
fn run_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(flows) = std::fs::read_dir(dir.join(".tfc/runs")) else {
        return out;
    };
    for f in flows.flatten() {
        let Ok(runs) = std::fs::read_dir(f.path()) else {
            continue;
        };
        for r in runs.flatten() {
            if !r.file_name().to_string_lossy().starts_with('.') {
                out.push(r.path());
            }
        }
    }
    out
}

fn chain(n: usize) -> String {
    let phases: Vec<String> = (0..n)
        .map(|i| match i {
            0 => r#"{"id": "p0", "task": "start"}"#.to_string(),
            _ => format!(
                r#"{{"id": "p{i}", "dependsOn": ["p{}"], "task": "step {i}"}}"#,
                i - 1
            ),
        })
        .collect();
    format!(r#"{{"name": "chain", "phases": [{}]}}"#, phases.join(","))
}

/// Milliseconds of an RFC 3339 `ts` since the start of its month (runs here last seconds).
fn ts_ms(line: &str) -> u64 {
    let at = line.find("\"ts\":\"").expect("ts") + 6;
    let ts = &line[at..at + 24];
    let num = |r: std::ops::Range<usize>| ts[r].parse::<u64>().expect("digits");
    ((num(8..10) * 24 + num(11..13)) * 60 + num(14..16)) * 60_000 + num(17..19) * 1000 + num(20..23)
}

/// A 2,000-phase chain through a trivial command agent completes, and its later phases cost
/// what its early ones did: with a per-phase cost that grows with the number of phases run
/// so far (the record rebuilt on every transition, the flow cloned per phase), the last
/// stretch of phases takes many times longer than an early stretch of the same length.
#[test]
fn a_2000_phase_chain_runs_in_linear_time() {
    let dir = project("store-chain-2000", &chain(2000));
    let out = run_in(&dir, &["--agent-cmd", "cat"]);
    assert_eq!(
        out.code,
        0,
        "{}",
        &out.stderr[out.stderr.len().saturating_sub(2000)..]
    );
    assert_eq!(out.stdout, "step 1999\n");
    let runs = run_dirs(&dir);
    assert_eq!(runs.len(), 1);
    let journal = std::fs::read_to_string(runs[0].join("journal.jsonl")).expect("journal");
    let starts: Vec<u64> = journal
        .lines()
        .filter(|l| l.contains("\"type\":\"phase-start\""))
        .map(ts_ms)
        .collect();
    assert_eq!(starts.len(), 2000);
    let ends = journal
        .lines()
        .filter(|l| l.contains("\"type\":\"phase-end\""))
        .count();
    assert_eq!(ends, 2000);
    let early = starts[500] - starts[100];
    let late = starts[1999] - starts[1599];
    assert!(
        late <= 3 * early.max(100),
        "400 phases took {early} ms from phase 100 but {late} ms from phase 1599"
    );
    let record = std::fs::read_to_string(runs[0].join("run.json")).expect("run.json");
    assert!(record.contains("\"status\": \"completed\""));
}

#[test]
fn a_run_that_cannot_create_its_record_does_not_start() {
    let dir = project(
        "store-runs-is-a-file",
        r#"{"name": "x", "phases": [{"id": "a", "type": "script", "run": "touch ran"}]}"#,
    );
    std::fs::write(dir.join(".tfc/runs"), "not a directory").expect("write");
    let out = run_in(&dir, &[]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("cannot create the run record")
            && out.stderr.contains("Not a directory")
            && out.stderr.contains("nothing was run"),
        "{}",
        out.stderr
    );
    assert!(!dir.join("ran").exists(), "the script phase ran");
}

#[test]
fn a_300_character_flow_name_is_shortened_not_lost() {
    let name = "n".repeat(300);
    let flow = format!(
        r#"{{"name": "{name}", "phases": [{{"id": "a", "type": "script", "run": "echo hi"}}]}}"#
    );
    let dir = project("store-long-name", &flow);
    let out = run_in(&dir, &[]);
    assert_eq!(out.code, 0, "{out:?}");
    let runs = run_dirs(&dir);
    assert_eq!(runs.len(), 1, "{out:?}");
    let flow_dir = runs[0].parent().expect("flow dir");
    let flow_dir = flow_dir.file_name().expect("name").to_string_lossy();
    assert!(
        flow_dir.len() <= 100 && flow_dir.starts_with("nnnn"),
        "{flow_dir}"
    );
    let record = std::fs::read_to_string(runs[0].join("run.json")).expect("run.json");
    assert!(record.contains("\"status\": \"completed\""));
    assert!(record.contains(&name), "the record keeps the full name");
    let id = runs[0]
        .file_name()
        .expect("id")
        .to_string_lossy()
        .into_owned();
    assert!(id.len() <= 160, "{id}");
}

#[test]
fn the_flow_name_dot_is_sanitised() {
    let dir = project(
        "store-dot-name",
        r#"{"name": ".", "phases": [{"id": "a", "type": "script", "run": "echo hi"}]}"#,
    );
    let out = run_in(&dir, &[]);
    assert_eq!(out.code, 0, "{out:?}");
    let runs = run_dirs(&dir);
    assert_eq!(runs.len(), 1, "{out:?}");
    assert_eq!(runs[0].parent(), Some(dir.join(".tfc/runs/_").as_path()));
    assert!(runs[0].join("run.json").exists());
    assert!(
        !dir.join(".tfc/runs/run.json").exists() && !dir.join(".tfc/runs/lock").exists(),
        "the run landed in .tfc/runs itself"
    );
}

/// Killed at any instant from its start, a run leaves either no run directory or one with a
/// readable `run.json`.
#[test]
fn a_run_killed_at_once_leaves_a_readable_record() {
    let dir = project(
        "store-killed-early",
        r#"{"name": "k", "phases": [{"id": "a", "type": "script", "run": "sleep 5"}]}"#,
    );
    for delay_ms in (0..40).step_by(2) {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tfc"))
            .args(["run", "flow.json"])
            .current_dir(&dir)
            .env("NO_COLOR", "1")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn tfc");
        std::thread::sleep(Duration::from_millis(delay_ms));
        child.kill().expect("kill");
        child.wait().expect("wait");
        for run in run_dirs(&dir) {
            let text = std::fs::read_to_string(run.join("run.json"))
                .unwrap_or_else(|e| panic!("{} after {delay_ms} ms: {e}", run.display()));
            assert!(text.contains("\"runId\""), "{text}");
        }
    }
}

/// A write that fails mid-run is reported (stderr and the record's warnings), not swallowed.
#[test]
fn a_failed_rewrite_is_reported() {
    // The first phase blocks every later rewrite of run.json by putting a directory where
    // its temp file goes.
    let flow = r#"{"name": "w", "phases": [
        {"id": "a", "type": "script", "run": "mkdir .tfc/runs/w/$TFC_RUN_ID/run.json.tmp"},
        {"id": "b", "dependsOn": ["a"], "type": "script", "run": "echo done"}
    ]}"#;
    let dir = project("store-write-fails", flow);
    let out = run_in(&dir, &["--format", "json"]);
    assert!(
        out.stderr
            .contains("error: the run record could not be fully written")
            && out.stderr.contains("run.json"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.contains("run record: "), "{}", out.stdout);
}
