//! `tfc check` end to end: the example flows check clean, exit codes, both output formats.

mod common;

use common::tfc;

const EXAMPLES: &[&str] = &[
    "examples/release-check.json",
    "examples/conditional-review.json",
    "examples/gated-rework.json",
    "examples/map-reduce-audit.json",
    "examples/script-fallback.json",
];

#[test]
fn examples_check_clean() {
    for example in EXAMPLES {
        let out = tfc(&["check", "--color", "never", example]);
        assert_eq!(out.code, 0, "{example}: {}", out.stderr);
        assert_eq!(
            out.stderr, "ok: 0 errors, 0 warnings in 1 file\n",
            "{example} should check without warnings"
        );
        assert!(out.stdout.is_empty(), "{example}: {}", out.stdout);

        let out = tfc(&["check", "--format", "json", example]);
        assert_eq!(out.code, 0, "{example}: {}", out.stderr);
        let report: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON report");
        assert_eq!(report["ok"], true, "{example}: {report}");
        assert_eq!(report["diagnostics"], serde_json::json!([]), "{example}");
    }
}

#[test]
fn examples_check_clean_in_strict_mode() {
    for example in EXAMPLES {
        let out = tfc(&["check", "--strict", "--color", "never", example]);
        assert_eq!(out.code, 0, "{example}: {}", out.stderr);
    }
}

#[test]
fn all_examples_at_once() {
    let mut args = vec!["check", "--color", "never"];
    args.extend(EXAMPLES);
    let out = tfc(&args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stderr, "ok: 0 errors, 0 warnings in 5 files\n");
}
