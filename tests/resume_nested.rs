//! `tfc resume` of runs with nested records (SPEC §10.4): a reused `flow` phase keeps its
//! `subRun`, a reused graft `expand` puts its grafted phases back, and a map's items carry
//! their `inputHash` in the record, the same key the journal's `item-end` lines hold.

mod common;

use std::path::{Path, PathBuf};

use common::{Outcome, tfc_in};

/// A project with `flow.json` and `agent.sh`: the agent logs `<node>` per call to
/// `calls.log`, answers a prompt saying `PLAN` with a two-phase fragment, fails a prompt
/// saying `FAIL` unless `pass.flag` exists, and else answers `answer to: <prompt>`.
fn project(name: &str, flow: &str) -> PathBuf {
    common::agent_project(name, flow, AGENT)
}

const AGENT: &str = r#"#!/bin/sh
p=$(cat)
echo "$TFC_NODE" >> calls.log
case "$p" in *PLAN*) echo '[{"id":"one","task":"first"},{"id":"two","dependsOn":["one"],"task":"second {steps.one.output}"}]'; exit 0;; esac
case "$p" in *FAIL*) if [ ! -f pass.flag ]; then echo "asked to fail" >&2; exit 3; fi;; esac
echo "answer to: $p"
"#;

fn tfc(dir: &Path, args: &[&str]) -> Outcome {
    tfc_in(Some(dir), args, b"")
}

fn calls(dir: &Path) -> Vec<String> {
    let mut c: Vec<String> = std::fs::read_to_string(dir.join("calls.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    c.sort();
    c
}

/// The run directory of `run_id` (one flow per project here).
fn run_dir(dir: &Path, run_id: &str) -> PathBuf {
    let flows = std::fs::read_dir(dir.join(".tfc/runs")).expect("runs");
    for f in flows.flatten() {
        let d = f.path().join(run_id);
        if d.is_dir() {
            return d;
        }
    }
    panic!("no run directory for {run_id}");
}

fn record(dir: &Path, run_id: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(run_dir(dir, run_id).join("run.json")).expect("run.json");
    serde_json::from_str(&text).expect("run.json is JSON")
}

fn run_id(o: &Outcome) -> String {
    common::printed_run_id(o)
}

const NESTED: &str = r#"{"name":"nested","phases":[
 {"id":"plan","task":"PLAN the work"},
 {"id":"x","type":"expand","expandMode":"graft","dependsOn":["plan"],"def":"{steps.plan.output}"},
 {"id":"sub","type":"flow","def":{"phases":[{"id":"inner","task":"deep"}]}},
 {"id":"last","dependsOn":["x","sub"],"task":"FAIL unless allowed"}
]}"#;

#[test]
fn a_reused_flow_keeps_its_sub_run_and_a_reused_graft_its_phases() {
    let dir = project("resume-nested", NESTED);
    let out = tfc(&dir, &["run", "flow.json", "--agent-cmd", "./agent.sh"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let parent = run_id(&out);
    assert_eq!(
        calls(&dir),
        vec!["last", "plan", "sub/inner", "x-one", "x-two"]
    );
    let before = record(&dir, &parent);
    assert_eq!(before["phases"]["x-two"]["status"], "done");
    assert_eq!(
        before["phases"]["sub"]["subRun"]["phases"]["inner"]["status"],
        "done"
    );

    std::fs::remove_file(dir.join("calls.log")).expect("clear calls");
    std::fs::write(dir.join("pass.flag"), "").expect("flag");
    let out = tfc(&dir, &["resume", &parent]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        calls(&dir),
        vec!["last"],
        "nothing but the failed phase runs"
    );
    let child = record(&dir, &run_id(&out));
    assert_eq!(child["parentRunId"], parent.as_str());
    let phases = &child["phases"];
    for id in ["plan", "x", "sub"] {
        assert_eq!(phases[id]["cacheHit"], "run-only", "{id}: {}", phases[id]);
    }
    // The flow phase's own record of its child run, as the parent had it.
    let sub = &phases["sub"]["subRun"];
    assert_eq!(sub["phases"]["inner"]["status"], "done", "{sub}");
    assert_eq!(
        sub["phases"]["inner"]["output"],
        before["phases"]["sub"]["subRun"]["phases"]["inner"]["output"]
    );
    // The grafted fragment is back, reused with its expand: no usage, no attempts.
    for id in ["x-one", "x-two"] {
        assert_eq!(phases[id]["status"], "done", "{id}: {phases}");
        assert_eq!(phases[id]["output"], before["phases"][id]["output"]);
        assert_eq!(phases[id]["cacheHit"], "run-only");
        assert_eq!(phases[id]["attempts"], 0);
    }
    assert!(phases["x"].get("subRun").is_none(), "grafted, not nested");
    let ids: Vec<&String> = phases.as_object().expect("phases").keys().collect();
    assert_eq!(ids, ["plan", "x", "x-one", "x-two", "sub", "last"]);
}

const MAP: &str = r#"{"name":"items","phases":[
 {"id":"list","type":"script","run":"echo '[\"alpha\", \"FAIL beta\", \"gamma\"]'"},
 {"id":"m","type":"map","dependsOn":["list"],"over":"{steps.list.output}","task":"Look at {item}"}
]}"#;

#[test]
fn map_items_carry_their_input_hash_and_only_the_failed_item_runs_again() {
    let dir = project("resume-items", MAP);
    let out = tfc(&dir, &["run", "flow.json", "--agent-cmd", "./agent.sh"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let parent = run_id(&out);
    let rec = record(&dir, &parent);
    let items = rec["phases"]["m"]["items"]
        .as_array()
        .expect("items")
        .clone();
    assert_eq!(items.len(), 3);
    // The journal's item-end lines and the record agree on each done item's key.
    let journal =
        std::fs::read_to_string(run_dir(&dir, &parent).join("journal.jsonl")).expect("journal");
    let ends: Vec<serde_json::Value> = journal
        .lines()
        .filter(|l| l.starts_with("{\"type\":\"item-end\""))
        .map(|l| serde_json::from_str(l).expect("item-end is JSON"))
        .collect();
    assert_eq!(ends.len(), 2);
    for end in &ends {
        let i = end["index"].as_u64().expect("index") as usize;
        assert_eq!(items[i]["status"], "done");
        assert_eq!(items[i]["inputHash"], end["inputHash"], "item {i}");
        assert_eq!(items[i]["inputHash"].as_str().map(str::len), Some(16));
    }
    assert_eq!(items[1]["status"], "failed");
    assert!(items[1].get("inputHash").is_none(), "{}", items[1]);
    assert_ne!(items[0]["inputHash"], items[2]["inputHash"]);

    std::fs::remove_file(dir.join("calls.log")).expect("clear calls");
    std::fs::write(dir.join("pass.flag"), "").expect("flag");
    let out = tfc(&dir, &["resume", &parent]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(calls(&dir), vec!["m#1"]);
    let child = record(&dir, &run_id(&out));
    let items = child["phases"]["m"]["items"].as_array().expect("items");
    for (i, it) in items.iter().enumerate() {
        assert_eq!(it["status"], "done", "{it}");
        assert_eq!(it["inputHash"].as_str().map(str::len), Some(16), "item {i}");
    }
}

#[test]
fn a_journal_item_the_record_disagrees_with_is_run_again() {
    let dir = project("resume-items-disagree", MAP);
    let out = tfc(&dir, &["run", "flow.json", "--agent-cmd", "./agent.sh"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let parent = run_id(&out);
    // The record says item 0 ended under another key than its journal line holds.
    let path = run_dir(&dir, &parent).join("run.json");
    let mut rec = record(&dir, &parent);
    rec["phases"]["m"]["items"][0]["inputHash"] = "0000000000000000".into();
    std::fs::write(&path, serde_json::to_string_pretty(&rec).expect("json")).expect("write");
    std::fs::remove_file(dir.join("calls.log")).expect("clear calls");
    std::fs::write(dir.join("pass.flag"), "").expect("flag");
    let out = tfc(&dir, &["resume", &parent]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(calls(&dir), vec!["m#0", "m#1"]);
}
