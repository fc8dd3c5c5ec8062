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
