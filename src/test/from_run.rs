//! `tfc test --from-run RUN` (SPEC §17 "From a real run"): a recorded run becomes a test —
//! a paid run turned into a free regression test.
//!
//! The answers are the run's calls as its journal records them (`agent-call` lines), per
//! node in order: one answer for a node called once, a sequence for one called more (retries,
//! rounds); a failed call answers `{"error"}`, a timed-out one `{"timeout": true}`. A script
//! answers `{"stdout", "exitCode"}` when the journal's machine inputs hold its end (which
//! node ran it is found by replaying those inputs into a machine built as the run's was);
//! otherwise it runs for real in the test. Approvals are decided as they were, the arguments
//! are the run's, and the expectations are the run's status, each phase's status and its
//! final output (and the phase it came from).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::agent::StopReason;
use crate::agent::record::AgentCallRecord;
use crate::flow::LowerOptions;
use crate::run::machine::{Command, Event, Machine, ScriptEnd};
use crate::value::{Map, Value};

/// A test made from a run.
#[derive(Clone, Debug)]
pub struct FromRun {
    /// The test object (an element of a test file's `tests`).
    pub case: Value,
    /// The run's flow name.
    pub flow: String,
    /// The definition the run used (`run.json`'s `def`).
    pub def: Option<Value>,
    /// What the test cannot reproduce and why, for the user to read.
    pub notes: Vec<String>,
}

fn get<'v>(v: &'v Value, key: &str) -> Option<&'v Value> {
    v.as_object().and_then(|o| o.get(key))
}

fn get_str<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    get(v, key).and_then(Value::as_str)
}

fn object(pairs: Vec<(&str, Value)>) -> Value {
    let mut m = Map::default();
    for (k, v) in pairs {
        m.insert(k.to_owned(), v);
    }
    Value::Object(m)
}

/// The test of the run whose directory is `dir` and whose `run.json` is `record` (an ended
/// run: the caller refuses running ones). `name`: the test's name (default `run <runId>`).
pub fn case_from_run(dir: &Path, record: &Value, name: Option<&str>) -> FromRun {
    let run_id = get_str(record, "runId").unwrap_or("?");
    let flow = get_str(record, "flow").unwrap_or("flow").to_owned();
    let mut notes = Vec::new();
    let (events, _) = crate::run::runs::journal_events(dir);

    // The calls, per node in the order of their first call.
    let mut answers: indexmap::IndexMap<String, Vec<Value>> = indexmap::IndexMap::new();
    for ev in &events {
        if get_str(ev, "type") != Some("agent-call") {
            continue;
        }
        let Ok(call) = AgentCallRecord::from_value(ev) else {
            continue;
        };
        answers
            .entry(call.node.clone())
            .or_default()
            .push(call_answer(&call));
    }
    // Scripts whose end the journal's inputs hold.
    let journal = std::fs::read_to_string(dir.join("journal.jsonl")).unwrap_or_default();
    for (node, answer) in script_answers(&journal, record, &flow) {
        answers.entry(node).or_default().push(answer);
    }
    // Phases reused (cache, parent run) made no call in this run: an agent phase is answered
    // with its recorded output; others are the user's to answer.
    if let Some(Value::Object(phases)) = get(record, "phases") {
        for (id, p) in phases {
            let reused = get(p, "cacheHit").is_some_and(|v| !matches!(v, Value::Null));
            let called = answers
                .keys()
                .any(|n| crate::run::runs::node_of_phase(n, id));
            if !reused || called || get_str(p, "status") != Some("done") {
                continue;
            }
            match get_str(p, "type") {
                None | Some("agent") => {
                    let output = get_str(p, "output").unwrap_or("").to_owned();
                    answers.insert(id.clone(), vec![Value::from(output)]);
                }
                Some(kind) => notes.push(format!(
                    "phase '{id}' ({kind}) was reused from an earlier run, so this run recorded none of its calls: answer them in the test by hand"
                )),
            }
        }
    }
    let answers: Map = answers
        .into_iter()
        .map(|(node, mut list)| {
            let v = if list.len() == 1 {
                list.remove(0)
            } else {
                Value::Array(list)
            };
            (node, v)
        })
        .collect();

    // Approvals as decided (pending ones stay unlisted: the test pauses as the run did).
    let mut approvals = Map::default();
    if let Some(Value::Object(phases)) = get(record, "phases") {
        for (id, p) in phases {
            let Some(a) = get(p, "approval") else {
                continue;
            };
            let note = get_str(a, "note").filter(|n| !n.is_empty());
            let decided = match get_str(a, "decision") {
                Some("approve") => Value::from("approve"),
                Some("edit") => {
                    notes.push(format!(
                        "approval '{id}' was approved with an edit, which a test cannot give: the test approves it"
                    ));
                    Value::from("approve")
                }
                Some("reject") => match note {
                    Some(n) => object(vec![("reject", Value::from(n))]),
                    None => Value::from("reject"),
                },
                _ => continue,
            };
            approvals.insert(id.clone(), decided);
        }
    }

    // Expectations: the run's status, each phase's status, its final output.
    let mut expect = Map::default();
    if let Some(s) = get(record, "status") {
        expect.insert("status".into(), s.clone());
    }
    let mut phases = Map::default();
    if let Some(Value::Object(ps)) = get(record, "phases") {
        for (id, p) in ps {
            if let Some(s @ ("pending" | "done" | "failed" | "skipped")) = get_str(p, "status") {
                phases.insert(id.clone(), object(vec![("status", Value::from(s))]));
            }
        }
    }
    expect.insert("phases".into(), Value::Object(phases));
    let output = get_str(record, "finalOutput").unwrap_or("");
    expect.insert("output".into(), output_matcher(output, run_id));
    expect.insert(
        "outputPhase".into(),
        get(record, "outputPhase").cloned().unwrap_or(Value::Null),
    );

    let mut case = Map::default();
    let name = name.map_or_else(|| format!("run {run_id}"), str::to_owned);
    case.insert("name".into(), Value::from(name));
    if let Some(Value::Object(args)) = get(record, "args")
        && !args.is_empty()
    {
        case.insert("args".into(), Value::Object(args.clone()));
    }
    case.insert("answers".into(), Value::Object(answers));
    if !approvals.is_empty() {
        case.insert("approvals".into(), Value::Object(approvals));
    }
    case.insert("expect".into(), Value::Object(expect));
    FromRun {
        case: Value::Object(case),
        flow,
        def: get(record, "def").cloned(),
        notes,
    }
}

/// The final output as a matcher: the text itself, or — when it names the run (a paused
/// run's "Resume with: tfc resume <runId> …"), which a test's run is not — a regex that takes
/// any run id in its place.
fn output_matcher(output: &str, run_id: &str) -> Value {
    if run_id.is_empty() || !output.contains(run_id) {
        return Value::from(output);
    }
    let parts: Vec<String> = output.split(run_id).map(regex::escape).collect();
    let pattern = format!("\\A{}\\z", parts.join("[A-Za-z0-9._-]+"));
    object(vec![("regex", Value::from(pattern))])
}

/// One recorded call as an answer.
fn call_answer(call: &AgentCallRecord) -> Value {
    if call.ok {
        return Value::from(call.output.as_str());
    }
    match call.stop_reason {
        StopReason::IdleTimeout | StopReason::WallTimeout => {
            object(vec![("timeout", Value::Bool(true))])
        }
        _ => {
            let error = call.error.clone().unwrap_or_else(|| "failed".into());
            object(vec![("error", Value::from(error))])
        }
    }
}

/// The scripts of the run that exited, as `(node, {"stdout", "exitCode"})` in order: the
/// journal's inputs replayed into a machine built from the run's definition, arguments and
/// configuration tell which node each script end belongs to. Nothing when the journal keeps
/// no inputs or configuration (the scripts then run in the test).
fn script_answers(journal: &str, record: &Value, flow: &str) -> Vec<(String, Value)> {
    let Some(cfg) = crate::run::journal::start_config(journal) else {
        return Vec::new();
    };
    let Some(def) = get(record, "def") else {
        return Vec::new();
    };
    let parsed = crate::json::parse(&def.to_json());
    let Some(root) = parsed.root else {
        return Vec::new();
    };
    let lowered = crate::flow::lower(
        &root,
        &LowerOptions {
            default_name: Some(flow.to_owned()),
        },
    );
    let Some(lowered) = lowered.flow else {
        return Vec::new();
    };
    let args = crate::run::journal::start_args(journal).unwrap_or_default();
    let (inputs, _) = crate::run::journal::inputs_lenient(journal);
    let mut machine = Machine::new(Arc::new(lowered), args, cfg);
    let mut scripts: HashMap<u64, String> = HashMap::new();
    let mut out = Vec::new();
    let mut commands = Vec::new();
    for input in inputs {
        if let Event::ScriptEnded { op, result } = &input.what
            && let Some(node) = scripts.remove(op)
            && result.spawn_error.is_none()
            && result.end == ScriptEnd::Exited
        {
            out.push((
                node,
                object(vec![
                    ("stdout", Value::from(result.stdout.as_str())),
                    ("exitCode", Value::Number(f64::from(result.code))),
                ]),
            ));
        }
        machine.handle_into(input, &mut commands);
        for c in commands.drain(..) {
            if let Command::StartScript { op, script } = c {
                let node = if script.node.is_empty() {
                    script.phase_id.clone()
                } else {
                    script.node.clone()
                };
                scripts.insert(op, node);
            }
        }
    }
    out
}

/// The file holding the flow a run used, for a new test file to name: a flow file under
/// `root` (`.tfc/`, `.git/`, `target/`, `node_modules/` skipped) whose document is the run's
/// definition (`<flow>.json` and `<flow>.flow.json` looked at first), else a saved flow that
/// holds it (`Err(name)`: the test names it as a saved flow). `None` when no file holds it; then the caller may
/// fall back to [`flow_by_name`].
pub fn locate_flow(def: &Value, flow: &str, root: &Path) -> Option<Result<PathBuf, String>> {
    let holds = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.len() <= 4 << 20)
            && std::fs::read_to_string(p)
                .ok()
                .and_then(|t| crate::json::parse(&t).root)
                .is_some_and(|r| r.to_value() == *def)
    };
    let mut files = super::discover::flow_files(root);
    let first = |p: &PathBuf| {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        let preferred = name.as_deref() == Some(&format!("{flow}.json"))
            || name == Some(format!("{flow}.flow.json"));
        !preferred
    };
    files.sort_by_key(first);
    if let Some(f) = files.into_iter().find(|f| holds(f)) {
        return Some(Ok(f));
    }
    let saved = crate::project::SavedFlows::new(root);
    (crate::project::SavedFlows::valid_name(flow)
        && saved
            .candidates(flow)
            .iter()
            .any(|c| c.is_file() && holds(c)))
    .then(|| Err(flow.to_owned()))
}

/// A flow file named after the flow (`<flow>.json`, `<flow>.flow.json` under `root`), or a
/// saved flow of that name (`Err(name)`), for a run whose definition no file holds any more.
pub fn flow_by_name(flow: &str, root: &Path) -> Option<Result<PathBuf, String>> {
    if crate::project::SavedFlows::valid_name(flow)
        && crate::project::SavedFlows::new(root)
            .candidates(flow)
            .iter()
            .any(|c| c.is_file())
    {
        return Some(Err(flow.to_owned()));
    }
    super::discover::flow_files(root)
        .into_iter()
        .find(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            name == Some(format!("{flow}.json")) || name == Some(format!("{flow}.flow.json"))
        })
        .map(Ok)
}

/// `to` written relative to the directory `from` (both made absolute first), `/`-separated.
pub fn relative_path(from: &Path, to: &Path) -> String {
    let abs = |p: &Path| {
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().unwrap_or_default().join(p)
        };
        p.canonicalize().unwrap_or(p)
    };
    let (from, to) = (abs(from), abs(to));
    let a: Vec<_> = from.components().collect();
    let b: Vec<_> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = vec!["..".to_owned(); a.len() - common];
    parts.extend(
        b[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_written_relative_to_the_test_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("tests/unit")).unwrap();
        std::fs::create_dir_all(root.join("flows")).unwrap();
        std::fs::write(root.join("flows/ship.json"), "{}").unwrap();
        assert_eq!(
            relative_path(&root.join("tests/unit"), &root.join("flows/ship.json")),
            "../../flows/ship.json"
        );
        assert_eq!(
            relative_path(&root.join("flows"), &root.join("flows/ship.json")),
            "ship.json"
        );
    }

    #[test]
    fn the_flow_file_is_the_one_holding_the_runs_definition() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let def = r#"{"name": "ship", "phases": [{"id": "a", "task": "A"}]}"#;
        std::fs::create_dir_all(root.join("flows")).unwrap();
        std::fs::create_dir_all(root.join("node_modules")).unwrap();
        std::fs::write(root.join("node_modules/ship.json"), def).unwrap();
        std::fs::write(root.join("ship.json"), r#"{"name": "ship", "phases": []}"#).unwrap();
        std::fs::write(root.join("flows/other.json"), def).unwrap();
        let v = crate::value::parse_json(def).unwrap();
        assert_eq!(
            locate_flow(&v, "ship", root),
            Some(Ok(root.join("flows/other.json")))
        );
        std::fs::remove_file(root.join("flows/other.json")).unwrap();
        assert_eq!(locate_flow(&v, "ship", root), None);
        assert_eq!(flow_by_name("ship", root), Some(Ok(root.join("ship.json"))));
    }

    #[test]
    fn a_run_record_and_journal_become_a_case() {
        let dir = tempfile::tempdir().unwrap();
        let call = |node: &str, ok: bool, output: &str, stop: &str| {
            format!(
                r#"{{"type":"agent-call","node":"{node}","agent":"default","attempt":1,"backend":"x","ok":{ok},"output":"{output}","error":{},"stopReason":"{stop}","prompt":"p"}}"#,
                if ok {
                    "null".to_owned()
                } else {
                    format!("\"{output} failed\"")
                }
            )
        };
        let journal = [
            r#"{"type":"run-start","runId":"r-1","flow":"f"}"#.to_owned(),
            call("draft", false, "", "idle-timeout"),
            call("draft", true, "second", "completed"),
            call("items#0", false, "boom", "failed"),
            call("items#0", true, "one", "completed"),
        ]
        .join("\n");
        std::fs::write(dir.path().join("journal.jsonl"), journal + "\n").unwrap();
        let record = crate::value::parse_json(
            r#"{"runId": "r-1", "flow": "f", "status": "blocked", "args": {"n": 2},
                "finalOutput": "Gate blocked", "outputPhase": null,
                "phases": {
                  "cached": {"status": "done", "output": "from the cache", "cacheHit": "cross-run"},
                  "loop": {"status": "done", "type": "loop", "output": "x", "cacheHit": "run-only"},
                  "draft": {"status": "done", "output": "second"},
                  "items": {"status": "done", "type": "map"},
                  "ok": {"status": "done", "type": "approval", "approval": {"decision": "approve"}},
                  "no": {"status": "done", "type": "approval", "approval": {"decision": "reject", "note": "later"}},
                  "wait": {"status": "pending", "type": "approval", "approval": {"decision": "pending"}}}}"#,
        )
        .unwrap();
        let made = case_from_run(dir.path(), &record, Some("mine"));
        assert_eq!(
            made.case.to_json(),
            concat!(
                r#"{"name":"mine","args":{"n":2},"answers":{"#,
                r#""draft":[{"timeout":true},"second"],"items#0":[{"error":"boom failed"},"one"],"#,
                r#""cached":"from the cache"},"#,
                r#""approvals":{"ok":"approve","no":{"reject":"later"}},"#,
                r#""expect":{"status":"blocked","phases":{"cached":{"status":"done"},"#,
                r#""loop":{"status":"done"},"draft":{"status":"done"},"items":{"status":"done"},"#,
                r#""ok":{"status":"done"},"no":{"status":"done"},"wait":{"status":"pending"}},"#,
                r#""output":"Gate blocked","outputPhase":null}}"#
            )
        );
        assert_eq!(made.flow, "f");
        assert_eq!(made.notes.len(), 1);
        assert!(
            made.notes[0].starts_with("phase 'loop' (loop) was reused"),
            "{:?}",
            made.notes
        );
    }

    #[test]
    fn an_output_naming_the_run_matches_any_run_id() {
        assert_eq!(output_matcher("done.", "r-1"), Value::from("done."));
        let m = output_matcher(
            "Paused (x+y).\nResume with: tfc resume r-1 --approve p",
            "r-1",
        );
        let p = m
            .as_object()
            .and_then(|o| o.get("regex"))
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("{m:?}"));
        let re = regex::Regex::new(p).unwrap();
        assert!(re.is_match("Paused (x+y).\nResume with: tfc resume test-ship --approve p"));
        assert!(!re.is_match("Paused (x+y).\nResume with: tfc resume test-ship --approve q"));
        assert!(!re.is_match("Paused (xxy).\nResume with: tfc resume r-1 --approve p"));
    }

    #[test]
    fn calls_become_answers_by_how_they_ended() {
        let call = |ok: bool, stop: StopReason, error: Option<&str>| AgentCallRecord {
            ts: String::new(),
            node: "a".into(),
            agent: "default".into(),
            prompt_sha256: String::new(),
            attempt: 1,
            backend: "x".into(),
            model: None,
            ok,
            output: "out".into(),
            error: error.map(str::to_owned),
            usage: Default::default(),
            stop_reason: stop,
            duration_ms: 0,
            prompt: None,
        };
        assert_eq!(
            call_answer(&call(true, StopReason::Completed, None)),
            Value::from("out")
        );
        assert_eq!(
            call_answer(&call(false, StopReason::IdleTimeout, Some("idle"))).to_json(),
            r#"{"timeout":true}"#
        );
        assert_eq!(
            call_answer(&call(false, StopReason::Failed, Some("HTTP 429"))).to_json(),
            r#"{"error":"HTTP 429"}"#
        );
    }
}
