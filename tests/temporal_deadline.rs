//! Approval deadlines on Temporal (SPEC §8.8): the deadline is a durable workflow timer, so
//! `onTimeout` decides with no `tfc` client alive (and with no worker alive at the deadline:
//! the next worker replays the run and finds the timer fired); `tfc approve` before the
//! deadline wins, after it is refused (exit 2) with SPEC §8.8's message, whether the run
//! still runs, its deadline ended it, or it is a resumed run its parent's deadline decided.
#![cfg(feature = "temporal")]

mod temporal_env;

use std::path::Path;
use std::time::Duration;

use temporal_env::*;

/// `build`, then approval `ok` with `timeout` (ms) and `onTimeout` `on`, then `ship`; and
/// `slow`, independent, whose call takes `slow` seconds (it keeps the run alive after the
/// deadline, so a late `tfc approve` meets a running workflow).
fn flow(timeout: u64, on: &str, slow: u64) -> String {
    format!(
        r#"{{"name": "deadline", "phases": [
    {{"id": "build", "task": "build it"}},
    {{"id": "ok", "type": "approval", "dependsOn": ["build"], "task": "Ship?",
      "timeout": {timeout}, "onTimeout": "{on}"}},
    {{"id": "ship", "dependsOn": ["ok"], "task": "ship it"}},
    {{"id": "slow", "task": "SLOW:{slow} meanwhile"}}]}}"#
    )
}

/// The `approval` member of phase `ok` in the run's `run.json` (null until there is one).
fn approval(dir: &Path) -> serde_json::Value {
    run_dir(dir)
        .and_then(|d| std::fs::read_to_string(d.join("run.json")).ok())
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .map_or(serde_json::Value::Null, |r| {
            r["phases"]["ok"]["approval"].clone()
        })
}

/// Start the run of `dir/flow.json` on `server`, wait until it asks for approval `ok` (the
/// build ran and the client says so), then kill -9 the client: no `tfc` client is alive.
/// The run id.
fn start_and_kill_the_client(server: &Server, dir: &Path, agent: &Path) -> String {
    let mut run = spawn_run(server, dir, agent);
    let stderr = run.stderr.take().expect("the client's stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if line.contains("waiting for approval of 'ok'") {
                let _ = tx.send(());
            }
        }
    });
    assert!(
        rx.recv_timeout(Duration::from_secs(180)).is_ok(),
        "the run never asked for approval 'ok'"
    );
    let id = run_id(dir).expect("run id");
    run.kill().expect("kill -9 the client");
    let _ = run.wait();
    id
}

/// `tfc approve RUN ok [extra…]` in `dir`.
fn approve(server: &Server, dir: &Path, id: &str, extra: &[&str]) -> Ran {
    let address = server.address();
    let mut args = vec!["approve", id, "ok", "--temporal", address.as_str()];
    args.extend(extra);
    tfc(dir, &args)
}

/// The refusal of a decision on `ok` after its deadline `expires`, decided by `on`.
fn refusal(expires: &str, on: &str) -> String {
    format!("error: approval 'ok' expired at {expires}; its onTimeout ({on}) decides\n")
}

#[test]
fn the_deadline_decides_on_temporal_with_no_client_alive() {
    let Some((server, base)) = server_in("deadline") else {
        return;
    };

    // onTimeout approve, while `slow` keeps the run going: the deadline approves, `ship`
    // runs, and a late `tfc approve` (or `--reject`) is refused by the running workflow.
    let dir = base.join("approve");
    let agent = project(&dir);
    std::fs::write(dir.join("flow.json"), flow(3000, "approve", 25)).expect("flow");
    let _w = Worker::start(&server, &dir, &agent, "approve");
    let id = start_and_kill_the_client(&server, &dir, &agent);
    assert!(
        wait_for(60, || approval(&dir)["source"] == "timeout"),
        "the deadline never decided: {:#}",
        approval(&dir)
    );
    let a = approval(&dir);
    let expires = a["expiresAt"].as_str().expect("expiresAt").to_owned();
    assert_eq!(a["decision"], "approve", "{a:#}");
    assert_eq!(
        a["note"],
        format!("no decision before {expires}").as_str(),
        "{a:#}"
    );
    assert_eq!(
        record(&dir)["status"],
        "running",
        "`slow` still runs: the late decisions meet a live workflow"
    );
    for extra in [&[][..], &["--reject", "--reason", "too late"][..]] {
        let late = approve(&server, &dir, &id, extra);
        assert_eq!(late.code, 2, "{}", late.stderr);
        assert_eq!(late.stderr, refusal(&expires, "approve"));
        assert!(late.stdout.is_empty(), "{}", late.stdout);
    }
    assert!(
        wait_for(120, || record(&dir)["status"] == "completed"),
        "the run did not complete: {:#}",
        record(&dir)
    );
    let rec = record(&dir);
    assert_eq!(
        rec["phases"]["ok"]["approval"], a,
        "the refusals changed nothing"
    );
    assert_eq!(rec["phases"]["ship"]["status"], "done", "{rec:#}");
    assert!(calls(&dir).iter().any(|c| c.0 == "ship"));

    // onTimeout reject: the deadline blocks the run, which ends; `tfc approve` then is
    // refused from the run's record.
    let dir = base.join("reject");
    let agent = project(&dir);
    std::fs::write(dir.join("flow.json"), flow(3000, "reject", 1)).expect("flow");
    let _w = Worker::start(&server, &dir, &agent, "reject");
    let id = start_and_kill_the_client(&server, &dir, &agent);
    assert!(
        wait_for(60, || record(&dir)["status"] == "blocked"),
        "the deadline did not block the run: {:#}",
        record(&dir)
    );
    let rec = record(&dir);
    let a = &rec["phases"]["ok"]["approval"];
    assert_eq!(a["decision"], "reject", "{rec:#}");
    assert_eq!(a["source"], "timeout", "{rec:#}");
    let expires = a["expiresAt"].as_str().expect("expiresAt").to_owned();
    assert_eq!(
        rec["phases"]["ok"]["gate"]["reason"],
        format!("no decision before {expires}").as_str(),
        "{rec:#}"
    );
    assert!(!calls(&dir).iter().any(|c| c.0 == "ship"));
    let late = approve(&server, &dir, &id, &[]);
    assert_eq!(late.code, 2, "{}", late.stderr);
    assert_eq!(late.stderr, refusal(&expires, "reject"));

    // A run resumed on Temporal after its parent's deadline: the deadline decides as the
    // resumed run starts (no question is ever asked), and `tfc approve` is refused while
    // the run goes on.
    let dir = base.join("resumed");
    let agent = project(&dir);
    std::fs::write(
        dir.join("flow.json"),
        r#"{"name": "deadline", "phases": [
    {"id": "build", "task": "build it"},
    {"id": "ok", "type": "approval", "dependsOn": ["build"], "timeout": 2000,
      "onTimeout": "approve"},
    {"id": "ship", "dependsOn": ["ok"], "task": "SLOW:30 ship it"}]}"#,
    )
    .expect("flow");
    let a = agent.display().to_string();
    let paused = tfc(&dir, &["run", "flow.json", "--agent-cmd", &a]);
    assert_eq!(paused.code, 5, "{}", paused.stderr);
    let parent = run_id(&dir).expect("the parent run");
    let expires = record(&dir)["phases"]["ok"]["approval"]["expiresAt"]
        .as_str()
        .expect("expiresAt while paused")
        .to_owned();
    std::thread::sleep(Duration::from_millis(2500));
    let _w = Worker::start(&server, &dir, &agent, "resumed");
    let address = server.address();
    let mut resumed = spawn_tfc(
        &dir,
        &[
            "resume",
            &parent,
            "--agent-cmd",
            &a,
            "--engine",
            "temporal",
            "--temporal",
            &address,
        ],
    );
    assert!(
        wait_for(180, || calls(&dir).iter().any(|c| c.0 == "ship")),
        "the resumed run never reached `ship`"
    );
    let runs = dir.join(".tfc").join("runs").join("deadline");
    let child = std::fs::read_dir(&runs)
        .expect("runs")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|id| *id != parent)
        .expect("the resumed run");
    let late = approve(&server, &dir, &child, &[]);
    assert_eq!(late.code, 2, "{}", late.stderr);
    assert_eq!(late.stderr, refusal(&expires, "approve"));
    let rec: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(runs.join(&child).join("run.json")).expect("run.json"),
    )
    .expect("JSON");
    assert_eq!(rec["status"], "running", "{rec:#}");
    let a = &rec["phases"]["ok"]["approval"];
    assert_eq!(a["source"], "timeout", "{rec:#}");
    assert_eq!(
        a["expiresAt"],
        expires.as_str(),
        "the parent's deadline: {rec:#}"
    );
    let _ = resumed.kill();
    let _ = resumed.wait();
}

#[test]
fn the_timer_is_durable_and_a_decision_before_it_wins() {
    let Some((server, base)) = server_in("deadline-durable") else {
        return;
    };

    // onTimeout fail, and at the deadline no process of tfc is alive at all: the client
    // and the worker were killed (-9) before it; a worker started after it replays the
    // run, sees the timer fired, and the approval fails as expired.
    let dir = base.join("fail");
    let agent = project(&dir);
    std::fs::write(dir.join("flow.json"), flow(3000, "fail", 1)).expect("flow");
    let mut first = Worker::start(&server, &dir, &agent, "first");
    let id = start_and_kill_the_client(&server, &dir, &agent);
    first.kill();
    std::thread::sleep(Duration::from_secs(5));
    assert_ne!(
        record(&dir)["status"],
        "failed",
        "nothing was alive to end it"
    );
    let _second = Worker::start(&server, &dir, &agent, "second");
    assert!(
        wait_for(120, || record(&dir)["status"] == "failed"),
        "the expired approval did not fail the run: {:#}",
        record(&dir)
    );
    let rec = record(&dir);
    let ok = &rec["phases"]["ok"];
    assert_eq!(ok["status"], "failed", "{rec:#}");
    assert_eq!(ok["approval"]["decision"], "expired", "{rec:#}");
    assert_eq!(ok["approval"]["source"], "timeout", "{rec:#}");
    let expires = ok["approval"]["expiresAt"].as_str().expect("expiresAt");
    assert_eq!(
        ok["error"],
        format!("approval 'ok' expired at {expires}").as_str(),
        "{rec:#}"
    );
    let late = approve(&server, &dir, &id, &[]);
    assert_eq!(late.code, 2, "{}", late.stderr);
    assert_eq!(late.stderr, refusal(expires, "fail"));

    // A decision before the deadline wins, with no client alive: the run takes it by
    // update and ends blocked by it, not by the deadline.
    let dir = base.join("early");
    let agent = project(&dir);
    std::fs::write(dir.join("flow.json"), flow(3_600_000, "approve", 1)).expect("flow");
    let _w = Worker::start(&server, &dir, &agent, "early");
    let id = start_and_kill_the_client(&server, &dir, &agent);
    let decided = approve(&server, &dir, &id, &["--reject", "--reason", "not today"]);
    assert_eq!(decided.code, 0, "{}", decided.stderr);
    assert!(
        decided
            .stderr
            .contains(&format!("run {id}: phase 'ok' rejected")),
        "{}",
        decided.stderr
    );
    assert!(
        wait_for(120, || record(&dir)["status"] == "blocked"),
        "the decision did not block the run: {:#}",
        record(&dir)
    );
    let rec = record(&dir);
    let a = &rec["phases"]["ok"]["approval"];
    assert_eq!(a["decision"], "reject", "{rec:#}");
    assert_eq!(a["source"], "signal", "{rec:#}");
    assert_eq!(a["note"], "not today", "{rec:#}");
    assert!(a["expiresAt"].is_string(), "{rec:#}");
}
