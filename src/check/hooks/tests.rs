use crate::check::testing::check;

fn found(hooks: &str) -> Vec<(String, String)> {
    let text = format!(
        r#"{{"args": {{"to": {{"type": "string", "default": "me"}}}}, "hooks": {hooks}, "phases": [{{"id": "a", "task": "x"}}]}}"#
    );
    check(&text)
        .into_iter()
        .map(|d| (d.code.as_str().to_owned(), d.message))
        .collect()
}

#[test]
fn hook_heads_resolve_in_hooks() {
    let got = found(
        r#"{"onComplete": ["notify", "{run.id}", "{run.status} in {run.dir}", "{args.to}", "{run}"]}"#,
    );
    assert!(got.is_empty(), "{got:?}");
}

#[test]
fn a_placeholder_in_the_command_is_w0314() {
    let got = found(r#"{"onFail": ["{args.to}", "x"]}"#);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].0, "W0314");
}

#[test]
fn other_heads_never_resolve_in_a_hook() {
    for (arg, help) in [
        ("{steps.a.output}", "stdin"),
        ("{run.statuz}", "did you mean {run.status}?"),
        ("{ruN.id}", "did you mean {run.id}?"),
        ("{to}", "did you mean {args.to}?"),
        ("{item}", "placeholders are"),
    ] {
        let text = format!(
            r#"{{"args": {{"to": {{"type": "string"}}}}, "hooks": {{"onBlock": ["x", "{arg}"]}}, "phases": [{{"id": "a", "task": "x"}}]}}"#
        );
        let ds = check(&text);
        assert_eq!(ds.len(), 1, "{arg}: {ds:?}");
        assert_eq!(ds[0].code.as_str(), "W0207", "{arg}");
        assert!(
            ds[0].help.as_deref().unwrap_or("").contains(help),
            "{arg}: {:?}",
            ds[0].help
        );
    }
}

#[test]
fn run_heads_stay_unknown_outside_hooks() {
    let ds = check(r#"{"phases": [{"id": "a", "task": "x {run.id}"}]}"#);
    assert_eq!(ds.len(), 1, "{ds:?}");
    assert_eq!(ds[0].code.as_str(), "W0207");
}

#[test]
fn an_argument_only_a_hook_reads_is_no_unknown_argument() {
    use crate::check::{CheckOptions, check_source};
    use crate::flow::{Invocation, LowerOptions};
    let text = r#"{"args": {}, "hooks": {"onComplete": ["x", "{args.url}"]}, "phases": [{"id": "a", "task": "x"}]}"#;
    let mut inv = Invocation::default();
    inv.json.insert("url".into(), "http://h".into());
    let codes = |text: &str, inv: &Invocation| -> Vec<&'static str> {
        let checked = check_source(
            text,
            &LowerOptions::default(),
            &CheckOptions {
                args: Some(inv),
                ..CheckOptions::default()
            },
        );
        checked
            .diagnostics
            .iter()
            .map(|d| d.code.as_str())
            .collect()
    };
    let got = codes(text, &inv);
    assert!(!got.contains(&"E0504"), "{got:?}");
    let none = Invocation::default();
    let got = codes(
        r#"{"hooks": {"onComplete": ["x", "{args.url}"]}, "phases": [{"id": "a", "task": "x"}]}"#,
        &none,
    );
    assert_eq!(got, ["W0202"]);
}

#[test]
fn hooks_of_an_inline_def_are_w0315() {
    let got: Vec<(String, String)> = check(
        r#"{"phases": [{"id": "sub", "type": "flow", "def": {"hooks": {"onComplete": ["notify-send", "done"]}, "phases": [{"id": "a", "task": "x"}]}}]}"#,
    )
    .into_iter()
    .map(|d| (d.code.as_str().to_owned(), d.message))
    .collect();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].0, "W0315");
    assert!(got[0].1.contains("phase 'sub'"), "{got:?}");
}
