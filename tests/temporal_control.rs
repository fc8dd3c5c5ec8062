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
    let Some((server, base)) = server_in("control") else {
        return;
    };
    let address = server.address();

    for (name, decision, code, status) in [
        ("approve", None, 0, "completed"),
        ("reject", Some("--reject"), 4, "blocked"),
    ] {
        let dir = base.join(name);
        let agent = project(&dir);
        std::fs::write(dir.join("flow.json"), GATED).expect("flow");
        let _w = Worker::start(&server, &dir, &agent, name);
        let run = spawn_run(&server, &dir, &agent);
        // The run waits at the approval: the build ran, nothing else.
        assert!(wait_for(180, || calls(&dir).len() == 1), "build never ran");
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
        // The run is named by a unique prefix of its id, as `tfc show` takes it.
        let prefix = &id[..id.len() - 2];
        let mut args = vec!["approve", prefix, "ok", "--temporal", address.as_str()];
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
        // The decision came by signal, and the record says so.
        assert_eq!(
            rec["phases"]["ok"]["approval"]["source"], "signal",
            "{rec:#}"
        );
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
    let run = spawn_run(&server, &dir, &agent);
    assert!(
        wait_for(180, || calls(&dir).iter().any(|c| c.0 == "long")),
        "the long call never started"
    );
    let id = run_id(&dir).expect("run id");
    let started = std::time::Instant::now();
    let cancelled = tfc(&dir, &["cancel", "last", "--temporal", &address]);
    assert_eq!(cancelled.code, 0, "{}", cancelled.stderr);
    assert!(cancelled.stderr.contains(&id), "{}", cancelled.stderr);
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
    let a = agent.display().to_string();
    let resumed = tfc(&dir, &["resume", &id, "--agent-cmd", &a]);
    assert_eq!(resumed.code, 0, "{}", resumed.stderr);
    assert_eq!(resumed.stdout, "slow done long\n");
}

#[test]
fn a_budget_stops_the_run_on_temporal_as_it_does_locally() {
    let Some((server, base)) = server_in("budget") else {
        return;
    };
    let flow = r#"{"name": "spend", "budget": {"maxTokens": 250}, "phases": [
        {"id": "a", "task": "one"}, {"id": "b", "dependsOn": ["a"], "task": "two"},
        {"id": "c", "dependsOn": ["b"], "task": "three"}]}"#;
    // Replayed answers with usage: 200 tokens a call.
    let fixture: String = [("a", "one"), ("b", "two"), ("c", "three")]
        .iter()
        .map(|(node, prompt)| {
            use std::fmt::Write as _;
            let sha = sha256_hex(prompt);
            let mut line = String::new();
            let _ = write!(
                line,
                r#"{{"type":"agent-call","node":"{node}","agent":"default","promptSha256":"{sha}","attempt":1,"backend":"command","model":null,"ok":true,"output":"did {prompt}","error":null,"usage":{{"input":100,"output":100,"cacheRead":0,"cacheWrite":0,"costUSD":null,"turns":1}},"stopReason":"completed","durationMs":1}}"#
            );
            line + "\n"
        })
        .collect();
    let mut records = Vec::new();
    for name in ["local", "remote"] {
        let dir = base.join(name);
        project(&dir);
        std::fs::write(dir.join("flow.json"), flow).expect("flow");
        std::fs::write(dir.join("calls.jsonl"), &fixture).expect("fixture");
    }
    let local = tfc(
        &base.join("local"),
        &["run", "flow.json", "--replay", "calls.jsonl"],
    );
    assert_eq!(local.code, 5, "{}", local.stderr);
    let dir = base.join("remote");
    let fixture_path = format!("replay:{}", dir.join("calls.jsonl").display());
    let _w = Worker::start_with(&server, &dir, &["--backend", &fixture_path], "budget");
    let address = server.address();
    let remote = tfc(
        &dir,
        &[
            "run",
            "flow.json",
            "--replay",
            "calls.jsonl",
            "--engine",
            "temporal",
            "--temporal",
            &address,
        ],
    );
    assert_eq!(remote.code, 5, "{}", remote.stderr);
    for name in ["local", "remote"] {
        let rec = record(&base.join(name));
        assert_eq!(rec["status"], "paused");
        assert_eq!(
            rec["reason"],
            "budget exceeded: tokens 400 exceeded cap 250"
        );
        assert_eq!(rec["phases"]["c"]["status"], "skipped");
        records.push(normalized(rec));
    }
    assert_eq!(records[0], records[1]);
}

/// Lowercase hex sha256 of `text`, with the system's `sha256sum`.
fn sha256_hex(text: &str) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("sha256sum");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("sha256sum");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn ctrl_c_detaches_and_the_run_goes_on() {
    let Some((server, base)) = server_in("detach") else {
        return;
    };
    let dir = base.join("p");
    let agent = project(&dir);
    std::fs::write(
        dir.join("flow.json"),
        r#"{"name": "bg", "phases": [{"id": "slow", "task": "SLOW:4 work"}]}"#,
    )
    .expect("flow");
    let _w = Worker::start(&server, &dir, &agent, "bg");
    let run = spawn_run(&server, &dir, &agent);
    assert!(
        wait_for(180, || !calls(&dir).is_empty()),
        "the call never started"
    );
    let _ = std::process::Command::new("kill")
        .args(["-INT", &run.id().to_string()])
        .status();
    let out = run.wait_with_output().expect("tfc run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("detached"), "{stderr}");
    assert!(stderr.contains("tfc cancel"), "{stderr}");
    assert!(out.stdout.is_empty());
    // The run went on without its follower.
    assert!(
        wait_for(180, || record(&dir)["status"] == "completed"),
        "the detached run did not complete"
    );
    assert_eq!(calls(&dir).len(), 1);
}

#[test]
fn the_engine_table_of_the_configuration_sends_runs_and_workers_to_temporal() {
    let Some((server, base)) = server_in("engine-config") else {
        return;
    };
    let dir = base.join("p");
    let agent = project(&dir);
    // No --engine, --temporal or --task-queue anywhere: the worker and the run read them.
    std::fs::write(
        dir.join(".tfc").join("config.toml"),
        format!(
            "[engine]\nkind = \"temporal\"\naddress = \"{}\"\ntask_queue = \"from-config\"\n",
            server.address()
        ),
    )
    .expect("config");
    std::fs::write(
        dir.join("flow.json"),
        r#"{"name": "configured", "phases": [{"id": "a", "task": "one"},
            {"id": "b", "dependsOn": ["a"], "task": "two {steps.a.output}"}]}"#,
    )
    .expect("flow");
    let log = std::fs::File::create(dir.join("worker-config.log")).expect("log");
    let worker = Worker {
        child: std::process::Command::new(env!("CARGO_BIN_EXE_tfc"))
            .args(["worker", "--agent-cmd", &agent.display().to_string()])
            .current_dir(&dir)
            .env("NO_COLOR", "1")
            .stdin(std::process::Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("start tfc worker"),
    };
    let a = agent.display().to_string();
    let ran = tfc(&dir, &["run", "flow.json", "--agent-cmd", &a]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let rec = record(&dir);
    assert_eq!(rec["status"], "completed");
    assert_eq!(rec["engine"]["kind"], "temporal", "{rec:#}");
    assert_eq!(rec["engine"]["taskQueue"], "from-config", "{rec:#}");
    assert_eq!(rec["engine"]["address"], server.address().as_str());
    // The calls ran in the worker, not in the run's own process.
    assert!(
        calls(&dir).iter().all(|c| c.2 == worker.pid()),
        "{:?}",
        calls(&dir)
    );
    assert_eq!(calls(&dir).len(), 2);
}

#[test]
fn a_failed_run_resumes_on_temporal_and_reuses_what_was_done() {
    let Some((server, base)) = server_in("resume") else {
        return;
    };
    let address = server.address();
    let dir = base.join("resume");
    let agent = project(&dir);
    // `b` is not idempotent: its first call fails and is not retried, so the run fails.
    std::fs::write(
        dir.join("flow.json"),
        r#"{"name": "again", "phases": [{"id": "a", "task": "first"},
            {"id": "b", "dependsOn": ["a"], "idempotent": false, "task": "FLAKY {steps.a.output}"},
            {"id": "c", "dependsOn": ["b"], "task": "last {steps.b.output}"}]}"#,
    )
    .expect("flow");
    let _w1 = Worker::start(&server, &dir, &agent, "1");
    let _w2 = Worker::start(&server, &dir, &agent, "2");
    let failed = run_on(&server, &dir, &agent);
    assert_eq!(failed.code, 1, "{}", failed.stderr);
    let parent = run_id(&dir).expect("run id");
    let a = agent.display().to_string();
    let resumed = tfc(
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
    assert_eq!(resumed.code, 0, "{}", resumed.stderr);
    assert_eq!(resumed.stdout, "ok c: last steady now\n");
    // The resumed run is the other directory of the flow.
    let runs = dir.join(".tfc").join("runs").join("again");
    // The run of the flow that is none of `known`, and its record.
    let other = |known: &[&str]| {
        let id = std::fs::read_dir(&runs)
            .expect("runs")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|id| !known.contains(&id.as_str()))
            .expect("the new run");
        let rec: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(runs.join(&id).join("run.json")).expect("run.json"),
        )
        .expect("JSON");
        (id, rec)
    };
    let (child, rec) = other(&[&parent]);
    assert_eq!(rec["status"], "completed", "{rec:#}");
    assert_eq!(rec["parentRunId"], parent.as_str(), "{rec:#}");
    assert_eq!(rec["phases"]["a"]["cacheHit"], "run-only", "{rec:#}");
    assert_eq!(rec["phases"]["a"]["attempts"], 0, "{rec:#}");
    // `a` was called once (by the parent), `b` twice (failed, then resumed), `c` once.
    let mut called: Vec<String> = calls(&dir).into_iter().map(|c| c.0).collect();
    called.sort();
    assert_eq!(called, ["a", "b", "b", "c"]);
    // It ran on Temporal: its workflow's history has the calls.
    let history = server.history(&child);
    assert!(
        history.to_string().contains("agent-call"),
        "the resumed run's calls went through Temporal"
    );
    // A fork of the finished run on Temporal: b's output is given, only c is called, and
    // the non-idempotent b is never called again.
    let forked = tfc(
        &dir,
        &[
            "fork",
            &child,
            "--set",
            "b=given",
            "--agent-cmd",
            &a,
            "--engine",
            "temporal",
            "--temporal",
            &address,
        ],
    );
    assert_eq!(forked.code, 0, "{}", forked.stderr);
    assert_eq!(forked.stdout, "ok c: last given\n");
    let mut called: Vec<String> = calls(&dir).into_iter().map(|c| c.0).collect();
    called.sort();
    assert_eq!(called, ["a", "b", "b", "c", "c"]);
    let (fork, rec) = other(&[&parent, &child]);
    assert_eq!(rec["forkedFrom"]["runId"], child.as_str(), "{rec:#}");
    assert_eq!(rec["phases"]["b"]["cacheHit"], "set", "{rec:#}");
    assert_eq!(rec["phases"]["a"]["cacheHit"], "run-only", "{rec:#}");
    assert!(server.history(&fork).to_string().contains("agent-call"));
}
