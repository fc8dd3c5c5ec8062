//! Placeholder paths: `{steps.scan.json.items.0.id}` classified by head once, when a template or
//! condition is parsed. A path keeps its text only: resolution walks the segments straight from
//! it ([`RefPath::dig_keys`]), so parsing allocates once per path and rendering never allocates;
//! the owned [`Seg`] list is built on first request ([`RefPath::segs`]).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// One path segment. `index` is set when the segment is a canonical array index
/// (`0` or `[1-9][0-9]*`), which `dig` uses on arrays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seg {
    /// The segment as written.
    pub key: Box<str>,
    /// The segment as an array index, when it is a canonical one.
    pub index: Option<u32>,
}

impl Seg {
    fn new(key: &str) -> Seg {
        Seg {
            key: key.into(),
            index: canonical_index(key),
        }
    }
}

/// The array index a segment names: `0` or `[1-9][0-9]*` within `u32`; anything else
/// (`01`, `-1`, `1e3`, `4294967296`) names none.
pub(crate) fn canonical_index(key: &str) -> Option<u32> {
    let canonical = key == "0"
        || (!key.is_empty()
            && !key.starts_with('0')
            && key.len() <= 10
            && key.bytes().all(|b| b.is_ascii_digit()));
    if canonical { key.parse().ok() } else { None }
}

/// The segments of a path text, split at `.` (a byte scan: paths are short).
#[derive(Clone, Debug)]
pub struct Keys<'a> {
    rest: Option<&'a str>,
}

impl<'a> Keys<'a> {
    fn new(text: &'a str) -> Keys<'a> {
        Keys { rest: Some(text) }
    }

    /// The keys of `text[from..]`; none when `text` ends before `from`.
    fn after(text: &'a str, from: usize) -> Keys<'a> {
        Keys {
            rest: text.get(from..),
        }
    }

    fn empty() -> Keys<'a> {
        Keys { rest: None }
    }

    /// No segment left.
    pub(crate) fn is_done(&self) -> bool {
        self.rest.is_none()
    }
}

impl<'a> Iterator for Keys<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        let rest = self.rest?;
        match rest.bytes().position(|b| b == b'.') {
            Some(dot) => {
                self.rest = Some(&rest[dot + 1..]);
                Some(&rest[..dot])
            }
            None => {
                self.rest = None;
                Some(rest)
            }
        }
    }
}

/// What a path reads, decided by its head (SPEC §4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `{args}` / `{args.a.b}`: dig into the invocation arguments from segment 1.
    Args,
    /// `{steps.ID.output}` exactly.
    StepOutput,
    /// `{steps.ID.json[.path…]}`: dig into the step's parsed JSON from segment 3.
    StepJson,
    /// `{previous.output[.…]}` (later segments ignored).
    Previous,
    /// bare `{reflexion}`.
    Reflexion,
    /// `{name[.path…]}`: dig into a local (`item` / the map's `as` name, `loop`) from segment 1.
    Local,
    /// A shape that never resolves: `{steps.ID}`, `{steps.ID.output.x}`, `{previous}`,
    /// `{reflexion.x}`, `{steps}`.
    Never,
}

impl Target {
    /// How many leading segments name the root value `dig` starts from; `None` when nothing
    /// is dug.
    fn dig_from(self) -> Option<usize> {
        match self {
            Target::Args | Target::Local => Some(1),
            Target::StepJson => Some(3),
            _ => None,
        }
    }
}

/// A parsed placeholder path. Equality is that of the text (the rest derives from it).
pub struct RefPath {
    /// The path as written, without braces: `steps.scan.json.items`.
    pub text: Box<str>,
    /// What the path reads (classified from its first segments).
    pub target: Target,
    /// The byte range of the phase id in `text`, for a `steps.ID…` path.
    id: Option<(u32, u32)>,
    /// Where the keys `dig` walks start in `text` (none: nothing to dig).
    dig_at: Option<u32>,
    /// Where the phase of a `steps.ID…` path (or the first key of an `args.…` path) last was
    /// in the scope's table: a scope checks that slot first (see [`RefPath::step_slot`]).
    slot: AtomicU32,
    /// The segments as owned values, built on first request.
    segs: OnceLock<Box<[Seg]>>,
}

impl Clone for RefPath {
    fn clone(&self) -> RefPath {
        RefPath {
            text: self.text.clone(),
            target: self.target,
            id: self.id,
            dig_at: self.dig_at,
            slot: AtomicU32::new(self.slot.load(Ordering::Relaxed)),
            segs: self.segs.clone(),
        }
    }
}

impl PartialEq for RefPath {
    fn eq(&self, other: &RefPath) -> bool {
        self.text == other.text
    }
}

impl Eq for RefPath {}

impl std::fmt::Debug for RefPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RefPath")
            .field("text", &self.text)
            .field("segs", &self.segs())
            .field("target", &self.target)
            .finish()
    }
}

impl RefPath {
    /// Classify `text` (split at `.`). Never fails: odd paths simply never resolve.
    pub fn parse(text: &str) -> RefPath {
        // The positions of the first three dots (one pass): the first three segments run
        // between them, and a third dot means there are more.
        let mut dots = [text.len(); 3];
        let mut found = 0;
        for (i, b) in text.bytes().enumerate() {
            if b == b'.' {
                dots[found] = i;
                found += 1;
                if found == dots.len() {
                    break;
                }
            }
        }
        let segment = |k: usize| -> Option<&str> {
            let start = if k == 0 { 0 } else { dots[k - 1] + 1 };
            (k <= found).then(|| text.get(start..dots[k]).unwrap_or(""))
        };
        let head = segment(0).unwrap_or("");
        let second = segment(1);
        let third = segment(2);
        let more = found == dots.len();
        let target = match head {
            "args" => Target::Args,
            "previous" if second == Some("output") => Target::Previous,
            "previous" => Target::Never,
            "reflexion" if second.is_none() => Target::Reflexion,
            "reflexion" => Target::Never,
            "steps" => match (third, more) {
                (Some("output"), false) => Target::StepOutput,
                (Some("json"), _) => Target::StepJson,
                _ => Target::Never,
            },
            _ => Target::Local,
        };
        // Byte offsets just past each of the first three dots.
        let after = |k: usize| (k < found).then(|| dots[k] + 1);
        let id = match (head, after(0)) {
            ("steps", Some(start)) => Some((start as u32, dots[1] as u32)),
            _ => None,
        };
        let dig_at = match target.dig_from() {
            Some(1) => after(0),
            Some(3) => after(2),
            _ => None,
        };
        RefPath {
            text: text.into(),
            target,
            id,
            dig_at: dig_at.map(|d| d as u32),
            slot: AtomicU32::new(0),
            segs: OnceLock::new(),
        }
    }

    /// The slot the phase of this path (or its first argument key) was last found at in a
    /// scope's table.
    pub(crate) fn step_slot(&self) -> usize {
        self.slot.load(Ordering::Relaxed) as usize
    }

    /// Remember where the phase of this path was found (see [`RefPath::step_slot`]).
    pub(crate) fn set_step_slot(&self, slot: usize) {
        if let Ok(slot) = u32::try_from(slot) {
            self.slot.store(slot, Ordering::Relaxed);
        }
    }

    /// The segments' texts, in order.
    pub fn keys(&self) -> Keys<'_> {
        Keys::new(&self.text)
    }

    /// The segments as owned values (built once, on first call).
    pub fn segs(&self) -> &[Seg] {
        self.segs
            .get_or_init(|| self.keys().map(Seg::new).collect())
    }

    /// The first segment (`steps`, `args`, `item`, …); empty for an empty path.
    pub fn head(&self) -> &str {
        self.keys().next().unwrap_or("")
    }

    /// The phase id of a `steps.ID…` path.
    pub(crate) fn step_id(&self) -> Option<&str> {
        let (start, end) = self.id?;
        self.text.get(start as usize..end as usize)
    }

    /// The segments `dig` walks after the root value of the target.
    pub fn dig_path(&self) -> &[Seg] {
        let segs = self.segs();
        let from = self.target.dig_from().unwrap_or(segs.len());
        &segs[from.min(segs.len())..]
    }

    /// The phase id and the dig keys of a `steps.ID.json…` path.
    pub(crate) fn step_json_keys(&self) -> Option<(&str, Keys<'_>)> {
        if self.target != Target::StepJson {
            return None;
        }
        Some((self.step_id()?, self.dig_keys()))
    }

    /// The texts of [`RefPath::dig_path`], read from the path text without allocating.
    pub fn dig_keys(&self) -> Keys<'_> {
        match self.dig_at {
            Some(at) => Keys::after(&self.text, at as usize),
            None => Keys::empty(),
        }
    }
}

/// Does `text` match the placeholder grammar `[a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*`?
pub(crate) fn is_placeholder_path(text: &str) -> bool {
    !text.is_empty()
        && text.split('.').all(|seg| {
            !seg.is_empty()
                && seg
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_heads() {
        let t = |s: &str| RefPath::parse(s).target;
        assert_eq!(t("args"), Target::Args);
        assert_eq!(t("args.a.b"), Target::Args);
        assert_eq!(t("steps.a.output"), Target::StepOutput);
        assert_eq!(t("steps.a.output.x"), Target::Never);
        assert_eq!(t("steps.a.json"), Target::StepJson);
        assert_eq!(t("steps.a.json.x.0"), Target::StepJson);
        assert_eq!(t("steps.a"), Target::Never);
        assert_eq!(t("steps.a.error"), Target::Never);
        assert_eq!(t("previous.output"), Target::Previous);
        assert_eq!(t("previous.output.x"), Target::Previous);
        assert_eq!(t("previous"), Target::Never);
        assert_eq!(t("reflexion"), Target::Reflexion);
        assert_eq!(t("reflexion.x"), Target::Never);
        assert_eq!(t("item.path"), Target::Local);
    }

    #[test]
    fn canonical_indices_only() {
        let p = RefPath::parse("steps.a.json.0.10.01.x.4294967296");
        let idx: Vec<_> = p.dig_path().iter().map(|s| s.index).collect();
        assert_eq!(idx, vec![Some(0), Some(10), None, None, None]);
        assert_eq!(RefPath::parse("steps.a.json").dig_path().len(), 0);
        assert_eq!(RefPath::parse("args.x").dig_path()[0].key.as_ref(), "x");
    }
}

#[cfg(test)]
mod laws {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The views read from the text agree with the owned segments, for any text.
        #[test]
        fn text_views_match_segments(text in "(steps|args|previous|reflexion|output|json|[a-z0-9.]{0,4}|\\.|\\PC{0,3})(\\.(output|json|length|0|01|[a-z0-9]{0,3}|\\PC{0,2})){0,5}") {
            let path = RefPath::parse(&text);
            let split: Vec<&str> = text.split('.').collect();
            prop_assert_eq!(path.keys().collect::<Vec<_>>(), split.clone());
            let segs: Vec<&str> = path.segs().iter().map(|s| &*s.key).collect();
            prop_assert_eq!(&segs, &split);
            let dug: Vec<&str> = path.dig_path().iter().map(|s| &*s.key).collect();
            prop_assert_eq!(path.dig_keys().collect::<Vec<_>>(), dug);
            let id = (split[0] == "steps").then(|| split.get(1).copied()).flatten();
            prop_assert_eq!(path.step_id(), id);
            prop_assert_eq!(path.head(), split[0]);
            if let Some((id, keys)) = path.step_json_keys() {
                prop_assert_eq!(Some(id), path.step_id());
                prop_assert_eq!(keys.collect::<Vec<_>>(), path.dig_keys().collect::<Vec<_>>());
            }
        }
    }
}
