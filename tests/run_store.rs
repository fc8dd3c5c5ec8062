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

/// Write an executable shell script agent into `dir`.
fn script_agent(dir: &Path, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write agent");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.display().to_string()
}

/// `tfc run flow.json --agent-cmd AGENT` in `dir`, sampling the process's peak RSS (KiB) while
/// it runs.
fn run_watching_rss(dir: &Path, agent: &str) -> (std::process::Output, u64) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tfc"))
        .args(["run", "flow.json", "--agent-cmd", agent])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn tfc");
    let pid = child.id();
    let mut peak = 0;
    while child.try_wait().expect("wait").is_none() {
        peak = peak.max(peak_rss_kib(pid).unwrap_or(0));
        std::thread::sleep(Duration::from_millis(5));
    }
    (child.wait_with_output().expect("output"), peak)
}

/// The peak resident set of a running process so far (Linux `VmHWM`), in KiB.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A 40 MB answer passes the default 16 MiB cap: the call fails with the cap error, the
/// process is stopped, and tfc never holds much more than the cap.
#[test]
fn a_40_mb_answer_fails_the_call_and_memory_stays_bounded() {
    let dir = project(
        "store-output-cap",
        r#"{"name": "big", "phases": [{"id": "a", "task": "Say a lot."}]}"#,
    );
    let agent = script_agent(
        &dir,
        "big.sh",
        "cat >/dev/null; head -c 41943040 /dev/zero | tr '\\0' a",
    );
    let (out, peak) = run_watching_rss(&dir, &agent);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the agent's output exceeded the limit of 16777216 bytes")
            && stderr.contains("max_output_bytes"),
        "{stderr}"
    );
    assert!(peak < 200 * 1024, "peak RSS {peak} KiB");
    let runs = run_dirs(&dir);
    let record = std::fs::read_to_string(runs[0].join("run.json")).expect("run.json");
    assert!(
        record.len() < 64 * 1024,
        "run.json is {} bytes",
        record.len()
    );
}

#[test]
fn the_output_cap_is_configurable() {
    let dir = project(
        "store-output-cap-config",
        r#"{"name": "capped", "phases": [{"id": "a", "task": "Say a lot."}]}"#,
    );
    std::fs::write(
        dir.join(".tfc/config.toml"),
        "[limits]\nmax_output_bytes = 1000\n",
    )
    .expect("config");
    let agent = script_agent(
        &dir,
        "a.sh",
        "cat >/dev/null; head -c 5000 /dev/zero | tr '\\0' b",
    );
    let out = run_in(&dir, &["--agent-cmd", &agent]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("the agent's output exceeded the limit of 1000 bytes"),
        "{}",
        out.stderr
    );
}

/// A prompt over the cap fails its phase before any call, naming the placeholder that made
/// it so large.
#[test]
fn a_prompt_over_the_cap_fails_naming_the_placeholder() {
    let flow = r#"{"name": "p", "phases": [
        {"id": "a", "type": "script", "run": "head -c 20000 /dev/zero | tr '\\0' x"},
        {"id": "b", "dependsOn": ["a"], "task": "Intro {args.topic} then {steps.a.output}"}
    ], "args": {"topic": {"default": "short"}}}"#;
    let dir = project("store-prompt-cap", flow);
    std::fs::write(
        dir.join(".tfc/config.toml"),
        "[limits]\nmax_prompt_bytes = 10000\n",
    )
    .expect("config");
    let agent = script_agent(&dir, "a.sh", "touch called; cat");
    let out = run_in(&dir, &["--agent-cmd", &agent]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("would weigh over 10000 bytes")
            && out.stderr.contains("{steps.a.output} contributed the most"),
        "{}",
        out.stderr
    );
    assert!(!dir.join("called").exists(), "the agent was called");
}

/// `{steps.a.json}` of a small but deeply nested answer would pretty-print to far more than
/// the default cap: the phase fails without building that prompt.
#[test]
fn a_deeply_nested_json_answer_does_not_explode_a_prompt() {
    let flow = r#"{"name": "nest", "phases": [
        {"id": "a", "output": "json", "task": "NEST"},
        {"id": "b", "dependsOn": ["a"], "task": "Look: {steps.a.json}"}
    ]}"#;
    let dir = project("store-nested-prompt", flow);
    let depth = 6000;
    let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    std::fs::write(dir.join("nested.json"), nested).expect("write");
    let agent = script_agent(
        &dir,
        "a.sh",
        "if grep -q NEST; then cat nested.json; else touch called; fi",
    );
    let (out, peak) = run_watching_rss(&dir, &agent);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("{steps.a.json} contributed the most"),
        "{stderr}"
    );
    assert!(!dir.join("called").exists(), "the agent was called for b");
    assert!(peak < 200 * 1024, "peak RSS {peak} KiB");
}

/// A large output is written once to a file of its own and referenced from run.json; the
/// printed record still has it inline.
#[test]
fn large_outputs_live_in_their_own_file() {
    let dir = project(
        "store-large-output",
        r#"{"name": "large", "phases": [{"id": "a", "task": "Say a lot."}]}"#,
    );
    let agent = script_agent(
        &dir,
        "a.sh",
        "cat >/dev/null; head -c 100000 /dev/zero | tr '\\0' z",
    );
    let out = run_in(&dir, &["--agent-cmd", &agent, "--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains(&"z".repeat(100_000)));
    let runs = run_dirs(&dir);
    let record = std::fs::read_to_string(runs[0].join("run.json")).expect("run.json");
    assert!(record.len() < 20_000, "run.json is {} bytes", record.len());
    assert!(
        record.contains("\"outputFile\": \"outputs/phases/a.txt\"")
            && record.contains("\"outputBytes\": 100000")
            && record.contains("\"finalOutputFile\": \"outputs/final.txt\""),
        "{record}"
    );
    let stored = std::fs::read_to_string(runs[0].join("outputs/phases/a.txt")).expect("file");
    assert_eq!(stored, "z".repeat(100_000));
}
