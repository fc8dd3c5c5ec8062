//! Hooks on Temporal (SPEC §8.10): the hook of the run's ending is an activity of the
//! workflow — it runs with no `tfc run` following, its `hook` line joins the journal, and a
//! worker lost while it runs makes it run again on another worker with the same
//! `TFC_HOOK_ID` (at least once, never zero times).
#![cfg(feature = "temporal")]

mod temporal_env;

use std::path::Path;

use temporal_env::*;

/// A flow whose `onComplete` hook logs `TFC_HOOK_ID` and the record's run id, and on its
/// first run only records its pid and hangs (so a test can lose its worker meanwhile).
fn flow(hang_first: bool) -> String {
    let hang = if hang_first {
        "if [ ! -e hook-hung ]; then touch hook-hung; echo $$ > hook.pid.new; mv hook.pid.new hook.pid; sleep 300; fi; "
    } else {
        ""
    };
    format!(
        r#"{{"name": "hooked", "hooks": {{"onComplete": ["sh", "-c", "printf '%s\n' \"$TFC_HOOK_ID\" >> hooks.log; cat > hook-record.json; {hang}echo hooked", "sh"], "timeout": 600000}},
            "phases": [{{"id": "a", "type": "script", "run": ["echo", "done"]}}]}}"#
    )
}

fn hook_ids(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("hooks.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn hook_lines(dir: &Path) -> Vec<serde_json::Value> {
    let Some(run) = run_dir(dir) else {
        return Vec::new();
    };
    std::fs::read_to_string(run.join("journal.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "hook")
        .collect()
}

#[test]
fn the_hook_is_an_activity_run_at_least_once() {
    let Some((server, base)) = server_in("hooks") else {
        return;
    };

    // The hook runs once, after the run, with the record and its id.
    let dir = base.join("once");
    let agent = project(&dir);
    std::fs::write(dir.join("flow.json"), flow(false)).expect("flow");
    let worker = Worker::start(&server, &dir, &agent, "a");
    let out = run_on(&server, &dir, &agent);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "done\n");
    let id = run_id(&dir).expect("run id");
    assert!(wait_for(60, || hook_lines(&dir).len() == 1), "no hook line");
    assert_eq!(hook_ids(&dir), [format!("{id}:onComplete")]);
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("hook-record.json")).expect("the record on stdin"),
    )
    .expect("JSON");
    assert_eq!(record["runId"], id.as_str());
    assert_eq!(record["status"], "completed");
    assert!(record.get("def").is_none());
    let line = &hook_lines(&dir)[0];
    assert_eq!(line["event"], "onComplete");
    assert_eq!(line["exitCode"], 0);
    assert_eq!(line["stdout"], "hooked\n");
    drop(worker);

    // A hook that fails is one warning of the `tfc run` following the run; its exit code
    // is the run's.
    let dir = base.join("failing");
    let agent = project(&dir);
    std::fs::write(
        dir.join("flow.json"),
        r#"{"name": "hooked", "hooks": {"onComplete": ["sh", "-c", "echo 'pager down' >&2; exit 3"]},
            "phases": [{"id": "a", "type": "script", "run": ["echo", "done"]}]}"#,
    )
    .expect("flow");
    let worker = Worker::start(&server, &dir, &agent, "f");
    let out = run_on(&server, &dir, &agent);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let warnings: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("hooks.onComplete"))
        .collect();
    assert_eq!(
        warnings,
        ["warning: hooks.onComplete: the hook exited with code 3: pager down"],
        "{}",
        out.stderr
    );
    assert_eq!(hook_lines(&dir)[0]["exitCode"], 3);
    drop(worker);

    // Its worker lost mid-hook: the hook runs again elsewhere, same TFC_HOOK_ID.
    let dir = base.join("lost");
    let agent = project(&dir);
    std::fs::write(dir.join("flow.json"), flow(true)).expect("flow");
    let mut first = Worker::start(&server, &dir, &agent, "b");
    // Followed in the background: `tfc run` waits for the hook, as a local run does.
    let run = spawn_run(&server, &dir, &agent);
    assert!(
        wait_for(60, || dir.join("hook.pid").exists()),
        "the hook never started"
    );
    first.kill();
    let pid = std::fs::read_to_string(dir.join("hook.pid")).expect("pid");
    let _ = std::process::Command::new("kill")
        .args(["-9", "--", &format!("-{}", pid.trim())])
        .status();
    let _second = Worker::start(&server, &dir, &agent, "c");
    assert!(
        wait_for(180, || hook_lines(&dir).len() == 1),
        "the hook never ran again"
    );
    let out = run.wait_with_output().expect("tfc run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = run_id(&dir).expect("run id");
    let want = format!("{id}:onComplete");
    assert_eq!(hook_ids(&dir), [want.clone(), want]);
    assert_eq!(hook_lines(&dir)[0]["stdout"], "hooked\n");
}
