//! `expect` on a `map` end to end (SPEC §3.4, §3.15): the real binary, a shell-script agent
//! through `--agent-cmd`; each item's answer is checked against the contract on its own, a
//! violating item's attempt fails and is retried per `retry`, and `{steps.M.json}` holds the
//! items that passed.

mod common;

use std::path::Path;

use common::{Outcome, scratch};

/// The agent: `list` names two files; every `audit` item answers a conforming object, except
/// item 1, which answers `$BAD_ANSWER` on its first `$BAD_ATTEMPTS` attempts.
const AGENT: &str = r#"#!/bin/sh
prompt=$(cat)
case "$TFC_PHASE_ID" in
  list) echo '["a.rs", "b.rs"]' ;;
  audit)
    if [ "$TFC_ITEM_INDEX" = "1" ] && [ "$TFC_ATTEMPT" -le "$BAD_ATTEMPTS" ]; then
      echo "$BAD_ANSWER"
    else
      echo "{\"path\": \"f$TFC_ITEM_INDEX\", \"risk\": \"low\"}"
    fi ;;
  *) printf '%s: %s\n' "$TFC_PHASE_ID" "$(printf '%s\n' "$prompt" | head -n 1)" ;;
esac
"#;

const FLOW: &str = r#"{"name": "audit", "phases": [
  {"id": "list", "output": "json", "task": "List the files."},
  {"id": "audit", "type": "map", "dependsOn": ["list"], "over": "{steps.list.json}",
   "output": "json", "retry": {"max": 2, "backoffMs": 0}, "task": "Audit {item}.",
   "expect": {"type": "object", "required": ["path", "risk"], "additionalProperties": false,
              "properties": {"path": {"type": "string"}, "risk": {"enum": ["low", "high"]}}}},
  {"id": "report", "dependsOn": ["audit"],
   "task": "Report {steps.audit.json.length}: {steps.audit.json.0.path}={steps.audit.json.0.risk} {steps.audit.json.1.path}={steps.audit.json.1.risk}"}
]}"#;

/// Run [`FLOW`] in a fresh project with the agent answering `bad` `attempts` times.
fn run(name: &str, bad: &str, attempts: u32) -> Outcome {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join(".tfc")).expect("create .tfc");
    std::fs::write(dir.join("flow.json"), FLOW).expect("write flow");
    let agent = dir.join("agent.sh");
    std::fs::write(&agent, AGENT).expect("write agent");
    make_executable(&agent);
    let agent = agent.display().to_string();
    // The agent reads its misbehaviour from the environment it inherits (set on this child
    // only; `common::tfc_in` passes no environment).
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_tfc"));
    cmd.args([
        "run",
        "flow.json",
        "--format",
        "json",
        "--agent-cmd",
        &agent,
    ])
    .env("NO_COLOR", "1")
    .env("BAD_ANSWER", bad)
    .env("BAD_ATTEMPTS", attempts.to_string())
    .current_dir(&dir);
    let out = cmd.output().expect("run tfc");
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut perms = std::fs::metadata(path).expect("stat agent").permissions();
    perms.set_mode(0o755);
    std::fs::set_permissions(path, perms).expect("chmod agent");
}

/// The phase `id` of a run record.
fn phase<'a>(record: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    record["phases"]
        .get(id)
        .unwrap_or_else(|| panic!("no phase {id} in {record:#}"))
}

#[test]
fn a_violating_item_is_retried_until_it_conforms() {
    let out = run("map-contract-retried", r#"{"path": "b.rs"}"#, 1);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains(
            "audit#1: attempt 1: Output contract violated:\n  - $.risk: required key is missing"
        ),
        "{}",
        out.stderr
    );
    let record: serde_json::Value = serde_json::from_str(&out.stdout).expect("run record");
    let audit = phase(&record, "audit");
    assert_eq!(audit["status"], "done", "{audit:#}");
    // One call for item 0, two for item 1.
    assert_eq!(audit["attempts"], 3, "{audit:#}");
    assert_eq!(
        audit["json"],
        serde_json::json!([{"path": "f0", "risk": "low"}, {"path": "f1", "risk": "low"}])
    );
    assert_eq!(
        record["finalOutput"], "report: Report 2: f0=low f1=low",
        "{record:#}"
    );
}

#[test]
fn an_item_that_keeps_violating_fails_the_map() {
    // A key the closed contract does not allow, on every attempt (1 + retry.max 2).
    let out = run(
        "map-contract-fails",
        r#"{"path": "b.rs", "risk": "low", "extra": 1}"#,
        99,
    );
    assert_eq!(out.code, 1, "{out:?}");
    let record: serde_json::Value = serde_json::from_str(&out.stdout).expect("run record");
    let audit = phase(&record, "audit");
    assert_eq!(audit["status"], "failed", "{audit:#}");
    assert_eq!(audit["attempts"], 4, "{audit:#}");
    assert_eq!(
        audit["error"],
        "default: Output contract violated:\n- $.extra: property is not allowed"
    );
    let items = audit["items"].as_array().expect("items");
    assert_eq!(items[0]["status"], "done");
    assert_eq!(items[1]["status"], "failed");
    assert_eq!(
        items[1]["error"],
        "Output contract violated:\n- $.extra: property is not allowed"
    );
    // Only the item that passed is in the map's JSON.
    assert_eq!(
        audit["json"],
        serde_json::json!([{"path": "f0", "risk": "low"}])
    );
    assert_eq!(phase(&record, "report")["status"], "skipped");
    assert_eq!(
        out.stderr.matches("audit#1: attempt").count(),
        3,
        "{}",
        out.stderr
    );
}
