//! Editing through the server: completion (what is offered, what its edit replaces) and
//! quick fixes (what they insert, in the document's own layout).

use serde_json::{Value as Json, json};

use super::*;

/// The items offered at the `|` of `marked` (opened as `untitled:c`).
fn complete_items(c: &mut Client, marked: &str) -> Vec<Json> {
    let uri = "untitled:c";
    let at = marked.find('|').unwrap();
    let text = marked.replacen('|', "", 1);
    c.texts.insert(uri.into(), text.clone());
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    );
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "json", "version": 1, "text": text}}),
    );
    let p = LineIndex::new(&text, c.encoding).position(&text, at);
    let items = c.ok(
        "textDocument/completion",
        json!({"textDocument": {"uri": uri}, "position": p}),
    );
    items.as_array().cloned().unwrap_or_default()
}

/// The labels offered at the `|` of `marked`, and the text after applying the one labelled
/// `pick` (if any).
fn complete(c: &mut Client, marked: &str, pick: Option<&str>) -> (Vec<String>, String) {
    let uri = "untitled:c";
    let items = complete_items(c, marked);
    let labels = items
        .iter()
        .map(|i| i["label"].as_str().unwrap().to_owned())
        .collect();
    let applied = match pick {
        Some(pick) => {
            let item = items
                .iter()
                .find(|i| i["label"] == pick)
                .unwrap_or_else(|| panic!("{pick} offered in {items:?}"));
            c.apply(uri, std::slice::from_ref(&item["textEdit"]))
        }
        None => c.texts[uri].clone(),
    };
    (labels, applied)
}

#[test]
fn completion_everywhere() {
    let mut c = Client::start();
    let (heads, applied) = complete(&mut c, &chain("x {|}"), Some("steps."));
    for h in ["steps.", "args.", "previous.output"] {
        assert!(heads.contains(&h.to_owned()), "{heads:?}");
    }
    assert!(applied.contains("\"x {steps.}\""), "{applied}");
    // Only transitive ancestors: never b itself, nor its descendants c and d.
    let (ids, _) = complete(&mut c, &chain("{steps.|}"), None);
    assert_eq!(ids, ["a"]);
    let (fields, applied) = complete(&mut c, &chain("{steps.a.|}"), Some("output"));
    assert_eq!(fields, ["output", "json"]);
    assert!(applied.contains("\"{steps.a.output}\""), "{applied}");
    // No brace added when one is there; a brace added when none is.
    let (_, applied) = complete(&mut c, &chain("{steps.a.ou|"), Some("output"));
    assert!(applied.contains("\"{steps.a.output}\""), "{applied}");
    let (props, applied) = complete(&mut c, &chain("{steps.a.json.|}"), Some("sev"));
    assert_eq!(props, ["sev", "n"]);
    assert!(applied.contains("\"{steps.a.json.sev}\""), "{applied}");
    let (args, applied) = complete(&mut c, &chain("{args.m|}"), Some("mode"));
    assert_eq!(args, ["mode"]);
    assert!(applied.contains("\"{args.mode}\""), "{applied}");
    // {item.} in a map over an array of objects.
    let (props, _) = complete(&mut c, &FLOW.replace("{item.path}", "{item.|}"), None);
    assert_eq!(props, ["path"]);
    // Phase ids inside dependsOn: the others, minus descendants; quoted when outside a string.
    let (ids, applied) = complete(
        &mut c,
        &chain("t").replace(r#""dependsOn": ["c"]"#, r#""dependsOn": ["|"]"#),
        Some("b"),
    );
    assert_eq!(ids, ["a", "b", "c"]);
    assert!(applied.contains(r#""dependsOn": ["b"]"#), "{applied}");
    let (_, applied) = complete(
        &mut c,
        &chain("t").replace(r#""dependsOn": ["c"]"#, r#""dependsOn": [|]"#),
        Some("c"),
    );
    assert!(applied.contains(r#""dependsOn": ["c"]"#), "{applied}");
    // Field names valid for the phase's type, none already written.
    let map = r#"[{"id": "m", "type": "map", "over": "x", "task": "t", "|"}]"#;
    let (fields, applied) = complete(&mut c, map, Some("as"));
    assert!(fields.contains(&"as".to_owned()) && fields.contains(&"dependsOn".to_owned()));
    assert!(!fields.contains(&"over".to_owned()) && !fields.contains(&"branches".to_owned()));
    assert!(applied.contains(r#""task": "t", "as"}"#), "{applied}");
    // An approval's deadline fields (SPEC §8.8); `onTimeout` is the approval's own.
    let approval = r#"[{"id": "ok", "type": "approval", "|"}]"#;
    let (fields, _) = complete(&mut c, approval, None);
    assert!(fields.contains(&"onTimeout".to_owned()) && fields.contains(&"timeout".to_owned()));
    let (fields, _) = complete(&mut c, map, None);
    assert!(!fields.contains(&"onTimeout".to_owned()), "{fields:?}");
    let (_, applied) = complete(&mut c, r#"[{"id": "m", |}]"#, Some("task"));
    assert!(applied.contains(r#"{"id": "m", "task": }"#), "{applied}");
    // `type` values.
    let (types, applied) = complete(&mut c, r#"[{"id": "m", "type": "ma|"}]"#, Some("map"));
    assert!(types.contains(&"tournament".to_owned()));
    assert!(applied.contains(r#""type": "map"}"#), "{applied}");
    let (_, applied) = complete(&mut c, r#"[{"id": "m", "type": |}]"#, Some("gate"));
    assert!(applied.contains(r#""type": "gate"}"#), "{applied}");
}

/// A flow whose phase `b` has the task `task`: `a` (with a JSON contract) ← b ← c ← d.
fn chain(task: &str) -> String {
    format!(
        r#"{{"args": {{"mode": {{"type": "string"}}}}, "phases": [
  {{"id": "a", "output": "json", "task": "t", "expect": {{"type": "object", "properties": {{"sev": {{"type": "string"}}, "n": {{"type": "number"}}}}}}}},
  {{"id": "b", "dependsOn": ["a"], "task": "{task}"}},
  {{"id": "c", "dependsOn": ["b"], "task": "t"}},
  {{"id": "d", "task": "t", "final": true, "dependsOn": ["c"]}}
]}}"#
    )
}

#[test]
fn completion_replaces_only_the_typed_prefix() {
    let mut c = Client::start();
    // Typed before an existing word: the word stays.
    let (_, applied) = complete(&mut c, &chain("Weigh {steps.a.ou|Risk now"), Some("output"));
    assert!(
        applied.contains(r#""Weigh {steps.a.output}Risk now""#),
        "{applied}"
    );
    let (_, applied) = complete(&mut c, &chain("Weigh {steps.a.json.s|Risk"), Some("sev"));
    assert!(
        applied.contains(r#""Weigh {steps.a.json.sevRisk""#),
        "{applied}"
    );
    // Inside a closed placeholder: only the prefix by default, no brace added.
    let items = complete_items(&mut c, &chain("{steps.a.ou|tput}"));
    let out = items.iter().find(|i| i["label"] == "output").unwrap();
    assert_eq!(c.slice("untitled:c", &out["textEdit"]["range"]), "ou");
    assert_eq!(out["textEdit"]["newText"], "output");
    // In a string value and a key: the prefix, not the rest of the string.
    let items = complete_items(&mut c, r#"[{"id": "m", "type": "ma|xx"}]"#);
    let map = items.iter().find(|i| i["label"] == "map").unwrap();
    assert_eq!(c.slice("untitled:c", &map["textEdit"]["range"]), "ma");
    let items = complete_items(&mut c, r#"[{"id": "m", "ta|sk": "t"}]"#);
    let task = items.iter().find(|i| i["label"] == "task").unwrap();
    assert_eq!(c.slice("untitled:c", &task["textEdit"]["range"]), "ta");

    // A client with insertReplaceSupport chooses: insert over the prefix, or replace the word
    // (the rest of the placeholder's segment; never the plain text after an open one).
    let mut c = Client::raw(Settings::default());
    c.ok(
        "initialize",
        json!({"capabilities": {"textDocument": {"completion": {"completionItem": {"insertReplaceSupport": true}}}}}),
    );
    c.notify("initialized", json!({}));
    let items = complete_items(&mut c, &chain("{steps.a.ou|tput.x}"));
    let out = items.iter().find(|i| i["label"] == "output").unwrap();
    assert_eq!(c.slice("untitled:c", &out["textEdit"]["insert"]), "ou");
    assert_eq!(c.slice("untitled:c", &out["textEdit"]["replace"]), "output");
    let items = complete_items(&mut c, &chain("{steps.a.ou|Risk"));
    let out = items.iter().find(|i| i["label"] == "output").unwrap();
    assert_eq!(c.slice("untitled:c", &out["textEdit"]["range"]), "ou");
    assert_eq!(out["textEdit"]["newText"], "output}");
    let items = complete_items(&mut c, r#"[{"id": "m", "type": "ma|xx"}]"#);
    let map = items.iter().find(|i| i["label"] == "map").unwrap();
    assert_eq!(c.slice("untitled:c", &map["textEdit"]["insert"]), "ma");
    assert_eq!(c.slice("untitled:c", &map["textEdit"]["replace"]), "maxx");
}

#[test]
fn completion_in_depends_on_skips_listed_ids() {
    let mut c = Client::start();
    let flow = chain("t").replace(r#""dependsOn": ["c"]"#, r#""dependsOn": ["c", "|"]"#);
    let (ids, _) = complete(&mut c, &flow, None);
    assert_eq!(ids, ["a", "b"]);
    // Listed after the cursor too; the entry being typed is not "listed".
    let flow = chain("t").replace(r#""dependsOn": ["c"]"#, r#""dependsOn": ["|", "a", "b"]"#);
    let (ids, applied) = complete(&mut c, &flow, Some("c"));
    assert_eq!(ids, ["c"]);
    assert!(
        applied.contains(r#""dependsOn": ["c", "a", "b"]"#),
        "{applied}"
    );
    let flow = chain("t").replace(r#""dependsOn": ["c"]"#, r#""dependsOn": ["a", "b|"]"#);
    let (ids, _) = complete(&mut c, &flow, None);
    assert_eq!(ids, ["b", "c"]);
    // `from` alike.
    let reduce = r#"[{"id": "x", "task": "t"}, {"id": "y", "task": "t"},
  {"id": "z", "type": "reduce", "from": ["x", "|"], "task": "t"}]"#;
    let (ids, _) = complete(&mut c, reduce, None);
    assert_eq!(ids, ["y"]);
}

#[test]
fn quick_fixes() {
    let mut c = Client::start();
    let uri = "untitled:q";
    let text = r#"{"phases": [
  {"id": "scan", "task": "t"},
  {"id": "fix", "tsk": "x", "task": "{steps.scna.output}", "dependsOn": ["scan"]},
  {"id": "late", "task": "{steps.fix.output} {steps.scan.output}", "final": true, "dependsOn": ["scan"]}
]}"#;
    let diags = c.open(uri, text);
    assert_eq!(codes(&diags), ["W0101", "E0003", "E0202", "E0201"]);
    let fix = |c: &mut Client, needle: &str, title: &str| {
        let all = actions(c, uri, needle);
        let a = all
            .iter()
            .find(|a| a["title"].as_str().unwrap().starts_with(title))
            .unwrap_or_else(|| panic!("{title} in {all:?}"));
        assert_eq!(a["kind"], "quickfix");
        c.apply(uri, a["edit"]["changes"][uri].as_array().unwrap())
    };
    assert!(
        fix(&mut c, "\"tsk\"", "Change to 'task'").contains(r#""id": "fix", "task": "x", "task""#)
    );
    assert!(
        fix(&mut c, "{steps.scna", "Change to {steps.scan.output}")
            .contains(r#""task": "{steps.scan.output}""#)
    );
    let added = fix(&mut c, "{steps.fix", "Add 'fix' to late's dependsOn");
    assert!(added.contains(r#""dependsOn": ["scan", "fix"]"#), "{added}");
    // The fixed text no longer has E0201.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": added}]}),
    );
    assert!(!codes(&c.diagnostics(uri, Some(2))).contains(&"E0201".to_owned()));
    // A warning: allow it in this flow.
    let w = r#"{"phases": [{"id": "a", "task": "t"}, {"id": "b", "task": "t", "dependsOn": ["a"]}, {"id": "c", "task": "t", "dependsOn": ["a"]}]}"#;
    let uri = "untitled:w";
    assert_eq!(codes(&c.open(uri, w)), ["W0101"]);
    let all = actions(&mut c, uri, "\"b\"");
    let a = all
        .iter()
        .find(|a| a["title"].as_str().unwrap().starts_with("Allow W0101"))
        .unwrap();
    let allowed = c.apply(uri, a["edit"]["changes"][uri].as_array().unwrap());
    assert!(
        allowed.starts_with(r#"{"lint": {"allow": ["W0101"]}, "phases""#),
        "{allowed}"
    );
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": allowed}]}),
    );
    assert_eq!(c.diagnostics(uri, Some(2)), Vec::<Json>::new());
}

#[test]
fn quick_fixes_follow_the_indentation() {
    let mut c = Client::start();
    // Pretty-printed with two spaces, four spaces, tabs (and CRLF line ends).
    for (n, (unit, eol)) in [("  ", "\n"), ("    ", "\n"), ("\t", "\r\n")]
        .into_iter()
        .enumerate()
    {
        let doc = |lines: &[(usize, &str)]| {
            lines
                .iter()
                .map(|(depth, l)| format!("{}{l}", unit.repeat(*depth)))
                .collect::<Vec<_>>()
                .join(eol)
        };
        let text = doc(&[
            (0, "{"),
            (1, r#""phases": ["#),
            (2, r#"{"id": "scan", "task": "t"},"#),
            (2, "{"),
            (3, r#""id": "late","#),
            (3, r#""task": "{steps.scan.output}""#),
            (2, "},"),
            (2, "{"),
            (3, r#""id": "more","#),
            (3, r#""final": true,"#),
            (3, r#""dependsOn": ["#),
            (4, r#""late""#),
            (3, "],"),
            (3, r#""task": "{steps.scan.output}""#),
            (2, "}"),
            (1, "]"),
            (0, "}"),
        ]);
        let uri = format!("untitled:indent{n}");
        let diags = c.open(&uri, &text);
        // `scan` has no dependents yet (W0101) until the fixes make it one.
        assert_eq!(codes(&diags), ["W0101", "E0201", "E0201"], "{diags:?}");
        let fix = |c: &mut Client, needle: &str, title: &str| {
            let all = actions(c, &uri, needle);
            let a = all
                .iter()
                .find(|a| a["title"].as_str().unwrap().starts_with(title))
                .unwrap_or_else(|| panic!("{title} in {all:?}"));
            c.apply(&uri, a["edit"]["changes"][&uri].as_array().unwrap())
        };
        // No dependsOn: a line of its own after the id, indented as the id.
        let late = fix(
            &mut c,
            "{steps.scan.output}\"",
            "Add 'scan' to late's dependsOn",
        );
        let want = doc(&[
            (3, r#""id": "late","#),
            (3, r#""dependsOn": ["scan"],"#),
            (3, r#""task": "{steps.scan.output}""#),
        ]);
        assert!(late.contains(&want), "{late:?}");
        // One entry a line: the new one on its own line, indented as the last.
        let at = text.rfind("{steps.scan.output}").unwrap();
        let p = LineIndex::new(&text, c.encoding).position(&text, at + 1);
        let all = c.ok(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": {"start": p, "end": p}, "context": {"diagnostics": []}}),
        );
        let a = all
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["title"] == "Add 'scan' to more's dependsOn")
            .unwrap_or_else(|| panic!("{all:?}"));
        let more = c.apply(&uri, a["edit"]["changes"][&uri].as_array().unwrap());
        let want = doc(&[
            (3, r#""dependsOn": ["#),
            (4, r#""late","#),
            (4, r#""scan""#),
            (3, "],"),
        ]);
        assert!(more.contains(&want), "{more:?}");
        // Both fixed: the flow checks clean.
        let late_edit = actions(&mut c, &uri, "{steps.scan.output}\"")
            .iter()
            .find(|a| a["title"] == "Add 'scan' to late's dependsOn")
            .unwrap()["edit"]["changes"][&uri][0]
            .clone();
        let both = c.apply(&uri, &[a["edit"]["changes"][&uri][0].clone(), late_edit]);
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": both}]}),
        );
        assert_eq!(c.diagnostics(&uri, Some(2)), Vec::<Json>::new(), "{both:?}");
    }
    // `lint.allow` added to a pretty-printed root: its own line, indented as the members.
    let w = "{\n    \"phases\": [{\"id\": \"a\", \"task\": \"t\"}, {\"id\": \"b\", \"task\": \"t\", \"dependsOn\": [\"a\"]}, {\"id\": \"c\", \"task\": \"t\", \"dependsOn\": [\"a\"]}]\n}";
    let uri = "untitled:indent-w";
    assert_eq!(codes(&c.open(uri, w)), ["W0101"]);
    let all = actions(&mut c, uri, "\"b\"");
    let a = all
        .iter()
        .find(|a| a["title"].as_str().unwrap().starts_with("Allow W0101"))
        .unwrap();
    let allowed = c.apply(uri, a["edit"]["changes"][uri].as_array().unwrap());
    assert!(
        allowed.starts_with("{\n    \"lint\": {\"allow\": [\"W0101\"]},\n    \"phases\": ["),
        "{allowed}"
    );
}

/// `hooks` (SPEC §8.10): its keys are completed inside it, it is completed among the flow's
/// fields, and its keys have hovers.
#[test]
fn hooks_keys_complete_and_hover() {
    let mut c = Client::start();
    let phases = r#""phases": [{"id": "a", "task": "t"}]"#;
    let (keys, applied) = complete(
        &mut c,
        &format!(r#"{{"hooks": {{"onFail": ["x"], "|"}}, {phases}}}"#),
        Some("onComplete"),
    );
    assert_eq!(keys, ["onComplete", "onPause", "onBlock", "timeout"]);
    assert!(
        applied.contains(r#""onFail": ["x"], "onComplete"}"#),
        "{applied}"
    );
    // Inside a hook's argument: `{run.…}` and the arguments, nothing of the phases.
    let hook = |arg: &str| {
        format!(
            r#"{{"args": {{"to": {{"type": "string"}}}}, "hooks": {{"onFail": ["notify", "{arg}"]}}, {phases}}}"#
        )
    };
    let (heads, _) = complete(&mut c, &hook("{|}"), None);
    assert_eq!(heads, ["run.", "args."]);
    let (fields, applied) = complete(&mut c, &hook("{run.st|"), Some("status"));
    assert_eq!(fields, ["id", "status", "dir"]);
    assert!(
        applied.contains(r#""notify", "{run.status}"]"#),
        "{applied}"
    );
    let (args, _) = complete(&mut c, &hook("x {args.|}"), None);
    assert_eq!(args, ["to"]);
    let (fields, _) = complete(&mut c, &format!(r#"{{{phases}, "|"}}"#), None);
    assert!(fields.contains(&"hooks".to_owned()), "{fields:?}");
    let uri = "untitled:hooks";
    let text = format!(
        r#"{{"hooks": {{"onFail": ["notify-send", "{{run.id}}"], "timeout": 5000}}, {phases}}}"#
    );
    assert_eq!(c.open(uri, &text), Vec::<Json>::new());
    let h = c.ok("textDocument/hover", c.at(uri, "\"onFail\"", 2));
    let v = h["contents"]["value"].as_str().unwrap();
    assert!(
        v.starts_with("`onFail`: argv run when the run fails"),
        "{v}"
    );
    let h = c.ok("textDocument/hover", c.at(uri, "\"hooks\"", 2));
    let v = h["contents"]["value"].as_str().unwrap();
    assert!(
        v.starts_with("`hooks`: commands run when the run ends"),
        "{v}"
    );
}
