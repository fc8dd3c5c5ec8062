//! Completion: placeholders inside templated strings (heads, ancestor ids, `output`/`json`,
//! contract properties, arguments, locals), phase ids in `dependsOn`/`from`, field names
//! valid for the object (a phase's for its `type`) and `type` values. Every item carries the
//! edit that replaces the word being typed, so nothing is inserted twice (quotes, braces).

use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionParams, CompletionResponse, CompletionTextEdit,
    InsertReplaceEdit, TextEdit,
};

use super::analysis::{ancestors_of, descendants_of, phase_at};
use super::ctx::Ctx;
use super::scan::{self, At, Seg};
use crate::flow::fields::PHASE_COMMON;
use crate::flow::kinds::table::fields_of_type;
use crate::flow::{FieldDef, FieldType, Flow, ObjectKind, PhaseKind, PhaseType, fields_of};
use crate::source::Span;

/// The closed-field object the cursor's innermost container is, if it is one.
pub fn object_kind(c: &scan::Context) -> Option<ObjectKind> {
    if !c.in_object {
        return None;
    }
    let mut ty = if c.root_object {
        FieldType::Object(ObjectKind::Flow)
    } else {
        FieldType::Phases
    };
    for seg in &c.path {
        ty = match (ty, seg) {
            (FieldType::Object(k), Seg::Key(name)) => {
                fields_of(k).iter().find(|f| f.name == name)?.ty
            }
            (FieldType::StringOrObject, Seg::Key(name)) => {
                fields_of(ObjectKind::Flow)
                    .iter()
                    .find(|f| f.name == name)?
                    .ty
            }
            (FieldType::MapOf(k), Seg::Key(_)) => FieldType::Object(k),
            (FieldType::ArrayOf(k), Seg::Index(_)) => FieldType::Object(k),
            (FieldType::Phases | FieldType::StringOrObject, Seg::Index(_)) => {
                FieldType::Object(ObjectKind::Phase)
            }
            (FieldType::Steps, Seg::Index(_)) => FieldType::Object(ObjectKind::Step),
            _ => return None,
        };
    }
    match ty {
        FieldType::Object(k) => Some(k),
        FieldType::StringOrObject => Some(ObjectKind::Flow),
        _ => None,
    }
}

/// The fields an object of `kind` may have; a phase's for its type (`ty`, when known).
fn fields_for(kind: ObjectKind, ty: Option<PhaseType>) -> Vec<&'static FieldDef> {
    match (kind, ty) {
        (ObjectKind::Phase, Some(t)) => PHASE_COMMON.iter().chain(fields_of_type(t)).collect(),
        _ => fields_of(kind).iter().collect(),
    }
}

/// The type of the phase object the cursor is in: its `type` as written (default agent).
fn phase_type(c: &scan::Context) -> Option<PhaseType> {
    match &c.type_value {
        Some(t) => PhaseType::parse(t),
        None => Some(PhaseType::Agent),
    }
}

/// The doc line of field `key` of the cursor's object.
pub fn field_doc(c: &scan::Context, key: &str) -> Option<&'static str> {
    let kind = object_kind(c)?;
    fields_for(kind, phase_type(c))
        .into_iter()
        .chain(fields_of(kind))
        .find(|f| f.name == key)
        .map(|f| f.doc)
}

/// Where an item's text goes: over the prefix typed before the cursor (`insert`), or over
/// the whole word under the cursor (`replace`, offered only to a client that lets the user
/// choose between the two). The word after the cursor is never taken by default: completing
/// `{steps.tr|` typed before `Risk` keeps `Risk`.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    insert: Span,
    replace: Span,
}

impl Target {
    /// The typed prefix `start..cursor`, and the word `start..end` when the client may replace.
    pub fn new(start: usize, cursor: usize, end: usize) -> Target {
        Target {
            insert: Span::new(start as u32, cursor as u32),
            replace: Span::new(start as u32, end.max(cursor) as u32),
        }
    }
}

/// A completion item putting `text` at `target`.
pub fn item(
    cx: &Ctx<'_>,
    label: &str,
    kind: CompletionItemKind,
    detail: Option<String>,
    target: Target,
    text: String,
) -> CompletionItem {
    let edit = if cx.client.insert_replace && target.replace != target.insert {
        CompletionTextEdit::InsertAndReplace(InsertReplaceEdit {
            new_text: text,
            insert: cx.range(target.insert),
            replace: cx.range(target.replace),
        })
    } else {
        CompletionTextEdit::Edit(TextEdit::new(cx.range(target.insert), text))
    };
    CompletionItem {
        label: label.to_owned(),
        kind: Some(kind),
        detail,
        text_edit: Some(edit),
        ..CompletionItem::default()
    }
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Completion at a position.
pub fn completion(cx: &Ctx<'_>, p: CompletionParams) -> Option<CompletionResponse> {
    let offset = cx.offset(p.text_document_position.position);
    let c = scan::context(cx.text, offset);
    let flow = cx.analysis.scope(offset);
    let phase = flow.and_then(|f| phase_at(f, offset).map(|i| (f, i)));
    let items = match &c.at {
        At::Value {
            key,
            content: Some(content),
        } => {
            let before = &cx.text[content.start..offset];
            if let Some(open) = placeholder_start(before) {
                let partial = &before[open + 1..];
                if in_hook(&c) {
                    hook_placeholders(cx, flow, partial, offset)
                } else {
                    placeholders(cx, phase, key.as_deref().unwrap_or("task"), partial, offset)
                }
            } else {
                let inside = Target::new(content.start, offset, content.end);
                values(cx, &c, phase, key.as_deref(), inside, false)
            }
        }
        At::Value { key, content: None } => {
            let here = Target::new(offset, offset, offset);
            values(cx, &c, phase, key.as_deref(), here, true)
        }
        At::Key { content, quoted } => {
            let kind = object_kind(&c)?;
            let span = Target::new(content.start, offset, content.end);
            fields_for(kind, phase_type(&c))
                .into_iter()
                .filter(|f| !c.keys.iter().any(|k| k == f.name))
                .map(|f| {
                    let text = if *quoted {
                        f.name.to_owned()
                    } else {
                        format!("\"{}\": ", f.name)
                    };
                    item(
                        cx,
                        f.name,
                        CompletionItemKind::FIELD,
                        Some(f.doc.to_owned()),
                        span,
                        text,
                    )
                })
                .collect()
        }
    };
    Some(CompletionResponse::Array(items))
}

/// Is the cursor in an element of a hook's argv (`hooks.onFail[1]`) at the flow's top level?
fn in_hook(c: &scan::Context) -> bool {
    c.root_object
        && matches!(
            c.path.as_slice(),
            [Seg::Key(h), Seg::Key(_), ..] if h == "hooks"
        )
}

/// Inside a placeholder of a hook (SPEC §8.10): `{args.X}` and `{run.id|status|dir}`.
fn hook_placeholders(
    cx: &Ctx<'_>,
    flow: Option<&Flow>,
    partial: &str,
    offset: usize,
) -> Vec<CompletionItem> {
    let (done, word) = partial.rsplit_once('.').unwrap_or(("", partial));
    let closed = cx.text.as_bytes()[offset..]
        .iter()
        .find(|b| !is_word(**b))
        .is_some_and(|b| *b == b'}');
    let span = Target::new(offset - word.len(), offset, offset);
    let close = |s: &str| match closed {
        true => s.to_owned(),
        false => format!("{s}}}"),
    };
    let mk = |label: &str, kind, detail: &str, text: String| {
        item(cx, label, kind, Some(detail.to_owned()), span, text)
    };
    match done {
        "" => {
            let mut out = vec![mk(
                "run.",
                CompletionItemKind::MODULE,
                "the run that ended: id, status, dir",
                "run.".into(),
            )];
            if flow.is_some_and(|f| !f.args.is_empty()) {
                out.push(mk(
                    "args.",
                    CompletionItemKind::MODULE,
                    "an invocation argument",
                    "args.".into(),
                ));
            }
            out
        }
        "run" => [
            ("id", "the run id"),
            ("status", "completed, failed, paused or blocked"),
            ("dir", "the run's directory (run.json, journal.jsonl)"),
        ]
        .into_iter()
        .map(|(f, d)| mk(f, CompletionItemKind::FIELD, d, close(f)))
        .collect(),
        "args" => flow
            .map(|f| f.args.values().collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .map(|a| {
                let ty = a.ty.map_or("untyped", |t| t.as_str());
                mk(&a.name, CompletionItemKind::VARIABLE, ty, close(&a.name))
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Where the placeholder being typed starts in `before` (the string up to the cursor): the
/// last `{` followed only by path characters.
fn placeholder_start(before: &str) -> Option<usize> {
    let open = before.rfind('{')?;
    before[open + 1..]
        .bytes()
        .all(|b| is_word(b) || b == b'.')
        .then_some(open)
}

/// Values: phase ids in `dependsOn`/`from` (but those the list already has), phase types for
/// `type`.
fn values(
    cx: &Ctx<'_>,
    c: &scan::Context,
    phase: Option<(&Flow, usize)>,
    key: Option<&str>,
    span: Target,
    quote: bool,
) -> Vec<CompletionItem> {
    let q = |s: &str| {
        if quote {
            format!("\"{s}\"")
        } else {
            s.to_owned()
        }
    };
    let in_deps = key.is_none()
        && matches!(c.path.last(), Some(Seg::Key(k)) if k == "dependsOn" || k == "from");
    let kind = if in_deps { None } else { object_kind(c) };
    if in_deps && let Some((flow, i)) = phase {
        let below = descendants_of(flow, i);
        return flow
            .phases
            .iter()
            .enumerate()
            .filter(|(j, p)| *j != i && !below[*j] && !p.id.is_empty())
            .filter(|(_, p)| !c.items.contains(&p.id))
            .map(|(_, p)| {
                item(
                    cx,
                    &p.id,
                    CompletionItemKind::REFERENCE,
                    Some(p.ty().as_str().to_owned()),
                    span,
                    q(&p.id),
                )
            })
            .collect();
    }
    if key == Some("type") && kind == Some(ObjectKind::Phase) {
        return PhaseType::NAMES
            .iter()
            .map(|t| item(cx, t, CompletionItemKind::ENUM_MEMBER, None, span, q(t)))
            .collect();
    }
    Vec::new()
}

/// Inside a placeholder: `partial` is what follows its `{` up to the cursor.
fn placeholders(
    cx: &Ctx<'_>,
    phase: Option<(&Flow, usize)>,
    field: &str,
    partial: &str,
    offset: usize,
) -> Vec<CompletionItem> {
    let segs: Vec<&str> = partial.split('.').collect();
    let (done, word) = segs.split_at(segs.len() - 1);
    let word = word[0];
    // The word characters right after the cursor are the rest of this segment only when the
    // placeholder closes after them (`{steps.tr|iage.output}`); before plain text (`{steps.tr|`
    // typed before `Risk`) they are the text's own, never replaced.
    let b = cx.text.as_bytes();
    let mut end = offset;
    while end < b.len() && is_word(b[end]) {
        end += 1;
    }
    let mut tail = end;
    while tail < b.len() && (is_word(b[tail]) || b[tail] == b'.') {
        tail += 1;
    }
    let closed = b.get(tail) == Some(&b'}');
    let span = Target::new(
        offset - word.len(),
        offset,
        if closed { end } else { offset },
    );
    let close = |s: &str| {
        if closed {
            s.to_owned()
        } else {
            format!("{s}}}")
        }
    };
    let mk = |label: &str, kind, detail: Option<String>, text: String| {
        item(cx, label, kind, detail, span, text)
    };
    let Some((flow, i)) = phase else {
        return Vec::new();
    };
    let p = &flow.phases[i];
    let local = match &p.kind {
        PhaseKind::Map(k) if field != "over" => Some(k.local_name()),
        _ => None,
    };
    let props = |path: String| -> Vec<CompletionItem> {
        let loader = Some(&cx.project.saved as &dyn crate::check::FlowLoader);
        let Some(ty) = crate::check::types::type_of_path(flow, loader, i, field, &path) else {
            return Vec::new();
        };
        let mut out: Vec<CompletionItem> = ty
            .properties()
            .into_iter()
            .map(|(name, t)| {
                mk(
                    name,
                    CompletionItemKind::PROPERTY,
                    Some(t.to_string()),
                    name.to_owned(),
                )
            })
            .collect();
        if let Some(elem) = ty.element() {
            out.push(mk(
                "0",
                CompletionItemKind::PROPERTY,
                Some(elem.to_string()),
                "0".into(),
            ));
            out.push(mk(
                "length",
                CompletionItemKind::PROPERTY,
                Some("number".into()),
                close("length"),
            ));
        }
        out
    };
    match done {
        [] => {
            let mut out = vec![
                mk(
                    "steps.",
                    CompletionItemKind::MODULE,
                    Some("a phase's output or JSON".into()),
                    "steps.".into(),
                ),
                mk(
                    "previous.output",
                    CompletionItemKind::VARIABLE,
                    Some("string".into()),
                    close("previous.output"),
                ),
            ];
            if !flow.args.is_empty() {
                out.push(mk(
                    "args.",
                    CompletionItemKind::MODULE,
                    Some("an invocation argument".into()),
                    "args.".into(),
                ));
            }
            if let Some(name) = local {
                out.push(mk(
                    name,
                    CompletionItemKind::VARIABLE,
                    Some(format!("each element of map '{}'", p.id)),
                    name.to_owned(),
                ));
            }
            if let PhaseKind::Loop(k) = &p.kind {
                for (l, t) in [
                    ("loop.iteration", "number"),
                    ("loop.maxIterations", "number"),
                    ("loop.lastOutput", "string"),
                ] {
                    out.push(mk(
                        l,
                        CompletionItemKind::VARIABLE,
                        Some(t.into()),
                        close(l),
                    ));
                }
                if k.reflexion {
                    out.push(mk(
                        "reflexion",
                        CompletionItemKind::VARIABLE,
                        Some("string".into()),
                        close("reflexion"),
                    ));
                }
            }
            out
        }
        ["steps"] => {
            let above = ancestors_of(flow, i);
            flow.phases
                .iter()
                .enumerate()
                .filter(|(j, q)| above[*j] && *j != i && !q.id.is_empty())
                .map(|(_, q)| {
                    mk(
                        &q.id,
                        CompletionItemKind::REFERENCE,
                        Some(q.ty().as_str().to_owned()),
                        q.id.clone(),
                    )
                })
                .collect()
        }
        ["steps", _] => vec![
            mk(
                "output",
                CompletionItemKind::FIELD,
                Some("string".into()),
                close("output"),
            ),
            mk(
                "json",
                CompletionItemKind::FIELD,
                Some("the parsed JSON output".into()),
                "json".into(),
            ),
        ],
        ["steps", _, "json", ..] => props(done.join(".")),
        ["args"] => flow
            .args
            .values()
            .map(|a| {
                let ty = a.ty.map_or("untyped", |t| t.as_str());
                mk(
                    &a.name,
                    CompletionItemKind::VARIABLE,
                    Some(ty.to_owned()),
                    close(&a.name),
                )
            })
            .collect(),
        ["previous"] => vec![mk(
            "output",
            CompletionItemKind::FIELD,
            Some("string".into()),
            close("output"),
        )],
        ["loop"] if p.ty() == PhaseType::Loop => ["iteration", "maxIterations", "lastOutput"]
            .iter()
            .map(|l| mk(l, CompletionItemKind::FIELD, None, close(l)))
            .collect(),
        [head, ..] if Some(*head) == local => props(done.join(".")),
        _ => Vec::new(),
    }
}
