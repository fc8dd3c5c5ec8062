//! Templates compiled to a flat op list (SPEC §4): copy a literal run of the template text, or
//! write placeholder occurrence `i`. Each distinct path is parsed and interned once; rendering
//! (text and value mode) is [`crate::eval`]'s.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::source::Span;
use crate::syntax::RefPath;
use crate::syntax::template::{
    Piece, Pieces, RawPiece, TemplateAst, count_braces, placeholder_path,
};

/// One op of a compiled template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// Copy `src[start..end]`.
    Lit(u32, u32),
    /// Write occurrence `refs[i]` as text; unresolved ⇒ copy the placeholder verbatim.
    Ref(u32),
}

/// One placeholder occurrence in a compiled template.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TemplateRef {
    /// Index into [`Template::paths`]: occurrences of the same path share it.
    pub path: u32,
    /// The placeholder with its braces, relative to the template text.
    pub span: Span,
}

/// A template compiled for repeated rendering: literal runs and placeholder occurrences, each
/// distinct path parsed once. [`crate::eval`] renders it.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    /// The template text.
    pub(crate) src: Box<str>,
    /// The ops, run in order by a render.
    pub(crate) ops: Small<Op, 3>,
    /// Every placeholder occurrence, in order.
    pub(crate) refs: Small<TemplateRef, 1>,
    /// Distinct paths, in order of first appearance.
    pub(crate) paths: Vec<RefPath>,
    /// What the last complete render needed (rendering lives in `eval`).
    pub(crate) len_hint: LenHint,
}

/// The length of a template's last complete render: the next render reserves that much, so
/// rendering the same template again does not grow its text.
#[derive(Debug, Default)]
pub(crate) struct LenHint(AtomicUsize);

impl LenHint {
    /// The length of the last complete render (0 before the first).
    pub(crate) fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }

    /// Remember a complete render's length.
    pub(crate) fn set(&self, len: usize) {
        self.0.store(len, Ordering::Relaxed);
    }
}

impl Clone for LenHint {
    fn clone(&self) -> LenHint {
        LenHint(AtomicUsize::new(self.get()))
    }
}

/// A hint is not part of what a template is.
impl PartialEq for LenHint {
    fn eq(&self, _: &LenHint) -> bool {
        true
    }
}

/// A list kept in place while it holds at most `N` items (no allocation for the common small
/// template), on the heap past that. It reads as a slice.
#[derive(Clone)]
pub(crate) enum Small<T: Copy, const N: usize> {
    /// The first `len` items of `items` (the rest are filler).
    Inline { len: u8, items: [T; N] },
    /// More than `N` items.
    Heap(Vec<T>),
}

impl<T: Copy, const N: usize> Small<T, N> {
    /// An empty list; `fill` fills the unused slots.
    fn new(fill: T) -> Small<T, N> {
        Small::Inline {
            len: 0,
            items: [fill; N],
        }
    }

    /// Add `item` at the end.
    #[inline]
    fn push(&mut self, item: T) {
        match self {
            Small::Inline { len, items } => match items.get_mut(usize::from(*len)) {
                Some(slot) => {
                    *slot = item;
                    *len += 1;
                }
                None => {
                    let mut heap = Vec::with_capacity(2 * N);
                    heap.extend_from_slice(items);
                    heap.push(item);
                    *self = Small::Heap(heap);
                }
            },
            Small::Heap(heap) => heap.push(item),
        }
    }

    /// The items.
    pub(crate) fn as_slice(&self) -> &[T] {
        match self {
            Small::Inline { len, items } => items.get(..usize::from(*len)).unwrap_or_default(),
            Small::Heap(heap) => heap,
        }
    }

    fn as_mut_slice(&mut self) -> &mut [T] {
        match self {
            Small::Inline { len, items } => items.get_mut(..usize::from(*len)).unwrap_or_default(),
            Small::Heap(heap) => heap,
        }
    }
}

impl<T: Copy, const N: usize> std::ops::Deref for Small<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<'a, T: Copy, const N: usize> IntoIterator for &'a Small<T, N> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl<T: Copy + std::fmt::Debug, const N: usize> std::fmt::Debug for Small<T, N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

/// Equal when the items are (the filler is no part of the list).
impl<T: Copy + PartialEq, const N: usize> PartialEq for Small<T, N> {
    fn eq(&self, other: &Small<T, N>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Copy + PartialEq, const N: usize, const M: usize> PartialEq<[T; M]> for Small<T, N> {
    fn eq(&self, other: &[T; M]) -> bool {
        self.as_slice() == other
    }
}

/// How many placeholders `rest` (the text after the current one) can hold at most: one per
/// `{`. Counted only when the list of paths must grow, so a template with one path is scanned
/// once, by the pieces scan itself.
fn max_placeholders(rest: &str) -> usize {
    count_braces(rest.as_bytes())
}

/// Lowers pieces to ops, interning each distinct path once.
struct Builder<'s> {
    src: &'s str,
    ops: Small<Op, 3>,
    refs: Small<TemplateRef, 1>,
    paths: Vec<RefPath>,
    /// Most templates hold a few distinct paths: a linear scan of `paths` interns them without
    /// a map; past that, an index (of the paths as written, borrowed from `src`) keeps
    /// interning linear.
    ids: Option<HashMap<&'s str, u32, foldhash::fast::RandomState>>,
}

impl<'s> Builder<'s> {
    fn new(src: &'s str) -> Builder<'s> {
        // Nearly every template is text around at most one placeholder: its ops and
        // occurrence fit in place, and nothing is reserved ahead of the pieces scan.
        Builder {
            src,
            ops: Small::new(Op::Lit(0, 0)),
            refs: Small::new(TemplateRef {
                path: 0,
                span: Span::default(),
            }),
            paths: Vec::new(),
            ids: None,
        }
    }

    fn text(&mut self, span: Span) {
        match self.ops.as_mut_slice().last_mut() {
            Some(Op::Lit(_, end)) if *end == span.start => *end = span.end,
            _ => self.ops.push(Op::Lit(span.start, span.end)),
        }
    }

    /// A placeholder at `span`; `path` is its parsed path when the caller has it already.
    fn placeholder(&mut self, span: Span, path: Option<RefPath>) {
        let text = placeholder_path(self.src, span);
        let rest = self.src.get(span.end as usize..).unwrap_or_default();
        if self.ids.is_none() && self.paths.len() >= 16 {
            let most = (self.refs.len() + 1 + max_placeholders(rest)).max(64);
            let mut map = HashMap::with_capacity_and_hasher(most, Default::default());
            for r in &self.refs {
                map.entry(placeholder_path(self.src, r.span))
                    .or_insert(r.path);
            }
            self.ids = Some(map);
        }
        let known = match &self.ids {
            Some(map) => map.get(text).copied(),
            None => self
                .paths
                .iter()
                .position(|p| *p.text == *text)
                .map(|i| i as u32),
        };
        let id = known.unwrap_or_else(|| {
            let id = self.paths.len() as u32;
            if self.paths.len() == self.paths.capacity() {
                // Room for at most the placeholders still to come (this one included), and
                // no more than doubling: a template with one path holds exactly one.
                let left = 1 + max_placeholders(rest);
                let more = left.min(self.paths.len().max(4));
                if self.paths.is_empty() {
                    self.paths = Vec::with_capacity(more);
                } else {
                    self.paths.reserve_exact(more);
                }
            }
            self.paths
                .push(path.unwrap_or_else(|| RefPath::parse(text)));
            if let Some(map) = self.ids.as_mut() {
                map.insert(text, id);
            }
            id
        });
        self.ops.push(Op::Ref(self.refs.len() as u32));
        self.refs.push(TemplateRef { path: id, span });
    }

    fn finish(self) -> Template {
        Template {
            src: self.src.into(),
            ops: self.ops,
            refs: self.refs,
            paths: self.paths,
            len_hint: LenHint::default(),
        }
    }

    /// Lower `src`'s pieces.
    fn parse(src: &'s str) -> Builder<'s> {
        let mut b = Builder::new(src);
        for piece in Pieces::new(src) {
            match piece {
                RawPiece::Text(span) => b.text(span),
                RawPiece::Placeholder(span) => b.placeholder(span, None),
            }
        }
        b
    }
}

impl Template {
    /// Parse and compile `src`: each distinct path is parsed once.
    pub fn parse(src: &str) -> Template {
        Builder::parse(src).finish()
    }

    /// [`Template::parse`] keeping `src` itself as the template text (no copy).
    pub fn parse_owned(src: String) -> Template {
        let b = Builder::parse(&src);
        let Builder {
            ops, refs, paths, ..
        } = b;
        Template {
            src: src.into_boxed_str(),
            ops,
            refs,
            paths,
            len_hint: LenHint::default(),
        }
    }

    /// Lower an AST to ops, interning each distinct path once.
    pub fn compile(src: &str, ast: &TemplateAst) -> Template {
        Template::compile_owned(src, ast.clone())
    }

    /// [`Template::compile`] consuming the AST: its paths move into the template.
    pub(crate) fn compile_owned(src: &str, ast: TemplateAst) -> Template {
        let mut b = Builder::new(src);
        for piece in ast.pieces {
            match piece {
                Piece::Text(span) => b.text(span),
                Piece::Placeholder(span, path) => b.placeholder(span, Some(path)),
            }
        }
        b.finish()
    }

    /// The template as written.
    pub fn source(&self) -> &str {
        &self.src
    }

    /// Every placeholder occurrence, in order.
    pub fn refs(&self) -> &[TemplateRef] {
        &self.refs
    }

    /// The distinct paths, in order of first appearance.
    pub fn paths(&self) -> &[RefPath] {
        &self.paths
    }

    /// Does the template hold at least one placeholder?
    pub(crate) fn has_placeholders(&self) -> bool {
        !self.refs.is_empty()
    }

    /// The texts of a list of path indices (`Rendered::missing`, `Rendered::reads`).
    pub fn path_texts(&self, ids: &[u32]) -> Vec<String> {
        ids.iter()
            .map(|&i| self.paths[i as usize].text.to_string())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::template::parse_template;

    #[test]
    fn many_placeholders_are_interned_once() {
        let text: String = (0..40).map(|i| format!("{{a{}}} ", i % 20)).collect();
        let t = Template::parse(&text);
        assert_eq!((t.refs().len(), t.paths().len()), (40, 20));
        assert_eq!(t.refs()[25].path, 5);
        assert_eq!(&*t.paths()[19].text, "a19");
    }

    #[test]
    fn ops_merge_text_and_point_at_refs() {
        let t = Template::parse("a {b} {c}{b} {d");
        assert_eq!(
            t.ops,
            [
                Op::Lit(0, 2),
                Op::Ref(0),
                Op::Lit(5, 6),
                Op::Ref(1),
                Op::Ref(2),
                Op::Lit(12, 15)
            ]
        );
        assert_eq!(t.path_texts(&[0, 1]), ["b", "c"]);
        assert_eq!(t.refs()[2].path, 0);
        assert!(t.has_placeholders() && !Template::parse("{ b }").has_placeholders());
        assert_eq!(
            Template::compile(t.source(), &parse_template(t.source())),
            t
        );
    }
}
