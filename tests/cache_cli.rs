//! The cross-run cache end to end (SPEC §10.5): `incremental` runs reuse `done` phases from
//! `.tfc/cache/`, fingerprints decide what is stale, a corrupt entry is a miss with a
//! warning, and `--no-incremental` turns it off.

mod common;

use std::path::{Path, PathBuf};

use common::{Outcome, tfc_in};

fn project(name: &str, flow: &str) -> PathBuf {
    common::agent_project(name, flow, AGENT)
}

const AGENT: &str = "#!/bin/sh\np=$(cat)\necho \"$TFC_NODE\" >> calls.log\ncase \"$p\" in *input*) echo \"read: $(cat input.txt)\";; *two\\ items*) cat items.txt;; *) echo \"answer to: $p\";; esac\n";

fn run(dir: &Path, extra: &[&str]) -> Outcome {
    let mut args = vec!["run", "flow.json", "--agent-cmd", "./agent.sh"];
    args.extend_from_slice(extra);
    tfc_in(Some(dir), &args, b"")
}

fn calls(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("calls.log")).unwrap_or_default();
    let _ = std::fs::remove_file(dir.join("calls.log"));
    let mut v: Vec<String> = text.lines().map(str::to_owned).collect();
    v.sort();
    v
}

const FLOW: &str = r#"{"name":"inc","incremental":true,"phases":[
 {"id":"read","task":"summarise the input","cache":{"fingerprint":["file:input.txt"]}},
 {"id":"plan","dependsOn":["read"],"task":"plan from {steps.read.output}"},
 {"id":"other","task":"list two items","cache":{"fingerprint":["file:items.txt"]}},
 {"id":"items","type":"map","over":"{steps.other.output}","dependsOn":["other"],"task":"item {item}"},
 {"id":"once","task":"no reuse","cache":{"scope":"off"}},
 {"id":"end","final":true,"dependsOn":["plan","items","once"],"task":"end {steps.plan.output}"}
]}"#;

#[test]
fn a_second_incremental_run_makes_no_agent_calls_but_uncached_phases() {
    let dir = project("cache-incremental", FLOW);
    std::fs::write(dir.join("input.txt"), "v1").expect("input");
    std::fs::write(dir.join("items.txt"), "[1,2]").expect("items");
    let out = run(&dir, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        calls(&dir),
        vec!["end", "items#0", "items#1", "once", "other", "plan", "read"]
    );
    let out = run(&dir, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Only the phase with `cache.scope: off` calls its agent again.
    assert_eq!(calls(&dir), vec!["once"]);
    assert!(
        out.stderr.contains("read done: reused (cross-run)"),
        "{}",
        out.stderr
    );
    // Touching the fingerprinted file re-runs exactly what depends on it.
    std::fs::write(dir.join("input.txt"), "v2").expect("input");
    let out = run(&dir, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(calls(&dir), vec!["end", "once", "plan", "read"]);
    assert!(out.stdout.contains("v2"), "{}", out.stdout);
    // Maps cache per item: one new item is the only item called.
    std::fs::write(dir.join("items.txt"), "[1,3]").expect("items");
    let out = run(&dir, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(calls(&dir), vec!["items#1", "once", "other"]);
    // --no-incremental: the default scope is run-only again; nothing is reused.
    let out = run(&dir, &["--no-incremental"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        calls(&dir),
        vec!["end", "items#0", "items#1", "once", "other", "plan", "read"]
    );
}

#[test]
fn incremental_from_the_flag_and_a_corrupt_entry_is_a_miss_with_a_warning() {
    let dir = project(
        "cache-corrupt",
        r#"{"name":"plain","phases":[{"id":"a","task":"alpha"},{"id":"b","dependsOn":["a"],"task":"beta {steps.a.output}"}]}"#,
    );
    let out = run(&dir, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(calls(&dir), vec!["a", "b"]);
    // Not incremental: nothing stored, nothing reused.
    assert!(!dir.join(".tfc/cache").exists());
    let out = run(&dir, &["--incremental"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(calls(&dir), vec!["a", "b"]);
    let entries: Vec<PathBuf> = std::fs::read_dir(dir.join(".tfc/cache"))
        .expect("cache dir")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(entries.len(), 2);
    for e in &entries {
        std::fs::write(e, "{ not json").expect("corrupt");
    }
    let out = run(&dir, &["--incremental"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(calls(&dir), vec!["a", "b"]);
    assert!(out.stderr.contains("is corrupt"), "{}", out.stderr);
    // Rewritten: the next run reuses both.
    let out = run(&dir, &["--incremental"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(calls(&dir), Vec::<String>::new());
    assert_eq!(out.stdout.trim(), "answer to: beta answer to: alpha");
}
