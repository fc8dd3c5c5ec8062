//! Test files (`*.test.json`, SPEC §17) in the editor, over `tfc::test`: the file checked as
//! `tfc check` checks it (its own problems, and the errors of the flow it names, shown at its
//! `flow` value and pointing into the flow's file); completion of node patterns (`answers`,
//! `expect.prompts`), approval ids (`approvals`), phase ids (`expect.phases`, `ran`,
//! `skipped`, `failed`, `notRun`, `outputPhase`) and the expectations a phase's kind can meet
//! (`expect.phases.<id>`); hover on a pattern or phase id showing the phase; definition from
//! `flow` to the flow's file and from a pattern or phase id to the phase. Completion and hover
//! read the flow's phases even while it has errors (lowered apart from the check).

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use lsp_types::{
    CompletionItemKind, CompletionParams, CompletionResponse, GotoDefinitionParams,
    GotoDefinitionResponse, Hover, HoverContents, HoverParams, Location, MarkupContent, MarkupKind,
    Range, Uri,
};

use super::analysis::{Analysis, Project, TestDoc, inner};
use super::complete::{Target, item};
use super::ctx::Ctx;
use super::position::LineIndex;
use super::scan::{self, At, Seg};
use super::uri;
use crate::diag::Diagnostic;
use crate::flow::{Def, Flow, LowerOptions, Phase, PhaseKind, PhaseType};
use crate::source::{Source, Span};
use crate::test::{CheckedFile, PHASE_KEYS, Pattern, expectation_fits};

/// The expectation lists whose elements are phase ids.
const ID_LISTS: &[&str] = &["ran", "skipped", "failed", "notRun"];

/// At most this many `id#N` patterns are offered for one phase's branches.
const MAX_BRANCHES: usize = 16;

/// Is the document at `uri` a test file (`*.test.json`)?
pub fn is_test_uri(uri: &Uri) -> bool {
    crate::test::discover::is_test_file(file_name(uri))
}

/// The last segment of a URI (`x.test.json` of `file:///p/x.test.json` or `untitled:x.test.json`).
fn file_name(uri: &Uri) -> &str {
    let s = uri.as_str();
    s.rsplit(['/', ':']).next().unwrap_or(s)
}

/// The path a test document is checked as: its file, or for a buffer with no file its name in
/// the project root (its `flow` is then found from there).
pub fn path_of(uri: &Uri, project: &Project) -> PathBuf {
    uri::to_path(uri).unwrap_or_else(|| project.root.join(file_name(uri)))
}

/// `path` with `.` and `..` resolved by the text alone, so that the path a test file names
/// (`dir/../flow.json`) and the one an editor opened compare equal.
pub fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            // `/..` is `/`.
            Component::ParentDir if out.has_root() => {}
            c => out.push(c),
        }
    }
    out
}

/// Check the test file `text` at `path` in `project`; `open` gives the text of a file that an
/// editor holds newer than the disk (the named flow's, when it is open).
pub fn analyse(
    text: &str,
    path: &Path,
    project: &Project,
    open: &dyn Fn(&Path) -> Option<String>,
) -> Analysis {
    let checked = crate::test::check_text_with(path, text.to_owned(), &project.root, open);
    let mut diagnostics = checked.diagnostics.clone();
    diagnostics.extend(flow_errors(&checked));
    diagnostics.sort_by_key(|d| d.span.map(|s| s.start));
    let broken_flow = match &checked.flow {
        Some(f) if f.flow.is_none() => {
            let stem = Path::new(&f.source.name)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned());
            crate::flow::lower_source(&f.source.text, &LowerOptions { default_name: stem }).flow
        }
        _ => None,
    };
    let test = TestDoc {
        checked,
        broken_flow,
    };
    Analysis::test_file(test, diagnostics, project)
}

/// The file a test file depends on: the flow it names (where it was found, or where it would
/// be beside the test file when it was not), normalised; `None` when it names none.
pub fn flow_dependency(analysis: &Analysis, path: &Path) -> Option<PathBuf> {
    let checked = &analysis.test.as_deref()?.checked;
    let found = match &checked.flow {
        Some(f) => PathBuf::from(&f.source.name),
        None => path
            .parent()
            .unwrap_or(Path::new("."))
            .join(&checked.file.flow.as_ref()?.name),
    };
    Some(normal(&found))
}

/// The errors of the named flow, each at the `flow` value, pointing at its place in the
/// flow's file (the flow's warnings show when the flow itself is open).
fn flow_errors(c: &CheckedFile) -> Vec<Diagnostic> {
    let (Some(named), Some(fut)) = (&c.file.flow, &c.flow) else {
        return Vec::new();
    };
    let file = Arc::new(fut.source.clone());
    fut.diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| {
            let mut out = Diagnostic::new(
                d.code,
                format!("the flow '{}' has an error: {}", named.name, d.message),
            )
            .at(named.span);
            out.help = d.help.clone();
            if let Some(span) = d.span {
                out = out.label_in(file.clone(), span, "the error, in the flow's file");
            }
            out
        })
        .collect()
}

/// What the cursor's place in a test file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place<'c> {
    /// A key of `answers` or `expect.prompts`: a node pattern.
    Pattern,
    /// A key of `approvals`: an approval id.
    Approval,
    /// A key of `expect.phases`, an element of `ran`/`skipped`/`failed`/`notRun`, the value of
    /// `outputPhase`: a phase id.
    PhaseId,
    /// A key of `expect.phases.<id>`: an expectation on that phase.
    Expectation(&'c str),
}

/// The place of a cursor context, when it is one that names the flow's phases.
fn place(c: &scan::Context) -> Option<Place<'_>> {
    let [Seg::Key(tests), Seg::Index(_), rest @ ..] = c.path.as_slice() else {
        return None;
    };
    if tests != "tests" {
        return None;
    }
    let keys: Vec<&str> = rest
        .iter()
        .map(|s| match s {
            Seg::Key(k) => Some(k.as_str()),
            Seg::Index(_) => None,
        })
        .collect::<Option<_>>()?;
    let key = matches!(c.at, At::Key { .. });
    Some(match (keys.as_slice(), &c.at) {
        (["answers"] | ["expect", "prompts"], _) if key => Place::Pattern,
        (["approvals"], _) if key => Place::Approval,
        (["expect", "phases"], _) if key => Place::PhaseId,
        (["expect", "phases", id], _) if key => Place::Expectation(id),
        (["expect", list], At::Value { key: None, .. }) if ID_LISTS.contains(list) => {
            Place::PhaseId
        }
        (["expect"], At::Value { key: Some(k), .. }) if k == "outputPhase" => Place::PhaseId,
        _ => return None,
    })
}

/// Every node pattern that can match a call of `flow` (phases under `prefix`), with what it
/// matches: the phase, and its items, branches, iterations, judge and sub-flow nodes where it
/// has them. Approvals make no call and are left out.
fn node_patterns(flow: &Flow, prefix: &str, out: &mut Vec<(String, String)>) {
    for p in &flow.phases {
        if p.id.is_empty() || p.ty() == PhaseType::Approval {
            continue;
        }
        let id = format!("{prefix}{}", p.id);
        let kind = p.ty().as_str();
        let mut add = |suffix: &str, what: String| out.push((format!("{id}{suffix}"), what));
        add("", format!("{kind}: every call of the phase"));
        let branches = match &p.kind {
            PhaseKind::Tournament(k) if k.branches.is_empty() => k.variants.max(0.0) as usize,
            _ => p.branches().len(),
        };
        match p.ty() {
            PhaseType::Map => {
                add("#*", format!("{kind}: every item"));
                add("#0", format!("{kind}: the first item"));
            }
            PhaseType::Parallel | PhaseType::Race | PhaseType::Tournament => {
                add("#*", format!("{kind}: every branch"));
                for b in 0..branches.min(MAX_BRANCHES) {
                    add(&format!("#{b}"), format!("{kind}: branch {b}"));
                }
            }
            PhaseType::Loop => {
                add("@*", format!("{kind}: every iteration"));
                add("@1", format!("{kind}: the first iteration"));
            }
            _ => {}
        }
        if p.judge_agent().is_some() || p.ty() == PhaseType::Tournament {
            add("#judge", format!("{kind}: the judge's call"));
        }
        match (p.ty(), p.def().map(|d| &d.value)) {
            (PhaseType::Flow, Some(Def::Inline(child))) => {
                add("/*", format!("{kind}: every call inside the sub-flow"));
                node_patterns(child, &format!("{id}/"), out);
            }
            (PhaseType::Flow | PhaseType::Expand, _) => {
                add(
                    "/*",
                    format!("{kind}: every call inside (known at run time)"),
                );
            }
            _ => {}
        }
    }
}

/// The approval phases of `flow` (those of inline sub-flows as `sub/id`).
fn approvals(flow: &Flow, prefix: &str, out: &mut Vec<(String, String)>) {
    for p in &flow.phases {
        let id = format!("{prefix}{}", p.id);
        match (p.ty(), p.def().map(|d| &d.value)) {
            (PhaseType::Approval, _) if !p.id.is_empty() => {
                let what = p
                    .task
                    .as_ref()
                    .map_or("approval", |t| first_line(t.as_str()));
                out.push((id, what.to_owned()));
            }
            (PhaseType::Flow, Some(Def::Inline(child))) => approvals(child, &format!("{id}/"), out),
            _ => {}
        }
    }
}

/// Completion in a test file.
pub fn completion(cx: &Ctx<'_>, test: &TestDoc, p: CompletionParams) -> Option<CompletionResponse> {
    let offset = cx.offset(p.text_document_position.position);
    let c = scan::context(cx.text, offset);
    let place = place(&c)?;
    let (flow, _) = test.flow()?;
    let mut offered: Vec<(String, String)> = Vec::new();
    let mut kind = CompletionItemKind::REFERENCE;
    match place {
        Place::Pattern => {
            node_patterns(flow, "", &mut offered);
            offered.push(("*".into(), "every call no other pattern matches".into()));
        }
        Place::Approval => approvals(flow, "", &mut offered),
        Place::PhaseId => offered.extend(
            flow.phases
                .iter()
                .filter(|p| !p.id.is_empty())
                .map(|p| (p.id.clone(), p.ty().as_str().to_owned())),
        ),
        Place::Expectation(id) => {
            let ty = flow.phase(id)?.ty();
            kind = CompletionItemKind::FIELD;
            offered.extend(
                PHASE_KEYS
                    .iter()
                    .filter(|k| expectation_fits(k, ty))
                    .map(|k| ((*k).to_owned(), format!("expected of this {}", ty.as_str()))),
            );
        }
    }
    let written = if c.in_object { &c.keys } else { &c.items };
    let (target, text): (Target, fn(&str) -> String) = match &c.at {
        At::Key {
            content,
            quoted: true,
        } => (
            Target::new(content.start, offset, content.end),
            str::to_owned,
        ),
        At::Key { content, .. } => (Target::new(content.start, offset, content.end), |s| {
            format!("\"{s}\": ")
        }),
        At::Value {
            content: Some(r), ..
        } => (Target::new(r.start, offset, r.end), str::to_owned),
        At::Value { content: None, .. } => {
            (Target::new(offset, offset, offset), |s| format!("\"{s}\""))
        }
    };
    let items = offered
        .into_iter()
        .filter(|(label, _)| !written.contains(label))
        .map(|(label, detail)| item(cx, &label, kind, Some(detail), target, text(&label)))
        .collect();
    Some(CompletionResponse::Array(items))
}

/// The text of the string (a key or a value) under the cursor, with its span.
fn word(c: &scan::Context) -> Option<std::ops::Range<usize>> {
    match &c.at {
        At::Key {
            content,
            quoted: true,
        } => Some(content.clone()),
        At::Value {
            content: Some(r), ..
        } => Some(r.clone()),
        _ => None,
    }
}

/// The phase a pattern (or an approval key, `sub/id`) ends on; for `sub/*` the sub-flow
/// phase, for `*` none.
fn phase_of<'f>(top: &'f Flow, text: &str) -> Option<&'f Phase> {
    let pattern = Pattern::parse(text).ok()?;
    let mut flow = top;
    let mut found: Option<&Phase> = None;
    for seg in &pattern.segments {
        if let Some(p) = found {
            // Under a phase, only an inline sub-flow's nodes are known before the run.
            match p.def().map(|d| &d.value) {
                Some(Def::Inline(child)) if seg.phase.is_some() => flow = child,
                _ => return found.filter(|_| seg.phase.is_none()),
            }
        }
        let Some(name) = seg.phase.as_deref() else {
            return found;
        };
        found = Some(flow.phase(name)?);
    }
    found
}

/// The phase named at the cursor (a pattern, an approval or a phase id), with the span naming it.
fn phase_at<'f>(cx: &Ctx<'_>, flow: &'f Flow, offset: usize) -> Option<(&'f Phase, Span)> {
    let c = scan::context(cx.text, offset);
    let place = place(&c)?;
    let range = word(&c)?;
    let text = &cx.text[range.clone()];
    let phase = match place {
        Place::Pattern | Place::Approval => phase_of(flow, text)?,
        Place::PhaseId => flow.phase(text)?,
        Place::Expectation(_) => return None,
    };
    Some((phase, Span::new(range.start as u32, range.end as u32)))
}

fn first_line(s: &str) -> &str {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

/// The phase as a hover shows it: its kind, agent, contract and the first line of its task.
fn describe(p: &Phase, source: &Source) -> String {
    let mut s = format!("**phase `{}`** ({})", p.id, p.ty().as_str());
    let calls_an_agent = !matches!(
        p.ty(),
        PhaseType::Script | PhaseType::Approval | PhaseType::Flow | PhaseType::Expand
    );
    if calls_an_agent {
        s.push_str(&format!("\n\nagent: `{}`", p.agent.value));
    }
    if let Some(c) = &p.expect
        && let Some(text) = source.text.get(c.span.range())
    {
        let mut compact = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if compact.len() > 200 {
            let cut = (0..=200).rev().find(|&i| compact.is_char_boundary(i));
            compact.truncate(cut.unwrap_or(0));
            compact.push('…');
        }
        s.push_str(&format!("\n\ncontract: `{compact}`"));
    }
    if let Some(t) = &p.task {
        s.push_str(&format!("\n\ntask: {}", first_line(t.as_str())));
    }
    s
}

/// Hover in a test file: the phase a pattern, approval or phase id names.
pub fn hover(cx: &Ctx<'_>, test: &TestDoc, p: HoverParams) -> Option<Hover> {
    let offset = cx.offset(p.text_document_position_params.position);
    let (flow, source) = test.flow()?;
    let (phase, span) = match phase_at(cx, flow, offset) {
        Some(found) => found,
        None => {
            // `*`: no phase, but still worth saying what it matches.
            let c = scan::context(cx.text, offset);
            let range = word(&c)?;
            if place(&c) != Some(Place::Pattern) || &cx.text[range.clone()] != "*" {
                return None;
            }
            let span = Span::new(range.start as u32, range.end as u32);
            return Some(markdown(
                cx,
                "**`*`**: every call no other pattern matches".into(),
                span,
            ));
        }
    };
    Some(markdown(cx, describe(phase, source), span))
}

fn markdown(cx: &Ctx<'_>, value: String, span: Span) -> Hover {
    Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value,
        }),
        range: Some(cx.range(span)),
    }
}

/// Definition in a test file: `flow` goes to the flow's file, a pattern, approval or phase id
/// to the phase's id in it.
pub fn definition(
    cx: &Ctx<'_>,
    test: &TestDoc,
    p: GotoDefinitionParams,
) -> Option<GotoDefinitionResponse> {
    let offset = cx.offset(p.text_document_position_params.position);
    let fut = test.checked.flow.as_ref()?;
    let target = uri::from_path(&normal(Path::new(&fut.source.name)))?;
    let c = scan::context(cx.text, offset);
    if c.path.is_empty() && matches!(&c.at, At::Value { key: Some(k), .. } if k == "flow") {
        return Some(GotoDefinitionResponse::Scalar(Location::new(
            target,
            Range::default(),
        )));
    }
    let (flow, source) = test.flow()?;
    let (phase, _) = phase_at(cx, flow, offset)?;
    let index = LineIndex::new(&source.text, cx.index.encoding);
    Some(GotoDefinitionResponse::Scalar(Location::new(
        target,
        index.range(&source.text, inner(&source.text, phase.id_span)),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_uris_and_normal_paths() {
        for (uri, test) in [
            ("file:///p/review.test.json", true),
            ("untitled:review.test.json", true),
            ("file:///p/review.flow.json", false),
            ("file:///p/.test.json", false),
            ("file:///p/test.json", false),
        ] {
            assert_eq!(is_test_uri(&uri.parse().unwrap()), test, "{uri}");
        }
        assert_eq!(
            normal(Path::new("/p/tests/../flows/./a.json")),
            Path::new("/p/flows/a.json")
        );
        assert_eq!(normal(Path::new("/../a.json")), Path::new("/a.json"));
        assert_eq!(normal(Path::new("../a.json")), Path::new("../a.json"));
        let project = Project::of(None, Path::new("/nowhere"));
        assert_eq!(
            path_of(&"untitled:x.test.json".parse().unwrap(), &project),
            project.root.join("x.test.json")
        );
    }

    #[test]
    fn patterns_end_on_their_phase() {
        let flow = r#"{"phases": [
            {"id": "a", "task": "x"},
            {"id": "sub", "type": "flow", "dependsOn": ["a"], "final": true,
             "def": {"phases": [{"id": "inner", "task": "y"}]}}]}"#;
        let checked = crate::check::check_source(
            flow,
            &crate::flow::LowerOptions::default(),
            &crate::check::CheckOptions::default(),
        );
        let flow = checked.flow.unwrap();
        let id = |p: &str| phase_of(&flow, p).map(|p| p.id.clone());
        assert_eq!(id("a").as_deref(), Some("a"));
        assert_eq!(id("sub/inner").as_deref(), Some("inner"));
        assert_eq!(id("sub/*").as_deref(), Some("sub"));
        assert_eq!(id("sub/nope"), None);
        assert_eq!(id("a/x"), None);
        assert_eq!(id("*"), None);
    }
}
