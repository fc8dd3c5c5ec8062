use std::collections::HashMap;
use std::path::PathBuf;

use crate::check::{CheckOptions, FlowLoader, check_source};
use crate::diag::Diagnostic;
use crate::flow::LowerOptions;

/// Saved flows from memory, under `.tfc/flows/` of the working directory `/p`.
struct Saved(HashMap<&'static str, &'static str>);

impl FlowLoader for Saved {
    fn load(&self, name: &str) -> Result<(PathBuf, String), Vec<PathBuf>> {
        let path = PathBuf::from(format!("/p/.tfc/flows/{name}.json"));
        match self.0.get(name) {
            Some(text) => Ok((path, (*text).to_owned())),
            None => Err(vec![path]),
        }
    }

    fn names(&self) -> Vec<String> {
        self.0.keys().map(|k| (*k).to_owned()).collect()
    }
}

const CHILD: &str = r#"{
  "args": {
    "version": {"type": "number", "required": true},
    "mode": {"type": "enum", "values": ["fast", "slow"], "default": "fast"}
  },
  "phases": [{"id": "rel", "task": "Release {args.version} in {args.mode} mode {args.extra}"}]
}"#;

fn check_with_saved(text: &str) -> Vec<Diagnostic> {
    let saved = Saved(HashMap::from([("child", CHILD)]));
    let opts = CheckOptions {
        loader: Some(&saved),
        cwd: Some(PathBuf::from("/p")),
        ..CheckOptions::default()
    };
    check_source(text, &LowerOptions::default(), &opts).diagnostics
}

/// A parent whose phase `go` calls the saved `child` with `with`, after an agent `t` with a
/// contract (booleans, literal sets, strings) to read from.
fn parent(with: &str) -> String {
    format!(
        r#"[{{"id": "t", "output": "json", "task": "Decide.", "expect": {{
             "required": ["ok", "level", "num", "s"],
             "properties": {{"ok": {{"type": "boolean"}}, "level": {{"enum": ["low", "high"]}},
                            "num": {{"enum": ["1", "2"]}}, "s": {{"type": "string"}}}}}}}},
           {{"id": "go", "type": "flow", "use": "child", "dependsOn": ["t"], "with": {with}}}]"#
    )
}

fn codes(diags: &[Diagnostic]) -> Vec<&'static str> {
    diags.iter().map(|d| d.code.as_str()).collect()
}

/// The issue's example: a value that does not convert, one outside the enum, an unknown key.
#[test]
fn literal_values_are_converted_as_the_run_converts_them() {
    let text = parent(r#"{"version": "abc", "mode": "medium", "colour": "red"}"#);
    let diags = check_with_saved(&text);
    assert_eq!(codes(&diags), ["E0502", "E0502", "E0504"], "{diags:#?}");
    let d = &diags[0];
    assert_eq!(
        d.message,
        "go: sub-flow 'child': Argument 'version' invocation must be a finite number, got 'abc'"
    );
    assert_eq!(&text[d.span.unwrap().range()], r#""abc""#);
    // The label points into the child's file, at the declaration.
    let label = &d.labels[0];
    let file = label.file.as_ref().expect("a label in the child's file");
    assert_eq!(file.name, ".tfc/flows/child.json");
    assert_eq!(&file.text[label.span.range()], r#""version""#);
    assert!(
        diags[1]
            .message
            .contains(r#"be one of "fast", "slow", got 'medium'"#)
    );
    let d = &diags[2];
    assert_eq!(
        d.message,
        "go: sub-flow 'child': unknown argument 'colour'; declared: version, mode"
    );
    assert_eq!(&text[d.span.unwrap().range()], r#""colour""#);
    // Strings convert by their text, numbers into strings are JS-formatted; a key the child
    // reads without declaring passes through.
    for ok in [
        r#"{"version": "5"}"#,
        r#"{"version": 5, "mode": "slow", "extra": 1}"#,
        r#"{"version": " 1e3 ", "mode": "fast"}"#,
    ] {
        assert_eq!(
            codes(&check_with_saved(&parent(ok))),
            Vec::<&str>::new(),
            "{ok}"
        );
    }
    let near = check_with_saved(&parent(r#"{"version": 1, "mdoe": "fast"}"#));
    assert!(
        near[0].message.contains("(did you mean 'mode'?)"),
        "{near:#?}"
    );
}

#[test]
fn a_missing_required_argument_is_e0503_on_with() {
    let text = parent("{}");
    let diags = check_with_saved(&text);
    assert_eq!(codes(&diags), ["E0503"]);
    let d = &diags[0];
    assert_eq!(
        d.message,
        "go: sub-flow 'child': Missing required argument 'version'"
    );
    assert_eq!(&text[d.span.unwrap().range()], r#""with""#);
    let label = &d.labels[0];
    assert_eq!(
        &label.file.as_ref().unwrap().text[label.span.range()],
        r#""version""#
    );
    // Without `with` at all, on the `use` value.
    let text = r#"[{"id": "go", "type": "flow", "use": "child"}]"#;
    let diags = check_with_saved(text);
    assert_eq!(codes(&diags), ["E0503"]);
    assert_eq!(&text[diags[0].span.unwrap().range()], r#""child""#);
}

/// A placeholder is reported only when no value of its type converts; `string` and `any`
/// never are.
#[test]
fn placeholder_values_are_checked_by_their_type() {
    let bad = |with: &str| -> Vec<&'static str> {
        let diags = check_with_saved(&parent(with));
        diags
            .iter()
            .filter(|d| d.code.as_str().starts_with("E05"))
            .map(|d| d.code.as_str())
            .collect()
    };
    assert_eq!(bad(r#"{"version": "{steps.t.json.ok}"}"#), ["E0502"]);
    assert_eq!(bad(r#"{"version": "{steps.t.json.level}"}"#), ["E0502"]);
    assert_eq!(
        bad(r#"{"version": 1, "mode": "{steps.t.json.level}"}"#),
        ["E0502"]
    );
    // The contract's object never converts to a number either.
    assert_eq!(bad(r#"{"version": "{steps.t.json}"}"#), ["E0502"]);
    for fine in [
        r#"{"version": "{steps.t.json.num}"}"#,
        r#"{"version": "{steps.t.json.s}"}"#,
        r#"{"version": "{steps.t.output}"}"#,
        r#"{"version": "v{steps.t.json.ok}"}"#,
    ] {
        assert_eq!(bad(fine), Vec::<&str>::new(), "{fine}");
    }
    let diags = check_with_saved(&parent(r#"{"version": "{steps.t.json.ok}"}"#));
    let d = diags.iter().find(|d| d.code.as_str() == "E0502").unwrap();
    assert_eq!(
        d.message,
        "go: sub-flow 'child': Argument 'version' invocation must be a number, but {steps.t.json.ok} is a boolean, which never converts"
    );
}

/// An object `def` is checked against its own ArgSpecs, with labels in the same file; a def
/// without `args` takes any argument.
#[test]
fn inline_defs_are_checked_against_their_own_args() {
    let text = r#"[{"id": "d", "type": "flow", "with": {"n": "many", "x": 1}, "def": {
        "args": {"n": {"type": "number", "minimum": 1}, "k": {"type": "boolean", "required": true}},
        "phases": [{"id": "a", "task": "{args.n} {args.k}"}]}}]"#;
    let diags = check_with_saved(text);
    let mut found = codes(&diags);
    found.sort_unstable();
    assert_eq!(found, ["E0502", "E0503", "E0504"], "{diags:#?}");
    for d in &diags {
        assert!(d.message.starts_with("d: sub-flow 'd-inline': "), "{d:?}");
        assert!(d.labels.iter().all(|l| l.file.is_none()), "{d:?}");
    }
    let e = diags.iter().find(|d| d.code.as_str() == "E0502").unwrap();
    assert_eq!(&text[e.labels[0].span.range()], r#""n""#);
    let open = r#"[{"id": "d", "type": "flow", "with": {"anything": ["a", 1]}, "def": {
        "phases": [{"id": "a", "task": "{args.anything}"}]}}]"#;
    assert_eq!(codes(&check_with_saved(open)), Vec::<&str>::new());
}

#[test]
fn unknown_saved_flows_suggest_the_nearest() {
    let text = r#"[{"id": "go", "type": "flow", "use": "chlid"}]"#;
    let diags = check_with_saved(text);
    assert_eq!(codes(&diags), ["E0305"]);
    assert_eq!(
        diags[0].message,
        "go: saved flow not found: 'chlid' (did you mean 'child'?)"
    );
    assert!(
        diags[0]
            .help
            .as_deref()
            .unwrap()
            .starts_with("use 'child', "),
        "{:?}",
        diags[0].help
    );
}
