//! kill -9 of the worker holding the workflow, and of the server: the run completes, and no
//! call is made twice.
#![cfg(feature = "temporal")]

mod temporal_env;

use temporal_env::*;

const CHAIN: &str = r#"{"name": "steps", "phases": [
    {"id": "s1", "task": "SLOW:2 one"},
    {"id": "s2", "dependsOn": ["s1"], "task": "SLOW:2 two"},
    {"id": "s3", "dependsOn": ["s2"], "task": "SLOW:2 three"},
    {"id": "s4", "dependsOn": ["s3"], "task": "SLOW:2 four"},
    {"id": "s5", "dependsOn": ["s4"], "task": "SLOW:2 five"},
    {"id": "s6", "dependsOn": ["s5"], "task": "SLOW:2 six"}]}"#;

#[test]
fn the_run_survives_the_loss_of_the_worker_holding_its_workflow() {
    let Some((server, base)) = server_in("host-loss") else {
        return;
    };
    let dir = base.join("p");
    let agent = project(&dir);
    std::fs::write(dir.join("flow.json"), HOLD).expect("flow");
    let mut workers = [
        Worker::start(&server, &dir, &agent, "a"),
        Worker::start(&server, &dir, &agent, "b"),
    ];
    let run = spawn_run(&server, &dir, &agent);
    assert!(
        wait_for(180, || calls(&dir).iter().any(|c| c.0 == "f")),
        "f never ran"
    );
    let id = run_id(&dir).expect("the run's directory");
    let h = kill_the_holder(&server, &id, &mut workers);
    assert_eq!(calls(&dir).len(), 2, "no call runs during the backoff");
    let out = run.wait_with_output().expect("tfc run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "ok s3: last steady now\n"
    );
    let rec = record(&dir);
    assert_eq!(rec["status"], "completed");
    assert_eq!(rec["phases"]["f"]["attempts"], 2);
    let mut phases: Vec<String> = calls(&dir).into_iter().map(|c| c.0).collect();
    phases.sort();
    assert_eq!(phases, ["f", "f", "s1", "s3"], "no call made twice");
    assert!(
        calls(&dir)[2..].iter().all(|c| c.2 != h),
        "the rest ran on the other worker"
    );
}

#[test]
fn the_run_survives_a_server_restart() {
    let Some((mut server, base)) = server_in("server-loss") else {
        return;
    };
    let dir = base.join("p");
    let agent = project(&dir);
    std::fs::write(dir.join("flow.json"), CHAIN).expect("flow");
    let _workers = [
        Worker::start(&server, &dir, &agent, "a"),
        Worker::start(&server, &dir, &agent, "b"),
    ];
    let run = spawn_run(&server, &dir, &agent);
    assert!(
        wait_for(180, || calls(&dir).iter().any(|c| c.0 == "s2")),
        "s2 never started"
    );
    server.kill();
    std::thread::sleep(std::time::Duration::from_secs(1));
    server.restart();
    let out = run.wait_with_output().expect("tfc run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rec = record(&dir);
    assert_eq!(rec["status"], "completed");
    assert_eq!(rec["finalOutput"], "slow done s6");
    // Every phase ran; a call whose completion the dead server missed may have run again.
    let mut phases: Vec<String> = calls(&dir).into_iter().map(|c| c.0).collect();
    phases.dedup();
    assert_eq!(phases, ["s1", "s2", "s3", "s4", "s5", "s6"]);
}
