//! Hooks end to end (SPEC §8.10): the real binary runs the flow's hook of the run's ending
//! once `run.json` is final, with the record on stdin and `TFC_RUN_*` in its environment; a
//! hook that hangs, fails or floods its output never changes the run.

mod common;

use std::path::{Path, PathBuf};

use common::{Outcome, root, scratch, tfc_in};
use serde_json::Value;

/// A hook that keeps what it was given in files named after its event: the record from
/// stdin, the `TFC_` environment, its arguments, and `run.json` as it was when it ran.
fn recording_hook(event: &str) -> String {
    format!(
        r#"["sh", "-c", "cat > hook-{event}.json; env | grep '^TFC_' | sort > hook-{event}.env; printf '%s\n' \"$1\" > hook-{event}.args; cp \"$TFC_RUN_DIR/run.json\" hook-{event}.runjson", "sh", "{{run.status}} {{run.id}} {{args.who}}"]"#
    )
}

/// Every event recorded by [`recording_hook`].
fn all_hooks() -> String {
    let events = ["onComplete", "onFail", "onPause", "onBlock"];
    let hooks: Vec<String> = events
        .iter()
        .map(|e| format!("\"{e}\": {}", recording_hook(e)))
        .collect();
    format!("{{{}}}", hooks.join(", "))
}

fn flow(hooks: &str, phases: &str) -> String {
    format!(
        r#"{{"name": "hooked", "args": {{"who": {{"type": "string", "default": "ops"}}}}, "hooks": {hooks}, "phases": {phases}}}"#
    )
}

fn agent() -> String {
    root()
        .join("tests/fixtures/agents/scripted.sh")
        .display()
        .to_string()
}

/// Write `flow` into a fresh project and run `tfc run flow.json args…` there.
fn run(name: &str, flow: &str, args: &[&str]) -> (Outcome, PathBuf) {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join(".tfc")).expect("create .tfc");
    std::fs::write(dir.join("flow.json"), flow).expect("write flow");
    let agent = agent();
    let mut argv = vec!["run", "flow.json", "--agent-cmd", &agent];
    argv.extend_from_slice(args);
    (tfc_in(Some(&dir), &argv, b""), dir)
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The run directories of the flow, oldest first.
fn run_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<(String, PathBuf)> = std::fs::read_dir(dir.join(".tfc/runs/hooked"))
        .expect("runs")
        .map(|e| e.expect("entry").path())
        .map(|p| {
            let started = json(&read(&p, "run.json"))["startedAt"]
                .as_str()
                .unwrap_or("")
                .to_owned();
            (started, p)
        })
        .collect();
    dirs.sort();
    dirs.into_iter().map(|(_, p)| p).collect()
}

/// The `hook` journal lines of a run.
fn hook_lines(run_dir: &Path) -> Vec<Value> {
    read(run_dir, "journal.jsonl")
        .lines()
        .map(json)
        .filter(|v| v["type"] == "hook")
        .collect()
}

/// Only the hook of the run's ending ran, once, as SPEC §8.10 says it runs.
fn assert_recorded(dir: &Path, event: &str, status: &str) {
    for other in ["onComplete", "onFail", "onPause", "onBlock"] {
        assert_eq!(
            dir.join(format!("hook-{other}.json")).exists(),
            other == event,
            "{other} after a {status} run"
        );
    }
    let runs = run_dirs(dir);
    let run_dir = runs.last().expect("a run");
    let run_json = json(&read(run_dir, "run.json"));
    let id = run_json["runId"].as_str().expect("runId").to_owned();
    assert_eq!(run_json["status"], status);
    // The record on stdin is the run's, as `tfc run --format json` prints it.
    let record = json(&read(dir, &format!("hook-{event}.json")));
    assert_eq!(record["runId"], id.as_str());
    assert_eq!(record["status"], status);
    assert!(record.get("def").is_none());
    assert_eq!(record["phases"], run_json["phases"]);
    // run.json was final when the hook ran.
    let then = json(&read(dir, &format!("hook-{event}.runjson")));
    assert_eq!(then["status"], status);
    assert_eq!(then["endedAt"], run_json["endedAt"]);
    let env = read(dir, &format!("hook-{event}.env"));
    let run_dir_text = std::fs::canonicalize(run_dir).expect("canonical");
    for want in [
        "TFC_FLOW=hooked".to_string(),
        format!("TFC_HOOK_ID={id}:{event}"),
        format!("TFC_RUN_ID={id}"),
        format!("TFC_RUN_STATUS={status}"),
    ] {
        assert!(env.lines().any(|l| l == want), "{want} in {env}");
    }
    let dir_line = env
        .lines()
        .find_map(|l| l.strip_prefix("TFC_RUN_DIR="))
        .expect("TFC_RUN_DIR");
    assert_eq!(
        std::fs::canonicalize(dir_line).expect("run dir exists"),
        run_dir_text
    );
    assert_eq!(
        read(dir, &format!("hook-{event}.args")),
        format!("{status} {id} ops\n")
    );
    let lines = hook_lines(run_dir);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["event"], event);
    assert_eq!(lines[0]["exitCode"], 0);
    assert!(lines[0].get("error").is_none());
    assert_eq!(lines[0]["argv"][4], format!("{status} {id} ops").as_str());
}

#[test]
fn a_completed_run_runs_on_complete_with_the_record_and_env() {
    let phases = r#"[{"id": "a", "type": "script", "run": ["echo", "done"]}]"#;
    let (out, dir) = run("hooks-complete", &flow(&all_hooks(), phases), &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "done\n");
    assert_recorded(&dir, "onComplete", "completed");
    assert!(!out.stderr.contains("hooks."), "{}", out.stderr);
    // The lock went after the hook.
    assert!(!run_dirs(&dir)[0].join("lock").exists());
}

#[test]
fn a_failed_run_runs_on_fail() {
    let phases = r#"[{"id": "a", "type": "script", "run": ["sh", "-c", "exit 4"]}]"#;
    let (out, dir) = run("hooks-fail", &flow(&all_hooks(), phases), &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_recorded(&dir, "onFail", "failed");
}

#[test]
fn a_paused_run_runs_on_pause_and_its_resumed_run_its_own_hook() {
    let phases = r#"[{"id": "a", "type": "script", "run": ["echo", "draft"]},
        {"id": "ok", "type": "approval", "dependsOn": ["a"], "task": "ship?"},
        {"id": "b", "type": "script", "dependsOn": ["ok"], "run": ["echo", "shipped"]}]"#;
    let (out, dir) = run("hooks-pause", &flow(&all_hooks(), phases), &[]);
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert_recorded(&dir, "onPause", "paused");
    let parent = json(&read(&run_dirs(&dir)[0], "run.json"))["runId"]
        .as_str()
        .expect("runId")
        .to_owned();
    std::fs::remove_file(dir.join("hook-onPause.json")).expect("clear");
    let out = tfc_in(Some(&dir), &["resume", &parent, "--approve", "ok"], b"");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "shipped\n");
    // The resumed run ran its own hook, under its own id; the parent's is not run again.
    assert_recorded(&dir, "onComplete", "completed");
    let runs = run_dirs(&dir);
    assert_eq!(runs.len(), 2);
    let child = json(&read(&runs[1], "run.json"));
    assert_eq!(child["parentRunId"], parent.as_str());
    assert_eq!(hook_lines(&runs[0]).len(), 1);
}

#[test]
fn a_blocked_run_runs_on_block() {
    let phases = r#"[{"id": "gate", "type": "gate", "task": "ready?"},
        {"id": "after", "type": "script", "dependsOn": ["gate"], "run": ["echo", "x"]}]"#;
    let (out, dir) = run("hooks-block", &flow(&all_hooks(), phases), &[]);
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert_recorded(&dir, "onBlock", "blocked");
}

#[test]
fn a_dry_run_runs_no_hook() {
    let phases = r#"[{"id": "a", "task": "hello"}]"#;
    let (out, dir) = run("hooks-dry-run", &flow(&all_hooks(), phases), &["--dry-run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    for event in ["onComplete", "onFail", "onPause", "onBlock"] {
        assert!(!dir.join(format!("hook-{event}.json")).exists(), "{event}");
    }
}

#[test]
fn a_hanging_hook_is_killed_at_its_timeout_and_the_run_keeps_its_exit_code() {
    // The hook's own child is in its process group: killed with it.
    let hooks = r#"{"onComplete": ["sh", "-c", "sleep 60 & echo $! > hook-child.pid; wait"], "timeout": 1000}"#;
    let phases = r#"[{"id": "a", "type": "script", "run": ["echo", "done"]}]"#;
    let started = std::time::Instant::now();
    let (out, dir) = run("hooks-hang", &flow(hooks, phases), &[]);
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "done\n");
    let warnings: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("hooks.onComplete"))
        .collect();
    assert_eq!(
        warnings,
        [
            "warning: hooks.onComplete: the hook timed out after 1000ms; its process group was killed"
        ],
        "{}",
        out.stderr
    );
    let lines = hook_lines(&run_dirs(&dir)[0]);
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("timed out")),
        "{lines:?}"
    );
    let pid = read(&dir, "hook-child.pid");
    let alive = Path::new("/proc").join(pid.trim());
    // Reaped by init once killed; give the kernel a moment.
    for _ in 0..50 {
        if !alive.exists()
            || std::fs::read_to_string(alive.join("stat")).is_ok_and(|s| s.contains(") Z "))
        {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("the hook's child {} outlived its timeout", pid.trim());
}

#[test]
fn a_failing_hook_is_one_warning_and_a_journal_line() {
    let hooks = r#"{"onFail": ["sh", "-c", "echo 'webhook down' >&2; exit 7"]}"#;
    let phases = r#"[{"id": "a", "type": "script", "run": ["sh", "-c", "exit 2"]}]"#;
    let (out, dir) = run("hooks-failing", &flow(hooks, phases), &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let warnings: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("hooks.onFail"))
        .collect();
    assert_eq!(
        warnings,
        ["warning: hooks.onFail: the hook exited with code 7: webhook down"]
    );
    let lines = hook_lines(&run_dirs(&dir)[0]);
    assert_eq!(lines[0]["exitCode"], 7);
    assert_eq!(lines[0]["stderr"], "webhook down\n");
    assert_eq!(
        json(&read(&run_dirs(&dir)[0], "run.json"))["status"],
        "failed"
    );
    // A hook that cannot start is a warning too.
    let hooks = r#"{"onComplete": ["./no-such-hook"]}"#;
    let phases = r#"[{"id": "a", "type": "script", "run": ["echo", "ok"]}]"#;
    let (out, _) = run("hooks-missing", &flow(hooks, phases), &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .lines()
            .any(|l| l.starts_with("warning: hooks.onComplete: the hook could not start")),
        "{}",
        out.stderr
    );
}

#[test]
fn a_flood_of_output_is_cut_at_64_kib_and_the_run_is_unharmed() {
    let hooks = r#"{"onComplete": ["sh", "-c", "head -c 4000000 /dev/zero | tr '\\0' x; head -c 200000 /dev/zero | tr '\\0' y >&2"]}"#;
    let phases = r#"[{"id": "a", "type": "script", "run": ["echo", "done"]}]"#;
    let (out, dir) = run("hooks-flood", &flow(hooks, phases), &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "done\n");
    assert!(!out.stderr.contains("hooks."), "{}", out.stderr);
    let lines = hook_lines(&run_dirs(&dir)[0]);
    assert_eq!(lines[0]["exitCode"], 0);
    assert_eq!(lines[0]["stdout"].as_str().map(str::len), Some(65536));
    assert_eq!(lines[0]["stderr"].as_str().map(str::len), Some(65536));
    assert_eq!(lines[0]["truncated"], true);
}

/// The README's hooks example is a flow `tfc check` passes without a warning.
#[test]
fn the_readme_hooks_example_checks_clean() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let block = readme
        .split("### Hooks")
        .nth(1)
        .and_then(|s| s.split("```json\n").nth(1))
        .and_then(|s| s.split("```").next())
        .expect("a json block under '### Hooks'");
    let dir = scratch("hooks-readme");
    std::fs::write(dir.join("flow.json"), block).expect("write");
    let out = tfc_in(Some(&dir), &["check", "flow.json"], b"");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("0 errors, 0 warnings"),
        "{}",
        out.stderr
    );
    let out = tfc_in(
        Some(&dir),
        &[
            "check",
            "flow.json",
            "--arg",
            "webhook=https://hooks.example.com/tfc",
        ],
        b"",
    );
    assert!(
        out.stderr.contains("0 errors, 0 warnings"),
        "{}",
        out.stderr
    );
}
