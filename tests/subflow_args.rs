//! Sub-flow arguments at run time (SPEC §3.8, §7.5 "Sub-flow arguments"), end to end through the
//! real binary: a flow phase's interpolated `with` goes through resolveArgs before the child
//! starts — values converted as `tfc check` converts them, defaults applied — and a value that
//! does not fit fails the flow phase with `sub-flow '<name>': <the E050x message>`, the child
//! never running (so never with a literal `{args.X}` because of its caller).

mod common;

use std::path::{Path, PathBuf};

use common::{Outcome, scratch, tfc_in};

/// The saved flow every test calls: a required number and an enum with a default.
const CHILD: &str = r#"{
  "args": {
    "version": {"type": "number", "required": true},
    "mode": {"type": "enum", "values": ["fast", "slow"], "default": "fast"}
  },
  "phases": [{"id": "cut", "task": "Release {args.version} in {args.mode} mode"}]
}"#;

/// An agent that answers phase `ver` with `VER_ANSWER` (replaced per project), phase `gen` with a generated flow
/// that requires `version`, and any other phase with `<phase>: <first prompt line>`; every
/// call appends its phase id to `calls.log`.
const AGENT: &str = r#"#!/bin/sh
prompt=$(cat)
echo "$TFC_PHASE_ID" >> "$(dirname "$0")/calls.log"
case "$TFC_PHASE_ID" in
  ver) printf '%s\n' 'VER_ANSWER' ;;
  gen) echo '{"args": {"version": {"type": "number", "required": true}}, "phases": [{"id": "cut", "task": "Release {args.version}"}]}' ;;
  *) first=$(printf '%s\n' "$prompt" | head -n 1); echo "$TFC_PHASE_ID: $first" ;;
esac
"#;

/// A project with the saved flow `child`, `flow.json`, and the agent answering `ver` with
/// `answer`.
fn project(name: &str, flow: &str, answer: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join(".tfc/flows")).expect("create .tfc/flows");
    std::fs::write(dir.join(".tfc/flows/child.json"), CHILD).expect("write child");
    std::fs::write(dir.join("flow.json"), flow).expect("write flow");
    let agent = dir.join("agent.sh");
    std::fs::write(&agent, AGENT.replace("VER_ANSWER", answer)).expect("write agent");
    let st = std::process::Command::new("chmod")
        .arg("+x")
        .arg(&agent)
        .status()
        .expect("chmod");
    assert!(st.success());
    dir
}

/// `tfc run flow.json --agent-cmd ./agent.sh extra…` in `dir`.
fn run(dir: &Path, extra: &[&str]) -> Outcome {
    let agent = dir.join("agent.sh").display().to_string();
    let mut args = vec!["run", "flow.json", "--agent-cmd", &agent];
    args.extend_from_slice(extra);
    tfc_in(Some(dir), &args, b"")
}

fn calls(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("calls.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

const PARENT: &str = r#"{"name": "parent", "phases": [
    {"id": "ver", "task": "Which version?"},
    {"id": "go", "type": "flow", "use": "child", "dependsOn": ["ver"],
     "with": {"version": "{steps.ver.output}"}}
]}"#;

/// `{steps.ver.output}` is a string, which `tfc check` lets through (some strings convert);
/// at run time it is `abc`, which does not: the flow phase fails, the child never starts.
#[test]
fn a_with_value_that_does_not_convert_fails_the_flow_phase_before_the_child_runs() {
    let dir = project("subflow-args-bad", PARENT, "abc");
    let check = tfc_in(Some(&dir), &["check", "flow.json"], b"");
    assert_eq!(check.code, 0, "{check:?}");
    let out = run(&dir, &["--format", "json"]);
    assert_eq!(out.code, 1, "{out:?}");
    let message =
        "sub-flow 'child': Argument 'version' invocation must be a finite number, got 'abc'";
    assert!(
        out.stderr.contains(&format!("go failed: {message}")),
        "{}",
        out.stderr
    );
    let record: serde_json::Value = serde_json::from_str(&out.stdout).expect("run record");
    let go = &record["phases"]["go"];
    assert_eq!(go["status"], "failed", "{go}");
    assert_eq!(go["error"], message, "{go}");
    assert!(go.get("subRun").is_none_or(|s| s.is_null()), "{go}");
    // Only `ver` called an agent: the child's phase never ran.
    assert_eq!(calls(&dir), ["ver"]);
    assert!(!out.stderr.contains("{args.version}"), "{}", out.stderr);
}

/// A string that converts is converted (` 7 ` ⇒ 7) and the child's defaults fill what `with`
/// leaves out.
#[test]
fn converted_values_and_defaults_reach_the_child() {
    let dir = project("subflow-args-ok", PARENT, " 7 ");
    let out = run(&dir, &[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "cut: Release 7 in fast mode\n", "{out:?}");
    assert_eq!(calls(&dir).len(), 2, "{:?}", calls(&dir));
}

/// A generated child (a string `def`) is known only at run time: a required argument its
/// caller does not give fails the flow phase instead of running the child with a literal
/// `{args.version}`.
#[test]
fn a_generated_child_missing_a_required_argument_never_runs() {
    let flow = r#"{"name": "parent", "phases": [
        {"id": "gen", "task": "Write a flow."},
        {"id": "go", "type": "flow", "dependsOn": ["gen"], "def": "{steps.gen.output}", "with": {}}
    ]}"#;
    let dir = project("subflow-args-generated", flow, "");
    let out = run(&dir, &["--format", "json"]);
    assert_eq!(out.code, 1, "{out:?}");
    let record: serde_json::Value = serde_json::from_str(&out.stdout).expect("run record");
    assert_eq!(
        record["phases"]["go"]["error"],
        "sub-flow 'go-inline': Missing required argument 'version'",
        "{}",
        record["phases"]["go"]
    );
    assert_eq!(calls(&dir), ["gen"]);
}
