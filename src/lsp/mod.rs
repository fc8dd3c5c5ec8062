//! `tfc lsp`: a Language Server (LSP 3.17 over stdio) that is a thin layer over the checker.
//!
//! One loop owns every open document (by URI) and answers each message in turn: a change
//! marks its document for re-diagnosis after a short debounce, and the checker then runs on
//! the newest text only, so a result is never published over a newer one; each request maps
//! to one query over the document's [`Analysis`](analysis::Analysis): the diagnostics of
//! `tfc check`, the placeholder types, the symbols of the flow. Position conversion lives in
//! [`position`], cursor context in `scan`.
//!
//! - `analysis`: a document checked as `tfc check` checks it; its symbols and their places;
//! - `features`: diagnostics, hover, definition, references, rename, document symbols;
//! - `complete`: completion; `actions`: code actions; `callers`: the callers of a saved flow
//!   (an argument's rename reaches their `with`);
//! - `testfile`: test files (`*.test.json`): checked with the flow they name (re-checked when
//!   that flow changes in the editor), completion, hover and definition of their patterns;
//! - `ctx`: what a request handler sees of its document;
//! - `uri`: `file:` URIs; `scan`: where the cursor is in (possibly broken) JSON;
//! - `editors`: the editor settings `tfc init --editor` writes.

mod actions;
pub mod analysis;
mod callers;
mod complete;
mod ctx;
pub mod editors;
mod features;
pub mod position;
mod scan;
mod testfile;
#[cfg(test)]
mod tests;
mod uri;

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::{PositionEncodingKind, Uri};
use serde_json::Value as Json;

pub use analysis::Settings;
use analysis::{Analysis, Project};
use ctx::{ClientCaps, Ctx, Failure};
use position::{Encoding, LineIndex};

/// How long a changed document waits for more changes before it is checked.
pub const DEBOUNCE: Duration = Duration::from_millis(25);

/// How a session ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// `exit` after `shutdown`: exit status 0.
    Exit,
    /// `exit` without `shutdown`, or the client went away first: exit status 1.
    Abrupt,
}

/// Serve LSP on stdin/stdout until `exit` (or end of input).
pub fn serve_stdio(settings: Settings) -> Ended {
    let (connection, io) = Connection::stdio();
    let ended = serve(&connection, settings);
    drop(connection);
    // The reader stops at `exit` or end of input; a broken frame only ends it early.
    let _ = io.join();
    ended
}

/// Serve LSP over `connection` until `exit` or disconnection.
pub fn serve(connection: &Connection, settings: Settings) -> Ended {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let mut server = Server {
        connection,
        settings,
        cwd,
        encoding: Encoding::Utf16,
        client: ClientCaps::default(),
        docs: HashMap::new(),
        initialized: false,
        shutdown: false,
    };
    server.run()
}

/// Re-diagnose a document: check `text` as the file at `path` (its project's saved flows, its
/// stem as the default name) and convert the result to LSP diagnostics, as the server does
/// after a change (without the debounce). For benchmarks and embedders.
pub fn diagnose(
    text: &str,
    path: Option<&std::path::Path>,
    settings: &Settings,
) -> Vec<lsp_types::Diagnostic> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let project = Project::of(path, &cwd);
    let index = LineIndex::new(text, Encoding::Utf16);
    let analysis = Analysis::new(text, &project, settings);
    let uri: Uri = path
        .and_then(uri::from_path)
        .unwrap_or_else(|| "untitled:flow".parse().expect("a valid URI"));
    features::diagnostics(text, &index, &uri, &analysis)
}

/// One open document.
struct Doc {
    uri: Uri,
    version: i32,
    text: String,
    index: LineIndex,
    project: Project,
    /// Its file, normalised (`None` for a buffer with no file).
    path: Option<PathBuf>,
    /// A test file (`*.test.json`), not a flow.
    test: bool,
    /// A test file: the flow file it was last checked with (its text changing in the editor
    /// re-checks the test file).
    flow_dep: Option<PathBuf>,
    /// The analysis of `text`, once computed.
    analysis: Option<Analysis>,
    /// Changed since its diagnostics were last published: when the first such change came.
    dirty: Option<Instant>,
}

struct Server<'c> {
    connection: &'c Connection,
    settings: Settings,
    cwd: PathBuf,
    encoding: Encoding,
    client: ClientCaps,
    docs: HashMap<String, Doc>,
    initialized: bool,
    shutdown: bool,
}

impl Server<'_> {
    fn run(&mut self) -> Ended {
        loop {
            let due = self
                .docs
                .values()
                .filter_map(|d| d.dirty)
                .min()
                .map(|t| t + DEBOUNCE);
            let msg = match due {
                Some(due) => match self
                    .connection
                    .receiver
                    .recv_timeout(due.saturating_duration_since(Instant::now()))
                {
                    Ok(m) => Some(m),
                    Err(crossbeam_channel::RecvTimeoutError::Timeout) => None,
                    Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                        return Ended::Abrupt;
                    }
                },
                None => match self.connection.receiver.recv() {
                    Ok(m) => Some(m),
                    Err(_) => return Ended::Abrupt,
                },
            };
            if let Some(msg) = msg
                && let Some(ended) = self.handle(msg)
            {
                return ended;
            }
            self.publish_due();
        }
    }

    fn send(&self, msg: impl Into<Message>) {
        let _ = self.connection.sender.send(msg.into());
    }

    fn handle(&mut self, msg: Message) -> Option<Ended> {
        match msg {
            Message::Request(req) => self.request(req),
            Message::Notification(n) if n.method == "exit" => {
                return Some(if self.shutdown {
                    Ended::Exit
                } else {
                    Ended::Abrupt
                });
            }
            Message::Notification(n) => {
                if self.initialized && !self.shutdown {
                    self.notification(n);
                }
            }
            Message::Response(_) => {}
        }
        None
    }

    fn request(&mut self, req: Request) {
        let id = req.id.clone();
        if req.method == "initialize" {
            if self.initialized {
                return self.error(
                    id,
                    ErrorCode::InvalidRequest as i32,
                    "initialize was sent twice",
                );
            }
            self.initialized = true;
            let result = self.initialize(&req.params);
            return self.reply(id, Ok(result));
        }
        if !self.initialized {
            let message = format!("the server is not initialized yet (got '{}')", req.method);
            return self.error(id, ErrorCode::ServerNotInitialized as i32, &message);
        }
        if self.shutdown {
            return self.error(
                id,
                ErrorCode::InvalidRequest as i32,
                "the server is shutting down",
            );
        }
        if req.method == "shutdown" {
            self.shutdown = true;
            return self.reply(id, Ok(Json::Null));
        }
        let answer = catch_unwind(AssertUnwindSafe(|| self.dispatch(&req)));
        let answer = match answer {
            Ok(a) => a,
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                Err(Failure(
                    ErrorCode::InternalError as i32,
                    format!("internal error in '{}': {what}", req.method),
                ))
            }
        };
        self.reply(id, answer);
    }

    fn reply(&self, id: RequestId, answer: Result<Json, Failure>) {
        let resp = match answer {
            Ok(v) => Response {
                id,
                response_result: Ok(v),
            },
            Err(Failure(code, message)) => Response::new_err(id, code, message),
        };
        self.send(resp);
    }

    fn error(&self, id: RequestId, code: i32, message: &str) {
        self.send(Response::new_err(id, code, message.to_owned()));
    }

    fn initialize(&mut self, params: &Json) -> Json {
        let offered = params
            .pointer("/capabilities/general/positionEncodings")
            .and_then(Json::as_array);
        let utf8 = offered.is_some_and(|o| o.iter().any(|e| e == "utf-8"));
        self.encoding = if utf8 {
            Encoding::Utf8
        } else {
            Encoding::Utf16
        };
        self.client.insert_replace = params
            .pointer("/capabilities/textDocument/completion/completionItem/insertReplaceSupport")
            .and_then(Json::as_bool)
            .unwrap_or(false);
        let encoding = if utf8 {
            PositionEncodingKind::UTF8
        } else {
            PositionEncodingKind::UTF16
        };
        serde_json::json!({
            "capabilities": {
                "positionEncoding": encoding,
                "textDocumentSync": {"openClose": true, "change": 2},
                "hoverProvider": true,
                "definitionProvider": true,
                "referencesProvider": true,
                "renameProvider": {"prepareProvider": true},
                "documentSymbolProvider": true,
                "completionProvider": {"triggerCharacters": ["{", ".", "\""]},
                "codeActionProvider": {"codeActionKinds": ["quickfix"]},
            },
            "serverInfo": {"name": "tfc", "version": env!("CARGO_PKG_VERSION")},
        })
    }

    fn notification(&mut self, n: Notification) {
        use lsp_types::{
            DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
        };
        match n.method.as_str() {
            "textDocument/didOpen" => {
                let Ok(p) = serde_json::from_value::<DidOpenTextDocumentParams>(n.params) else {
                    return;
                };
                let d = p.text_document;
                let path = uri::to_path(&d.uri);
                let doc = Doc {
                    index: LineIndex::new(&d.text, self.encoding),
                    project: Project::of(path.as_deref(), &self.cwd),
                    path: path.as_deref().map(testfile::normal),
                    test: testfile::is_test_uri(&d.uri),
                    flow_dep: None,
                    uri: d.uri.clone(),
                    version: d.version,
                    text: d.text,
                    analysis: None,
                    dirty: Some(Instant::now()),
                };
                let changed = doc.path.clone();
                self.docs.insert(d.uri.as_str().to_owned(), doc);
                self.recheck_tests_of(changed);
            }
            "textDocument/didChange" => {
                let Ok(p) = serde_json::from_value::<DidChangeTextDocumentParams>(n.params) else {
                    return;
                };
                let Some(doc) = self.docs.get_mut(p.text_document.uri.as_str()) else {
                    return;
                };
                for change in p.content_changes {
                    match change.range {
                        Some(range) => {
                            let span = doc.index.span(&doc.text, range);
                            doc.text.replace_range(span.range(), &change.text);
                        }
                        None => doc.text = change.text,
                    }
                    doc.index = LineIndex::new(&doc.text, self.encoding);
                }
                doc.version = p.text_document.version;
                doc.analysis = None;
                doc.dirty.get_or_insert_with(Instant::now);
                let changed = doc.path.clone();
                self.recheck_tests_of(changed);
            }
            "textDocument/didClose" => {
                let Ok(p) = serde_json::from_value::<DidCloseTextDocumentParams>(n.params) else {
                    return;
                };
                if let Some(doc) = self.docs.remove(p.text_document.uri.as_str()) {
                    self.publish(&doc.uri, Vec::new(), None);
                    // The file on disk holds the flow now.
                    self.recheck_tests_of(doc.path);
                }
            }
            _ => {}
        }
    }

    /// The flow at `path` changed in the editor (opened, edited, closed): the open test files
    /// naming it are checked again with the same debounce.
    fn recheck_tests_of(&mut self, path: Option<PathBuf>) {
        let Some(path) = path else {
            return;
        };
        let now = Instant::now();
        for doc in self.docs.values_mut() {
            if doc.test && doc.flow_dep.as_ref() == Some(&path) {
                doc.analysis = None;
                doc.dirty.get_or_insert(now);
            }
        }
    }

    /// Publish the diagnostics of every document whose debounce has run out: flows first, so
    /// a test file re-checked with its flow never delays the flow's own diagnostics.
    fn publish_due(&mut self) {
        let now = Instant::now();
        let mut due: Vec<(bool, String)> = self
            .docs
            .iter()
            .filter(|(_, d)| d.dirty.is_some_and(|t| t + DEBOUNCE <= now))
            .map(|(k, d)| (d.test, k.clone()))
            .collect();
        due.sort();
        for (_, key) in due {
            self.publish_doc(&key);
        }
    }

    /// Compute the analysis of the document `key` if it has none: a flow checked as `tfc check`
    /// checks it; a test file with the flow it names (an open buffer's text winning over the
    /// disk's).
    fn analyse(&mut self, key: &str) {
        let Some(doc) = self.docs.get(key) else {
            return;
        };
        if doc.analysis.is_some() {
            return;
        }
        if !doc.test {
            let analysis = Analysis::new(&doc.text, &doc.project, &self.settings);
            if let Some(doc) = self.docs.get_mut(key) {
                doc.analysis = Some(analysis);
            }
            return;
        }
        let docs = &self.docs;
        let open = |p: &Path| {
            let p = testfile::normal(p);
            docs.values()
                .find(|d| d.path.as_ref() == Some(&p))
                .map(|d| d.text.clone())
        };
        let path = testfile::path_of(&doc.uri, &doc.project);
        let analysis = testfile::analyse(&doc.text, &path, &doc.project, &open);
        let dep = testfile::flow_dependency(&analysis, &path);
        if let Some(doc) = self.docs.get_mut(key) {
            doc.analysis = Some(analysis);
            doc.flow_dep = dep;
        }
    }

    fn publish_doc(&mut self, key: &str) {
        let Some(doc) = self.docs.get_mut(key) else {
            return;
        };
        doc.dirty = None;
        let checked = catch_unwind(AssertUnwindSafe(|| {
            self.analyse(key);
            let doc = &self.docs[key];
            let analysis = doc.analysis.as_ref().expect("analysed above");
            features::diagnostics(&doc.text, &doc.index, &doc.uri, analysis)
        }));
        let Some(doc) = self.docs.get_mut(key) else {
            return;
        };
        let (uri, version) = (doc.uri.clone(), doc.version);
        match checked {
            Ok(diags) => self.publish(&uri, diags, Some(version)),
            Err(_) => {
                doc.analysis = None;
                eprintln!("tfc lsp: the check of {} panicked", uri.as_str());
            }
        }
    }

    fn publish(&self, uri: &Uri, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) {
        let params = lsp_types::PublishDiagnosticsParams {
            uri: uri.clone(),
            diagnostics,
            version,
        };
        self.send(Notification::new(
            "textDocument/publishDiagnostics".to_owned(),
            params,
        ));
    }

    /// An argument `old` of the flow of `doc` was renamed to `new`: when `doc` is a saved flow,
    /// rename the `with` keys of its callers among the open documents (added to `edit`), and
    /// tell the user, with the files on disk that pass `old` too and were left alone.
    #[allow(clippy::mutable_key_type)] // `Uri` is how lsp-types keys a workspace edit
    fn rename_in_callers(
        &self,
        doc: &Doc,
        old: &str,
        new: &str,
        edit: &mut lsp_types::WorkspaceEdit,
    ) {
        let Some(path) = uri::to_path(&doc.uri) else {
            return;
        };
        let Some(name) = callers::saved_name(&doc.project.saved, &path) else {
            return;
        };
        let changes = edit.changes.get_or_insert_with(HashMap::new);
        let mut open = vec![path.clone()];
        let (mut callers_open, mut keys) = (0, 0);
        for other in self.docs.values().filter(|d| d.uri != doc.uri) {
            open.extend(uri::to_path(&other.uri));
            if !callers::resolves_to(&other.project.saved, &name, &path) {
                continue;
            }
            let spans = callers::with_keys(&other.text, &name, old);
            if spans.is_empty() {
                continue;
            }
            callers_open += 1;
            keys += spans.len();
            let edits = spans
                .into_iter()
                .map(|s| {
                    lsp_types::TextEdit::new(other.index.range(&other.text, s), new.to_owned())
                })
                .collect();
            changes.insert(other.uri.clone(), edits);
        }
        let on_disk: Vec<PathBuf> = callers::on_disk(&doc.project.root, &open, &name, old)
            .into_iter()
            .filter(|f| {
                let dir = f.parent().unwrap_or(&doc.project.root);
                callers::resolves_to(&crate::project::SavedFlows::new(dir), &name, &path)
            })
            .collect();
        if callers_open == 0 && on_disk.is_empty() {
            return;
        }
        let mut message = format!(
            "Renamed argument '{old}' of saved flow '{name}' to '{new}' in {keys} `with` key(s) \
             of {callers_open} open document(s)"
        );
        let typ = if on_disk.is_empty() {
            message.push_str("; no file on disk passes it");
            lsp_types::MessageType::INFO
        } else {
            let shown: Vec<String> = on_disk
                .iter()
                .map(|f| {
                    f.strip_prefix(&doc.project.root)
                        .unwrap_or(f)
                        .display()
                        .to_string()
                })
                .collect();
            message.push_str(&format!(
                "; {} file(s) on disk that pass '{old}' to it were left alone (open them before \
                 renaming, or rename their `with` key by hand): {}",
                on_disk.len(),
                shown.join(", ")
            ));
            lsp_types::MessageType::WARNING
        };
        self.send(Notification::new(
            "window/showMessage".to_owned(),
            lsp_types::ShowMessageParams { typ, message },
        ));
    }

    fn dispatch(&mut self, req: &Request) -> Result<Json, Failure> {
        let method = req.method.as_str();
        #[cfg(test)]
        if method == "tfc/panic" {
            panic!("a test asked for a panic");
        }
        let known = matches!(
            method,
            "textDocument/hover"
                | "textDocument/definition"
                | "textDocument/references"
                | "textDocument/prepareRename"
                | "textDocument/rename"
                | "textDocument/documentSymbol"
                | "textDocument/completion"
                | "textDocument/codeAction"
        );
        if !known {
            return Err(Failure(
                ErrorCode::MethodNotFound as i32,
                format!("unknown method '{method}'"),
            ));
        }
        let uri = req
            .params
            .pointer("/textDocument/uri")
            .and_then(Json::as_str)
            .ok_or_else(|| Failure::params("no textDocument.uri"))?
            .to_owned();
        if !self.docs.contains_key(&uri) {
            return Ok(Json::Null);
        }
        self.analyse(&uri);
        let doc = &self.docs[&uri];
        let cx = Ctx {
            text: &doc.text,
            index: &doc.index,
            analysis: doc.analysis.as_ref().expect("analysed above"),
            project: &doc.project,
            uri: &doc.uri,
            client: self.client,
        };
        let p = req.params.clone();
        fn parse<T: serde::de::DeserializeOwned>(p: Json) -> Result<T, Failure> {
            serde_json::from_value(p).map_err(Failure::params)
        }
        fn to_json(v: impl serde::Serialize) -> Result<Json, Failure> {
            serde_json::to_value(v)
                .map_err(|e| Failure(ErrorCode::InternalError as i32, e.to_string()))
        }
        // A test file answers from its own module; what it does not answer (symbols,
        // references, rename) finds no flow in it.
        if let Some(t) = cx.analysis.test.as_deref() {
            match method {
                "textDocument/hover" => return to_json(testfile::hover(&cx, t, parse(p)?)),
                "textDocument/definition" => {
                    return to_json(testfile::definition(&cx, t, parse(p)?));
                }
                "textDocument/completion" => {
                    return to_json(testfile::completion(&cx, t, parse(p)?));
                }
                _ => {}
            }
        }
        match method {
            "textDocument/hover" => to_json(features::hover(&cx, parse(p)?)),
            "textDocument/definition" => to_json(features::definition(&cx, parse(p)?)),
            "textDocument/references" => to_json(features::references(&cx, parse(p)?)),
            "textDocument/prepareRename" => to_json(features::prepare_rename(&cx, parse(p)?)?),
            "textDocument/rename" => {
                let params: lsp_types::RenameParams = parse(p)?;
                let new_name = params.new_name.clone();
                let (mut edit, renamed) = features::rename(&cx, params)?;
                if let Some(r) = renamed {
                    self.rename_in_callers(doc, &r.old, &new_name, &mut edit);
                }
                to_json(Some(edit))
            }
            "textDocument/documentSymbol" => to_json(features::symbols(&cx)),
            "textDocument/completion" => to_json(complete::completion(&cx, parse(p)?)),
            _ => to_json(actions::code_actions(&cx, parse(p)?)),
        }
    }
}
