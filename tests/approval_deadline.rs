//! Approval deadlines end to end (SPEC §8.8): the paused message names each deadline, a
//! resumed run keeps it, after it `onTimeout` decides, and a late `--approve` is refused
//! before anything runs.

mod common;

use std::path::{Path, PathBuf};

use common::{Outcome, printed_run_id, records, scratch, tfc_in};

/// A project whose agent logs each call to `calls.log` and answers `answer`.
fn project(name: &str, timeout: &str, on: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join(".tfc")).expect("mkdir .tfc");
    let flow = format!(
        r#"{{"name":"gated","phases":[
 {{"id":"a","task":"first"}},
 {{"id":"ok","type":"approval","dependsOn":["a"],"task":"go?","timeout":{timeout},"onTimeout":"{on}"}},
 {{"id":"b","dependsOn":["ok"],"task":"second"}}
]}}"#
    );
    std::fs::write(dir.join("flow.json"), flow).expect("write flow");
    let agent = dir.join("agent.sh");
    std::fs::write(
        &agent,
        "#!/bin/sh\ncat >/dev/null\necho \"$TFC_NODE\" >> calls.log\necho answer\n",
    )
    .expect("write agent");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
}

fn tfc(dir: &Path, args: &[&str]) -> Outcome {
    tfc_in(Some(dir), args, b"")
}

/// Run the flow until it pauses at `ok`; its run id and the deadline it recorded.
fn paused(dir: &Path) -> (String, String) {
    let out = tfc(dir, &["run", "flow.json", "--agent-cmd", "./agent.sh"]);
    assert_eq!(out.code, 5, "{}", out.stderr);
    let id = printed_run_id(&out);
    let rec = &records(dir)[0];
    let expires = rec["phases"]["ok"]["approval"]["expiresAt"]
        .as_str()
        .expect("expiresAt while pending")
        .to_owned();
    (id, expires)
}

/// Wait until the 1-second deadline has surely passed.
fn past_deadline() {
    std::thread::sleep(std::time::Duration::from_millis(1300));
}

#[test]
fn the_pause_names_the_deadline_and_a_resume_keeps_it() {
    let dir = project("deadline-keep", r#""1h""#, "approve");
    let out = tfc(&dir, &["run", "flow.json", "--agent-cmd", "./agent.sh"]);
    assert_eq!(out.code, 5, "{}", out.stderr);
    let rec = &records(&dir)[0];
    let expires = rec["phases"]["ok"]["approval"]["expiresAt"]
        .as_str()
        .expect("expiresAt")
        .to_owned();
    assert_eq!(expires.len(), "2026-11-30T10:00:00.000Z".len(), "{expires}");
    assert!(expires.ends_with('Z') && *expires > *rec["startedAt"].as_str().unwrap());
    let first = format!("Run paused — awaiting approval: ok (expires {expires}, then approve).");
    assert!(
        out.stderr.lines().any(|l| l == first),
        "{first}\n{}",
        out.stderr
    );
    // `tfc runs` and `tfc show` name the deadline.
    let parent = printed_run_id(&out);
    let runs = tfc(&dir, &["runs"]);
    assert!(
        runs.stdout.contains(&format!("  (ok expires {expires})")),
        "{}",
        runs.stdout
    );
    let runs = tfc(&dir, &["runs", "--format", "json"]);
    let list: serde_json::Value = serde_json::from_str(&runs.stdout).expect("json");
    assert_eq!(list[0]["nextDeadline"]["phase"], "ok");
    assert_eq!(list[0]["nextDeadline"]["expiresAt"], expires.as_str());
    let show = tfc(&dir, &["show", &parent]);
    let line = show
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("ok "))
        .expect("the approval's line");
    assert!(line.ends_with(&format!("expires {expires}")), "{line}");
    // Resumed without a decision: paused again, the same deadline.
    let out = tfc(&dir, &["resume", &parent]);
    assert_eq!(out.code, 5, "{}", out.stderr);
    let recs = records(&dir);
    assert_eq!(
        recs[1]["phases"]["ok"]["approval"]["expiresAt"],
        expires.as_str()
    );
    // Before the deadline a flag wins.
    let out = tfc(&dir, &["resume", "last", "--reject", "ok"]);
    assert_eq!(out.code, 4, "{}", out.stderr);
    let recs = records(&dir);
    assert_eq!(recs[2]["phases"]["ok"]["approval"]["source"], "flag");
}

#[test]
fn after_the_deadline_fail_expires_the_approval() {
    let dir = project("deadline-fail", "1000", "fail");
    let (parent, expires) = paused(&dir);
    past_deadline();
    let out = tfc(&dir, &["resume", &parent]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let child = &records(&dir)[1];
    let ok = &child["phases"]["ok"];
    assert_eq!(ok["status"], "failed");
    assert_eq!(
        ok["error"],
        format!("approval 'ok' expired at {expires}").as_str()
    );
    assert_eq!(ok["approval"]["decision"], "expired");
    assert_eq!(ok["approval"]["source"], "timeout");
    assert_eq!(
        ok["approval"]["note"],
        format!("no decision before {expires}").as_str()
    );
    assert_eq!(child["phases"]["b"]["status"], "skipped");
}

#[test]
fn after_the_deadline_approve_goes_on_and_a_late_flag_is_refused() {
    let dir = project("deadline-approve", "1000", "approve");
    let (parent, expires) = paused(&dir);
    past_deadline();
    let _ = std::fs::remove_file(dir.join("calls.log"));
    let out = tfc(&dir, &["resume", &parent, "--reject", "ok"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(
        out.stderr.trim(),
        format!("error: approval 'ok' expired at {expires}; its onTimeout (approve) decides")
    );
    assert_eq!(records(&dir).len(), 1, "nothing ran");
    let out = tfc(&dir, &["resume", &parent]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "answer");
    let child = &records(&dir)[1];
    assert_eq!(child["phases"]["ok"]["approval"]["decision"], "approve");
    assert_eq!(child["phases"]["ok"]["approval"]["source"], "timeout");
    assert_eq!(
        std::fs::read_to_string(dir.join("calls.log")).unwrap_or_default(),
        "b\n"
    );
}
