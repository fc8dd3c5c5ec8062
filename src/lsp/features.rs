//! Diagnostics, hover, definition, references, rename and document symbols: each one query
//! over a document's analysis.

use std::collections::HashMap;

use lsp_types::{
    DiagnosticRelatedInformation, DiagnosticSeverity, DocumentSymbol, DocumentSymbolResponse,
    GotoDefinitionParams, GotoDefinitionResponse, Hover, HoverContents, HoverParams, Location,
    MarkupContent, MarkupKind, NumberOrString, PrepareRenameResponse, Range, ReferenceParams,
    RenameParams, SymbolKind, TextDocumentPositionParams, TextEdit, Uri, WorkspaceEdit,
};

use super::analysis::{Analysis, Hit, Symbol, describe_phase, inner, occurrences, symbol_at};
use super::ctx::{Ctx, Failure};
use super::position::LineIndex;
use super::{scan, uri};
use crate::check::FlowLoader;
use crate::check::types::{contract_description, type_at};
use crate::diag::Severity;
use crate::flow::{Def, Flow, Phase, PhaseKind};
use crate::source::Span;

/// The document's diagnostics as LSP has them: code, source `tfc`, the help folded into the
/// message, secondary labels as related information.
pub fn diagnostics(
    text: &str,
    index: &LineIndex,
    uri: &Uri,
    analysis: &Analysis,
) -> Vec<lsp_types::Diagnostic> {
    analysis
        .diagnostics
        .iter()
        .map(|d| {
            let range = d.span.map_or(Range::default(), |s| index.range(text, s));
            let mut message = d.message.clone();
            if let Some(help) = &d.help {
                message.push_str("\nhelp: ");
                message.push_str(help);
            }
            let related: Vec<DiagnosticRelatedInformation> = d
                .labels
                .iter()
                .filter_map(|l| {
                    let location = match &l.file {
                        None => Location::new(uri.clone(), index.range(text, l.span)),
                        Some(file) => other_file(&analysis.root, file, l.span, index.encoding)?,
                    };
                    Some(DiagnosticRelatedInformation {
                        location,
                        message: l.message.clone(),
                    })
                })
                .collect();
            lsp_types::Diagnostic {
                range,
                severity: Some(match d.severity {
                    Severity::Error => DiagnosticSeverity::ERROR,
                    Severity::Warning => DiagnosticSeverity::WARNING,
                }),
                code: Some(NumberOrString::String(d.code.as_str().to_owned())),
                code_description: None,
                source: Some("tfc".to_owned()),
                message,
                related_information: (!related.is_empty()).then_some(related),
                tags: None,
                data: None,
            }
        })
        .collect()
}

/// A label's place in another file (a saved sub-flow), whose name is relative to the project
/// root or `~/…` under the home directory; `None` when it has no URI.
fn other_file(
    root: &std::path::Path,
    file: &crate::source::Source,
    span: Span,
    encoding: super::position::Encoding,
) -> Option<Location> {
    let path = match file.name.strip_prefix("~/") {
        Some(rest) => std::path::PathBuf::from(std::env::var_os("HOME")?).join(rest),
        None => root.join(&file.name),
    };
    let index = LineIndex::new(&file.text, encoding);
    Some(Location::new(
        uri::from_path(&path)?,
        index.range(&file.text, span),
    ))
}

fn markdown(value: String) -> HoverContents {
    HoverContents::Markup(MarkupContent {
        kind: MarkupKind::Markdown,
        value,
    })
}

/// The lines of `text` around a declaration, for a hover (at most a few lines).
fn snippet(text: &str, span: Span) -> String {
    let start = text[..span.start as usize].rfind('\n').map_or(0, |i| i + 1);
    let end_from = (span.end as usize).max(start);
    let end = text[end_from..]
        .find('\n')
        .map_or(text.len(), |i| end_from + i);
    let lines: Vec<&str> = text[start..end].lines().take(6).collect();
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or(l.trim_start()).trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The hover at a position: a placeholder's type and declaration, a symbol, a field's doc.
pub fn hover(cx: &Ctx<'_>, p: HoverParams) -> Option<Hover> {
    let offset = cx.offset(p.text_document_position_params.position);
    if let Some(t) = type_at(cx.analysis.types(cx.project), offset) {
        let mut s = format!("`{{{}}}`: `{}`", t.path, t.ty);
        // The contract's `description` annotation, from the flow that declares it.
        if let Some(decl) = t.decl
            && let Some(flow) = cx.analysis.scope(decl.start as usize)
            && let Some(d) = contract_description(flow, decl)
        {
            s.push_str(&format!("\n\n{d}"));
        }
        if let Some(decl) = t.decl {
            let at = cx.range(decl).start.line + 1;
            s.push_str(&format!(
                "\n\ndeclared at line {at}:\n```json\n{}\n```",
                snippet(cx.text, decl)
            ));
        }
        return Some(Hover {
            contents: markdown(s),
            range: Some(cx.range(t.span)),
        });
    }
    let scope = cx.analysis.scope(offset);
    if let Some(flow) = scope
        && let Some(hit) = symbol_at(flow, cx.text, offset)
        && let Some(s) = describe(cx, flow, &hit)
    {
        return Some(Hover {
            contents: markdown(s),
            range: Some(cx.range(hit.span)),
        });
    }
    let c = scan::context(cx.text, offset);
    if let scan::At::Key {
        content,
        quoted: true,
    } = &c.at
    {
        let key = &cx.text[content.clone()];
        let doc = super::complete::field_doc(&c, key)?;
        return Some(Hover {
            contents: markdown(format!("`{key}`: {doc}")),
            range: Some(cx.range(Span::new(content.start as u32, content.end as u32))),
        });
    }
    None
}

fn describe(cx: &Ctx<'_>, flow: &Flow, hit: &Hit) -> Option<String> {
    Some(match &hit.symbol {
        Symbol::Phase(id) => describe_phase(flow.phase(id)?),
        Symbol::Arg(name) => {
            let spec = flow.args.get(name)?;
            let ty = spec.ty.map_or("untyped", |t| t.as_str());
            let mut s = format!("**argument `{name}`** ({ty})");
            if let Some(d) = &spec.description {
                s.push_str(&format!("\n\n{d}"));
            }
            if let Some(d) = &spec.default {
                s.push_str(&format!("\n\ndefault: `{}`", d.value.to_json()));
            }
            if spec.required {
                s.push_str("\n\nrequired");
            }
            s
        }
        Symbol::Local(i) => {
            let p = &flow.phases[*i];
            format!(
                "**`{}`**: each element of map `{}`'s `over`",
                p.local_name(),
                p.id
            )
        }
        Symbol::Use(name) => match cx.project.saved.load(name) {
            Ok((path, _)) => format!("**saved flow `{name}`**: {}", path.display()),
            Err(_) => format!("**saved flow `{name}`**: not found"),
        },
    })
}

/// Where a symbol is declared.
pub fn definition(cx: &Ctx<'_>, p: GotoDefinitionParams) -> Option<GotoDefinitionResponse> {
    let offset = cx.offset(p.text_document_position_params.position);
    let flow = cx.analysis.scope(offset)?;
    let hit = symbol_at(flow, cx.text, offset)?;
    let here = |span: Span| {
        Some(GotoDefinitionResponse::Scalar(Location::new(
            cx.uri.clone(),
            cx.range(span),
        )))
    };
    match &hit.symbol {
        Symbol::Phase(id) => here(inner(cx.text, flow.phase(id)?.id_span)),
        Symbol::Arg(name) => here(inner(cx.text, flow.args.get(name)?.name_span)),
        Symbol::Local(i) => match &flow.phases[*i].kind {
            PhaseKind::Map(k) => here(k.over.as_ref()?.span()),
            _ => None,
        },
        Symbol::Use(name) => {
            let (path, _) = cx.project.saved.load(name).ok()?;
            let path = std::path::absolute(&path).unwrap_or(path);
            Some(GotoDefinitionResponse::Scalar(Location::new(
                uri::from_path(&path)?,
                Range::default(),
            )))
        }
    }
}

/// Every place naming the symbol at a position.
pub fn references(cx: &Ctx<'_>, p: ReferenceParams) -> Option<Vec<Location>> {
    let offset = cx.offset(p.text_document_position.position);
    let flow = cx.analysis.scope(offset)?;
    let hit = symbol_at(flow, cx.text, offset)?;
    let all = occurrences(flow, cx.text, &hit.symbol);
    Some(
        all.into_iter()
            .filter(|o| p.context.include_declaration || !o.decl)
            .map(|o| Location::new(cx.uri.clone(), cx.range(o.span)))
            .collect(),
    )
}

/// The renameable symbol at a position: a phase or an argument declared in its flow.
fn renameable<'a>(
    cx: &'a Ctx<'_>,
    p: &TextDocumentPositionParams,
) -> Result<(&'a Flow, Hit), Failure> {
    let offset = cx.offset(p.position);
    let nothing = || {
        Failure::failed(
            "nothing to rename here: place the cursor on a phase id or an argument name",
        )
    };
    let flow = cx.analysis.scope(offset).ok_or_else(nothing)?;
    let hit = symbol_at(flow, cx.text, offset).ok_or_else(nothing)?;
    match &hit.symbol {
        Symbol::Phase(id) if flow.phase(id).is_some() => Ok((flow, hit)),
        Symbol::Arg(name) if flow.args.contains_key(name) => Ok((flow, hit)),
        Symbol::Phase(id) => Err(Failure::failed(format!(
            "there is no phase '{id}' to rename"
        ))),
        Symbol::Arg(name) => Err(Failure::failed(format!(
            "there is no declared argument '{name}' to rename"
        ))),
        _ => Err(nothing()),
    }
}

/// The range a rename would change here, with the current name.
pub fn prepare_rename(
    cx: &Ctx<'_>,
    p: TextDocumentPositionParams,
) -> Result<Option<PrepareRenameResponse>, Failure> {
    let (_, hit) = renameable(cx, &p)?;
    Ok(Some(PrepareRenameResponse::RangeWithPlaceholder {
        range: cx.range(hit.span),
        placeholder: cx.text[hit.span.range()].to_owned(),
    }))
}

/// Is `name` a valid new name for this kind of symbol? (`Err`: why not.)
fn check_new_name(flow: &Flow, symbol: &Symbol, name: &str) -> Result<(), String> {
    match symbol {
        Symbol::Phase(old) => {
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
                return Err(format!(
                    "'{name}' is not a valid phase id: use letters, digits and hyphens (e.g. audit-each)"
                ));
            }
            if name != old && flow.phase(name).is_some() {
                return Err(format!("a phase '{name}' already exists"));
            }
        }
        Symbol::Arg(old) => {
            if name.is_empty()
                || !name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            {
                return Err(format!(
                    "'{name}' is not a valid argument name: use letters, digits, '-' and '_'"
                ));
            }
            if name != old && flow.args.contains_key(name) {
                return Err(format!("an argument '{name}' already exists"));
            }
        }
        _ => return Err("only phase ids and arguments can be renamed".into()),
    }
    Ok(())
}

/// What a rename needs from outside its document: an argument of the document's own flow was
/// renamed, so the callers of that flow (when it is a saved flow) rename their `with` keys.
pub struct ArgRenamed {
    /// The old name.
    pub old: String,
}

/// Rename a phase id or an argument everywhere in its flow; an argument of an inline `def`
/// also in its caller's `with`. An argument of the document's top-level flow is returned too,
/// for the callers of a saved flow in other documents.
#[allow(clippy::mutable_key_type)] // `Uri` is how lsp-types keys a workspace edit
pub fn rename(
    cx: &Ctx<'_>,
    p: RenameParams,
) -> Result<(WorkspaceEdit, Option<ArgRenamed>), Failure> {
    let (flow, hit) = renameable(cx, &p.text_document_position)?;
    check_new_name(flow, &hit.symbol, &p.new_name).map_err(Failure::failed)?;
    let mut spans: Vec<Span> = occurrences(flow, cx.text, &hit.symbol)
        .into_iter()
        .map(|o| o.span)
        .collect();
    let mut renamed = None;
    if let Symbol::Arg(old) = &hit.symbol {
        let offset = cx.offset(p.text_document_position.position);
        match cx.analysis.scope_and_caller(offset) {
            Some((_, Some((parent, i)))) => {
                if let PhaseKind::Flow(k) = &parent.phases[i].kind {
                    spans.extend(
                        k.with
                            .iter()
                            .filter(|(name, _)| name == old)
                            .map(|(_, f)| inner(cx.text, f.key)),
                    );
                }
            }
            _ => renamed = Some(ArgRenamed { old: old.clone() }),
        }
    }
    let edits: Vec<TextEdit> = spans
        .into_iter()
        .map(|s| TextEdit::new(cx.range(s), p.new_name.clone()))
        .collect();
    let mut changes = HashMap::new();
    changes.insert(cx.uri.clone(), edits);
    let edit = WorkspaceEdit {
        changes: Some(changes),
        ..WorkspaceEdit::default()
    };
    Ok((edit, renamed))
}

/// The phases, with their kind and dependencies, inline sub-flows nested.
pub fn symbols(cx: &Ctx<'_>) -> Option<DocumentSymbolResponse> {
    let flow = cx.analysis.flow.as_ref()?;
    Some(DocumentSymbolResponse::Nested(phase_symbols(cx, flow)))
}

fn phase_symbols(cx: &Ctx<'_>, flow: &Flow) -> Vec<DocumentSymbol> {
    flow.phases
        .iter()
        .filter(|p| p.span.end > p.span.start)
        .map(|p| phase_symbol(cx, p))
        .collect()
}

#[allow(deprecated)] // `deprecated` is a field LSP still requires to be settable
fn phase_symbol(cx: &Ctx<'_>, p: &Phase) -> DocumentSymbol {
    let deps = p.dep_names();
    let mut detail = p.ty().as_str().to_owned();
    if !deps.is_empty() {
        detail.push_str(&format!(" ← {}", deps.join(", ")));
    }
    let children = match p.def().map(|d| &d.value) {
        Some(Def::Inline(child)) => Some(phase_symbols(cx, child)),
        _ => None,
    };
    let range = cx.range(p.span);
    let mut selection = cx.range(inner(cx.text, p.id_span));
    if selection.start < range.start || selection.end > range.end {
        selection = range;
    }
    DocumentSymbol {
        name: if p.id.is_empty() {
            "(no id)".into()
        } else {
            p.id.clone()
        },
        detail: Some(detail),
        kind: SymbolKind::FUNCTION,
        tags: None,
        deprecated: None,
        range,
        selection_range: selection,
        children,
    }
}
