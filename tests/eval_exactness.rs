//! `tfc eval` end to end on the exact points of the condition language and the eval context:
//! JavaScript whitespace between tokens, reads of conditions that fail to parse, and the step
//! statuses a context may use (SPEC §6, §11.2).

mod common;

use common::{tfc, tfc_stdin};

const CTX: &str = "examples/triage-context.json";

#[test]
fn js_whitespace_separates_condition_tokens() {
    // U+00A0, U+3000, U+2028 and U+FEFF separate tokens as a space does.
    let out = tfc(&[
        "eval",
        "when",
        "{steps.triage.json.severity}\u{a0}==\u{3000}high\u{2028}&&\u{feff}{args.mode}\u{a0}!=\u{a0}slow",
        "--ctx",
        CTX,
        "--format",
        "json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout.trim_end(),
        r#"{"value":true,"error":null,"reads":["steps.triage.json.severity","args.mode"]}"#
    );
    // Whitespace only is an empty condition: true, no error.
    let out = tfc(&["eval", "when", "\u{a0}\u{2029}", "--format", "json"]);
    assert_eq!(
        out.stdout.trim_end(),
        r#"{"value":true,"error":null,"reads":[]}"#
    );
    // U+200B is not whitespace: it stays part of a bareword.
    let out = tfc(&["eval", "gate", "{args.mode} == fast\u{200b}", "--ctx", CTX]);
    assert_eq!(out.stdout, "false\n");
}

#[test]
fn unparsable_conditions_report_the_reads_before_the_error() {
    let out = tfc(&[
        "eval",
        "when",
        "{steps.triage.json.severity} == high {args.since}",
        "--ctx",
        CTX,
        "--format",
        "json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout.trim_end(),
        r#"{"value":true,"error":{"message":"trailing tokens","start":37,"end":49},"reads":["steps.triage.json.severity"]}"#
    );
    let out = tfc(&[
        "eval",
        "gate",
        "{args.mode} == fast && {nope} && {steps.lint.output} = x",
        "--ctx",
        CTX,
        "--format",
        "json",
    ]);
    assert_eq!(
        out.stdout.trim_end(),
        r#"{"passed":false,"error":{"message":"unexpected char '='","start":53,"end":54},"reads":["args.mode","steps.lint.output"]}"#
    );
}

#[test]
fn context_statuses_are_the_documented_ones() {
    let ctx = r#"{"steps": {"p": {"status": "pending", "output": "x"},
                              "r": {"status": "running", "output": "x"},
                              "s": {"status": "skipped", "output": "x"},
                              "f": {"status": "failed", "output": "x"},
                              "d": {"status": "done", "output": "x"}}}"#;
    let out = tfc_stdin(
        &[
            "eval",
            "template",
            "{steps.p.output} {steps.r.output} {steps.s.output} {steps.f.output} {steps.d.output}",
            "--ctx",
            "-",
        ],
        ctx,
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout,
        "{steps.p.output} {steps.r.output} {steps.s.output} [previous phase failed] x"
    );

    let out = tfc_stdin(
        &["eval", "template", "x", "--ctx", "-"],
        r#"{"steps": {"scan": {"status": "completed"}}}"#,
    );
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains(
            "steps.scan.status: unknown status \"completed\"; accepted: pending, running, done, failed, skipped"
        ),
        "{}",
        out.stderr
    );

    let out = tfc_stdin(
        &["eval", "when", "x", "--ctx", "-"],
        r#"{"steps": {"scan": {"status": 1}}}"#,
    );
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr
            .contains("steps.scan.status: expected a string, found number; accepted: pending"),
        "{}",
        out.stderr
    );

    // A context file that is not JSON says where.
    let out = tfc_stdin(
        &["eval", "template", "x", "--ctx", "-"],
        "{\n  \"args\": {,}\n}",
    );
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr
            .contains("is not valid JSON: expected a string key at line 2 column 12"),
        "{}",
        out.stderr
    );
}
