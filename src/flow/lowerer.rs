//! The lowering context: the [`Lowerer`] that collects diagnostics, and [`Fields`], the known
//! members of one object. The kinds name these; the readers (`read.rs`, `specs.rs`) and the
//! document lowering (`lower.rs`) add their methods in `impl Lowerer` blocks of their own files.
//! This file imports no other file of the folder.

use super::ir::Phase;
use crate::diag::Diagnostic;
use crate::json::{Kind, Member, Node};
use crate::source::Span;
use crate::syntax::path::is_placeholder_path;
use crate::value::format_number;

/// A phase's fields.
pub(crate) type PhaseFields<'a> = Fields<'a>;

/// The known members of an object by field name, in file order (the first of a repeated key
/// wins). An object has a handful of keys, so a vector beats any map here: this is on the
/// check's hot path, once per phase.
///
/// Most lookups are of fields that were not written (a phase reads some 25 names, and has
/// three or four), so a 64-bit filter of the names' [`name_bit`]s answers them without
/// comparing any string.
#[derive(Clone, Debug, Default)]
pub(crate) struct Fields<'a>(Vec<(&'static str, &'a Member)>, u64);

/// The filter bit of a field name: from its length and last byte.
#[inline]
fn name_bit(name: &str) -> u64 {
    let last = name.as_bytes().last().copied().unwrap_or(0) as usize;
    1 << ((name.len() * 7 + last) % 64)
}

impl<'a> Fields<'a> {
    /// Room for `n` fields.
    pub fn with_capacity(n: usize) -> Fields<'a> {
        Fields(Vec::with_capacity(n), 0)
    }

    /// Add `name` unless it is there already.
    pub fn insert_first(&mut self, name: &'static str, m: &'a Member) {
        if !self.contains_key(name) {
            self.0.push((name, m));
            self.1 |= name_bit(name);
        }
    }

    /// The member of `name`.
    #[inline]
    pub fn get(&self, name: &str) -> Option<&&'a Member> {
        if self.1 & name_bit(name) == 0 {
            return None;
        }
        self.0.iter().find(|(k, _)| *k == name).map(|(_, m)| m)
    }

    /// Was `name` written?
    #[inline]
    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// How many fields there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The fields in file order.
    pub fn iter(&self) -> std::slice::Iter<'_, (&'static str, &'a Member)> {
        self.0.iter()
    }

    /// The field names in file order.
    pub fn keys(&self) -> impl Iterator<Item = &&'static str> + '_ {
        self.0.iter().map(|(k, _)| k)
    }
}

impl<'a> std::ops::Index<&str> for Fields<'a> {
    type Output = &'a Member;
    fn index(&self, name: &str) -> &&'a Member {
        self.get(name)
            .expect("a field checked with `get` or `contains_key` first")
    }
}

impl<'a, 'f> IntoIterator for &'f Fields<'a> {
    type Item = &'f (&'static str, &'a Member);
    type IntoIter = std::slice::Iter<'f, (&'static str, &'a Member)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a> FromIterator<(&'static str, &'a Member)> for Fields<'a> {
    fn from_iter<I: IntoIterator<Item = (&'static str, &'a Member)>>(iter: I) -> Fields<'a> {
        let mut out = Fields::default();
        for (k, m) in iter {
            out.insert_first(k, m);
        }
        out
    }
}

/// Lowering's state: the diagnostics found so far.
#[derive(Default)]
pub(crate) struct Lowerer {
    /// The diagnostics, in the order found.
    pub(crate) diags: Vec<Diagnostic>,
    /// The document's phases array, lowered while the file was read (each entry was lowered
    /// and dropped as soon as the parser had it, so the tree and the IR are never both whole
    /// in memory). The array node is left empty in the tree.
    pub(crate) detached: Option<Detached>,
}

/// A phases array lowered as it was read: its span (which finds the array when the lowering
/// reaches it), its phases, how many entries it had, and the problems found lowering them.
#[derive(Default)]
pub(crate) struct Detached {
    /// The emptied array's span.
    pub(crate) span: Span,
    /// Its entries, lowered (those that could be).
    pub(crate) phases: Vec<Phase>,
    /// How many entries it had.
    pub(crate) entries: usize,
    /// The diagnostics of lowering them, in order.
    pub(crate) diags: Vec<Diagnostic>,
}

impl Lowerer {
    /// Report `d`.
    pub(crate) fn push(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }
}

/// The first `{ path }` in `text` whose content, trimmed, is a placeholder path: the
/// placeholder the author meant (`{steps.a.json}`).
pub(crate) fn spaced_placeholder(text: &str) -> Option<String> {
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let close = after.find('}')?;
        let inner = after[..close].trim();
        if is_placeholder_path(inner) {
            return Some(format!("{{{inner}}}"));
        }
        rest = &after[close + 1..];
    }
    None
}

/// How to fix a non-string element of a string list.
pub(crate) fn element_help(item: &Node) -> String {
    match &item.kind {
        Kind::Null => "remove the null entry".to_owned(),
        Kind::Number(n) => format!("quote it: \"{}\"", format_number(*n)),
        Kind::Bool(b) => format!("quote it: \"{b}\""),
        _ => "every entry must be a string in double quotes".to_owned(),
    }
}
