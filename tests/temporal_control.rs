//! Runs on Temporal under control: approvals decided by signal (`tfc approve`), and
//! cancellation (`tfc cancel`) ending the run paused, then resumed.
#![cfg(feature = "temporal")]

mod temporal_env;

use temporal_env::*;

const GATED: &str = r#"{"name": "gated", "phases": [
    {"id": "build", "task": "build it"},
    {"id": "ok", "type": "approval", "dependsOn": ["build"], "task": "Ship {steps.build.output}?"},
    {"id": "ship", "dependsOn": ["ok"], "task": "ship it"}]}"#;

#[test]
fn approvals_wait_for_their_signal_and_cancellation_pauses_the_run() {
    let Some(bin) = require() else { return };
    let base = scratch("control");
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).expect("scratch");
    let server = Server::start(&bin, &base);
    let address = server.address();

    for (name, decision, code, status) in [
        ("approve", None, 0, "completed"),
        ("reject", Some("--reject"), 4, "blocked"),
    ] {
        let dir = base.join(name);
        let agent = project(&dir);
        std::fs::write(dir.join("flow.json"), GATED).expect("flow");
        let _w = Worker::start(&server, &dir, &agent, name);
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
        // The run waits at the approval: the build ran, nothing else.
        assert!(wait_for(60, || calls(&dir).len() == 1), "build never ran");
        std::thread::sleep(std::time::Duration::from_secs(2));
        assert_eq!(
            calls(&dir).len(),
            1,
            "nothing runs past an undecided approval"
        );
        let id = run_id(&dir).expect("run id");
        // No local lock, yet the run is alive: `tfc runs` says so, and it cannot be resumed.
        let listed = tfc(&dir, &["runs"]);
        assert!(
            listed.stdout.contains(&format!("{id}  running")),
            "{}",
            listed.stdout
        );
        let mut args = vec!["approve", id.as_str(), "ok", "--temporal", address.as_str()];
        if let Some(d) = decision {
            args.extend([d, "--reason", "not today"]);
        }
        let approved = tfc(&dir, &args);
        assert_eq!(approved.code, 0, "{}", approved.stderr);
        let out = run.wait_with_output().expect("tfc run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{stderr}");
        assert!(
            stderr.contains(&format!(
                "waiting for approval of 'ok': tfc approve {id} ok"
            )),
            "{stderr}"
        );
        let rec = record(&dir);
        assert_eq!(rec["status"], status, "{rec:#}");
        let shipped = calls(&dir).iter().any(|c| c.0 == "ship");
        assert_eq!(shipped, decision.is_none());
        if decision.is_some() {
            assert_eq!(
                rec["phases"]["ok"]["approval"]["note"], "not today",
                "{rec:#}"
            );
        }
    }

    // Cancellation: the running call stops, the run ends paused (interrupted), and a
    // resume finishes it.
    let dir = base.join("cancel");
    let agent = project(&dir);
    std::fs::write(
        dir.join("flow.json"),
        r#"{"name": "long", "phases": [{"id": "quick", "task": "quick"},
            {"id": "long", "dependsOn": ["quick"], "task": "SLOW:120 long"}]}"#,
    )
    .expect("flow");
    let _w = Worker::start(&server, &dir, &agent, "cancel");
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
        wait_for(60, || calls(&dir).iter().any(|c| c.0 == "long")),
        "the long call never started"
    );
    let id = run_id(&dir).expect("run id");
    let started = std::time::Instant::now();
    let cancelled = tfc(&dir, &["cancel", &id, "--temporal", &address]);
    assert_eq!(cancelled.code, 0, "{}", cancelled.stderr);
    let out = run.wait_with_output().expect("tfc run");
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "the call was stopped, not waited for"
    );
    let rec = record(&dir);
    assert_eq!(rec["status"], "paused");
    assert_eq!(rec["reason"], "interrupted");
    assert_eq!(rec["phases"]["quick"]["status"], "done");
    let resumed = tfc(&dir, &["resume", &id, "--agent-cmd", &a]);
    assert_eq!(resumed.code, 0, "{}", resumed.stderr);
    assert_eq!(resumed.stdout, "slow done long\n");
}
