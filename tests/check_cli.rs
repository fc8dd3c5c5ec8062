//! `tfc check` end to end: the example flows check clean, exit codes, both output formats.

mod common;

use common::{shown_codes, tfc};

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
            .contains("[E0000] Error: cannot read flow 'no-such-flow.json': "),
        "{}",
        out.stderr
    );
    // The JSON report names the file and the reason, and is not ok (SPEC §7.5).
    let out = tfc(&["check", "--format", "json", "no-such-flow.json"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["ok"], false);
    let d = &report["diagnostics"][0];
    assert_eq!(report["diagnostics"].as_array().map(Vec::len), Some(1));
    assert_eq!(d["code"], "E0000");
    assert_eq!(d["name"], "cannot-read");
    assert_eq!(d["file"], "no-such-flow.json");
    assert!(d["message"].as_str().unwrap().contains("os error"), "{d}");
    // A directory is not read (nor is a pipe: nothing blocks), and says so.
    let out = tfc(&["check", "--format", "json", "examples"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let d = &report["diagnostics"][0];
    assert_eq!(
        d["message"],
        "cannot read flow 'examples': it is a directory"
    );
    assert_eq!(d["help"], "name a flow file in it, e.g. examples/flow.json");
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

#[test]
fn thousands_of_problems_on_one_long_line_render_in_bounded_output() {
    // 4,000 unknown keys on one 40 KB line: every report used to repeat the whole line
    // (~320 MB of text). Now at most 50 reports, each cut around its span.
    let dir = common::scratch("check-many-on-one-line");
    let keys: Vec<String> = (0..4000).map(|i| format!("\"k{i:04}\":1")).collect();
    let text = format!(
        "{{\"phases\":[{{\"id\":\"a\",\"task\":\"x\",{}}}]}}\n",
        keys.join(",")
    );
    let path = dir.join("big.json");
    std::fs::write(&path, text).unwrap();
    let path = path.to_str().unwrap();
    let out = tfc(&["check", "--color", "never", path]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.len() < 64 * 1024,
        "{} bytes of output",
        out.stderr.len()
    );
    assert_eq!(out.stderr.matches("[E0003]").count(), 50);
    // The source line of each report is cut to a window around its key.
    let shown: Vec<&str> = out.stderr.lines().filter(|l| l.contains("\"k0")).collect();
    assert_eq!(shown.len(), 50);
    assert!(shown.iter().all(|l| l.chars().count() < 200), "{shown:?}");
    let more = format!(
        "… and 3950 more errors in {path} (not shown; `tfc check --format json` lists them all)\n"
    );
    assert!(out.stderr.contains(&more), "{}", out.stderr);
    assert!(
        out.stderr
            .ends_with("failed: 4000 errors, 0 warnings in 1 file\n")
    );
    let json = tfc(&["check", "--format", "json", path]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(report["diagnostics"].as_array().unwrap().len(), 4000);
}

const TWO_WARNINGS: &str = r#"{"phases": [
    {"id": "a", "task": "x"},
    {"id": "orphan", "dependsOn": ["a"], "task": "y"},
    {"id": "b", "dependsOn": ["a"], "when": "{steps.a.output} == = yes", "final": true, "task": "z"}
]}"#;

#[test]
fn allowed_warnings_are_not_reported() {
    let dir = common::scratch("check-allow");
    let path = dir.join("flow.json");
    std::fs::write(&path, TWO_WARNINGS).unwrap();
    let path = path.to_str().unwrap();
    let check = |extra: &[&str]| {
        let mut args = vec!["check", "--color", "never"];
        args.extend_from_slice(extra);
        args.push(path);
        tfc(&args)
    };
    let all = check(&[]);
    assert_eq!(
        shown_codes(&all.stderr),
        ["W0101", "W0201"],
        "{}",
        all.stderr
    );
    // By code or name, repeatable, in both formats.
    let one = check(&["--allow", "dead-end"]);
    assert_eq!(shown_codes(&one.stderr), ["W0201"], "{}", one.stderr);
    assert!(one.stderr.ends_with("ok: 0 errors, 1 warning in 1 file\n"));
    let none = check(&["--allow", "W0101", "--allow", "w0201", "--format", "json"]);
    assert_eq!(none.stdout.trim(), r#"{"ok":true,"diagnostics":[]}"#);
    // Strict mode promotes W0201, but not once it is allowed.
    assert_eq!(check(&["--strict"]).code, 1);
    let strict = check(&["--strict", "--allow", "condition-parse-error"]);
    assert_eq!(strict.code, 0, "{}", strict.stderr);
    assert_eq!(shown_codes(&strict.stderr), ["W0101"]);
}

#[test]
fn allow_takes_only_warnings() {
    let flow = "tests/check/W0101-dead-end.json";
    let out = tfc(&["check", "--allow", "W0120", flow]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "error: --allow W0120: 'W0120' is not a warning code or name; did you mean 'W0102'?\n"
    );
    let out = tfc(&["check", "--allow", "E0103", flow]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("E0103 (unknown-dependency) is an error: errors cannot be allowed"),
        "{}",
        out.stderr
    );
}

/// `--types`: every placeholder with its inferred type (SPEC §7.5 spelling), its span into the
/// file and its declaration; in text format one line per placeholder on stdout.
#[test]
fn types_are_reported_with_spans_and_declarations() {
    let flow = "tests/check/types-well-typed.json";
    let text = std::fs::read_to_string(common::root().join(flow)).expect("flow");
    let out = tfc(&["check", "--format", "json", "--types", flow]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON report");
    let types = report["types"].as_array().expect("types list");
    let find = |path: &str| {
        types
            .iter()
            .find(|t| t["path"] == path)
            .unwrap_or_else(|| panic!("no type for {path}: {report}"))
    };
    let expected = [
        ("steps.triage.json.severity", "enum low|medium|high"),
        ("args.mode", "enum fast|slow"),
        ("args.depth", "number"),
        ("steps.triage.json.score", "number | missing"),
        ("steps.triage.json.files", "array<object{path, lines}>"),
        ("steps.triage.json.files.length", "number"),
        ("item.path", "string"),
        ("item.lines", "integer | missing"),
        ("steps.triage.output", "string"),
        ("args.note.anything", "any"),
    ];
    for (path, ty) in expected {
        let t = find(path);
        assert_eq!(t["type"], ty, "{path}");
        let (start, end) = (
            t["span"]["start"].as_u64().unwrap() as usize,
            t["span"]["end"].as_u64().unwrap() as usize,
        );
        assert_eq!(&text[start..end], format!("{{{path}}}"), "span of {path}");
    }
    let decl = &find("item.path")["declaration"];
    let at = decl["start"].as_u64().unwrap() as usize..decl["end"].as_u64().unwrap() as usize;
    assert_eq!(
        &text[at], "\"path\"",
        "item.path is declared by the contract's key"
    );
    // Without --types the report has no types list.
    let out = tfc(&["check", "--format", "json", flow]);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON report");
    assert!(report.get("types").is_none());
    // Text format: one line per placeholder.
    let out = tfc(&["check", "--types", "--color", "never", flow]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .lines()
            .any(|l| l.ends_with(": {steps.triage.json.severity}: enum low|medium|high")),
        "{}",
        out.stdout
    );
    assert_eq!(out.stdout.lines().count(), types.len());
}

/// W0207 is the check's side of the run's `unresolved refs … left intact` warning (SPEC §7.2):
/// on a flow where every other ref resolves, `tfc check` reports exactly the refs a dry run
/// leaves intact, phase by phase — and JSON-looking text is neither's business.
#[test]
fn unknown_placeholders_are_the_refs_the_run_leaves_intact() {
    let flow = r#"{"name": "agree", "args": {"x": {"type": "string"}, "items": {"type": "string"}},
 "phases": [
  {"id": "a", "task": "A {args.x} {answer} {0} {-x} {previous} {previous.outptu} {\"k\": 1} { args.x } {answer}"},
  {"id": "b", "dependsOn": ["a"], "task": "B {steps.a.output} {previous.output} {a} {prevous.output} {args.x} {args}"},
  {"id": "m", "type": "map", "dependsOn": ["b"], "over": "{args.items}", "as": "n",
   "task": "M {n} {answer} {previous.output}", "when": "{nope} != 1"},
  {"id": "l", "type": "loop", "reflexion": true, "dependsOn": ["m"], "maxIterations": 1,
   "until": "{loop.iteration} >= 1", "task": "L {loop.iteration} {reflexion} {lop.iteration}"}
 ]}"#;
    let dir = common::scratch("check-run-agree");
    std::fs::create_dir_all(dir.join(".tfc")).expect("create .tfc");
    std::fs::write(dir.join("flow.json"), flow).expect("write flow");

    let check = common::tfc_in(Some(&dir), &["check", "--format", "json", "flow.json"], b"");
    let report: serde_json::Value = serde_json::from_str(&check.stdout).expect("JSON report");
    let mut checked: Vec<(String, String)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "W0207")
        .map(|d| {
            let message = d["message"].as_str().unwrap();
            let (_, refs) = message.split_once(": unresolved refs in task: ").unwrap();
            let (one, _) = refs.split_once(" — ").unwrap();
            (d["phase"].as_str().unwrap().to_owned(), one.to_owned())
        })
        .collect();
    // Nothing else to say about this flow (W0109: the loop is behind the map's guard).
    let others: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["code"].as_str())
        .filter(|c| *c != "W0207" && *c != "W0109")
        .collect();
    assert!(others.is_empty(), "{}", check.stdout);

    let run = common::tfc_in(
        Some(&dir),
        &[
            "run",
            "flow.json",
            "x=1",
            "items=[1,2]",
            "--dry-run",
            "--format",
            "json",
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{run:?}");
    let record: serde_json::Value = serde_json::from_str(&run.stdout).expect("a run record");
    let mut left: Vec<(String, String)> = Vec::new();
    for (id, phase) in record["phases"].as_object().unwrap() {
        assert_eq!(phase["status"], "done", "{id}: {phase}");
        for w in phase["warnings"].as_array().into_iter().flatten() {
            let w = w.as_str().unwrap();
            let Some(refs) = w.strip_prefix("unresolved refs in task: ") else {
                continue;
            };
            let (refs, _) = refs.split_once(" — ").unwrap();
            left.extend(refs.split(", ").map(|r| (id.clone(), r.to_owned())));
        }
    }
    checked.sort();
    left.sort();
    assert_eq!(checked, left);
    assert_eq!(checked.len(), 9, "{checked:?}");
}
