//! A build without the `temporal` feature says how to get one with it (exit 2), for every
//! command of runs on Temporal.
#![cfg(not(feature = "temporal"))]

mod common;

use common::{scratch, tfc_in};

#[test]
fn temporal_commands_explain_the_missing_feature() {
    let dir = scratch("temporal-absent");
    std::fs::write(
        dir.join("flow.json"),
        r#"{"name": "f", "phases": [{"id": "a", "task": "x"}]}"#,
    )
    .expect("flow");
    for args in [
        &["worker", "--temporal", "127.0.0.1:7233"][..],
        &[
            "run",
            "flow.json",
            "--engine",
            "temporal",
            "--agent-cmd",
            "cat",
        ],
        &["cancel", "some-run"],
        &["approve", "some-run", "ok"],
    ] {
        let out = tfc_in(Some(&dir), args, b"");
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(
            out.stderr.contains("--features temporal"),
            "{args:?}: {}",
            out.stderr
        );
        assert!(out.stdout.is_empty());
    }
    // Nothing ran.
    assert!(!dir.join(".tfc").join("runs").exists());
}

#[test]
fn a_configured_temporal_engine_is_named_and_a_dry_run_still_runs_here() {
    let dir = scratch("temporal-absent-config");
    std::fs::create_dir_all(dir.join(".tfc")).expect("project");
    std::fs::write(
        dir.join(".tfc").join("config.toml"),
        "[engine]\nkind = \"temporal\"\naddress = \"127.0.0.1:7233\"\n",
    )
    .expect("config");
    std::fs::write(
        dir.join("flow.json"),
        r#"{"name": "f", "phases": [{"id": "a", "task": "x"}]}"#,
    )
    .expect("flow");
    let out = tfc_in(Some(&dir), &["run", "flow.json", "--agent-cmd", "cat"], b"");
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("[engine] kind = \"temporal\"")
            && out.stderr.contains("--features temporal"),
        "{}",
        out.stderr
    );
    // `--engine local` overrides the configuration; so does a dry run, which never leaves.
    let local = tfc_in(
        Some(&dir),
        &[
            "run",
            "flow.json",
            "--agent-cmd",
            "cat",
            "--engine",
            "local",
        ],
        b"",
    );
    assert_eq!(local.code, 0, "{}", local.stderr);
    assert_eq!(local.stdout, "x\n");
    let dry = tfc_in(Some(&dir), &["run", "flow.json", "--dry-run"], b"");
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    // An engine tfc does not know is a configuration error naming the key (the run's
    // preflight, E0701).
    std::fs::write(
        dir.join(".tfc").join("config.toml"),
        "[engine]\nkind = \"cloud\"\n",
    )
    .expect("config");
    let bad = tfc_in(Some(&dir), &["run", "flow.json", "--agent-cmd", "cat"], b"");
    assert_eq!(bad.code, 3, "{}", bad.stderr);
    assert!(
        bad.stderr.contains("engine.kind: unknown engine 'cloud'"),
        "{}",
        bad.stderr
    );
}
