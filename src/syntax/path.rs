//! Placeholder paths: `{steps.scan.json.items.0.id}` split into segments and classified by head
//! once, when a template or condition is parsed, so rendering never re-splits text.

/// One path segment. `index` is set when the segment is a canonical array index
/// (`0` or `[1-9][0-9]*`), which `dig` uses on arrays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seg {
    pub key: Box<str>,
    pub index: Option<u32>,
}

impl Seg {
    fn new(key: &str) -> Seg {
        let canonical = key == "0"
            || (!key.is_empty()
                && !key.starts_with('0')
                && key.len() <= 10
                && key.bytes().all(|b| b.is_ascii_digit()));
        Seg {
            key: key.into(),
            index: if canonical { key.parse().ok() } else { None },
        }
    }
}

/// What a path reads, decided by its head (SPEC §4.3).
#[derive(Clone, Debug, PartialEq, Eq)]
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

/// A parsed placeholder path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefPath {
    /// The path as written, without braces: `steps.scan.json.items`.
    pub text: Box<str>,
    pub segs: Box<[Seg]>,
    pub target: Target,
}

impl RefPath {
    /// Split `text` at `.` and classify it. Never fails: odd paths simply never resolve.
    pub fn parse(text: &str) -> RefPath {
        let segs: Box<[Seg]> = text.split('.').map(Seg::new).collect();
        let key = |i: usize| segs.get(i).map(|s| &*s.key);
        let target = match key(0).unwrap_or("") {
            "args" => Target::Args,
            "previous" if key(1) == Some("output") => Target::Previous,
            "previous" => Target::Never,
            "reflexion" if segs.len() == 1 => Target::Reflexion,
            "reflexion" => Target::Never,
            "steps" => match (key(2), segs.len()) {
                (Some("output"), 3) => Target::StepOutput,
                (Some("json"), _) => Target::StepJson,
                _ => Target::Never,
            },
            _ => Target::Local,
        };
        RefPath {
            text: text.into(),
            segs,
            target,
        }
    }

    pub fn head(&self) -> &str {
        &self.segs[0].key
    }

    /// The phase id of a `steps.ID…` path.
    pub fn step_id(&self) -> Option<&str> {
        if self.head() == "steps" {
            self.segs.get(1).map(|s| &*s.key)
        } else {
            None
        }
    }

    /// The segments `dig` walks after the root value of the target.
    pub fn dig_path(&self) -> &[Seg] {
        let from = match self.target {
            Target::Args | Target::Local => 1,
            Target::StepJson => 3,
            _ => self.segs.len(),
        };
        &self.segs[from.min(self.segs.len())..]
    }
}

/// Does `text` match the placeholder grammar `[a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*`?
pub fn is_placeholder_path(text: &str) -> bool {
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
