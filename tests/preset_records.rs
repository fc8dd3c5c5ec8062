//! What `tfc run` records for a preset backend's call: the run record (`--format json`) and the
//! journal's `agent-call` line, through the real binary, with a stand-in for each agent CLI that
//! replays a recorded stream from `tests/fixtures/agent-streams/`.

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::{root, scratch, tfc_in};
use serde_json::{Value, json};

/// Run a one-phase flow whose only backend is `preset`, played by a stand-in that prints
/// `stream` and exits with `code`; `model`: the backend's configured model. Returns the run
/// record and the journal's `agent-call` records.
fn run_preset(
    name: &str,
    preset: &str,
    stream: &str,
    code: i32,
    model: Option<&str>,
) -> (Value, Vec<Value>) {
    let dir = scratch(name);
    fs::create_dir_all(dir.join(".tfc")).unwrap();
    let stream = root().join("tests/fixtures/agent-streams").join(stream);
    let bin = dir.join(format!("fake-{preset}"));
    fs::write(
        &bin,
        format!(
            "#!/bin/sh\ncat > /dev/null\ncat '{}'\nexit {code}\n",
            stream.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
    let mut config = format!(
        "default_backend = \"c\"\n[backends.c]\npreset = \"{preset}\"\nbin = \"{}\"\n",
        bin.display()
    );
    if let Some(m) = model {
        config.push_str(&format!("model = \"{m}\"\n"));
    }
    fs::write(dir.join(".tfc/config.toml"), config).unwrap();
    fs::write(
        dir.join("flow.json"),
        r#"{"phases": [{"id": "ask", "task": "bad400"}]}"#,
    )
    .unwrap();
    let out = tfc_in(Some(&dir), &["run", "flow.json", "--format", "json"], b"");
    assert_eq!(out.code, 1, "{preset}: {out:?}");
    let record: Value = serde_json::from_str(&out.stdout).expect("the run record");
    let run_id = record["runId"].as_str().unwrap();
    let calls = journal_calls(&dir.join(".tfc/runs/flow").join(run_id));
    (record, calls)
}

fn journal_calls(run_dir: &Path) -> Vec<Value> {
    fs::read_to_string(run_dir.join("journal.jsonl"))
        .expect("the journal")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "agent-call")
        .collect()
}

#[test]
fn a_refused_request_is_recorded_alike_by_every_preset() {
    // One turn, no tokens, cost unknown: whether the CLI printed a cost of 0 (claude, pi) or
    // counted no turn of its own (codex, opencode).
    let refused = json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                         "costUSD": null, "turns": 1});
    // The run's usage counts its one call too (`usage.calls`, SPEC §8.7).
    let mut run_usage = refused.clone();
    run_usage["calls"] = json!(1);
    for (preset, code, configured, recorded) in [
        // The model named by `system/init` as `claude-opus-4-8[1m]`.
        ("claude", 1, None, "claude-opus-4-8"),
        // codex and opencode name no model: the configured one.
        ("codex", 1, Some("gpt-5.5"), "gpt-5.5"),
        ("opencode", 1, Some("mock/mock-model"), "mock/mock-model"),
        ("gemini", 144, None, "gemini-2.5-pro"),
        ("pi", 0, None, "mock-model"),
    ] {
        let (record, calls) = run_preset(
            &format!("preset-record-{preset}"),
            preset,
            &format!("{preset}-error.jsonl"),
            code,
            configured,
        );
        let phase = &record["phases"]["ask"];
        assert_eq!(phase["status"], "failed", "{preset}: {phase}");
        assert_eq!(phase["usage"], refused, "{preset}");
        assert_eq!(record["usage"], run_usage, "{preset}");
        assert_eq!(phase["model"], recorded, "{preset}");
        assert_eq!(calls.len(), 1, "{preset}");
        assert_eq!(calls[0]["usage"], refused, "{preset}");
        assert_eq!(calls[0]["model"], recorded, "{preset}");
        assert_eq!(calls[0]["ok"], false, "{preset}");
    }
}
