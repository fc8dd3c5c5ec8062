//! Source text and byte spans.
//!
//! Every stage of the pipeline reports positions as [`Span`]s: half-open byte ranges into the
//! text of one [`Source`]. Spans inside a decoded JSON string are mapped back to file offsets by
//! the JSON reader, so a placeholder in `"task": "a \"{x}\""` is underlined exactly.

use std::fmt;

/// A half-open byte range `start..end` into a source text.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Span {
    /// The first byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// `start..end`.
    pub const fn new(start: u32, end: u32) -> Span {
        Span { start, end }
    }

    /// Span from `usize` offsets (sources are limited to 4 GiB).
    pub(crate) fn from_range(range: std::ops::Range<usize>) -> Span {
        Span::new(range.start as u32, range.end as u32)
    }

    /// The span as a `usize` range, for slicing.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    /// Its length in bytes.
    pub fn len(self) -> u32 {
        self.end - self.start
    }

    /// Is it empty (a point)?
    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// This span moved right by `by` bytes (a span relative to a sub-text made absolute).
    pub fn shift(self, by: u32) -> Span {
        Span::new(self.start + by, self.end + by)
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }
}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// A value with the span it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Spanned<T> {
    /// The value.
    pub node: T,
    /// Where it came from.
    pub span: Span,
}

impl<T> Spanned<T> {
    /// `node` at `span`.
    pub fn new(node: T, span: Span) -> Self {
        Spanned { node, span }
    }
}

/// A named source text with its line starts, for line/column lookups.
#[derive(Debug, Clone)]
pub struct Source {
    /// The name shown in diagnostics (usually the file path).
    pub name: String,
    /// The whole text.
    pub text: String,
    line_starts: Vec<u32>,
}

impl Source {
    /// A source, with its line starts indexed.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Source {
        let text = text.into();
        let mut line_starts = vec![0];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i as u32 + 1),
        );
        Source {
            name: name.into(),
            text,
            line_starts,
        }
    }

    /// 1-based line and column (in chars) of a byte offset.
    pub fn line_col(&self, offset: u32) -> (u32, u32) {
        let offset = offset.min(self.text.len() as u32);
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line] as usize;
        let mut end = offset as usize;
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let col = self.text[start..end].chars().count() as u32 + 1;
        (line as u32 + 1, col)
    }

    /// The 0-based line a byte offset is on (offsets past the end: the last line).
    pub(crate) fn line_index(&self, offset: usize) -> usize {
        let offset = offset.min(self.text.len()) as u32;
        self.line_starts.partition_point(|&s| s <= offset) - 1
    }

    /// The byte range of 0-based line `line`, its `\n` included (clamped to the last line).
    pub(crate) fn line_range(&self, line: usize) -> std::ops::Range<usize> {
        let line = line.min(self.line_starts.len() - 1);
        let start = self.line_starts[line] as usize;
        let end = self
            .line_starts
            .get(line + 1)
            .map_or(self.text.len(), |&s| s as usize);
        start..end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_lines_and_chars() {
        let s = Source::new("f", "ab\néx\n");
        assert_eq!(s.line_col(0), (1, 1));
        assert_eq!(s.line_col(3), (2, 1));
        assert_eq!(s.line_col(5), (2, 2));
        assert_eq!(s.line_col(7), (3, 1));
        assert_eq!(
            (s.line_index(0), s.line_index(2), s.line_index(3)),
            (0, 0, 1)
        );
        assert_eq!(
            (s.line_range(0), s.line_range(1), s.line_range(2)),
            (0..3, 3..7, 7..7)
        );
        assert_eq!((s.line_index(99), s.line_range(99)), (2, 7..7));
    }
}
