//! Static prompt sizes (SPEC §18 tokens): a template's text without its placeholders, and a
//! phase's pre-read files as they are on disk today (SPEC §3.16, the layout of the run's
//! pre-read prefix).

use crate::flow::{Phase, Text};

/// Characters of a prompt known before the run, and whether run-time values join them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Size {
    /// Characters known now.
    pub chars: u64,
    /// Placeholders (or files named by them) add text at run time.
    pub dynamic: bool,
}

impl Size {
    /// A fixed text.
    pub fn fixed(text: &str) -> Size {
        Size {
            chars: text.chars().count() as u64,
            dynamic: false,
        }
    }

    /// Two parts of one prompt.
    pub fn and(self, o: Size) -> Size {
        Size {
            chars: self.chars + o.chars,
            dynamic: self.dynamic || o.dynamic,
        }
    }

    /// This size, with run-time text added.
    pub fn with_dynamic(self) -> Size {
        Size {
            dynamic: true,
            ..self
        }
    }
}

/// A template's literal text: its characters minus those of its placeholders.
pub fn template(t: &Text) -> Size {
    let src = t.as_str();
    let refs = t.template.refs();
    let mut chars = src.chars().count() as u64;
    for r in refs {
        let placeholder = src.get(r.span.range()).unwrap_or("");
        chars = chars.saturating_sub(placeholder.chars().count() as u64);
    }
    Size {
        chars,
        dynamic: !refs.is_empty(),
    }
}

/// An optional template (absent: nothing).
pub fn optional(t: Option<&Text>) -> Size {
    t.map_or_else(Size::default, template)
}

/// The most the pre-read prefix may hold (SPEC §3.16).
const PRE_READ_TOTAL: u64 = 200_000;

/// The pre-read prefix of `p`'s prompts: its literal `context` files, read by `file` (`None`:
/// not read today, as the run would skip it), in the run's layout; entries with placeholders
/// name files only known at run time.
pub fn pre_read(p: &Phase, file: &dyn Fn(&str) -> Option<String>) -> Size {
    let limit = if p.context_limit.is_finite() && p.context_limit > 0.0 {
        p.context_limit as u64
    } else {
        0
    };
    let mut dynamic = false;
    let mut blocks: Vec<u64> = Vec::new();
    for entry in &p.context {
        if !entry.template.refs().is_empty() {
            dynamic = true;
            continue;
        }
        let path = entry.as_str();
        let Some(content) = file(path) else { continue };
        let ext = std::path::Path::new(path)
            .extension()
            .and_then(|e| e.to_str())
            .filter(|e| !e.is_empty())
            .unwrap_or("txt");
        // "## File: <p>\n\n```<ext>\n" + content + "\n```"
        let head = format!("## File: {path}\n\n```{ext}\n").chars().count() as u64;
        let total = content.chars().count() as u64;
        let body = if total > limit {
            limit + format!("\n... [truncated {} chars]", total - limit).len() as u64
        } else {
            total
        };
        blocks.push(head + body + 4);
    }
    let chars = if blocks.is_empty() {
        0
    } else {
        // Joined by "\n\n", then a trailing "\n\n".
        (blocks.iter().sum::<u64>() + 2 * blocks.len() as u64).min(PRE_READ_TOTAL)
    };
    Size { chars, dynamic }
}
