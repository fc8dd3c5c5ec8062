//! Golden tests of `tfc check`: every flow in `tests/check/` is checked by the real binary and
//! its output compared with the recorded one.
//!
//! - `tests/check/<name>.json` / `.jsonc`: the flow, run as `tfc check --color never
//!   tests/check/<name>.json` from the crate root (so no machine path enters a golden).
//! - `<name>.args` (optional): extra command-line arguments, one per line (`--strict`,
//!   `--arg`, `since=v1`, …), given before the flow path.
//! - `<name>.stderr`: `exit: N` on the first line, then stderr verbatim.
//! - `<name>.json.out`: the `--format json` report (stdout), pretty-printed.
//! - `tests/check/project/`: a project with saved flows in `.tfc/flows/`; its flows run with
//!   that directory as the working directory (sub-flow goldens).
//! - `<name>.nofile`: a case whose flow does not exist: `tfc check tests/check/<name>.json` on
//!   a missing file (E0000); the marker's content is a note for readers.
//!
//! `TFC_BLESS=1 cargo test --test check_golden` rewrites the goldens instead of comparing.
//! Never edit a golden by hand.

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use tfc::diag::Code;

/// One golden case: the directory it runs in and the flow's path relative to it.
struct Case {
    cwd: PathBuf,
    flow: String,
    /// `tests/check/<stem>` (or `tests/check/project/<stem>`), without extension.
    base: PathBuf,
}

fn cases() -> Vec<Case> {
    let root = common::root();
    let mut out = Vec::new();
    for (dir, prefix) in [
        (root.join("tests/check"), "tests/check/"),
        (root.join("tests/check/project"), ""),
    ] {
        let cwd = if prefix.is_empty() {
            dir.clone()
        } else {
            root.clone()
        };
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .expect("tests/check exists")
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".json") || n.ends_with(".jsonc") || n.ends_with(".nofile"))
            .collect();
        names.sort();
        for name in names {
            assert!(
                name.matches('.').count() == 1,
                "{name}: golden flow names have no dots besides the extension"
            );
            let stem = name
                .strip_suffix(".jsonc")
                .or_else(|| name.strip_suffix(".json"))
                .or_else(|| name.strip_suffix(".nofile"))
                .expect("filtered above")
                .to_owned();
            let flow = match name.ends_with(".nofile") {
                true => format!("{prefix}{stem}.json"),
                false => format!("{prefix}{name}"),
            };
            out.push(Case {
                cwd: cwd.clone(),
                flow,
                base: dir.join(stem),
            });
        }
    }
    out
}

/// Run `tfc check` with a fixed environment: no colour, no `TFC_BACKEND`, and a home directory
/// that does not exist (so no user-level saved flows or configuration are found and paths
/// under it print as `~`).
fn run(case: &Case, extra: &[&str]) -> (i32, String, String) {
    let args = std::fs::read_to_string(case.base.with_extension("args")).unwrap_or_default();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tfc"));
    cmd.arg("check")
        .args(["--color", "never"])
        .args(extra)
        .args(args.lines().filter(|l| !l.trim().is_empty()))
        .arg(&case.flow)
        .current_dir(&case.cwd)
        .env("NO_COLOR", "1")
        .env("HOME", "/nonexistent-tfc-home")
        .env_remove("XDG_CONFIG_HOME")
        // A backend chosen by the environment would add W0701 for undefined agents.
        .env_remove("TFC_BACKEND")
        .stdin(Stdio::null());
    let out = cmd.output().expect("run tfc");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn pretty(json: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(json).expect("--format json prints JSON");
    let mut s = serde_json::to_string_pretty(&value).expect("serialise");
    s.push('\n');
    s
}

#[test]
fn goldens() {
    let mut problems = Vec::new();
    let cases = cases();
    assert!(
        cases.len() > 50,
        "expected the golden flows in tests/check/"
    );
    for case in &cases {
        let (code, _, stderr) = run(case, &[]);
        let text = format!("exit: {code}\n{stderr}");
        problems.extend(common::golden::compare(
            &case.base.with_extension("stderr"),
            &text,
        ));

        let (json_code, stdout, json_stderr) = run(case, &["--format", "json"]);
        if json_code != code {
            problems.push(format!(
                "{}: exit {json_code} with --format json, {code} without",
                case.flow
            ));
        }
        if stdout.lines().count() != 1 || !json_stderr.is_empty() {
            problems.push(format!(
                "{}: --format json must print one line on stdout and nothing on stderr, got {stdout:?} / {json_stderr:?}",
                case.flow
            ));
            continue;
        }
        problems.extend(common::golden::compare(
            &case.base.with_extension("json.out"),
            &pretty(&stdout),
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// Goldens without a flow are left-overs of renamed tests.
#[test]
fn no_stale_goldens() {
    let flows: BTreeSet<PathBuf> = cases().into_iter().map(|c| c.base).collect();
    let root = common::root();
    let mut stale = Vec::new();
    for dir in [root.join("tests/check"), root.join("tests/check/project")] {
        for entry in std::fs::read_dir(&dir).expect("read tests/check").flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let stem = [".stderr", ".json.out", ".args"]
                .iter()
                .find_map(|ext| name.strip_suffix(ext));
            if let Some(stem) = stem
                && !flows.contains(&dir.join(stem))
            {
                stale.push(dir.join(&name).display().to_string());
            }
        }
    }
    assert!(stale.is_empty(), "goldens without a flow: {stale:?}");
}

/// The codes `tfc check` can produce on flows: everything but the run-time ones (E06xx:
/// generated flows; E07xx/W07xx: run preflight) and the test-file codes (Txxxx, whose
/// goldens are in `tests/test_check/`).
fn codes_in_scope() -> Vec<Code> {
    Code::ALL
        .iter()
        .copied()
        .filter(|c| {
            let s = c.as_str();
            !(s.starts_with("E06")
                || s.starts_with("E07")
                || s.starts_with("W07")
                || s.starts_with('T'))
        })
        .collect()
}

#[test]
fn every_code_has_a_golden() {
    if common::golden::bless() {
        return; // the goldens are being rewritten by `goldens` right now
    }
    let mut seen = String::new();
    for case in cases() {
        seen.push_str(
            &std::fs::read_to_string(case.base.with_extension("stderr")).unwrap_or_default(),
        );
    }
    let missing: Vec<&str> = codes_in_scope()
        .into_iter()
        .map(Code::as_str)
        .filter(|c| !seen.contains(&format!("[{c}]")))
        .collect();
    assert!(missing.is_empty(), "codes without a golden: {missing:?}");
}

/// Each `<CODE>-…` golden shows its own code (the file name says what it is for).
#[test]
fn goldens_show_their_code() {
    if common::golden::bless() {
        return;
    }
    let mut wrong = Vec::new();
    for case in cases() {
        let stem = case
            .base
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let Some(code) = stem.split('-').next().and_then(Code::parse) else {
            continue;
        };
        let text = std::fs::read_to_string(case.base.with_extension("stderr")).unwrap_or_default();
        if !text.contains(&format!("[{}]", code.as_str())) {
            wrong.push(stem);
        }
    }
    assert!(
        wrong.is_empty(),
        "goldens not showing the code in their name: {wrong:?}"
    );
}
