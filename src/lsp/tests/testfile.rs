//! Test files (`*.test.json`) through the server: their diagnostics (their own, and their
//! flow's errors at `flow`), re-checked when the flow changes in the editor; completion,
//! hover and definition of node patterns, approvals, phase ids and expectations.

use serde_json::{Value as Json, json};

use super::*;

const REVIEW: &str = r#"{"name": "review", "phases": [
  {"id": "triage", "agent": "scout", "task": "Triage the pull request.\nBe brief.", "output": "json",
   "expect": {"type": "object", "required": ["severity"],
              "properties": {"severity": {"enum": ["low", "high"]}, "files": {"type": "array"}}}},
  {"id": "review", "type": "map", "over": "{steps.triage.json.files}", "task": "Review {item}",
   "dependsOn": ["triage"]},
  {"id": "fix", "type": "loop", "task": "Fix what the review found", "maxIterations": 3,
   "until": "{loop.iteration} >= 2", "dependsOn": ["review"]},
  {"id": "gate", "type": "gate", "task": "Good enough? VERDICT", "dependsOn": ["fix"]},
  {"id": "publish", "type": "approval", "task": "Ship it?", "dependsOn": ["gate"]},
  {"id": "sub", "type": "flow", "dependsOn": ["publish"], "final": true, "def": {"phases": [
    {"id": "inner", "task": "Announce it"},
    {"id": "ok", "type": "approval", "dependsOn": ["inner"]}]}}
]}"#;

/// A project holding `review.flow.json`; the URI of `name` in it.
fn with_flow(flow: &str, name: &str) -> (tempfile::TempDir, PathBuf, String) {
    let (dir, root) = project(&[("review.flow.json", flow)]);
    let uri = uri_of(&root.join(name));
    (dir, root, uri)
}

/// A test file naming `review.flow.json`, whose one test is `test`.
fn test_file(test: &str) -> String {
    format!("{{\"flow\": \"review.flow.json\", \"tests\": [\n{test}\n]}}")
}

/// Wait for a publication of `uri` newer than the `seen`-th.
fn next_diagnostics(c: &mut Client, uri: &str, seen: usize) -> Vec<Json> {
    loop {
        let of_uri: Vec<&Vec<Json>> = c
            .published
            .iter()
            .filter(|(u, _, _)| u == uri)
            .map(|(_, _, d)| d)
            .collect();
        if of_uri.len() > seen {
            return of_uri[seen].clone();
        }
        c.recv();
    }
}

fn published_count(c: &Client, uri: &str) -> usize {
    c.published.iter().filter(|(u, _, _)| u == uri).count()
}

#[test]
fn a_test_files_own_problems_and_its_flows_errors() {
    let (_dir, root, uri) = with_flow(REVIEW, "review.test.json");
    let mut c = Client::start();
    let text = test_file(
        r#"{"name": "t", "answers": {"traige": "x", "review@1": "y"},
            "expect": {"phases": {"triage": {"verdict": "pass"}}, "ran": ["gat"]}}"#,
    );
    let diags = c.open(&uri, &text);
    assert_eq!(codes(&diags), ["T0005", "T0006", "T0008", "T0005"]);
    assert_eq!(c.slice(&uri, &diags[0]["range"]), "\"traige\"");
    assert!(
        diags[0]["message"]
            .as_str()
            .unwrap()
            .ends_with("help: did you mean 'triage'?"),
        "{diags:?}"
    );
    assert_eq!(c.slice(&uri, &diags[3]["range"]), "\"gat\"");
    // A warning keeps its severity.
    let text = test_file(r#"{"name": "t", "answers": {"triage": {"json": {"files": []}}}}"#);
    let warned = uri_of(&root.join("warned.test.json"));
    let diags = c.open(&warned, &text);
    assert_eq!(codes(&diags), ["T0502"]);
    assert_eq!(diags[0]["severity"], 2);
    // No "allow in this flow" fix in a test file.
    let p = c.pos(&warned, "{\"json\"", 1);
    let actions = c.ok(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": warned}, "range": {"start": p, "end": p}, "context": {"diagnostics": []}}),
    );
    assert_eq!(actions, json!([]));

    // The flow's errors, at the `flow` value, pointing into the flow's file.
    let broken = REVIEW.replace("Review {item}", "Review {steps.triag.output}");
    let (_dir, root, uri) = with_flow(&broken, "broken.test.json");
    let text = test_file(r#"{"name": "t", "answers": {"*": "x"}}"#);
    let diags = c.open(&uri, &text);
    assert_eq!(codes(&diags), ["E0202"], "{diags:?}");
    assert_eq!(c.slice(&uri, &diags[0]["range"]), "\"review.flow.json\"");
    let message = diags[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("the flow 'review.flow.json' has an error: "),
        "{message}"
    );
    let related = &diags[0]["relatedInformation"][0]["location"];
    assert_eq!(related["uri"], uri_of(&root.join("review.flow.json")));
    let line = broken
        .lines()
        .position(|l| l.contains("{steps.triag.output}"));
    assert_eq!(related["range"]["start"]["line"], line.unwrap());
    // The fix of a flow error is made in the flow: no quick fix here.
    let p = c.pos(&uri, "review.flow.json", 1);
    let actions = c.ok(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": {"start": p, "end": p}, "context": {"diagnostics": []}}),
    );
    assert_eq!(actions, json!([]));

    // While the flow is being fixed, its phases are still offered and shown.
    let p = c.pos(&uri, "\"*\"", 1);
    let items = c.ok(
        "textDocument/completion",
        json!({"textDocument": {"uri": uri}, "position": p}),
    );
    let labels: Vec<&str> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels.len(), 12, "{labels:?}");
    assert!(labels.contains(&"sub/inner"), "{labels:?}");
    let h = c.ok("textDocument/hover", c.at(&uri, "\"*\"", 1));
    assert!(
        h["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("every call")
    );

    // A flow that is not there.
    let missing = uri_of(&root.join("missing.test.json"));
    let diags = c.open(
        &missing,
        r#"{"flow": "nope.flow.json", "tests": [{"name": "t"}]}"#,
    );
    assert_eq!(codes(&diags), ["T0003"]);
    assert_eq!(c.shutdown(), Ended::Exit);
}

#[test]
fn a_test_file_is_rechecked_when_its_flow_changes_in_the_editor() {
    let (_dir, root, uri) = with_flow(REVIEW, "review.test.json");
    let mut c = Client::start();
    let text = test_file(r#"{"name": "t", "answers": {"extra": "x"}}"#);
    assert_eq!(codes(&c.open(&uri, &text)), ["T0005"]);
    // The flow opened in the editor with a phase `extra` (not saved): the test file fits it.
    let flow_uri = uri_of(&root.join("review.flow.json"));
    let edited = REVIEW.replace(
        r#"{"id": "publish""#,
        r#"{"id": "extra", "task": "x"}, {"id": "publish""#,
    );
    let seen = published_count(&c, &uri);
    // (`extra` is terminal: a warning of the flow, not the test file's.)
    assert_eq!(codes(&c.open(&flow_uri, &edited)), ["W0101"]);
    assert_eq!(next_diagnostics(&mut c, &uri, seen), Vec::<Json>::new());
    // An edit that breaks the flow: the test file shows the error at `flow`.
    let seen = published_count(&c, &uri);
    let broken = edited.replace("Review {item}", "Review {steps.nope.output}");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": flow_uri, "version": 2}, "contentChanges": [{"text": broken}]}),
    );
    assert_eq!(
        codes(&c.diagnostics(&flow_uri, Some(2))),
        ["E0202", "W0101"]
    );
    assert_eq!(codes(&next_diagnostics(&mut c, &uri, seen)), ["E0202"]);
    // Closed without saving: the file on disk, without `extra`, holds again.
    let seen = published_count(&c, &uri);
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": flow_uri}}),
    );
    assert_eq!(codes(&next_diagnostics(&mut c, &uri, seen)), ["T0005"]);
}

/// The labels offered at the `|` of `marked` (a test file beside the flow), and the text after
/// applying the one labelled `pick`.
fn offered(c: &mut Client, uri: &str, marked: &str, pick: Option<&str>) -> (Vec<String>, String) {
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
    let items = items.as_array().cloned().unwrap_or_default();
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
        None => text,
    };
    (labels, applied)
}

#[test]
fn completion_of_patterns_approvals_ids_and_expectations() {
    let (_dir, _root, uri) = with_flow(REVIEW, "review.test.json");
    let mut c = Client::start();
    let mut labels = |marked: &str| offered(&mut c, &uri, &test_file(marked), None).0;
    // `answers`: every node pattern valid for its phase's kind; approvals make no call.
    let answers = labels(r#"{"name": "t", "answers": {"gate": "x", "|"}}"#);
    assert_eq!(
        answers,
        [
            "triage",
            "review",
            "review#*",
            "review#0",
            "fix",
            "fix@*",
            "fix@1",
            "sub",
            "sub/*",
            "sub/inner",
            "*"
        ]
    );
    // The same in `expect.prompts`.
    let prompts = labels(r#"{"name": "t", "expect": {"prompts": {"|": "x"}}}"#);
    assert!(prompts.contains(&"review#0".to_owned()) && prompts.contains(&"gate".to_owned()));
    assert_eq!(
        labels(r#"{"name": "t", "approvals": {"|"}}"#),
        ["publish", "sub/ok"]
    );
    let ids = ["triage", "review", "fix", "gate", "publish", "sub"];
    assert_eq!(labels(r#"{"name": "t", "expect": {"phases": {|}}}"#), ids);
    assert_eq!(
        labels(r#"{"name": "t", "expect": {"ran": ["triage", |, "fix"]}}"#),
        ["review", "gate", "publish", "sub"]
    );
    assert_eq!(
        labels(r#"{"name": "t", "expect": {"skipped": ["|"]}}"#),
        ids
    );
    assert_eq!(
        labels(r#"{"name": "t", "expect": {"outputPhase": |}}"#),
        ids
    );
    // The expectations a phase's kind can meet.
    let gate = labels(r#"{"name": "t", "expect": {"phases": {"gate": {"status": "done", |}}}}"#);
    assert_eq!(
        gate,
        [
            "output",
            "json",
            "verdict",
            "attempts",
            "cacheHit",
            "skipReason"
        ]
    );
    let fix = labels(r#"{"name": "t", "expect": {"phases": {"fix": {"|"}}}}"#);
    assert!(fix.contains(&"iterations".to_owned()) && !fix.contains(&"verdict".to_owned()));
    let map = labels(r#"{"name": "t", "expect": {"phases": {"review": {"|"}}}}"#);
    assert!(map.contains(&"items".to_owned()) && !map.contains(&"iterations".to_owned()));
    // Nowhere else (an answer's value, a test's own keys).
    assert!(labels(r#"{"name": "t", "answers": {"triage": "|"}}"#).is_empty());
    // What an item inserts: a whole member where no quote was typed, the id inside quotes.
    let (_, applied) = offered(
        &mut c,
        &uri,
        &test_file(r#"{"name": "t", "answers": {|}}"#),
        Some("fix@1"),
    );
    assert!(applied.contains(r#""answers": {"fix@1": }"#), "{applied}");
    let (_, applied) = offered(
        &mut c,
        &uri,
        &test_file(r#"{"name": "t", "answers": {"rev|"}}"#),
        Some("review#0"),
    );
    assert!(applied.contains(r#""answers": {"review#0"}"#), "{applied}");
    let (_, applied) = offered(
        &mut c,
        &uri,
        &test_file(r#"{"name": "t", "expect": {"failed": [|]}}"#),
        Some("gate"),
    );
    assert!(applied.contains(r#""failed": ["gate"]"#), "{applied}");
}

#[test]
fn hover_and_definition_of_patterns() {
    let (_dir, root, uri) = with_flow(REVIEW, "review.test.json");
    let mut c = Client::start();
    let text = test_file(
        r#"{"name": "t", "answers": {"triage": {"json": {"severity": "low"}}, "review#0": "r",
                                    "sub/inner": "i", "*": "x"},
            "approvals": {"publish": "approve"},
            "expect": {"ran": ["gate"], "phases": {"fix": {"iterations": 1}}}}"#,
    );
    assert_eq!(c.open(&uri, &text), Vec::<Json>::new());
    let mut hover = |needle: &str| -> (String, String) {
        let h = c.ok("textDocument/hover", c.at(&uri, needle, 2));
        let v = h["contents"]["value"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        (v, c.slice(&uri, &h["range"]))
    };
    let (v, range) = hover("\"triage\": {");
    assert_eq!(range, "triage");
    assert_eq!(
        v,
        "**phase `triage`** (agent)\n\nagent: `scout`\n\ncontract: `{\"type\": \"object\", \"required\": [\"severity\"], \"properties\": {\"severity\": {\"enum\": [\"low\", \"high\"]}, \"files\": {\"type\": \"array\"}}}`\n\ntask: Triage the pull request."
    );
    let (v, range) = hover("\"review#0\"");
    assert_eq!(range, "review#0");
    assert_eq!(
        v,
        "**phase `review`** (map)\n\nagent: `default`\n\ntask: Review {item}"
    );
    assert!(
        hover("\"sub/inner\"")
            .0
            .starts_with("**phase `inner`** (agent)")
    );
    assert!(
        hover("\"*\"")
            .0
            .contains("every call no other pattern matches")
    );
    assert!(
        hover("\"publish\"")
            .0
            .starts_with("**phase `publish`** (approval)\n\ntask: Ship it?")
    );
    assert!(hover("[\"gate\"]").0.starts_with("**phase `gate`** (gate)"));
    assert!(hover("\"fix\": {").0.starts_with("**phase `fix`** (loop)"));

    // Definition: `flow` to the flow's file, a pattern to the phase's id in it.
    let flow_uri = uri_of(&root.join("review.flow.json"));
    let d = c.ok("textDocument/definition", c.at(&uri, "review.flow.json", 3));
    assert_eq!(d["uri"], flow_uri);
    let d = c.ok("textDocument/definition", c.at(&uri, "\"review#0\"", 2));
    assert_eq!(d["uri"], flow_uri);
    let line = REVIEW
        .lines()
        .position(|l| l.contains(r#"{"id": "review""#))
        .unwrap();
    assert_eq!(d["range"]["start"]["line"], line);
    assert_eq!(d["range"]["start"]["character"], 10);
    assert_eq!(d["range"]["end"]["character"], 16);
    // Nothing on an answer's text.
    let h = c.ok("textDocument/hover", c.at(&uri, "\"r\"", 1));
    assert_eq!(h, Json::Null);
}
