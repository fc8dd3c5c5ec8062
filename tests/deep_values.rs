//! Values nested far deeper than the call stack allows, end to end: `tfc eval` on deep input and
//! `tfc run` with an agent answering deeply nested JSON. Nothing may overflow the stack (exit
//! 134); runs complete and leave their record.

mod common;

use std::path::{Path, PathBuf};

use common::{Outcome, scratch, tfc_in, tfc_stdin};

const DEPTH: usize = 100_000;

fn deep_array(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn eval_json_and_array_of_deep_input() {
    let text = deep_array(DEPTH);
    let out = tfc_stdin(&["eval", "json"], &format!("The answer:\n{text}\nDone."));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, format!("{text}\n"));

    let out = tfc_stdin(&["eval", "json", "--format", "json"], &text);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        format!("{{\"found\":true,\"value\":{text},\"diagnostic\":null}}\n")
    );

    let out = tfc_stdin(&["eval", "array"], &text);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, format!("{}\n", deep_array(DEPTH)));
}

#[test]
fn eval_context_values_of_any_depth() {
    let dir = scratch("deep-eval-context");
    let ctx = format!(
        r#"{{"args": {{"deep": {}}}, "steps": {{"a": {{"output": "{}"}}}}}}"#,
        deep_array(DEPTH),
        deep_array(DEPTH)
    );
    std::fs::write(dir.join("ctx.json"), ctx).expect("write ctx");
    let ctx = dir.join("ctx.json");
    let ctx = ctx.to_str().expect("utf-8 path");

    // Value mode hands the raw value on (a copy of it).
    let out = tfc_in(None, &["eval", "value", "{args.deep}", "--ctx", ctx], b"");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, format!("{}\n", deep_array(DEPTH)));

    // Conditions compare arrays by their joined text; digging walks the path.
    let out = tfc_in(
        None,
        &[
            "eval",
            "when",
            "{args.deep} == \"\" && {steps.a.json.length} == 1 && {steps.a.json.0.0.length} == 1",
            "--ctx",
            ctx,
            "--format",
            "json",
        ],
        b"",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "{\"value\":true,\"error\":null,\"reads\":[\"args.deep\",\"steps.a.json.length\",\"steps.a.json.0.0.length\"]}\n"
    );
}

/// A fresh project directory holding `flow.json` and an agent script that answers phase `a`
/// with JSON nested `DEPTH` deep, and every other phase with its id and the prompt's first line.
fn project(name: &str, flow: &str) -> std::path::PathBuf {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join(".tfc")).expect("create .tfc");
    std::fs::write(dir.join("flow.json"), flow).expect("write flow");
    let agent = format!(
        "#!/bin/sh\nprompt=$(cat)\n\
         if [ \"$TFC_PHASE_ID\" = a ]; then\n\
           echo 'Here it is:'\n\
           printf '%{DEPTH}s' '' | tr ' ' '['\n\
           printf '%{DEPTH}s' '' | tr ' ' ']'\n\
           echo\n\
         else\n\
           printf '%s: %s\\n' \"$TFC_PHASE_ID\" \"$(printf '%s\\n' \"$prompt\" | head -n 1)\"\n\
         fi\n"
    );
    let script = dir.join("deep-agent.sh");
    std::fs::write(&script, agent).expect("write agent");
    make_executable(&script);
    dir
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut perms = std::fs::metadata(path).expect("stat").permissions();
    perms.set_mode(0o755);
    std::fs::set_permissions(path, perms).expect("chmod");
}

fn run(dir: &Path, extra: &[&str]) -> Outcome {
    let agent = dir.join("deep-agent.sh");
    let mut args = vec![
        "run",
        "flow.json",
        "--agent-cmd",
        agent.to_str().expect("utf-8"),
    ];
    args.extend_from_slice(extra);
    tfc_in(Some(dir), &args, b"")
}

/// The only run's directory and its `run.json`.
fn record(dir: &Path, flow: &str) -> (PathBuf, String) {
    let runs = dir.join(".tfc/runs").join(flow);
    let run_dir = std::fs::read_dir(&runs)
        .expect("runs dir")
        .next()
        .expect("one run")
        .expect("entry")
        .path();
    assert!(!run_dir.join("lock").exists(), "the run ended");
    let text = std::fs::read_to_string(run_dir.join("run.json")).expect("run.json");
    (run_dir, text)
}

const FLOW: &str = r#"{"name": "deep", "phases": [
    {"id": "a", "output": "json", "task": "Answer deeply."},
    {"id": "b", "dependsOn": ["a"], "when": "{steps.a.json} != x",
     "task": "Outer length {steps.a.json.length}, next {steps.a.json.0.length}."},
    {"id": "m", "type": "map", "dependsOn": ["a"], "over": "{steps.a.json}",
     "task": "Item of length {item.length}."},
    {"id": "z", "dependsOn": ["b", "m"], "task": "Sum up: {steps.b.output}\n{steps.m.output}"}
]}"#;

#[test]
fn run_with_a_deep_json_answer_completes_and_records_it() {
    let dir = project("deep-run", FLOW);
    let out = run(&dir, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "z: Sum up: b: Outer length 1, next 1.\n");
    let (run_dir, record) = record(&dir, "deep");
    assert!(
        record.contains("\"status\": \"completed\""),
        "{}",
        &record[..2000.min(record.len())]
    );
    // The record stays linear in its size (fully indented pretty JSON of this value would take
    // 20 GB); an answer this large is stored once, beside the record (`jsonFile`).
    assert!(record.len() < 4 * 1024 * 1024, "{} bytes", record.len());
    let record = tfc::value::parse_json(&record).expect("run.json is JSON");
    let phase = |id: &str| {
        record
            .as_object()
            .and_then(|r| r.get("phases"))
            .and_then(|p| p.as_object())
            .and_then(|p| p.get(id))
            .and_then(|p| p.as_object())
            .cloned()
            .unwrap_or_default()
    };
    // `a`'s parsed answer is kept whole; `b` read it through its condition and task.
    let file = phase("a")
        .get("jsonFile")
        .and_then(|f| f.as_str().map(str::to_owned))
        .expect("a large answer's JSON is in its own file");
    let json = std::fs::read_to_string(run_dir.join(file)).expect("jsonFile");
    let json = tfc::value::parse_json(&json).expect("jsonFile is JSON");
    assert_eq!(json.to_json(), deep_array(DEPTH));
    let reads = phase("b").get("reads").map(|r| r.to_json());
    assert_eq!(reads.as_deref(), Some(r#"["a"]"#));
    // The map took the answer's one element as its item.
    let output = phase("m")
        .get("output")
        .and_then(|o| o.as_str().map(str::to_owned));
    assert!(
        output
            .as_deref()
            .is_some_and(|o| o.ends_with("m: Item of length 1.")),
        "{output:?}"
    );
}

#[test]
fn run_record_on_stdout_with_a_deep_json_answer() {
    let dir = project("deep-run-json", FLOW);
    let out = run(&dir, &["--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("\"status\": \"completed\""));
    assert!(out.stdout.contains(&deep_array(DEPTH - 100)));
    assert!(
        out.stdout.len() < 4 * 1024 * 1024,
        "{} bytes",
        out.stdout.len()
    );
}
