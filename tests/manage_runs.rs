//! `tfc runs` and `tfc show`, end to end (SPEC §11.4): listing (text, json, filters), lookup by
//! id, prefix and `last`, ambiguous and corrupt runs, interrupted runs (a dead lock pid, a
//! real run killed with SIGKILL), a live run read through its journal, a phase's prompts cut
//! at `--limit`, and retention at the start of `tfc run`.

mod common;
mod manage;

use std::time::{Duration, Instant};

use manage::{Fake, Project, dead_pid, golden, script};

/// 2026-11-30T10:00:00.000Z
const T0: u64 = 1_796_032_800_000;
const DAY: u64 = 86_400_000;

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// Four runs of two flows: completed (with cost), failed, paused, and interrupted.
fn store(p: &Project) -> [String; 4] {
    let mut done = Fake::new("alpha", T0, "aaaaaa", "completed");
    done.cost = Some(0.0412);
    done.tokens = (9120, 1433);
    done.phases = vec![
        ("scan", "done", 1, ""),
        ("each", "done", 3, r#", "cacheHit": "run-only""#),
        (
            "deep",
            "skipped",
            0,
            r#", "skipReason": "Condition not met: {steps.scan.json.n} > 3""#,
        ),
    ];
    let done = done.write(&p.dir);
    let mut failed = Fake::new("alpha", T0 + 60_000, "bbbbbb", "failed");
    failed.reason = Some("phase 'b' failed");
    failed.took_ms = 4_200;
    failed.phases = vec![
        ("a", "done", 1, ""),
        (
            "b",
            "failed",
            2,
            r#", "error": "command exited with code 3""#,
        ),
    ];
    let failed = failed.write(&p.dir);
    let mut paused = Fake::new("beta", T0 + 120_000, "cccccc", "paused");
    paused.reason = Some("awaiting approval: ok");
    paused.took_ms = 950;
    let paused = paused.write(&p.dir);
    let mut running = Fake::new("beta", T0 + 180_000, "dddddd", "running");
    running.phases = vec![
        ("a", "done", 1, ""),
        ("b", "running", 0, ""),
        ("c", "pending", 0, ""),
    ];
    let running = running.write(&p.dir);
    let lock = p.dir.join(".tfc/runs/beta").join(&running).join("lock");
    std::fs::write(lock, format!("{}\n", dead_pid())).expect("lock");
    [done, failed, paused, running]
}

#[test]
fn runs_lists_newest_first_with_filters() {
    let p = Project::new("manage-runs-list");
    let [done, failed, paused, interrupted] = store(&p);
    let out = p.tfc(&["runs"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    golden("runs.txt", &out.stdout);

    let out = p.tfc(&["runs", "--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v = json(&out.stdout);
    let list = v.as_array().expect("array");
    let ids: Vec<&str> = list
        .iter()
        .map(|r| r["runId"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, [&interrupted, &paused, &failed, &done]);
    assert_eq!(list[0]["status"], "interrupted");
    assert_eq!(list[0]["flow"], "beta");
    assert_eq!(list[2]["reason"], "phase 'b' failed");
    assert_eq!(list[3]["usage"]["costUSD"], 0.0412);
    for r in list {
        let keys: Vec<&str> = r
            .as_object()
            .expect("obj")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "runId",
                "flow",
                "status",
                "reason",
                "parentRunId",
                "startedAt",
                "endedAt",
                "usage"
            ]
        );
    }

    let ids_of = |args: &[&str]| -> Vec<String> {
        let out = p.tfc(args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        out.stdout
            .lines()
            .map(|l| l.split("  ").next().expect("id").to_owned())
            .collect()
    };
    assert_eq!(ids_of(&["runs", "alpha"]), [failed.as_str(), done.as_str()]);
    assert_eq!(
        ids_of(&["runs", "--status", "interrupted"]),
        [interrupted.as_str()]
    );
    assert_eq!(ids_of(&["runs", "--status", "completed"]), [done.as_str()]);
    assert_eq!(
        ids_of(&["runs", "--limit", "2"]),
        [interrupted.as_str(), paused.as_str()]
    );
    assert_eq!(
        ids_of(&["runs", "beta", "--status", "paused"]),
        [paused.as_str()]
    );
    // A flow file stands for the flow it names (not its file name).
    p.write(
        "flows/b.json",
        r#"{"name": "beta", "phases": [{"id": "a", "task": "t"}]}"#,
    );
    assert_eq!(
        ids_of(&["runs", "flows/b.json"]),
        [interrupted.as_str(), paused.as_str()]
    );

    let out = p.tfc(&["runs", "gamma"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, ""));
    assert!(
        out.stderr.contains("no runs of flow 'gamma'"),
        "{}",
        out.stderr
    );
    let out = p.tfc(&["runs", "--status", "done"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("--status 'done' is not a run status"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("interrupted"), "{}", out.stderr);
}

#[test]
fn show_finds_runs_by_id_prefix_and_last() {
    let p = Project::new("manage-show-lookup");
    let [done, failed, paused, interrupted] = store(&p);
    let out = p.tfc(&["show", &done]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    golden("show-run.txt", &out.stdout);
    let out = p.tfc(&["show", &interrupted]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    golden("show-interrupted.txt", &out.stdout);

    let first_line = |args: &[&str]| {
        let out = p.tfc(args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        out.stdout.lines().next().unwrap_or_default().to_owned()
    };
    // A unique prefix; `last` overall and of a flow.
    assert_eq!(
        first_line(&["show", &failed[..failed.len() - 3]]),
        format!("run {failed}")
    );
    assert_eq!(first_line(&["show", "last"]), format!("run {interrupted}"));
    assert_eq!(
        first_line(&["show", "last", "--flow", "alpha"]),
        format!("run {failed}")
    );

    // Ambiguous: exit 2, every match named.
    let out = p.tfc(&["show", "beta-"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stderr.contains("ambiguous"), "{}", out.stderr);
    assert!(
        out.stderr.contains(&paused) && out.stderr.contains(&interrupted),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout, "");
    // Not found.
    let out = p.tfc(&["show", "zeta-1"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("no run found with id or id prefix 'zeta-1'"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("`tfc runs`"), "{}", out.stderr);
    // The command that message names works as printed.
    assert_eq!(p.tfc(&["runs"]).code, 0);

    // JSON: the record without `def`, with the reported status.
    let out = p.tfc(&["show", &interrupted, "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v = json(&out.stdout);
    assert_eq!(v["status"], "interrupted");
    assert!(v.get("def").is_none());
    assert_eq!(v["phases"]["b"]["status"], "running");
    let same = json(&p.tfc(&["show", &interrupted, "--format", "json"]).stdout);
    assert_eq!(v, same);

    // A corrupt record is not a missing one; listings go on without it.
    let file = p.dir.join(".tfc/runs/alpha").join(&failed).join("run.json");
    std::fs::write(&file, "{\"runId\": ").expect("corrupt");
    let out = p.tfc(&["show", &failed]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("corrupt run record"), "{}", out.stderr);
    assert!(
        out.stderr.contains("run.json is not valid JSON"),
        "{}",
        out.stderr
    );
    let out = p.tfc(&["runs"]);
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout.lines().count(), 3, "{}", out.stdout);
    assert!(
        out.stderr.contains("warning: corrupt run record"),
        "{}",
        out.stderr
    );

    // An unknown phase names the phases there are.
    let out = p.tfc(&["show", &done, "nope"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("has no phase 'nope'; its phases: scan, each, deep"),
        "{}",
        out.stderr
    );
    // No runs at all.
    let empty = Project::new("manage-show-empty");
    let out = empty.tfc(&["show", "last"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no runs yet"), "{}", out.stderr);
}

/// The flow of the real-run tests: a chain, a map over a script's list, a summary.
const FLOW: &str = r#"{"name": "demo", "args": {"topic": {"default": "rust"}}, "phases": [
  {"id": "intro", "task": "Write about {args.topic}. Keep it short, please."},
  {"id": "list", "type": "script", "run": "echo '[\"one\", \"two\"]'"},
  {"id": "each", "type": "map", "dependsOn": ["intro", "list"], "over": "{steps.list.json}",
   "task": "Look closely at item {item} and report"},
  {"id": "sum", "dependsOn": ["each"], "task": "Sum up: {steps.intro.output}"}
]}"#;

#[test]
fn show_phase_prints_prompts_from_the_journal_cut_at_limit() {
    let p = Project::new("manage-show-phase");
    p.write("flow.json", FLOW);
    let out = p.tfc(&["run", "flow.json", "--agent-cmd", "cat"]);
    assert_eq!(out.code, 0, "{}", out.stderr);

    let out = p.tfc(&["show", "last", "each", "--limit", "12"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let t = out.stdout;
    assert!(t.starts_with("phase each  (run demo-"), "{t}");
    assert!(t.contains("type:     map  agent default\n"), "{t}");
    assert!(t.contains("status:   done\n"), "{t}");
    assert!(t.contains("usage:    2 calls  "), "{t}");
    // "Look closely at item one and report" is 35 chars: 12 shown, 23 more.
    assert!(
        t.contains("── prompt each#0 (attempt 1) ──\nLook closely\n[… 23 more chars]\n"),
        "{t}"
    );
    assert!(
        t.contains("── prompt each#1 (attempt 1) ──\nLook closely\n[… 23 more chars]\n"),
        "{t}"
    );
    assert!(
        t.contains("── items ──\n2/2 items\n#0 done\n#1 done\n"),
        "{t}"
    );

    let out = p.tfc(&["show", "last", "intro"]);
    assert!(
        out.stdout
            .contains("── prompt intro (attempt 1) ──\nWrite about rust. Keep it short, please.\n── output ──\nWrite about rust. Keep it short, please.\n"),
        "{}",
        out.stdout
    );
    // A script phase made no agent call: no prompt section.
    let out = p.tfc(&["show", "last", "list"]);
    assert!(!out.stdout.contains("prompt"), "{}", out.stdout);
    assert!(
        out.stdout.contains("── output ──\n[\"one\", \"two\"]\n"),
        "{}",
        out.stdout
    );

    let out = p.tfc(&["show", "last", "each", "--format", "json"]);
    let v = json(&out.stdout);
    assert_eq!(v["status"], "done");
    let prompts = v["prompts"].as_array().expect("prompts");
    let nodes: Vec<&str> = prompts
        .iter()
        .map(|c| c["node"].as_str().expect("node"))
        .collect();
    let mut sorted = nodes.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, ["each#0", "each#1"]);
    assert!(prompts.iter().all(|c| {
        c["prompt"]
            .as_str()
            .is_some_and(|s| s.starts_with("Look closely at item "))
    }));
    // `tfc runs` counts the agent calls (2 + 2; the script run is none).
    let out = p.tfc(&["runs"]);
    assert!(
        out.stdout.contains("  completed  ") && out.stdout.contains("  4 calls  0 tok  -"),
        "{}",
        out.stdout
    );
}

/// Wait until `cond` holds (at most 20 s).
fn wait_for(what: &str, cond: impl Fn() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

#[test]
fn a_run_killed_with_sigkill_is_interrupted_and_a_live_one_is_read_from_its_journal() {
    let mut p = Project::new("manage-killed");
    let bin = p.base.join("bin");
    let pids = p.base.join("agent-pids");
    // The agent answers at once, except for `sum`, which hangs (its pid noted to stop it later).
    script(
        &bin,
        "agent",
        &format!(
            "case \"$TFC_PHASE_ID\" in sum) echo $$ >> {pids}; exec sleep 60;; esac\ncat",
            pids = pids.display()
        ),
    );
    p.path = format!("{}:/usr/bin:/bin", bin.display());
    p.write("flow.json", FLOW);
    let mut child = p
        .command(&["run", "flow.json", "--agent-cmd", "agent"])
        .spawn()
        .expect("spawn tfc run");
    wait_for("the hanging agent", || {
        std::fs::read_to_string(&pids).is_ok_and(|s| s.ends_with('\n'))
    });
    // While it runs: `running`, and `sum` running (the journal has it even if the snapshot
    // of run.json is older).
    let out = p.tfc(&["show", "last"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("status:   running\n"), "{}", out.stdout);
    let sum_line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("  sum"))
        .expect("sum line");
    assert!(sum_line.contains(" running "), "{sum_line}");
    assert!(p.tfc(&["runs"]).stdout.contains("  running  "));

    child.kill().expect("kill -9 tfc");
    child.wait().expect("reap tfc");
    for pid in std::fs::read_to_string(&pids)
        .expect("pids")
        .split_whitespace()
    {
        let _ = std::process::Command::new("kill")
            .args(["-9", pid])
            .status();
    }

    let out = p.tfc(&["runs"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("  interrupted  "), "{}", out.stdout);
    let out = p.tfc(&["runs", "--status", "interrupted", "--format", "json"]);
    assert_eq!(json(&out.stdout).as_array().map(Vec::len), Some(1));
    let out = p.tfc(&["show", "last"]);
    assert!(
        out.stdout.contains("status:   interrupted\n"),
        "{}",
        out.stdout
    );
    let sum_line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("  sum"))
        .expect("sum line");
    assert!(sum_line.contains(" interrupted "), "{sum_line}");
    let intro = out
        .stdout
        .lines()
        .find(|l| l.starts_with("  intro"))
        .expect("intro line");
    assert!(intro.contains(" done "), "{intro}");
}

#[test]
fn tfc_run_prunes_old_finished_runs_first() {
    let p = Project::new("manage-prune");
    p.write(
        "flow.json",
        r#"{"name": "tiny", "phases": [{"id": "a", "task": "hi"}]}"#,
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("now")
        .as_millis() as u64;
    // 103 finished runs 40+ days old, and an old paused one among the oldest.
    let mut ids = Vec::new();
    for i in 0..103u64 {
        let status = if i % 2 == 0 { "completed" } else { "failed" };
        ids.push(
            Fake::new(
                "old",
                now - 40 * DAY - i * 60_000,
                &format!("{i:06x}"),
                status,
            )
            .write(&p.dir),
        );
    }
    let paused = Fake::new("old", now - 50 * DAY, "ffffff", "paused").write(&p.dir);
    let out = p.tfc(&["run", "flow.json", "--agent-cmd", "cat"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("note: removed 3 finished run(s) older than 30 days beyond the newest 100"),
        "{}",
        out.stderr
    );
    let out = p.tfc(&["runs", "--format", "json"]);
    let left: Vec<String> = json(&out.stdout)
        .as_array()
        .expect("array")
        .iter()
        .map(|r| r["runId"].as_str().expect("id").to_owned())
        .collect();
    // 104 runs before: the newest 100 stay (the 100 youngest old ones), the 3 oldest finished
    // ones go, the paused one stays; then the new run.
    assert_eq!(left.len(), 102, "{left:?}");
    assert!(left.contains(&paused));
    assert!(left.contains(&ids[99]) && !left.contains(&ids[100]) && !left.contains(&ids[102]));
    assert!(left[0].starts_with("tiny-"));
    // A dry run prunes nothing (it writes nothing).
    Fake::new("old", now - 60 * DAY, "eeeeee", "completed").write(&p.dir);
    let out = p.tfc(&["run", "flow.json", "--dry-run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = p.tfc(&["runs", "old", "--format", "json"]);
    assert_eq!(json(&out.stdout).as_array().map(Vec::len), Some(102));
}
