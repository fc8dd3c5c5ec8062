//! Golden tests of test-file diagnostics: every `tests/test_check/<name>.test.json` is checked
//! by the real binary (`tfc check --color never tests/test_check/<name>.test.json`, from the
//! crate root) and its output compared with `<name>.stderr` (`exit: N`, then stderr) and
//! `<name>.json.out` (the `--format json` report, pretty-printed). The flows they name live
//! beside them (`flow.json`, `expand.json`). `ok-*` files must be silent, and their tests must
//! pass under `tfc test`.
//!
//! `TFC_BLESS=1 cargo test --test test_check_golden` rewrites the goldens instead of comparing.
//! Never edit a golden by hand.

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use tfc::diag::Code;

const DIR: &str = "tests/test_check";

/// The test files, by stem (`T0005-unknown-node`).
fn cases() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(common::root().join(DIR))
        .expect("tests/test_check exists")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".test.json").map(str::to_owned))
        .collect();
    out.sort();
    out
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tfc"))
        .args(args)
        .current_dir(common::root())
        .env("NO_COLOR", "1")
        .env("HOME", "/nonexistent-tfc-home")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("TFC_BACKEND")
        .stdin(Stdio::null())
        .output()
        .expect("run tfc");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn golden(stem: &str, ext: &str) -> PathBuf {
    common::root().join(DIR).join(format!("{stem}.{ext}"))
}

#[test]
fn goldens() {
    let cases = cases();
    assert!(cases.len() >= 12, "expected the test files in {DIR}/");
    let mut problems = Vec::new();
    for stem in &cases {
        let file = format!("{DIR}/{stem}.test.json");
        let (code, _, stderr) = run(&["check", "--color", "never", &file]);
        problems.extend(common::golden::compare(
            &golden(stem, "stderr"),
            &format!("exit: {code}\n{stderr}"),
        ));
        let (json_code, stdout, _) = run(&["check", "--format", "json", &file]);
        if json_code != code {
            problems.push(format!(
                "{file}: exit {json_code} with --format json, {code} without"
            ));
        }
        let value: serde_json::Value = serde_json::from_str(&stdout).expect("JSON report");
        let mut pretty = serde_json::to_string_pretty(&value).expect("serialise");
        pretty.push('\n');
        problems.extend(common::golden::compare(&golden(stem, "json.out"), &pretty));
        if stem.starts_with("ok-") {
            if code != 0 || !stderr.starts_with("ok: 0 errors, 0 warnings") {
                problems.push(format!("{file} must check silently:\n{stderr}"));
            }
            let (test_code, out, err) = run(&["test", &file]);
            if test_code != 0 {
                problems.push(format!("{file}: its tests must pass:\n{out}\n{err}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// Each `<CODE>-…` golden shows its code, and every test-file code has a golden.
#[test]
fn every_test_file_code_has_its_golden() {
    if common::golden::bless() {
        return;
    }
    let mut missing = Vec::new();
    // T09xx come from `tfc test --coverage`, not `tfc check`: tests/test_coverage.rs has
    // their golden.
    let checked = |c: &&Code| c.as_str().starts_with('T') && !c.as_str().starts_with("T09");
    for code in Code::ALL.iter().filter(checked) {
        let stem = cases()
            .into_iter()
            .find(|s| s.starts_with(&format!("{}-", code.as_str())));
        let shown = stem
            .and_then(|s| std::fs::read_to_string(golden(&s, "stderr")).ok())
            .is_some_and(|t| t.contains(&format!("[{}]", code.as_str())));
        if !shown {
            missing.push(code.as_str());
        }
    }
    assert!(missing.is_empty(), "codes without a golden: {missing:?}");
}
