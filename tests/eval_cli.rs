//! `tfc eval` end to end (SPEC §11.2): every mode, both output formats, exit codes.

mod common;

use common::{tfc, tfc_stdin};

const CTX: &str = "examples/triage-context.json";

#[test]
fn template_text_and_json() {
    let out = tfc(&[
        "eval",
        "template",
        "Audit {file.path} since {args.since}: {steps.triage.json.reason} {nope.x}",
        "--ctx",
        CTX,
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout,
        "Audit src/auth.rs since v1.4.0: missing auth check {nope.x}"
    );

    let out = tfc(&[
        "eval",
        "template",
        "{steps.enrich.output} {steps.discover.json.1.path} {x} {x}",
        "--ctx",
        CTX,
        "--format",
        "json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout.trim_end(),
        r#"{"output":"[previous phase failed] src/db.rs {x} {x}","missing":["x"],"reads":["steps.enrich.output","steps.discover.json.1.path"]}"#
    );
}

#[test]
fn template_without_context_leaves_placeholders() {
    let out = tfc(&["eval", "template", "a {args.x} b"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "a {args.x} b"));
}

#[test]
fn template_from_stdin() {
    let out = tfc_stdin(
        &["eval", "template", "-", "--ctx", CTX],
        "since {args.since}\n",
    );
    assert_eq!((out.code, out.stdout.as_str()), (0, "since v1.4.0\n"));
}

#[test]
fn value_mode_keeps_raw_values() {
    let out = tfc(&["eval", "value", "{steps.discover.json}", "--ctx", CTX]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout.trim_end(),
        r#"[{"path":"src/auth.rs"},{"path":"src/db.rs"}]"#
    );

    let out = tfc(&[
        "eval",
        "value",
        "{file.lines}",
        "--ctx",
        CTX,
        "--format",
        "json",
    ]);
    assert_eq!(
        out.stdout.trim_end(),
        r#"{"value":120,"reads":["file.lines"]}"#
    );

    let out = tfc(&["eval", "value", "{nope}", "--format", "json"]);
    assert_eq!(out.stdout.trim_end(), r#"{"value":"{nope}","reads":[]}"#);
}

#[test]
fn json_and_array_modes() {
    let out = tfc_stdin(&["eval", "json"], "Here:\n```json\n{\"a\": [1, 2]}\n```\n");
    assert_eq!((out.code, out.stdout.trim_end()), (0, r#"{"a":[1,2]}"#));

    let out = tfc_stdin(&["eval", "json", "--format", "json"], "no json here");
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stdout.trim_end(),
        r#"{"found":false,"value":null,"diagnostic":null}"#
    );

    let out = tfc_stdin(&["eval", "json"], "nothing");
    assert_eq!((out.code, out.stdout.as_str()), (1, ""));

    let out = tfc_stdin(&["eval", "array"], r#"{"meta": 1, "results": [3, 4]}"#);
    assert_eq!((out.code, out.stdout.trim_end()), (0, "[3,4]"));

    let out = tfc_stdin(&["eval", "array", "--format", "json"], r#"{"a": 1}"#);
    assert_eq!(
        (out.code, out.stdout.trim_end()),
        (1, r#"{"found":false,"value":null}"#)
    );
}

#[test]
fn bad_inputs_exit_2_with_a_message() {
    let out = tfc(&["eval", "template", "x", "--ctx", "does/not/exist.json"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("cannot read context file 'does/not/exist.json'"),
        "{}",
        out.stderr
    );

    let out = tfc_stdin(&["eval", "template", "x", "--ctx", "-"], "{not json");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("is not valid JSON"), "{}", out.stderr);

    let out = tfc_stdin(&["eval", "template", "x", "--ctx", "-"], r#"{"step": {}}"#);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("did you mean 'steps'"),
        "{}",
        out.stderr
    );

    let out = common::tfc_in(None, &["eval", "json"], &[b'{', 0xff, b'}']);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("not valid UTF-8"), "{}", out.stderr);

    let out = tfc(&["eval", "template", "-", "--ctx", "-"]);
    assert_eq!(out.code, 2);

    let out = tfc(&["eval", "nonsense"]);
    assert_eq!(out.code, 2);
}

#[test]
fn when_is_fail_open() {
    let out = tfc(&[
        "eval",
        "when",
        "{steps.triage.json.severity} == high && !{steps.triage.json.suppressed}",
        "--ctx",
        CTX,
    ]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "true\n"));

    let out = tfc(&[
        "eval",
        "when",
        "{args.mode} == slow",
        "--ctx",
        CTX,
        "--format",
        "json",
    ]);
    assert_eq!(
        out.stdout.trim_end(),
        r#"{"value":false,"error":null,"reads":["args.mode"]}"#
    );

    let out = tfc(&["eval", "when", "a == b == c", "--format", "json"]);
    assert_eq!(out.code, 0);
    assert_eq!(
        out.stdout.trim_end(),
        r#"{"value":true,"error":{"message":"trailing tokens","start":7,"end":9},"reads":[]}"#
    );

    let out = tfc(&["eval", "when", "   "]);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (0, "true\n", "")
    );

    let out = tfc(&[
        "eval",
        "when",
        "{steps.enrich.output} == \"[previous phase failed]\"",
        "--ctx",
        CTX,
    ]);
    assert_eq!(out.stdout, "true\n");
}

#[test]
fn until_is_fail_safe() {
    let out = tfc(&["eval", "until", "{loop.iteration} >= 3", "--ctx", CTX]);
    assert_eq!(out.stdout, "false\n");
    let out = tfc(&["eval", "until", "({loop.iteration} >= 3"]);
    assert_eq!(out.stdout, "true\n");
    assert!(out.stderr.contains("missing )"), "{}", out.stderr);
}

#[test]
fn gate_entries() {
    let out = tfc(&[
        "eval",
        "gate",
        "{steps.lint.output} contains no errors",
        "--ctx",
        CTX,
        "--format",
        "json",
    ]);
    assert_eq!(
        out.stdout.trim_end(),
        r#"{"passed":true,"error":null,"reads":["steps.lint.output"]}"#
    );

    let out = tfc(&[
        "eval",
        "gate",
        "{steps.missing.output} contains x",
        "--ctx",
        CTX,
    ]);
    assert_eq!(out.stdout, "false\n");

    let out = tfc(&["eval", "gate", "{file.lines} > 100", "--ctx", CTX]);
    assert_eq!(out.stdout, "true\n");

    let out = tfc(&["eval", "gate", "1 ==", "--format", "json"]);
    assert_eq!(
        out.stdout.trim_end(),
        r#"{"passed":false,"error":{"message":"unexpected end","start":4,"end":4},"reads":[]}"#
    );
}
