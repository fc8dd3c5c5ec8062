//! `tfc eval` end to end on the exact points of the condition language and the eval context:
//! which whitespace separates tokens, reads of conditions that fail to parse, and the step
//! statuses a context may use (SPEC §6, §11.2).

mod common;

use common::{tfc, tfc_stdin};

const CTX: &str = "examples/triage-context.json";

#[test]
fn only_ascii_whitespace_separates_condition_tokens() {
    // Space, tab, LF and CR separate tokens; any JS whitespace is harmless at either end (the
    // expression is JS-trimmed first).
    let out = tfc(&[
        "eval",
        "when",
        "\u{feff}\u{a0}{steps.triage.json.severity}\t==\r\nhigh && {args.mode} != slow\u{2028}\u{3000}",
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
    // Any other JS whitespace in the middle ends a bareword and is an unexpected char: a parse
    // error, fail-open for `when`, and a tokenizer error reads nothing. (Messages as JSON.)
    for (src, message, start, end) in [
        ("true\u{a0}&& true", "unexpected char '\u{a0}'", 4, 6),
        ("true\u{c}&&true", "unexpected char '\\f'", 4, 5),
        ("a\u{3000}b", "unexpected char '\u{3000}'", 1, 4),
        (
            "{steps.triage.json.severity}\u{a0}== high",
            "unexpected char '\u{a0}'",
            28,
            30,
        ),
    ] {
        let out = tfc(&["eval", "when", src, "--ctx", CTX, "--format", "json"]);
        assert_eq!(out.code, 0, "{out:?}");
        assert_eq!(
            out.stdout.trim_end(),
            format!(
                r#"{{"value":true,"error":{{"message":"{message}","start":{start},"end":{end}}},"reads":[]}}"#
            ),
            "{src:?}"
        );
    }
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
fn unparsable_conditions_report_the_reads_before_a_parser_error_only() {
    // A parser error keeps the reads resolved before it.
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
    // A tokenizer error anywhere: the whole expression is tokenized before any operand is
    // resolved, so nothing is read.
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
        r#"{"passed":false,"error":{"message":"unexpected char '='","start":53,"end":54},"reads":[]}"#
    );
    let out = tfc(&[
        "eval",
        "when",
        "{steps.lint.output} >== broken",
        "--ctx",
        CTX,
        "--format",
        "json",
    ]);
    assert_eq!(
        out.stdout.trim_end(),
        r#"{"value":true,"error":{"message":"unexpected char '='","start":22,"end":23},"reads":[]}"#
    );
    for src in [
        "{steps.lint.output} == 'open",
        "{steps.lint.output} == {args.mode",
    ] {
        let out = tfc(&["eval", "when", src, "--ctx", CTX, "--format", "json"]);
        assert!(out.stdout.contains(r#""reads":[]"#), "{src:?}: {out:?}");
    }
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
