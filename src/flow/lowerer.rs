//! The lowering context: the [`Lowerer`] that collects diagnostics, and [`Fields`], the known
//! members of one object. The kinds name these; the readers (`read.rs`, `specs.rs`) and the
//! document lowering (`lower.rs`) add their methods in `impl Lowerer` blocks of their own files.
//! This file imports no other file of the folder.

use super::ir::Phase;
use crate::diag::Diagnostic;
use std::sync::OnceLock;

use crate::json::{Kind, Member, Node, Str};
use crate::source::Span;
use crate::syntax::path::is_placeholder_path;
use crate::value::format_number;

/// A phase's fields.
pub(crate) type PhaseFields<'a> = Fields<'a>;

/// The known members of an object by field name, in file order (the first of a repeated key
/// wins). An object has a handful of keys, so a vector beats any map here: this is on the
/// check's hot path, once per phase. The first [`INLINE`] fields are kept in place (no
/// allocation for nearly every object), more move to the heap.
///
/// Most lookups are of fields that were not written (a phase reads some 25 names, and has
/// three or four), so a 64-bit filter of the names' [`name_bit`]s answers them without
/// comparing any string.
#[derive(Clone, Debug)]
pub(crate) struct Fields<'a> {
    /// The fields while there are at most [`INLINE`] (the unused slots hold a blank member).
    inline: [(&'static str, &'a Member); INLINE],
    len: usize,
    /// All the fields once there are more.
    spilled: Vec<(&'static str, &'a Member)>,
    /// The filter.
    bits: u64,
}

/// How many fields [`Fields`] keeps in place.
const INLINE: usize = 8;

/// The filler of [`Fields`]' unused slots.
fn blank() -> &'static Member {
    static BLANK: OnceLock<Member> = OnceLock::new();
    BLANK.get_or_init(|| Member {
        key: Str::default(),
        value: Node {
            span: Span::default(),
            kind: Kind::Null,
        },
    })
}

impl Default for Fields<'_> {
    fn default() -> Self {
        Fields {
            inline: [("", blank()); INLINE],
            len: 0,
            spilled: Vec::new(),
            bits: 0,
        }
    }
}

/// The filter bit of a field name: from its length and last byte.
#[inline]
fn name_bit(name: &str) -> u64 {
    let last = name.as_bytes().last().copied().unwrap_or(0) as usize;
    1 << ((name.len() * 7 + last) % 64)
}

impl<'a> Fields<'a> {
    /// Room for `n` fields.
    pub fn with_capacity(n: usize) -> Fields<'a> {
        let mut out = Fields::default();
        if n > INLINE {
            out.spilled.reserve_exact(n);
        }
        out
    }

    fn as_slice(&self) -> &[(&'static str, &'a Member)] {
        if self.len > INLINE {
            &self.spilled
        } else {
            self.inline.get(..self.len).unwrap_or_default()
        }
    }

    /// Add `name` unless it is there already.
    pub fn insert_first(&mut self, name: &'static str, m: &'a Member) {
        if self.contains_key(name) {
            return;
        }
        if self.len < INLINE {
            self.inline[self.len] = (name, m);
        } else {
            if self.len == INLINE {
                self.spilled.extend_from_slice(&self.inline);
            }
            self.spilled.push((name, m));
        }
        self.len += 1;
        self.bits |= name_bit(name);
    }

    /// The member of `name`.
    #[inline]
    pub fn get(&self, name: &str) -> Option<&&'a Member> {
        if self.bits & name_bit(name) == 0 {
            return None;
        }
        self.as_slice()
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, m)| m)
    }

    /// Was `name` written?
    #[inline]
    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// How many fields there are.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The fields in file order.
    pub fn iter(&self) -> std::slice::Iter<'_, (&'static str, &'a Member)> {
        self.as_slice().iter()
    }

    /// The field names in file order.
    pub fn keys(&self) -> impl Iterator<Item = &&'static str> + '_ {
        self.iter().map(|(k, _)| k)
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
        self.iter()
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

/// The values of a streamed phase's hot fields, moved out of its part of the tree (which is
/// dropped once the phase is lowered) so the IR takes them over instead of copying them. Each
/// is the value of the field's first member (the one [`Fields`] keeps), moved only when it
/// has the type the field wants: `id` a non-empty string, `agent` and `task` strings,
/// `dependsOn` an array (its elements). The member keeps its type and spans, so every check of
/// the field reads the same; only the moved text is gone from the tree.
#[derive(Default)]
pub(crate) struct Taken {
    pub(crate) id: Option<String>,
    pub(crate) agent: Option<String>,
    pub(crate) task: Option<Str>,
    pub(crate) depends_on: Option<Vec<Node>>,
}

impl Taken {
    /// Move the hot fields' values out of `node`, a phase object (nothing for other nodes).
    pub(crate) fn from_phase(node: &mut Node) -> Taken {
        let mut out = Taken::default();
        let Kind::Object(members) = &mut node.kind else {
            return out;
        };
        let mut seen = [false; 4];
        for m in members.iter_mut() {
            let slot = match m.key.value.as_str() {
                "id" => 0,
                "agent" => 1,
                "task" => 2,
                "dependsOn" => 3,
                _ => continue,
            };
            if std::mem::replace(&mut seen[slot], true) {
                continue;
            }
            match (slot, &mut m.value.kind) {
                (0, Kind::String(s)) if !s.value.is_empty() => {
                    out.id = Some(std::mem::take(&mut s.value))
                }
                (1, Kind::String(s)) => out.agent = Some(std::mem::take(&mut s.value)),
                (2, Kind::String(s)) => out.task = Some(std::mem::take(s)),
                (3, Kind::Array(items)) => out.depends_on = Some(std::mem::take(items)),
                _ => {}
            }
        }
        out
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_keep_the_first_of_each_name_in_order_past_the_inline_slots() {
        let names: [&'static str; 12] =
            ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"];
        let text = format!(
            "{{{}}}",
            names
                .iter()
                .map(|n| format!("\"{n}\": 1"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let root = crate::json::parse(&text).root.expect("an object");
        let Kind::Object(members) = &root.kind else {
            panic!("an object")
        };
        for n in [3, 8, 9, 12] {
            let mut f = Fields::with_capacity(n);
            for (name, m) in names.iter().zip(members).take(n) {
                f.insert_first(name, m);
                f.insert_first(name, &members[0]);
            }
            assert_eq!(f.len(), n);
            assert_eq!(f.keys().copied().collect::<Vec<_>>(), names[..n]);
            for (i, name) in names.iter().enumerate() {
                assert_eq!(
                    f.get(name).map(|m| m.key.value.as_str()),
                    (i < n).then_some(*name)
                );
            }
        }
    }
}
