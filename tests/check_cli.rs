//! `tfc check` end to end: the example flows check clean, exit codes, both output formats.

mod common;

use common::tfc;

const EXAMPLES: &[&str] = &[
    "examples/release-check.json",
    "examples/conditional-review.json",
    "examples/gated-rework.json",
    "examples/map-reduce-audit.json",
    "examples/script-fallback.json",
    "examples/changelog/flow.json",
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
    assert_eq!(
        out.stderr,
        format!("ok: 0 errors, 0 warnings in {} files\n", EXAMPLES.len())
    );
}

#[test]
fn examples_with_their_arguments() {
    let out = tfc(&[
        "check",
        "--color",
        "never",
        "--arg",
        "since=v1.4.0",
        "examples/release-check.json",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // conditional-review requires 'pr': known arguments without it are an error.
    let out = tfc(&[
        "check",
        "--args",
        "{}",
        "--color",
        "never",
        "examples/conditional-review.json",
    ]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("[E0503] Error: Missing required argument 'pr'")
    );
    let out = tfc(&[
        "check",
        "--arg",
        "pr=1234",
        "examples/conditional-review.json",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn exit_codes() {
    // 0: warnings only.
    let out = tfc(&["check", "tests/check/W0101-dead-end.json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.ends_with("ok: 0 errors, 1 warning in 1 file\n"));
    // 1: an error in any of several files.
    let out = tfc(&[
        "check",
        "examples/release-check.json",
        "tests/check/E0103-unknown-dependency.json",
    ]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .ends_with("failed: 1 error, 0 warnings in 2 files\n")
    );
    // 2: a file that cannot be read (the others are still checked) or bad usage.
    let out = tfc(&[
        "check",
        "no-such-flow.json",
        "tests/check/E0103-unknown-dependency.json",
    ]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("[E0103]"));
    assert!(
        out.stderr
            .contains("error: cannot read flow 'no-such-flow.json'")
    );
    for bad in [
        &["check", "--args", "[1]", "examples/release-check.json"][..],
        &["check", "--args", "{", "examples/release-check.json"],
        &["check", "--arg", "novalue", "examples/release-check.json"],
        &["check"],
    ] {
        assert_eq!(tfc(bad).code, 2, "{bad:?}");
    }
}

#[test]
fn json_report_shape() {
    let out = tfc(&[
        "check",
        "--format",
        "json",
        "tests/check/E0201-unreachable-reference.json",
    ]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["ok"], false);
    let d = &report["diagnostics"][0];
    assert_eq!(d["severity"], "error");
    assert_eq!(d["code"], "E0201");
    assert_eq!(d["name"], "unreachable-reference");
    assert_eq!(d["file"], "tests/check/E0201-unreachable-reference.json");
    assert_eq!(d["phase"], "triage");
    let text = std::fs::read_to_string(
        common::root().join("tests/check/E0201-unreachable-reference.json"),
    )
    .unwrap();
    let (start, end) = (
        d["span"]["start"].as_u64().unwrap() as usize,
        d["span"]["end"].as_u64().unwrap() as usize,
    );
    assert_eq!(&text[start..end], "{steps.tests.output}");
    assert_eq!(d["span"]["line"], 5);
    assert!(d["labels"][0]["message"].is_string());
    assert!(d["help"].as_str().unwrap().contains("\"dependsOn\""));
}

#[test]
fn invalid_utf8_is_a_json_syntax_error() {
    let dir = common::scratch("check-utf8");
    let path = dir.join("flow.json");
    std::fs::write(&path, b"{\"phases\": [\xff]}").unwrap();
    let out = tfc(&["check", "--color", "never", path.to_str().unwrap()]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("[E0001] Error: invalid UTF-8: byte 0xFF at offset 12")
    );
}

#[test]
fn colour_only_when_asked() {
    let plain = tfc(&["check", "tests/check/W0309-empty-budget.json"]);
    assert!(!plain.stderr.contains('\x1b'), "{}", plain.stderr);
    let coloured = tfc(&[
        "check",
        "--color",
        "always",
        "tests/check/W0309-empty-budget.json",
    ]);
    assert!(coloured.stderr.contains('\x1b'));
}
