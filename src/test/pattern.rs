//! Node patterns (SPEC §17): which calls an answer or a `prompts` expectation is about.
//!
//! A node is named at run time `id`, `id#3` (an item or branch), `id@2` (a loop iteration),
//! `id#judge` (a judge), `id#round-1-batch-2` (a tree-reduce batch), and `sub/inner` inside a
//! sub-flow. A pattern is written the same way, with `*` for "any": `review#*` (every item,
//! numeric indices only), `fix@*`, `sub/*`, and `*` alone (every call). A pattern that stops at
//! a phase (`review`, `sub`) covers every call of that phase, nested ones included.
//!
//! When several patterns match a node the most specific wins: more path segments first
//! (`sub/inner` > `sub/*` > `sub` > `*`), then, segment by segment, an exact suffix over a
//! wildcard suffix over none over `*` (`review#0` > `review#*` > `review`).

/// The suffix of one segment: what follows the phase id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Suffix {
    /// None written: every call of the phase.
    None,
    /// `#N`: item or branch N.
    Index(u64),
    /// `#*`: every item or branch (numeric indices only).
    AnyIndex,
    /// `@N`: iteration N.
    Iter(u64),
    /// `@*`: every iteration.
    AnyIter,
    /// `#judge`, `#round-1-batch-2`: a named call of the phase.
    Label(String),
}

/// One `/`-separated part of a pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The phase id; `None` for `*`.
    pub phase: Option<String>,
    /// What follows it.
    pub suffix: Suffix,
}

/// A parsed node pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    /// The segments; empty for `*` (every call).
    pub segments: Vec<Segment>,
}

/// How specific a pattern is: compared as a tuple, larger wins.
pub type Specificity = (usize, Vec<u8>);

impl Pattern {
    /// Parse `text`; `Err` says what is wrong (the caller adds the span).
    pub fn parse(text: &str) -> Result<Pattern, String> {
        if text == "*" {
            return Ok(Pattern {
                segments: Vec::new(),
            });
        }
        if text.is_empty() {
            return Err("an empty node pattern".into());
        }
        let parts: Vec<&str> = text.split('/').collect();
        let mut segments = Vec::with_capacity(parts.len());
        for (i, part) in parts.iter().enumerate() {
            if *part == "*" {
                if i + 1 != parts.len() {
                    return Err(format!(
                        "'{text}': `*` may only end a pattern (as in `sub/*`)"
                    ));
                }
                segments.push(Segment {
                    phase: None,
                    suffix: Suffix::None,
                });
                continue;
            }
            segments.push(parse_segment(part, text, true)?);
        }
        Ok(Pattern { segments })
    }

    /// Does this pattern cover the call named `node`?
    pub fn matches(&self, node: &str) -> bool {
        let node: Vec<&str> = node.split('/').collect();
        if self.segments.len() > node.len() {
            return false;
        }
        self.segments.iter().zip(&node).all(|(s, n)| {
            let Ok(n) = parse_segment(n, n, false) else {
                return false;
            };
            if let Some(p) = &s.phase
                && *p != n.phase.unwrap_or_default()
            {
                return false;
            }
            match (&s.suffix, &n.suffix) {
                (Suffix::None, _) => true,
                (Suffix::AnyIndex, Suffix::Index(_)) | (Suffix::AnyIter, Suffix::Iter(_)) => true,
                (a, b) => a == b,
            }
        })
    }

    /// How specific the pattern is (see the module doc).
    pub fn specificity(&self) -> Specificity {
        let ranks = self
            .segments
            .iter()
            .map(|s| match (&s.phase, &s.suffix) {
                (None, _) => 0,
                (Some(_), Suffix::None) => 1,
                (Some(_), Suffix::AnyIndex | Suffix::AnyIter) => 2,
                (Some(_), _) => 3,
            })
            .collect();
        (self.segments.len(), ranks)
    }
}

/// One segment: `id`, `id#N`, `id#*`, `id@N`, `id@*`, `id#label`. Node names (`pattern`
/// false) take no `*`.
fn parse_segment(part: &str, whole: &str, pattern: bool) -> Result<Segment, String> {
    let (phase, suffix) = match part.find(['#', '@']) {
        None => (part, None),
        Some(at) => (&part[..at], Some((&part[at..at + 1], &part[at + 1..]))),
    };
    if phase.is_empty() {
        return Err(format!("'{whole}': a phase id must come before '#' or '@'"));
    }
    if phase.contains('*') {
        return Err(format!(
            "'{whole}': `*` stands for a whole phase id or index, not part of one"
        ));
    }
    let suffix = match suffix {
        None => Suffix::None,
        Some((_, "")) => {
            return Err(format!(
                "'{whole}': nothing after the marker (write `{phase}#0`, `{phase}#*` or `{phase}@1`)"
            ));
        }
        Some(("#", "*")) if pattern => Suffix::AnyIndex,
        Some(("@", "*")) if pattern => Suffix::AnyIter,
        Some(("#", s)) if s.bytes().all(|b| b.is_ascii_digit()) => Suffix::Index(
            s.parse()
                .map_err(|_| format!("'{whole}': index too large"))?,
        ),
        Some(("@", s)) if s.bytes().all(|b| b.is_ascii_digit()) => Suffix::Iter(
            s.parse()
                .map_err(|_| format!("'{whole}': iteration too large"))?,
        ),
        Some(("@", _)) => {
            return Err(format!(
                "'{whole}': an iteration is a number or `*` (as in `{phase}@2`)"
            ));
        }
        Some((_, s)) if s.contains('*') => {
            return Err(format!(
                "'{whole}': `*` after '#' must stand alone (`{phase}#*`)"
            ));
        }
        Some((_, s)) => Suffix::Label(s.to_owned()),
    };
    Ok(Segment {
        phase: Some(phase.to_owned()),
        suffix,
    })
}

/// The index of the most specific of `patterns` that matches `node` (the first written on a
/// tie), if any.
pub fn best_match<'a>(
    patterns: impl IntoIterator<Item = &'a Pattern>,
    node: &str,
) -> Option<usize> {
    let mut best: Option<(usize, Specificity)> = None;
    for (i, p) in patterns.into_iter().enumerate() {
        if !p.matches(node) {
            continue;
        }
        let s = p.specificity();
        if best.as_ref().is_none_or(|(_, b)| s > *b) {
            best = Some((i, s));
        }
    }
    best.map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Pattern {
        Pattern::parse(s).unwrap()
    }

    #[test]
    fn patterns_match_the_nodes_they_name() {
        assert!(p("*").matches("anything#3"));
        assert!(p("review").matches("review"));
        assert!(p("review").matches("review#2"));
        assert!(p("review").matches("review@1"));
        assert!(!p("review").matches("reviewer"));
        assert!(p("review#*").matches("review#0"));
        assert!(!p("review#*").matches("review#judge"));
        assert!(!p("review#*").matches("review"));
        assert!(p("review#1").matches("review#1"));
        assert!(!p("review#1").matches("review#10"));
        assert!(p("fix@2").matches("fix@2"));
        assert!(!p("fix@2").matches("fix#2"));
        assert!(p("fix@*").matches("fix@7"));
        assert!(p("pick#judge").matches("pick#judge"));
        assert!(!p("pick#judge").matches("pick#0"));
        assert!(p("sub/inner").matches("sub/inner"));
        assert!(p("sub/inner").matches("sub/inner#0"));
        assert!(p("sub/*").matches("sub/other@1"));
        assert!(p("sub").matches("sub/inner"));
        assert!(!p("sub/inner").matches("sub"));
        assert!(!p("sub/inner").matches("other/inner"));
    }

    #[test]
    fn the_most_specific_pattern_wins() {
        let pats = [p("*"), p("review"), p("review#*"), p("review#0")];
        assert_eq!(best_match(&pats, "review#0"), Some(3));
        assert_eq!(best_match(&pats, "review#1"), Some(2));
        assert_eq!(best_match(&pats, "review"), Some(1));
        assert_eq!(best_match(&pats, "triage"), Some(0));
        let pats = [p("sub"), p("sub/*"), p("sub/inner"), p("*")];
        assert_eq!(best_match(&pats, "sub/inner"), Some(2));
        assert_eq!(best_match(&pats, "sub/other"), Some(1));
        // Written order breaks a tie; no match is none.
        let pats = [p("a#*"), p("a#*")];
        assert_eq!(best_match(&pats, "a#0"), Some(0));
        assert_eq!(best_match(&[p("a")], "b"), None);
    }

    #[test]
    fn bad_patterns_say_what_is_wrong() {
        for (text, says) in [
            ("", "empty"),
            ("#0", "must come before"),
            ("rev*", "not part of one"),
            ("review#", "nothing after"),
            ("fix@x", "a number or `*`"),
            ("*/inner", "may only end"),
            ("a#x*", "must stand alone"),
        ] {
            let e = Pattern::parse(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
