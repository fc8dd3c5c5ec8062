//! One open document checked as `tfc check` checks it, and the symbols of its flow: which
//! phase id, argument or local a byte offset names, and every place that names it.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use crate::check::types::{PlaceholderType, placeholder_types};
use crate::check::{CheckOptions, Placeholder, check_source, placeholders};
use crate::diag::{Code, Diagnostic};
use crate::flow::{Def, Flow, LowerOptions, Phase, PhaseKind};
use crate::project::SavedFlows;
use crate::source::Span;

/// How every document is checked: the command line's `--strict`/`--no-strict`/`--allow`.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// `--strict` / `--no-strict`; `None` = each flow's `strictInterpolation`.
    pub strict: Option<bool>,
    /// Warnings not reported, besides each flow's `lint.allow`.
    pub allow: Vec<Code>,
}

/// The project a document belongs to, as `tfc check` run from the project root sees it.
pub struct Project {
    /// The project root (the nearest ancestor holding `.tfc/`), or the server's directory.
    pub root: PathBuf,
    /// Its saved flows (for `use`).
    pub saved: SavedFlows,
    /// The flow's default name: the file stem.
    pub stem: String,
}

impl Project {
    /// The project of the file at `path` (`None`: a buffer with no file, seen from `cwd`).
    pub fn of(path: Option<&Path>, cwd: &Path) -> Project {
        let dir = path.and_then(Path::parent).unwrap_or(cwd);
        let root = crate::project::project_root(dir);
        let stem = path
            .and_then(Path::file_stem)
            .map_or_else(|| "flow".into(), |s| s.to_string_lossy().into_owned());
        Project {
            saved: SavedFlows::at_root(&root),
            root,
            stem,
        }
    }
}

/// A checked document.
pub struct Analysis {
    /// The IR, when the document lowered.
    pub flow: Option<Flow>,
    /// What `tfc check` reports for this text.
    pub diagnostics: Vec<Diagnostic>,
    /// The project root: labels in other files (saved sub-flows) name them relative to it.
    pub root: PathBuf,
    /// Every placeholder's type (computed when first asked for).
    types: OnceCell<Vec<PlaceholderType>>,
    /// A test file (`*.test.json`): it, checked with the flow it names (`flow` is then
    /// `None`: the document is no flow).
    pub test: Option<Box<TestDoc>>,
}

/// A test file, checked.
pub struct TestDoc {
    /// It and the flow it names, as `tfc test` checks them.
    pub checked: crate::test::CheckedFile,
    /// The named flow lowered although it has errors (`checked` keeps a flow only when it has
    /// none), so that completion and hover still know its phases while it is being fixed.
    pub broken_flow: Option<Flow>,
}

impl TestDoc {
    /// The named flow's phases and its text, when it was read and lowered.
    pub fn flow(&self) -> Option<(&Flow, &crate::source::Source)> {
        let fut = self.checked.flow.as_ref()?;
        Some((
            fut.flow.as_ref().or(self.broken_flow.as_ref())?,
            &fut.source,
        ))
    }
}

impl Analysis {
    /// Check `text` in `project`.
    pub fn new(text: &str, project: &Project, settings: &Settings) -> Analysis {
        let opts = CheckOptions {
            strict: settings.strict,
            args: None,
            loader: Some(&project.saved),
            cwd: Some(project.root.clone()),
            allow: settings.allow.clone(),
        };
        let lower = LowerOptions {
            default_name: Some(project.stem.clone()),
        };
        let checked = check_source(text, &lower, &opts);
        Analysis {
            flow: checked.flow,
            diagnostics: checked.diagnostics,
            root: project.root.clone(),
            types: OnceCell::new(),
            test: None,
        }
    }

    /// A checked test file, with the diagnostics to show for it.
    pub fn test_file(test: TestDoc, diagnostics: Vec<Diagnostic>, project: &Project) -> Analysis {
        Analysis {
            flow: None,
            diagnostics,
            root: project.root.clone(),
            types: OnceCell::new(),
            test: Some(Box::new(test)),
        }
    }

    /// Every placeholder's type, inline sub-flows included.
    pub fn types(&self, project: &Project) -> &[PlaceholderType] {
        self.types.get_or_init(|| match &self.flow {
            Some(f) => placeholder_types(f, Some(&project.saved)),
            None => Vec::new(),
        })
    }

    /// The innermost flow (the document's, or an inline `def` in it) holding `offset`.
    pub fn scope(&self, offset: usize) -> Option<&Flow> {
        self.scope_and_caller(offset).map(|(flow, _)| flow)
    }

    /// [`Analysis::scope`], and for an inline `def` the flow and index of the phase that
    /// defines it (its caller).
    pub fn scope_and_caller(&self, offset: usize) -> Option<(&Flow, Option<(&Flow, usize)>)> {
        let mut flow = self.flow.as_ref()?;
        let mut caller = None;
        'down: loop {
            for (i, p) in flow.phases.iter().enumerate() {
                if let Some(def) = p.def()
                    && let Def::Inline(child) = &def.value
                    && def.span.range().contains(&offset)
                {
                    caller = Some((flow, i));
                    flow = child;
                    continue 'down;
                }
            }
            return Some((flow, caller));
        }
    }
}

/// The phase of `flow` whose object holds `offset`.
pub fn phase_at(flow: &Flow, offset: usize) -> Option<usize> {
    flow.phases
        .iter()
        .position(|p| p.span.range().contains(&offset))
}

/// What a name at some offset refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Symbol {
    /// A phase id.
    Phase(String),
    /// A declared (or referenced) argument.
    Arg(String),
    /// The element local of the map phase at this index (`{item}` or its `as` name).
    Local(usize),
    /// A saved flow named by `use`.
    Use(String),
}

/// A symbol under the cursor and the exact text naming it there.
pub struct Hit {
    /// What it names.
    pub symbol: Symbol,
    /// The name itself (one path segment, or a string's inside).
    pub span: Span,
    /// The placeholder it is in, when it is one.
    pub placeholder: Option<Placeholder>,
}

/// The inside of a JSON string literal's span (its quotes left out), when it is one.
pub fn inner(text: &str, span: Span) -> Span {
    let s = &text[span.range()];
    if s.len() >= 2 && s.starts_with('"') && s.ends_with('"') {
        Span::new(span.start + 1, span.end - 1)
    } else {
        span
    }
}

/// The file spans of a placeholder's path segments, when the placeholder is written plainly
/// in the file (no JSON escape inside its braces; the segments are then ASCII as written).
pub fn segments(text: &str, ph: &Placeholder) -> Option<Vec<Span>> {
    let written = text.get(ph.span.range())?;
    let at = written.find(ph.path.as_str())? + ph.span.start as usize;
    let mut out = Vec::new();
    let mut start = at;
    for seg in ph.path.split('.') {
        out.push(Span::new(start as u32, (start + seg.len()) as u32));
        start += seg.len() + 1;
    }
    Some(out)
}

/// The symbol a placeholder names, with the span of the segment naming it.
fn placeholder_symbol(flow: &Flow, text: &str, ph: &Placeholder) -> Option<(Symbol, Span)> {
    let segs = segments(text, ph)?;
    let mut parts = ph.path.split('.');
    let head = parts.next()?;
    match head {
        "steps" | "args" => {
            let name = parts.next()?;
            let sym = if head == "steps" {
                Symbol::Phase(name.to_owned())
            } else {
                Symbol::Arg(name.to_owned())
            };
            Some((sym, segs[1]))
        }
        _ => {
            let p = &flow.phases[ph.phase];
            match &p.kind {
                PhaseKind::Map(k) if k.local_name() == head && ph.field != "over" => {
                    Some((Symbol::Local(ph.phase), segs[0]))
                }
                _ => None,
            }
        }
    }
}

/// The symbol at `offset` of `flow` (a scope from [`Analysis::scope`]).
pub fn symbol_at(flow: &Flow, text: &str, offset: usize) -> Option<Hit> {
    let contains = |s: Span| s.start as usize <= offset && offset <= s.end as usize;
    if let Some(i) = phase_at(flow, offset) {
        let p = &flow.phases[i];
        for ph in placeholders_of(flow, i) {
            if contains(ph.span) {
                let (symbol, span) = placeholder_symbol(flow, text, &ph)?;
                return Some(Hit {
                    symbol,
                    span,
                    placeholder: Some(ph),
                });
            }
        }
        let plain = |symbol, span| {
            Some(Hit {
                symbol,
                span: inner(text, span),
                placeholder: None,
            })
        };
        if contains(p.id_span) {
            return plain(Symbol::Phase(p.id.clone()), p.id_span);
        }
        if let Some(d) = p
            .depends_on
            .iter()
            .chain(&p.from)
            .find(|d| contains(d.span))
        {
            return plain(Symbol::Phase(d.value.clone()), d.span);
        }
        if let PhaseKind::Flow(k) = &p.kind
            && let Some(u) = &k.use_flow
            && contains(u.span)
        {
            return plain(Symbol::Use(u.value.clone()), u.span);
        }
        if let PhaseKind::Map(k) = &p.kind
            && let Some(a) = &k.as_name
            && contains(a.span)
        {
            return plain(Symbol::Local(i), a.span);
        }
        return None;
    }
    let spec = flow.args.values().find(|a| contains(a.name_span))?;
    Some(Hit {
        symbol: Symbol::Arg(spec.name.clone()),
        span: inner(text, spec.name_span),
        placeholder: None,
    })
}

/// The placeholders of one phase of `flow`.
fn placeholders_of(flow: &Flow, phase: usize) -> Vec<Placeholder> {
    let mut all = Vec::new();
    crate::check::placeholders_into(phase, &flow.phases[phase], &mut all);
    all
}

/// One place naming a symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Occurrence {
    /// The name (a string's inside, or a path segment).
    pub span: Span,
    /// It is the declaration (the phase's `id`, the argument's key).
    pub decl: bool,
}

/// Every place in `flow` naming `symbol` (phase ids and arguments; others have none).
pub fn occurrences(flow: &Flow, text: &str, symbol: &Symbol) -> Vec<Occurrence> {
    let mut out = Vec::new();
    let (head, name) = match symbol {
        Symbol::Phase(id) => ("steps", id),
        Symbol::Arg(name) => ("args", name),
        _ => return out,
    };
    match symbol {
        Symbol::Phase(id) => {
            for p in &flow.phases {
                if &p.id == id {
                    out.push(Occurrence {
                        span: inner(text, p.id_span),
                        decl: true,
                    });
                }
                for d in p.depends_on.iter().chain(&p.from) {
                    if &d.value == id {
                        out.push(Occurrence {
                            span: inner(text, d.span),
                            decl: false,
                        });
                    }
                }
            }
        }
        _ => {
            if let Some(spec) = flow.args.get(name) {
                out.push(Occurrence {
                    span: inner(text, spec.name_span),
                    decl: true,
                });
            }
        }
    }
    for ph in placeholders(flow) {
        let mut parts = ph.path.split('.');
        if parts.next() == Some(head)
            && parts.next() == Some(name.as_str())
            && let Some(segs) = segments(text, &ph)
        {
            out.push(Occurrence {
                span: segs[1],
                decl: false,
            });
        }
    }
    out.sort_by_key(|o| (o.span.start, o.span.end));
    out.dedup();
    out
}

/// The phases `i` depends on, directly or not (dependsOn ∪ from).
pub fn ancestors_of(flow: &Flow, i: usize) -> Vec<bool> {
    let (deps, _) = flow.edges();
    reach(&deps, i)
}

/// The phases depending on `i`, directly or not.
pub fn descendants_of(flow: &Flow, i: usize) -> Vec<bool> {
    let (_, dependents) = flow.edges();
    reach(&dependents, i)
}

fn reach(next: &[Vec<usize>], from: usize) -> Vec<bool> {
    let mut seen = vec![false; next.len()];
    let mut todo = vec![from];
    while let Some(v) = todo.pop() {
        for &w in &next[v] {
            if !seen[w] {
                seen[w] = true;
                todo.push(w);
            }
        }
    }
    seen
}

/// One line describing a phase: its kind and what it waits for.
pub fn describe_phase(p: &Phase) -> String {
    let mut s = format!("**phase `{}`** ({})", p.id, p.ty().as_str());
    let deps: Vec<&str> = p.depends_on.iter().map(|d| d.value.as_str()).collect();
    if !deps.is_empty() {
        s.push_str(&format!("\n\ndependsOn: {}", deps.join(", ")));
    }
    let from: Vec<&str> = p.from.iter().map(|d| d.value.as_str()).collect();
    if !from.is_empty() {
        s.push_str(&format!("\n\nfrom: {}", from.join(", ")));
    }
    if p.is_final {
        s.push_str("\n\nfinal");
    }
    s
}
