//! Code actions: every did-you-mean as a quick fix, "add X to dependsOn" for E0201, and
//! "allow W… in this flow" (`lint.allow`) for a warning.

use std::collections::HashMap;

use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CodeActionResponse,
    TextEdit, WorkspaceEdit,
};

use super::analysis::{descendants_of, inner};
use super::ctx::Ctx;
use crate::diag::{Code, Diagnostic};
use crate::json::{Kind, Node};
use crate::source::Span;

/// The quick fixes for the diagnostics touching the requested range.
#[allow(clippy::mutable_key_type)] // `Uri` is how lsp-types keys a workspace edit
pub fn code_actions(cx: &Ctx<'_>, p: CodeActionParams) -> Option<CodeActionResponse> {
    let want = cx.index.span(cx.text, p.range);
    let converted = super::features::diagnostics(cx.text, cx.index, cx.uri, cx.analysis);
    let mut out = Vec::new();
    for (d, lsp) in cx.analysis.diagnostics.iter().zip(converted) {
        let Some(span) = d.span else { continue };
        if span.end < want.start || span.start > want.end {
            continue;
        }
        // A test file: the errors of its flow are fixed in the flow's file, and it has no
        // `lint.allow`.
        let test = cx.analysis.test.is_some();
        if test && d.labels.iter().any(|l| l.file.is_some()) {
            continue;
        }
        let mut add = |title: String, edits: Vec<(Span, String)>, preferred: bool| {
            let edits = edits
                .into_iter()
                .map(|(s, t)| TextEdit::new(cx.range(s), t))
                .collect();
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title,
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![lsp.clone()]),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(cx.uri.clone(), edits)])),
                    ..WorkspaceEdit::default()
                }),
                is_preferred: Some(preferred),
                ..CodeAction::default()
            }));
        };
        if let Some((title, edit)) = did_you_mean(cx.text, d, span) {
            add(title, vec![edit], true);
        }
        if d.code == Code::UnreachableReference
            && let Some((title, edit)) = add_dependency(cx, span)
        {
            add(title, vec![edit], true);
        }
        if d.code.is_warning()
            && !test
            && let Some(edit) = allow_in_flow(cx.text, d.code)
        {
            add(
                format!("Allow {} ({}) in this flow", d.code.as_str(), d.code.name()),
                vec![edit],
                false,
            );
        }
    }
    Some(out)
}

/// `s` as the inside of a JSON string.
fn escape(s: &str) -> String {
    let quoted = serde_json::to_string(s).unwrap_or_default();
    quoted[1..quoted.len() - 1].to_owned()
}

/// A diagnostic's did-you-mean as an edit of its span.
fn did_you_mean(text: &str, d: &Diagnostic, span: Span) -> Option<(String, (Span, String))> {
    let help = d.help.as_deref()?;
    let rest = &help[help.find("did you mean ")? + "did you mean ".len()..];
    let suggestion = &rest[..rest.find('?')?];
    let quoted = ['\'', '"']
        .iter()
        .any(|&q| suggestion.len() >= 2 && suggestion.starts_with(q) && suggestion.ends_with(q));
    let word = if quoted {
        &suggestion[1..suggestion.len() - 1]
    } else {
        suggestion
    };
    if word.is_empty() {
        return None;
    }
    let written = text.get(span.range())?;
    let target = if written.starts_with('"') && written.ends_with('"') && written.len() >= 2 {
        inner(text, span)
    } else {
        span
    };
    Some((
        format!(
            "Change to {}",
            if quoted {
                format!("'{word}'")
            } else {
                word.to_owned()
            }
        ),
        (target, escape(word)),
    ))
}

/// E0201: add the referenced phase to the referring phase's `dependsOn`.
fn add_dependency(cx: &Ctx<'_>, span: Span) -> Option<(String, (Span, String))> {
    let flow = cx.analysis.scope(span.start as usize)?;
    let ph = crate::check::placeholders(flow)
        .into_iter()
        .find(|ph| ph.span == span)?;
    let target = ph.path.split('.').nth(1)?.to_owned();
    let p = &flow.phases[ph.phase];
    let t = flow.index_of(&target)?;
    if descendants_of(flow, ph.phase)[t] {
        // Adding the edge would close a cycle.
        return None;
    }
    let entry = format!("\"{}\"", escape(&target));
    let edit = if let Some(last) = p.depends_on.last() {
        after_item(cx.text, last.span.start, last.span.end, &entry)
    } else if let Some(key) = p.written.get("dependsOn") {
        let open = cx.text[key.end as usize..].find('[')? + key.end as usize + 1;
        (Span::new(open as u32, open as u32), entry)
    } else if let Some(id_key) = p.written.get("id") {
        // After the `id` member: where flows write `dependsOn`.
        let member = format!("\"dependsOn\": [{entry}]");
        after_item(cx.text, id_key.start, p.id_span.end, &member)
    } else {
        let at = p.span.start + 1;
        let empty = cx.text[at as usize..p.span.end as usize]
            .trim_start()
            .starts_with('}');
        let sep = if empty { "" } else { ", " };
        (Span::new(at, at), format!("\"dependsOn\": [{entry}]{sep}"))
    };
    Some((format!("Add '{target}' to {}'s dependsOn", p.id), edit))
}

/// The indentation of the line holding `at`, when only that indentation comes before `at` on
/// its line (the item at `at` starts its own line).
fn line_indent(text: &str, at: usize) -> Option<&str> {
    let start = text[..at].rfind(['\n', '\r']).map_or(0, |i| i + 1);
    let before = &text[start..at];
    before
        .chars()
        .all(|c| c == ' ' || c == '\t')
        .then_some(before)
}

/// The edit adding `item` after the array element or object member `start..end`: on a line
/// of its own with the same indentation when that one starts its line (the document's own
/// spaces or tabs), else on the same line.
fn after_item(text: &str, start: u32, end: u32, item: &str) -> (Span, String) {
    let at = Span::new(end, end);
    match line_indent(text, start as usize) {
        Some(indent) => {
            let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
            (at, format!(",{eol}{indent}{item}"))
        }
        None => (at, format!(", {item}")),
    }
}

/// The edit adding `item` before the object member (or element) starting at `first`, as
/// [`after_item`] places it.
fn before_item(text: &str, first: u32, item: &str) -> (Span, String) {
    let at = Span::new(first, first);
    match line_indent(text, first as usize) {
        Some(indent) => {
            let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
            (at, format!("{item},{eol}{indent}"))
        }
        None => (at, format!("{item}, ")),
    }
}

/// Where to add `code` to the file's `lint.allow` (the document must be an object).
fn allow_in_flow(text: &str, code: Code) -> Option<(Span, String)> {
    let root = crate::json::parse(text).root?;
    let entry = format!("\"{}\"", code.as_str());
    let after_open = |node: &Node, item: String| -> Option<(Span, String)> {
        let first = match &node.kind {
            Kind::Object(m) => m.first().map(|m| m.key.span.start),
            Kind::Array(a) => a.first().map(|n| n.span.start),
            _ => return None,
        };
        match first {
            Some(first) => Some(before_item(text, first, &item)),
            None => {
                let at = node.span.start + 1;
                Some((Span::new(at, at), item))
            }
        }
    };
    if !matches!(root.kind, Kind::Object(_)) {
        return None;
    }
    let Some(lint) = root.get("lint") else {
        return after_open(&root, format!("\"lint\": {{\"allow\": [{entry}]}}"));
    };
    let Some(allow) = lint.get("allow") else {
        return after_open(lint, format!("\"allow\": [{entry}]"));
    };
    match &allow.kind {
        Kind::Array(items) => match items.last() {
            Some(last) => Some(after_item(text, last.span.start, last.span.end, &entry)),
            None => after_open(allow, entry),
        },
        _ => None,
    }
}
