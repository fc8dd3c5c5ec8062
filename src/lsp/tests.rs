//! The server in process, through `Connection::memory()`: every feature, over the protocol.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use serde_json::{Value as Json, json};

use super::position::{Encoding, LineIndex};
use super::{Ended, Settings, serve};

mod editing;
mod testfile;

const FLOW: &str = r#"{
  "name": "review",
  "args": {"repo": {"type": "string", "description": "the repository"}},
  "phases": [
    {"id": "scan", "output": "json", "task": "Scan {args.repo}: naïve 😀 check",
     "expect": {"type": "object", "required": ["severity"], "properties": {
       "severity": {"enum": ["low", "high"]},
       "files": {"type": "array", "items": {"type": "object", "properties": {"path": {"type": "string"}}}}}}},
    {"id": "each", "type": "map", "dependsOn": ["scan"], "over": "{steps.scan.json.files}",
     "task": "Review {item.path}"},
    {"id": "sum", "type": "reduce", "from": ["each"], "final": true,
     "task": "Sum {steps.scan.json.severity} of {steps.each.output}"}
  ]
}"#;

struct Client {
    conn: Connection,
    server: Option<JoinHandle<Ended>>,
    next: i32,
    /// Every publishDiagnostics received, in order: (uri, version, diagnostics).
    published: Vec<(String, Option<i64>, Vec<Json>)>,
    /// Every window/showMessage received: (type, message).
    messages: Vec<(i64, String)>,
    texts: HashMap<String, String>,
    encoding: Encoding,
}

impl Client {
    /// A server in a thread, not yet initialized.
    fn raw(settings: Settings) -> Client {
        let (server, client) = Connection::memory();
        let handle = std::thread::spawn(move || serve(&server, settings));
        Client {
            conn: client,
            server: Some(handle),
            next: 0,
            published: Vec::new(),
            messages: Vec::new(),
            texts: HashMap::new(),
            encoding: Encoding::Utf16,
        }
    }

    fn start_with(encodings: &[&str], settings: Settings) -> Client {
        let mut c = Client::raw(settings);
        let r = c.ok(
            "initialize",
            json!({"capabilities": {"general": {"positionEncodings": encodings}}}),
        );
        let enc = r["capabilities"]["positionEncoding"].clone();
        c.encoding = if enc == "utf-8" {
            Encoding::Utf8
        } else {
            Encoding::Utf16
        };
        c.notify("initialized", json!({}));
        c
    }

    fn start() -> Client {
        Client::start_with(&[], Settings::default())
    }

    fn notify(&self, method: &str, params: Json) {
        let n = Notification::new(method.to_owned(), params);
        self.conn.sender.send(n.into()).unwrap();
    }

    fn recv(&mut self) -> Message {
        let m = self
            .conn
            .receiver
            .recv_timeout(Duration::from_secs(30))
            .expect("a message from the server");
        if let Message::Notification(n) = &m
            && n.method == "textDocument/publishDiagnostics"
        {
            let p = &n.params;
            self.published.push((
                p["uri"].as_str().unwrap().to_owned(),
                p["version"].as_i64(),
                p["diagnostics"].as_array().unwrap().clone(),
            ));
        }
        if let Message::Notification(n) = &m
            && n.method == "window/showMessage"
        {
            let p = &n.params;
            self.messages.push((
                p["type"].as_i64().unwrap(),
                p["message"].as_str().unwrap().to_owned(),
            ));
        }
        m
    }

    fn request(&mut self, method: &str, params: Json) -> Response {
        self.next += 1;
        let id = RequestId::from(self.next);
        let req = Request::new(id.clone(), method.to_owned(), params);
        self.conn.sender.send(req.into()).unwrap();
        loop {
            if let Message::Response(r) = self.recv()
                && r.id == id
            {
                return r;
            }
        }
    }

    fn ok(&mut self, method: &str, params: Json) -> Json {
        let r = self.request(method, params);
        match r.response_result {
            Ok(v) => v,
            Err(e) => panic!("{method}: {e:?}"),
        }
    }

    fn open(&mut self, uri: &str, text: &str) -> Vec<Json> {
        self.texts.insert(uri.to_owned(), text.to_owned());
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "json", "version": 1, "text": text}}),
        );
        self.diagnostics(uri, Some(1))
    }

    /// Wait for the diagnostics of `uri` at `version`.
    fn diagnostics(&mut self, uri: &str, version: Option<i64>) -> Vec<Json> {
        loop {
            if let Some((_, _, d)) = self
                .published
                .iter()
                .rev()
                .find(|(u, v, _)| u == uri && *v == version)
            {
                return d.clone();
            }
            self.recv();
        }
    }

    /// The LSP position of the `nth` occurrence of `needle` in `uri`'s text, plus `delta`
    /// bytes.
    fn pos(&self, uri: &str, needle: &str, delta: usize) -> Json {
        let text = &self.texts[uri];
        let at = text
            .find(needle)
            .unwrap_or_else(|| panic!("{needle} in text"))
            + delta;
        let p = LineIndex::new(text, self.encoding).position(text, at);
        json!({"line": p.line, "character": p.character})
    }

    fn at(&self, uri: &str, needle: &str, delta: usize) -> Json {
        json!({"textDocument": {"uri": uri}, "position": self.pos(uri, needle, delta)})
    }

    /// The text of `uri` at an LSP range.
    fn slice(&self, uri: &str, range: &Json) -> String {
        let text = &self.texts[uri];
        let span = LineIndex::new(text, self.encoding)
            .span(text, serde_json::from_value(range.clone()).unwrap());
        text[span.range()].to_owned()
    }

    /// `uri`'s text with `edits` (LSP TextEdits) applied.
    fn apply(&self, uri: &str, edits: &[Json]) -> String {
        let mut text = self.texts[uri].clone();
        let idx = LineIndex::new(&text, self.encoding);
        let mut spans: Vec<(crate::source::Span, String)> = edits
            .iter()
            .map(|e| {
                let r = serde_json::from_value(e["range"].clone()).unwrap();
                (
                    idx.span(&text, r),
                    e["newText"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        spans.sort_by_key(|(s, _)| std::cmp::Reverse(s.start));
        for (s, t) in spans {
            text.replace_range(s.range(), &t);
        }
        text
    }

    fn shutdown(mut self) -> Ended {
        let r = self.request("shutdown", Json::Null);
        assert!(r.response_result.is_ok());
        self.notify("exit", Json::Null);
        self.server.take().unwrap().join().unwrap()
    }
}

/// A project folder with `.tfc/flows/` and the URI of `name` in it.
fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".tfc/flows")).unwrap();
    for (name, text) in files {
        std::fs::write(root.join(name), text).unwrap();
    }
    (dir, root)
}

fn uri_of(path: &Path) -> String {
    super::uri::from_path(path).unwrap().as_str().to_owned()
}

fn codes(diags: &[Json]) -> Vec<String> {
    diags
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn diagnostics_are_what_tfc_check_reports() {
    let text = r#"{"phases": [
  {"id": "a", "task": "naïve 😀 {steps.b.output}"},
  {"id": "b", "task": "x", "dependsOn": ["a"], "tsk": 1}
]}"#;
    let (_dir, root) = project(&[("f.flow.json", text)]);
    let path = root.join("f.flow.json");
    let mut c = Client::start();
    let uri = uri_of(&path);
    let diags = c.open(&uri, text);
    // The same check as `tfc check f.flow.json` in the project.
    let project = super::analysis::Project::of(Some(&path), &root);
    let expected = super::analysis::Analysis::new(text, &project, &Settings::default());
    assert!(!expected.diagnostics.is_empty());
    assert_eq!(
        codes(&diags),
        expected
            .diagnostics
            .iter()
            .map(|d| d.code.as_str())
            .collect::<Vec<_>>()
    );
    for (d, e) in diags.iter().zip(&expected.diagnostics) {
        assert_eq!(d["source"], "tfc");
        assert!(d["message"].as_str().unwrap().starts_with(&e.message));
        if let Some(h) = &e.help {
            assert!(
                d["message"]
                    .as_str()
                    .unwrap()
                    .ends_with(&format!("\nhelp: {h}"))
            );
        }
        assert_eq!(c.slice(&uri, &d["range"]), text[e.span.unwrap().range()]);
        assert_eq!(
            d["relatedInformation"].as_array().map_or(0, Vec::len),
            e.labels.len()
        );
    }
    // The placeholder after non-ASCII text: UTF-16 columns (é = 1, 😀 = 2 units).
    let e0201 = diags
        .iter()
        .find(|d| d["code"] == "E0203" || d["code"] == "E0201");
    let d = e0201.expect("an unreachable reference");
    assert_eq!(d["range"]["start"], json!({"line": 1, "character": 32}));
    assert_eq!(d["severity"], 1);
    // didClose clears them.
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(c.diagnostics(&uri, None), Vec::<Json>::new());
    assert_eq!(c.shutdown(), Ended::Exit);
}

#[test]
fn utf8_positions_when_offered() {
    let mut c = Client::start_with(&["utf-8", "utf-16"], Settings::default());
    assert_eq!(c.encoding, Encoding::Utf8);
    let text = r#"[{"id": "a", "task": "é😀 {steps.zz.output}"}]"#;
    let diags = c.open("untitled:x", text);
    let d = diags.iter().find(|d| d["code"] == "E0202").unwrap();
    let start = text.find("{steps").unwrap();
    assert_eq!(d["range"]["start"]["character"], start);
    assert_eq!(c.slice("untitled:x", &d["range"]), "{steps.zz.output}");
}

#[test]
fn changes_are_debounced_and_never_stale() {
    let mut c = Client::start();
    let uri = "untitled:d";
    let diags = c.open(uri, r#"[{"id": "a", "task": "x"}]"#);
    assert!(diags.is_empty(), "{diags:?}");
    // Ten quick incremental edits: the id is renamed letter by letter, then broken.
    let mut text = c.texts[uri].clone();
    for v in 2..=10 {
        let at = text.find("\"a").unwrap() + 2;
        let p = LineIndex::new(&text, Encoding::Utf16).position(&text, at);
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": v},
                   "contentChanges": [{"range": {"start": p, "end": p}, "text": "x"}]}),
        );
        text.insert(at, 'x');
    }
    let last = r#"[{"id": "a", "task": "{steps.b.output}"}]"#;
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 11}, "contentChanges": [{"text": last}]}),
    );
    let diags = c.diagnostics(uri, Some(11));
    assert_eq!(codes(&diags), ["E0202"]);
    // Versions only grow, and nothing stale came after the newest.
    let versions: Vec<i64> = c.published.iter().filter_map(|(_, v, _)| *v).collect();
    assert!(versions.windows(2).all(|w| w[0] < w[1]), "{versions:?}");
    // The debounce coalesced the burst (the initial open, then at most a few).
    assert!(versions.len() < 8, "{versions:?}");
}

#[test]
fn hover_types_fields_and_phases() {
    let mut c = Client::start();
    let uri = "untitled:h";
    assert_eq!(c.open(uri, FLOW), Vec::<Json>::new());
    let h = c.ok(
        "textDocument/hover",
        c.at(uri, "{steps.scan.json.severity}", 20),
    );
    let v = h["contents"]["value"].as_str().unwrap();
    assert!(
        v.starts_with("`{steps.scan.json.severity}`: `enum low|high"),
        "{v}"
    );
    assert!(v.contains("\"severity\": {\"enum\""), "{v}");
    assert_eq!(c.slice(uri, &h["range"]), "{steps.scan.json.severity}");
    let h = c.ok("textDocument/hover", c.at(uri, "{item.path}", 3));
    assert!(
        h["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("`string | missing`")
            || h["contents"]["value"].as_str().unwrap().contains("`string")
    );
    let h = c.ok("textDocument/hover", c.at(uri, "\"over\"", 2));
    let v = h["contents"]["value"].as_str().unwrap();
    assert!(v.starts_with("`over`: map:"), "{v}");
    let h = c.ok("textDocument/hover", c.at(uri, "\"each\", \"type\"", 2));
    let v = h["contents"]["value"].as_str().unwrap();
    assert_eq!(v, "**phase `each`** (map)\n\ndependsOn: scan");
    let h = c.ok("textDocument/hover", c.at(uri, "\"repo\"", 2));
    assert!(
        h["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("argument `repo`")
    );
}

/// A contract's `description` annotation shows on hover of a placeholder that reads what it
/// describes: a property, an array's items, the whole output, through a map's `{item…}` and
/// inside an inline sub-flow.
#[test]
fn hover_shows_contract_descriptions() {
    let flow = r#"{"phases": [
    {"id": "scan", "output": "json", "task": "Scan",
     "expect": {"type": "object", "description": "What the scan found", "properties": {
       "files": {"type": "array", "description": "Files worth a look",
                 "items": {"type": "object", "description": "One file", "additionalProperties": false,
                           "properties": {"path": {"type": "string", "description": "Repo-relative path"},
                                          "size": {"type": "integer"}}}}}}},
    {"id": "each", "type": "map", "dependsOn": ["scan"], "over": "{steps.scan.json.files}",
     "task": "Review {item.path}"},
    {"id": "sum", "dependsOn": ["each"],
     "task": "{steps.scan.json.files.0.path} {steps.scan.json.files} {steps.scan.json.files.0} {steps.scan.json} {steps.scan.json.files.0.size}"},
    {"id": "sub", "type": "flow", "dependsOn": ["sum"], "def": {"phases": [
       {"id": "a", "output": "json", "task": "x", "expect": {"properties": {"k": {"description": "Inner key"}}}},
       {"id": "b", "dependsOn": ["a"], "task": "{steps.a.json.k}"}]}}
  ]}"#;
    let mut c = Client::start();
    let uri = "untitled:described";
    c.open(uri, flow);
    let mut hover = |needle: &str| -> String {
        let h = c.ok("textDocument/hover", c.at(uri, needle, 2));
        h["contents"]["value"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let v = hover("{steps.scan.json.files.0.path}");
    assert!(
        v.starts_with("`{steps.scan.json.files.0.path}`: `string | missing`\n\nRepo-relative path\n\ndeclared at line"),
        "{v}"
    );
    assert!(hover("{item.path}").contains("\n\nRepo-relative path\n\n"));
    assert!(hover("{steps.scan.json.files}").contains("\n\nFiles worth a look\n\n"));
    assert!(hover("{steps.scan.json.files.0}").contains("\n\nOne file\n\n"));
    assert!(hover("{steps.scan.json}").contains("\n\nWhat the scan found\n\n"));
    assert!(hover("{steps.a.json.k}").contains("\n\nInner key\n\n"));
    // Without a description, the type and the declaration only.
    let v = hover("{steps.scan.json.files.0.size}");
    assert!(
        v.starts_with("`{steps.scan.json.files.0.size}`: `integer | missing`\n\ndeclared at line"),
        "{v}"
    );
}

/// The did-you-means of contract reads are quick fixes: W0106's rewrites the placeholder,
/// E0209's on a closed object the segment it points at.
#[test]
fn contract_misreads_have_quick_fixes() {
    let text = r#"[
  {"id": "t", "output": "json", "task": "x", "expect": {"properties": {"severity": {"type": "string"},
     "meta": {"type": "object", "additionalProperties": false, "properties": {"owner": {"type": "string"}}}}}},
  {"id": "u", "dependsOn": ["t"], "task": "{steps.t.json.severty} {steps.t.json.meta.ownr}"}
]"#;
    let mut c = Client::start();
    let uri = "untitled:contract-fixes";
    assert_eq!(codes(&c.open(uri, text)), ["W0106", "E0209"]);
    let change = |c: &mut Client, needle: &str, title: &str| {
        let all = actions(c, uri, needle);
        let a = all
            .iter()
            .find(|a| a["title"] == title)
            .unwrap_or_else(|| panic!("{title} in {all:?}"));
        c.apply(uri, a["edit"]["changes"][uri].as_array().unwrap())
    };
    let fixed = change(
        &mut c,
        "{steps.t.json.severty}",
        "Change to {steps.t.json.severity}",
    );
    assert!(
        fixed.contains(r#""task": "{steps.t.json.severity} {steps.t.json.meta.ownr}""#),
        "{fixed}"
    );
    let fixed = change(&mut c, "ownr}", "Change to 'owner'");
    assert!(
        fixed.contains(r#""task": "{steps.t.json.severty} {steps.t.json.meta.owner}""#),
        "{fixed}"
    );
}

/// A `with` value that does not fit a saved flow's argument: the related information points
/// at the declaration in the saved flow's file.
#[test]
fn sub_flow_argument_labels_point_into_the_saved_flow() {
    let saved = "{\"args\": {\n  \"version\": {\"type\": \"number\"}}, \"phases\": [{\"id\": \"x\", \"task\": \"{args.version}\"}]}";
    let text =
        r#"{"phases": [{"id": "s", "type": "flow", "use": "child", "with": {"version": "abc"}}]}"#;
    let (_dir, root) = project(&[(".tfc/flows/child.json", saved), ("main.flow.json", text)]);
    let mut c = Client::start();
    let main = uri_of(&root.join("main.flow.json"));
    let diags = c.open(&main, text);
    assert_eq!(codes(&diags), ["E0502"]);
    assert_eq!(c.slice(&main, &diags[0]["range"]), r#""abc""#);
    let related = &diags[0]["relatedInformation"][0];
    assert_eq!(
        related["location"]["uri"],
        uri_of(&root.join(".tfc/flows/child.json"))
    );
    assert_eq!(
        related["location"]["range"],
        json!({"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 11}})
    );
}

#[test]
fn definitions() {
    let saved = r#"[{"id": "x", "task": "t"}]"#;
    let text = r#"{"phases": [{"id": "s", "type": "flow", "use": "child"}]}"#;
    let (_dir, root) = project(&[(".tfc/flows/child.json", saved), ("main.flow.json", text)]);
    let mut c = Client::start();
    let main = uri_of(&root.join("main.flow.json"));
    assert_eq!(c.open(&main, text), Vec::<Json>::new());
    let d = c.ok("textDocument/definition", c.at(&main, "child", 1));
    assert_eq!(d["uri"], uri_of(&root.join(".tfc/flows/child.json")));

    let uri = "untitled:def";
    c.open(uri, FLOW);
    let target = |c: &mut Client, needle: &str, delta: usize| {
        let d = c.ok("textDocument/definition", c.at(uri, needle, delta));
        assert_eq!(d["uri"], uri);
        let r = d["range"].clone();
        (c.slice(uri, &r), r["start"].clone())
    };
    let scan_id = c.pos(uri, "\"scan\"", 1);
    assert_eq!(
        target(&mut c, "{steps.scan.json.files}", 8),
        ("scan".into(), scan_id.clone())
    );
    assert_eq!(target(&mut c, "[\"scan\"]", 3), ("scan".into(), scan_id));
    assert_eq!(target(&mut c, "[\"each\"]", 3).0, "each");
    assert_eq!(target(&mut c, "{args.repo}", 7).0, "repo");
    assert_eq!(
        target(&mut c, "{item.path}", 2).0,
        "\"{steps.scan.json.files}\""
    );
}

#[test]
fn references_and_rename() {
    let mut c = Client::start();
    let uri = "untitled:r";
    c.open(uri, FLOW);
    let refs = c.ok(
        "textDocument/references",
        json!({"textDocument": {"uri": uri}, "position": c.pos(uri, "\"scan\"", 2),
               "context": {"includeDeclaration": true}}),
    );
    let refs = refs.as_array().unwrap();
    // The id, dependsOn, and two placeholders.
    assert_eq!(refs.len(), 4, "{refs:?}");
    assert!(refs.iter().all(|r| c.slice(uri, &r["range"]) == "scan"));

    let prep = c.ok(
        "textDocument/prepareRename",
        c.at(uri, "{steps.scan.json.files}", 9),
    );
    assert_eq!(prep["placeholder"], "scan");
    let mut params = c.at(uri, "{steps.scan.json.files}", 9);
    params["newName"] = json!("survey");
    let edit = c.ok("textDocument/rename", params.clone());
    let edits = edit["changes"][uri].as_array().unwrap().clone();
    assert_eq!(edits.len(), 4);
    let renamed = c.apply(uri, &edits);
    assert!(!renamed.contains("scan"), "{renamed}");
    let diags = {
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": renamed}]}),
        );
        c.diagnostics(uri, Some(2))
    };
    assert_eq!(diags, Vec::<Json>::new(), "the renamed flow checks clean");
    c.texts.insert(uri.into(), renamed);

    params = c.at(uri, "\"survey\"", 2);
    for bad in ["has space", "under_score", "each", ""] {
        params["newName"] = json!(bad);
        let r = c.request("textDocument/rename", params.clone());
        let e = r.response_result.expect_err("an invalid name is rejected");
        assert_eq!(e.code, lsp_server::ErrorCode::RequestFailed as i32, "{bad}");
    }
    // An argument: its key and every {args.repo}.
    let mut params = c.at(uri, "{args.repo}", 7);
    params["newName"] = json!("repository");
    let edit = c.ok("textDocument/rename", params);
    let edits = edit["changes"][uri].as_array().unwrap();
    let renamed = c.apply(uri, edits);
    assert!(renamed.contains("\"repository\": {\"type\"") && renamed.contains("{args.repository}"));
    // Nothing to rename on a field name.
    let r = c.request("textDocument/prepareRename", c.at(uri, "\"task\"", 2));
    assert!(r.response_result.is_err());
}

#[test]
fn renaming_a_saved_flows_argument_renames_its_callers_with() {
    let saved =
        r#"{"args": {"repo": {"type": "string"}}, "phases": [{"id": "x", "task": "{args.repo}"}]}"#;
    let caller = |id: &str| {
        format!(
            r#"{{"phases": [{{"id": "{id}", "type": "flow", "use": "review", "with": {{"repo": "r", "keep": 1}}, "final": true}}]}}"#
        )
    };
    let other = r#"{"phases": [{"id": "o", "type": "flow", "use": "lint", "with": {"repo": "r"}, "final": true}]}"#;
    let nested = r#"{"phases": [{"id": "n", "type": "flow", "final": true, "def": {"phases": [
  {"id": "m", "type": "flow", "use": "review", "with": {"repo": "r"}, "final": true}]}}]}"#;
    let (_dir, root) = project(&[
        (".tfc/flows/review.json", saved),
        (".tfc/flows/lint.json", saved),
        ("a.flow.json", &caller("a")),
        ("b.flow.json", nested),
        ("c.flow.json", &caller("c")),
        ("o.flow.json", other),
        ("notes.json", &caller("z")),
    ]);
    std::fs::create_dir_all(root.join("taskflows/deep")).unwrap();
    std::fs::write(root.join("taskflows/deep/d.json"), caller("d")).unwrap();
    let mut c = Client::start();
    let review = uri_of(&root.join(".tfc/flows/review.json"));
    let (a, b, o) = (
        uri_of(&root.join("a.flow.json")),
        uri_of(&root.join("b.flow.json")),
        uri_of(&root.join("o.flow.json")),
    );
    c.open(&review, saved);
    c.open(&a, &caller("a"));
    c.open(&b, nested);
    c.open(&o, other);
    let mut params = c.at(&review, "\"repo\"", 2);
    params["newName"] = json!("repository");
    let edit = c.ok("textDocument/rename", params);
    let changes = edit["changes"].as_object().unwrap();
    let mut uris: Vec<&String> = changes.keys().collect();
    uris.sort();
    let mut want = vec![&a, &b, &review];
    want.sort();
    assert_eq!(uris, want, "{edit}");
    let a_text = c.apply(&a, changes[&a].as_array().unwrap());
    assert!(
        a_text.contains(r#""with": {"repository": "r", "keep": 1}"#),
        "{a_text}"
    );
    let b_text = c.apply(&b, changes[&b].as_array().unwrap());
    assert!(
        b_text.contains(r#""with": {"repository": "r"}"#),
        "{b_text}"
    );
    let saved_text = c.apply(&review, changes[&review].as_array().unwrap());
    assert!(
        saved_text.contains(r#""repository": {"type""#) && saved_text.contains("{args.repository}")
    );
    // The files on disk that pass `repo` to review are named, not edited; others are not.
    let (typ, message) = c.messages.last().expect("a showMessage").clone();
    assert_eq!(typ, 2, "a warning: {message}");
    assert!(
        message.contains("in 2 `with` key(s) of 2 open document(s)")
            && message.contains("2 file(s) on disk that pass 'repo' to it were left alone")
            && message.ends_with(": c.flow.json, taskflows/deep/d.json"),
        "{message}"
    );

    // An argument of an inline def: its caller's `with` in the same document.
    let inline = r#"{"phases": [{"id": "p", "type": "flow", "final": true, "with": {"n": 3},
  "def": {"args": {"n": {"type": "number"}}, "phases": [{"id": "q", "task": "{args.n}"}]}}]}"#;
    let uri = "untitled:inline";
    assert_eq!(c.open(uri, inline), Vec::<Json>::new());
    let before = c.messages.len();
    let mut params = c.at(uri, "\"n\": {", 2);
    params["newName"] = json!("count");
    let edit = c.ok("textDocument/rename", params);
    let renamed = c.apply(uri, edit["changes"][uri].as_array().unwrap());
    assert!(
        renamed.contains(r#""with": {"count": 3}"#)
            && renamed.contains(r#""args": {"count": {"type""#)
            && renamed.contains("{args.count}"),
        "{renamed}"
    );
    assert_eq!(
        c.messages.len(),
        before,
        "no message for a flow no file calls"
    );
}

#[test]
fn document_symbols() {
    let mut c = Client::start();
    let uri = "untitled:s";
    c.open(uri, FLOW);
    let s = c.ok(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri}}),
    );
    let names: Vec<(&str, &str)> = s
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["detail"].as_str().unwrap()))
        .collect();
    assert_eq!(
        names,
        [
            ("scan", "agent"),
            ("each", "map ← scan"),
            ("sum", "reduce ← each")
        ]
    );
    assert_eq!(c.slice(uri, &s[1]["selectionRange"]), "each");
}

#[test]
fn protocol_errors_and_robustness() {
    let mut c = Client::raw(Settings::default());
    let r = c.request("textDocument/hover", json!({}));
    assert_eq!(r.response_result.unwrap_err().code, -32002);
    c.ok("initialize", json!({"capabilities": {}}));
    c.notify("initialized", json!({}));
    let r = c.request("tfc/nothing", json!({}));
    assert_eq!(r.response_result.unwrap_err().code, -32601);
    let r = c.request("tfc/panic", json!({}));
    assert_eq!(r.response_result.unwrap_err().code, -32603);
    let r = c.request("textDocument/hover", json!({"textDocument": {"uri": 3}}));
    assert!(r.response_result.is_err());
    // Broken documents get diagnostics, quickly.
    let started = Instant::now();
    let huge = "[".repeat(1 << 20);
    let deep = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
    for (uri, text) in [
        ("untitled:j", "{\"phases\": [}"),
        ("untitled:big", &huge[..]),
        ("untitled:deep", &deep[..]),
    ] {
        let diags = c.open(uri, text);
        assert!(
            codes(&diags).contains(&"E0001".to_owned()),
            "{uri}: {diags:?}"
        );
        // Every request still answers on the broken text.
        c.ok("textDocument/hover", c.at(uri, "[", 1));
        c.ok("textDocument/completion", c.at(uri, "[", 1));
        c.ok(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri}}),
        );
    }
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(c.shutdown(), Ended::Exit);
}

#[test]
fn exit_without_shutdown_is_abrupt() {
    let mut c = Client::start();
    c.notify("exit", Json::Null);
    assert_eq!(c.server.take().unwrap().join().unwrap(), Ended::Abrupt);
}

fn actions(c: &mut Client, uri: &str, needle: &str) -> Vec<Json> {
    let p = c.pos(uri, needle, 1);
    let a = c.ok(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": {"start": p, "end": p}, "context": {"diagnostics": []}}),
    );
    a.as_array().unwrap().clone()
}
