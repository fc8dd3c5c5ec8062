//! kill -9 of the worker holding the workflow, and of the server: the run completes, and no
//! call is made twice.
#![cfg(feature = "temporal")]

mod temporal_env;

use temporal_env::*;

/// The pid of the worker that completed the workflow's last task (its identity is
/// `tfc-<pid>@<host>`).
fn holder(server: &Server, run_id: &str) -> Option<u32> {
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

const CHAIN: &str = r#"{"name": "steps", "phases": [
    {"id": "s1", "task": "SLOW:2 one"},
    {"id": "s2", "dependsOn": ["s1"], "task": "SLOW:2 two"},
    {"id": "s3", "dependsOn": ["s2"], "task": "SLOW:2 three"},
    {"id": "s4", "dependsOn": ["s3"], "task": "SLOW:2 four"},
    {"id": "s5", "dependsOn": ["s4"], "task": "SLOW:2 five"},
    {"id": "s6", "dependsOn": ["s5"], "task": "SLOW:2 six"}]}"#;

fn each_phase_called_once(dir: &std::path::Path) {
    let mut phases: Vec<String> = calls(dir).into_iter().map(|c| c.0).collect();
    phases.sort();
    assert_eq!(
        phases,
        ["s1", "s2", "s3", "s4", "s5", "s6"],
        "no call twice"
    );
}

#[test]
fn the_run_survives_the_loss_of_the_worker_holding_its_workflow() {
    let Some(bin) = require() else { return };
    let base = scratch("host-loss");
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).expect("scratch");
    let server = Server::start(&bin, &base);
    let dir = base.join("p");
    let agent = project(&dir);
    std::fs::write(dir.join("flow.json"), CHAIN).expect("flow");
    let mut workers = [
        Worker::start(&server, &dir, &agent, "a"),
        Worker::start(&server, &dir, &agent, "b"),
    ];
    let address = server.address();
    let a = agent.display().to_string();
    let run = spawn_tfc(
        &dir,
        &[
            "run",
            "flow.json",
            "--agent-cmd",
            &a,
            "--engine",
            "temporal",
            "--temporal",
            &address,
        ],
    );
    assert!(wait_for(60, || !calls(&dir).is_empty()), "no call started");
    let id = run_id(&dir).expect("the run's directory");
    // Kill the workflow's holder while a call runs on the other worker.
    let mut killed = None;
    let ok = wait_for(60, || {
        let (Some(h), Some(last)) = (holder(&server, &id), calls(&dir).last().cloned()) else {
            return false;
        };
        if h == last.2 || last.0 == "s6" {
            return false;
        }
        if let Some(w) = workers.iter_mut().find(|w| w.pid() == h) {
            w.kill();
            killed = Some(h);
            return true;
        }
        false
    });
    assert!(
        ok,
        "never saw the workflow held apart from the running call"
    );
    let out = run.wait_with_output().expect("tfc run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(record(&dir)["status"], "completed");
    each_phase_called_once(&dir);
    let after: Vec<u32> = calls(&dir).into_iter().map(|c| c.2).collect();
    assert!(killed.is_some() && after.last() != killed.as_ref());
}

#[test]
fn the_run_survives_a_server_restart() {
    let Some(bin) = require() else { return };
    let base = scratch("server-loss");
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).expect("scratch");
    let mut server = Server::start(&bin, &base);
    let dir = base.join("p");
    let agent = project(&dir);
    std::fs::write(dir.join("flow.json"), CHAIN).expect("flow");
    let _workers = [
        Worker::start(&server, &dir, &agent, "a"),
        Worker::start(&server, &dir, &agent, "b"),
    ];
    let address = server.address();
    let a = agent.display().to_string();
    let run = spawn_tfc(
        &dir,
        &[
            "run",
            "flow.json",
            "--agent-cmd",
            &a,
            "--engine",
            "temporal",
            "--temporal",
            &address,
        ],
    );
    assert!(
        wait_for(60, || calls(&dir).iter().any(|c| c.0 == "s2")),
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
}
