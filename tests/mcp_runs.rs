//! `tfc mcp` runs (SPEC §13.3): detached processes followed through the run store, waits
//! that block nothing else, cancellation, progress, and runs that outlive the server.

#[path = "mcp/client.rs"]
mod client;

use std::time::{Duration, Instant};

use client::{Server, err, ok, project};
use serde_json::{Value, json};

const THREE: &str = r#"{"name": "three", "phases": [
  {"id": "a", "task": "alpha"},
  {"id": "b", "dependsOn": ["a"], "task": "beta {steps.a.output}"},
  {"id": "c", "dependsOn": ["b"], "task": "gamma {steps.b.output}"}]}"#;

const GATED: &str = r#"{"name": "gated", "phases": [
  {"id": "draft", "task": "draft"},
  {"id": "ok", "type": "approval", "dependsOn": ["draft"], "task": "Ship it?"},
  {"id": "ship", "dependsOn": ["ok"], "task": "shipped {steps.draft.output}"}]}"#;

fn write_flow(root: &std::path::Path, name: &str, text: &str) {
    std::fs::write(root.join(name), text).unwrap();
}

#[test]
fn a_run_is_followed_to_its_end_with_progress() {
    let root = project("mcp_run_basic");
    write_flow(&root, "three.json", THREE);
    let mut s = Server::start(&root);
    let started = ok(&s.call(
        2,
        "tfc_run",
        json!({"path": "three.json", "backend": "echo"}),
    ));
    let run_id = started["runId"].as_str().unwrap().to_owned();
    assert!(run_id.starts_with("three-"), "{started}");
    let record = std::path::PathBuf::from(started["recordPath"].as_str().unwrap());
    assert!(record.is_file(), "the record exists when tfc_run answers");

    s.send(
        3,
        "tools/call",
        json!({"name": "tfc_wait", "arguments": {"runId": run_id},
               "_meta": {"progressToken": "tok"}}),
    );
    let r = s
        .response(3, Duration::from_secs(60))
        .expect("wait answered");
    let st = ok(&r["result"]);
    assert_eq!(st["status"], "completed", "{st}");
    assert_eq!(st["phases"]["done"], 3);
    assert_eq!(st["finalOutput"], "gamma beta alpha");
    assert_eq!(st["pendingApprovals"], json!([]));
    // Progress: one notification per phase that ended (a run may have ended some phases
    // before the wait began: those are reported on its first look).
    let progress: Vec<&Value> = s
        .seen
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 3, "{:?}", s.seen);
    for (i, p) in progress.iter().enumerate() {
        assert_eq!(p["params"]["progressToken"], "tok");
        assert_eq!(p["params"]["progress"], i as u64 + 1);
        assert_eq!(p["params"]["total"], 3);
    }
    assert_eq!(progress[2]["params"]["message"], "c");

    let st = ok(&s.call(
        4,
        "tfc_status",
        json!({"runId": &run_id[..run_id.len() - 3]}),
    ));
    assert_eq!(st["runId"], run_id, "a unique prefix finds the run");
    let show = ok(&s.call(5, "tfc_show", json!({"runId": run_id})));
    assert_eq!(show["status"], "completed");
    assert!(show.get("def").is_none());
    assert_eq!(show["phases"]["b"]["output"], "beta alpha");
    let phase = ok(&s.call(
        6,
        "tfc_show",
        json!({"runId": run_id, "phase": "b", "limit": 4}),
    ));
    assert_eq!(phase["prompts"][0]["prompt"], "beta[… 6 more chars]");
    assert_eq!(phase["prompts"][0]["node"], "b");
    assert_eq!(phase["output"], "beta[… 6 more chars]");
    let e = err(&s.call(7, "tfc_show", json!({"runId": run_id, "phase": "zz"})));
    assert!(e.contains("'phase'") && e.contains("a, b, c"), "{e}");
    let runs = ok(&s.call(8, "tfc_runs", json!({"status": "completed"})));
    assert_eq!(runs["runs"][0]["runId"], run_id);
    let none = ok(&s.call(9, "tfc_runs", json!({"status": "failed"})));
    assert_eq!(none["runs"], json!([]));
    let e = err(&s.call(10, "tfc_status", json!({"runId": "nope-123"})));
    assert!(e.contains("nope-123"), "{e}");
    // The run's own output went to its directory, not to the protocol stream.
    let log = std::fs::read_to_string(record.with_file_name("output.log")).unwrap();
    assert!(log.contains(&format!("run {run_id} completed")), "{log}");
    assert!(
        !record
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .join(format!(".{run_id}.launch"))
            .exists()
    );
    assert_eq!(s.finish(), 0);
}

#[test]
fn a_flow_with_errors_or_no_backend_starts_nothing() {
    let root = project("mcp_run_refused");
    write_flow(
        &root,
        "bad.json",
        r#"{"phases": [{"id": "a", "task": "{steps.zz.output}"}]}"#,
    );
    write_flow(&root, "three.json", THREE);
    let mut s = Server::start(&root);
    let res = s.call(2, "tfc_run", json!({"path": "bad.json", "backend": "echo"}));
    assert!(err(&res).contains("nothing was started"), "{res}");
    assert_eq!(res["structuredContent"]["ok"], false);
    let res = s.call(
        3,
        "tfc_run",
        json!({"path": "three.json", "backend": "no-such-backend"}),
    );
    let e = err(&res);
    assert!(
        e.contains("did not start") && e.contains("no-such-backend"),
        "{e}"
    );
    let runs = ok(&s.call(4, "tfc_runs", json!({})));
    assert_eq!(runs["runs"], json!([]));
}

#[test]
fn a_long_wait_blocks_nothing_and_can_be_cancelled() {
    let root = project("mcp_run_concurrent");
    write_flow(&root, "three.json", THREE);
    let mut s = Server::start(&root);
    let started = ok(&s.call(
        2,
        "tfc_run",
        json!({"path": "three.json", "backend": "slow"}),
    ));
    let run_id = started["runId"].as_str().unwrap().to_owned();
    s.send(
        3,
        "tools/call",
        json!({"name": "tfc_wait", "arguments": {"runId": run_id, "timeoutMs": 600000}}),
    );
    // While that waits: ping, tools/list and another tool call are answered at once.
    let t = Instant::now();
    let pong = s.request(4, "ping", json!({}));
    assert_eq!(pong["result"], json!({}));
    let list = s.request(5, "tools/list", json!({}));
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 14);
    let st = ok(&s.call(6, "tfc_status", json!({"runId": run_id})));
    assert_eq!(st["status"], "running", "{st}");
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "answered in {:?}",
        t.elapsed()
    );
    assert!(
        s.response(3, Duration::from_millis(100)).is_none(),
        "still waiting"
    );

    s.notify(
        "notifications/cancelled",
        json!({"requestId": 3, "reason": "user"}),
    );
    let pong = s.request(7, "ping", json!({}));
    assert_eq!(pong["result"], json!({}));
    let deadline = Instant::now() + Duration::from_secs(5);
    while !s.stderr().contains("request 3 cancelled") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(s.stderr().contains("request 3 cancelled"), "{}", s.stderr());
    // A cancelled request gets no response; the run it followed goes on to its end.
    let done = ok(&s.call(8, "tfc_wait", json!({"runId": run_id, "timeoutMs": 60000})));
    assert_eq!(done["status"], "completed", "{done}");
    assert!(s.response(3, Duration::from_millis(200)).is_none());
    assert_eq!(s.finish(), 0);
}

#[test]
fn runs_outlive_the_server() {
    let root = project("mcp_run_outlives");
    write_flow(&root, "three.json", THREE);
    let mut s = Server::start(&root);
    let started = ok(&s.call(
        2,
        "tfc_run",
        json!({"path": "three.json", "backend": "slow"}),
    ));
    let run_id = started["runId"].as_str().unwrap().to_owned();
    // Kill the server (SIGKILL) mid-run.
    s.child.kill().unwrap();
    s.child.wait().unwrap();
    drop(s);
    let mut s2 = Server::start(&root);
    let st = ok(&s2.call(2, "tfc_status", json!({"runId": run_id})));
    assert_eq!(st["status"], "running", "{st}");
    let done = ok(&s2.call(3, "tfc_wait", json!({"runId": run_id, "timeoutMs": 60000})));
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["finalOutput"], "gamma beta alpha");
    assert_eq!(s2.finish(), 0);
}

#[test]
fn cancel_pauses_a_run_and_resume_continues_it() {
    let root = project("mcp_run_cancel");
    write_flow(&root, "three.json", THREE);
    write_flow(&root, "gated.json", GATED);
    let mut s = Server::start(&root);
    let started = ok(&s.call(
        2,
        "tfc_run",
        json!({"path": "three.json", "backend": "slow"}),
    ));
    let run_id = started["runId"].as_str().unwrap().to_owned();
    let st = ok(&s.call(3, "tfc_cancel", json!({"runId": run_id})));
    assert_eq!(st["status"], "paused", "{st}");
    assert_eq!(st["reason"], "interrupted", "{st}");
    let e = err(&s.call(4, "tfc_cancel", json!({"runId": run_id})));
    assert!(e.contains("not running"), "{e}");

    // An approval pauses a run started over MCP (nobody to ask); tfc_resume approves it.
    let paused = ok(&s.call(
        5,
        "tfc_run",
        json!({"path": "gated.json", "backend": "echo", "wait": true, "timeoutMs": 60000}),
    ));
    assert_eq!(paused["status"], "paused", "{paused}");
    assert_eq!(paused["pendingApprovals"], json!(["ok"]));
    let parent = paused["runId"].as_str().unwrap().to_owned();
    let child = ok(&s.call(
        6,
        "tfc_resume",
        json!({"runId": parent, "approve": ["ok"], "wait": true, "timeoutMs": 60000}),
    ));
    assert_eq!(child["status"], "completed", "{child}");
    assert_eq!(child["parentRunId"], parent);
    assert_eq!(child["finalOutput"], "shipped draft");
    // A completed run is not resumable: tfc resume's own message comes back.
    let e = err(&s.call(8, "tfc_resume", json!({"runId": child["runId"]})));
    assert!(
        e.contains("did not start") && e.contains("not resumable"),
        "{e}"
    );
    // approveAll on tfc_run needs no resume.
    let direct = ok(&s.call(
        7,
        "tfc_run",
        json!({"path": "gated.json", "backend": "echo", "approveAll": true, "wait": true}),
    ));
    assert_eq!(direct["status"], "completed", "{direct}");
    assert_eq!(s.finish(), 0);
}

#[test]
fn eof_answers_waiting_calls_and_leaves_runs_going() {
    let root = project("mcp_run_eof");
    write_flow(&root, "three.json", THREE);
    let mut s = Server::start(&root);
    s.send(
        2,
        "tools/call",
        json!({"name": "tfc_run", "_meta": {"progressToken": 7},
               "arguments": {"path": "three.json", "backend": "slow", "wait": true}}),
    );
    std::thread::sleep(Duration::from_millis(500));
    let t = Instant::now();
    s.close_stdin();
    let r = s
        .response(2, Duration::from_secs(20))
        .expect("the waiting call is answered");
    let st = ok(&r["result"]);
    assert_eq!(
        st["status"], "running",
        "the wait stopped, the run did not: {st}"
    );
    let code = s.child.wait().unwrap().code();
    assert_eq!(code, Some(0));
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    let run_id = st["runId"].as_str().unwrap().to_owned();
    let mut s2 = Server::start(&root);
    s2.send(
        3,
        "tools/call",
        json!({"name": "tfc_wait", "_meta": {"progressToken": "t2"},
               "arguments": {"runId": run_id, "timeoutMs": 60000}}),
    );
    let done = ok(&s2.response(3, Duration::from_secs(60)).expect("wait")["result"]);
    assert_eq!(done["status"], "completed", "{done}");
    let last = s2
        .seen
        .iter()
        .rev()
        .find(|m| m["method"] == "notifications/progress")
        .expect("progress from a new server");
    assert_eq!(last["params"]["progress"], 3);
    assert_eq!(last["params"]["total"], 3);
}

#[test]
fn the_internal_run_id_flag_names_the_run() {
    let root = project("mcp_run_id_flag");
    write_flow(&root, "three.json", THREE);
    let tfc = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_tfc"))
            .args(args)
            .current_dir(&root)
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    };
    let out = tfc(&[
        "run",
        "three.json",
        "--backend",
        "echo",
        "--run-id",
        "three-fixed-1",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        root.join(".tfc/runs/three/three-fixed-1/run.json")
            .is_file()
    );
    for bad in ["../x", "a b", ""] {
        let out = tfc(&["run", "three.json", "--backend", "echo", "--run-id", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("not a valid run id"));
    }
    let help = tfc(&["run", "--help"]);
    assert!(
        !String::from_utf8_lossy(&help.stdout).contains("run-id"),
        "hidden"
    );
}

#[test]
fn a_fork_is_planned_refused_or_run_over_mcp() {
    let root = project("mcp_fork");
    write_flow(&root, "three.json", THREE);
    let mut s = Server::start(&root);
    let started = ok(&s.call(
        2,
        "tfc_run",
        json!({"path": "three.json", "backend": "echo", "wait": true}),
    ));
    assert_eq!(started["status"], "completed", "{started}");
    let parent = started["runId"].as_str().unwrap().to_owned();
    // The plan only: nothing starts.
    let planned = ok(&s.call(
        3,
        "tfc_fork",
        json!({"runId": parent, "from": ["b"], "plan": true}),
    ));
    assert_eq!(
        planned["phases"],
        json!([{"phase": "a", "action": "copy", "reason": null},
               {"phase": "b", "action": "run", "reason": "--from"},
               {"phase": "c", "action": "run", "reason": "--from"}])
    );
    // A refused fork is the tool's error, and no run is made.
    let e = err(&s.call(4, "tfc_fork", json!({"runId": parent, "from": ["bb"]})));
    assert!(
        e.contains("did you mean 'b'?") && e.contains("nothing was started"),
        "{e}"
    );
    let runs = ok(&s.call(5, "tfc_runs", json!({})));
    assert_eq!(runs["runs"].as_array().map(Vec::len), Some(1), "{runs}");
    // A set output: only its descendant runs, the lineage is in the record.
    let forked = ok(&s.call(
        6,
        "tfc_fork",
        json!({"runId": parent, "set": {"b": "given"}, "wait": true, "timeoutMs": 60000}),
    ));
    assert_eq!(forked["status"], "completed", "{forked}");
    assert_eq!(forked["finalOutput"], "gamma given");
    let runs = ok(&s.call(7, "tfc_runs", json!({"limit": 1})));
    assert_eq!(runs["runs"][0]["forkedFrom"]["set"], json!(["b"]), "{runs}");
}
