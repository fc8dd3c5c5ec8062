//! Tests that need a real part (the agent CLIs and the mock model provider, chromium,
//! Graphviz, the MCP Python SDK, a Temporal server, `script`, the OpenTelemetry receivers) and
//! do not find it must not pass silently: they go through `common::skip`, which prints
//! `SKIPPED: <test>: <why>` on stderr on a developer's machine and fails the test in CI
//! (`.ci/run` sets `TFC_REQUIRE_REAL_PARTS`), so a green CI means every one of them ran.

mod common;

use std::path::{Path, PathBuf};

use common::{REQUIRE_REAL_PARTS, root, skip_line};

#[test]
fn a_missing_part_is_loud_here_and_a_failure_in_ci() {
    assert_eq!(
        skip_line(false, "the_test", "chromium not found"),
        Ok("SKIPPED: the_test: chromium not found".to_owned())
    );
    let failure = skip_line(true, "the_test", "chromium not found").unwrap_err();
    assert!(
        failure.starts_with("the_test: chromium not found") && failure.contains(REQUIRE_REAL_PARTS),
        "{failure}"
    );
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read tests/").flatten() {
        let p = e.path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// No test says it skips on its own: every skip goes through `common::skip`.
#[test]
fn every_skip_goes_through_the_one_helper() {
    let mut files = Vec::new();
    rs_files(&root().join("tests"), &mut files);
    assert!(files.len() > 30);
    let printers = [
        concat!("println", "!("),
        concat!("eprintln", "!("),
        concat!("writeln", "!("),
    ];
    let mut bad = Vec::new();
    for f in &files {
        if f.ends_with("common/mod.rs") || f.ends_with("real_parts.rs") {
            continue;
        }
        let text = std::fs::read_to_string(f).expect("read");
        for printer in printers {
            for (at, _) in text.match_indices(printer) {
                let call = &text[at..];
                let call = &call[..call.find(");").unwrap_or(call.len()).min(400)];
                if call.to_lowercase().contains("skip") {
                    bad.push(format!(
                        "{}: {}",
                        f.display(),
                        call.lines().next().unwrap_or("")
                    ));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "skips printed by hand (use common::skip):\n{}",
        bad.join("\n")
    );
}

/// CI sets the variable before it runs the tests.
#[test]
fn ci_requires_the_real_parts() {
    let ci = std::fs::read_to_string(root().join(".ci/run")).expect(".ci/run");
    let export = ci
        .find(&format!("export {REQUIRE_REAL_PARTS}="))
        .expect(".ci/run exports TFC_REQUIRE_REAL_PARTS");
    let tests = ci.find("\ncargo test\n").expect(".ci/run runs cargo test");
    assert!(export < tests, "exported after `cargo test`");
}
