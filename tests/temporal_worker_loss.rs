//! kill -9 of the worker running a call: an idempotent phase is retried on another worker
//! (SPEC §8.4: the lost attempt counts), an `idempotent:false` phase fails (§8.5: no
//! transient retry) and is never called twice.
#![cfg(feature = "temporal")]

mod temporal_env;

use std::path::Path;

use temporal_env::*;

/// Wait for the first call of `phase`; kill -9 the worker running it and the agent's
/// process group; return the killed worker's pid.
fn kill_the_worker_calling(dir: &Path, phase: &str, workers: &mut [Worker]) -> u32 {
    assert!(
        wait_for(180, || calls(dir).iter().any(|c| c.0 == phase)),
        "the call of '{phase}' never started"
    );
    let (_, agent, parent) = calls(dir)
        .into_iter()
        .find(|c| c.0 == phase)
        .expect("logged");
    let w = workers
        .iter_mut()
        .find(|w| w.pid() == parent)
        .expect("the call runs on one of our workers");
    w.kill();
    // The orphaned agent (ours, started by the killed worker) goes too.
    let _ = std::process::Command::new("kill")
        .args(["-9", "--", &format!("-{agent}")])
        .status();
    let _ = std::process::Command::new("kill")
        .args(["-9", &agent.to_string()])
        .status();
    parent
}

#[test]
fn a_lost_worker_is_a_transient_failure_retried_elsewhere_except_for_non_idempotent_phases() {
    let Some((server, base)) = server_in("worker-loss") else {
        return;
    };

    // An idempotent phase: retried on the other worker.
    let dir = base.join("idempotent");
    let agent = project(&dir);
    std::fs::write(
        dir.join("flow.json"),
        r#"{"name": "lossy", "phases": [{"id": "slow", "task": "SLOW:120 work"},
            {"id": "next", "dependsOn": ["slow"], "task": "after {steps.slow.output}"}]}"#,
    )
    .expect("flow");
    let mut workers = [
        Worker::start(&server, &dir, &agent, "a"),
        Worker::start(&server, &dir, &agent, "b"),
    ];
    let run = spawn_run(&server, &dir, &agent);
    let killed = kill_the_worker_calling(&dir, "slow", &mut workers);
    let out = run.wait_with_output().expect("tfc run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "ok next: after slow done slow\n"
    );
    let rec = record(&dir);
    assert_eq!(rec["status"], "completed");
    assert_eq!(rec["phases"]["slow"]["attempts"], 2, "{rec:#}");
    let slow: Vec<_> = calls(&dir).into_iter().filter(|c| c.0 == "slow").collect();
    assert_eq!(slow.len(), 2, "{slow:?}");
    assert_ne!(slow[1].2, killed, "the retry ran on the other worker");
    // The first pair polls the same task queue: stop it, so the next call can only run on a
    // worker of the next pair.
    drop(workers);

    // A non-idempotent phase: failed, never called twice.
    let dir = base.join("once");
    let agent = project(&dir);
    std::fs::write(
        dir.join("flow.json"),
        r#"{"name": "once", "phases": [{"id": "deploy", "idempotent": false, "task": "SLOW:120 deploy"}]}"#,
    )
    .expect("flow");
    let mut workers = [
        Worker::start(&server, &dir, &agent, "c"),
        Worker::start(&server, &dir, &agent, "d"),
    ];
    let run = spawn_run(&server, &dir, &agent);
    kill_the_worker_calling(&dir, "deploy", &mut workers);
    let out = run.wait_with_output().expect("tfc run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let rec = record(&dir);
    assert_eq!(rec["status"], "failed");
    let phase = &rec["phases"]["deploy"];
    assert_eq!(phase["status"], "failed");
    assert_eq!(phase["attempts"], 1, "{phase:#}");
    assert!(
        phase["error"]
            .as_str()
            .is_some_and(|e| e.contains("worker lost")),
        "{phase:#}"
    );
    assert_eq!(
        calls(&dir).iter().filter(|c| c.0 == "deploy").count(),
        1,
        "an idempotent:false phase is never called twice"
    );
}
