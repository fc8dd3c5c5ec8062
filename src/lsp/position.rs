//! The one place where byte offsets (tfc's [`Span`]s) and LSP positions meet.
//!
//! An LSP position is a 0-based line and a column counted in UTF-16 code units (the default)
//! or in bytes (when the client offers `utf-8` and the server chose it). Lines end at `\n`,
//! `\r\n` or a lone `\r`; a column past the end of its line means the end of the line, a line
//! past the end of the text means the end of the text, and a column inside a character (the
//! second half of a surrogate pair) means that character's start.

use lsp_types::{Position, Range};

use crate::source::Span;

/// How columns are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-16 code units (the LSP default).
    Utf16,
    /// Bytes of UTF-8.
    Utf8,
}

impl Encoding {
    /// The length of `c` in this encoding's units.
    fn len(self, c: char) -> u32 {
        match self {
            Encoding::Utf16 => c.len_utf16() as u32,
            Encoding::Utf8 => c.len_utf8() as u32,
        }
    }
}

/// The line starts of one text, for converting offsets and positions both ways.
#[derive(Clone, Debug)]
pub struct LineIndex {
    /// Byte offset of every line's first byte; `starts[0] == 0`.
    starts: Vec<u32>,
    /// How columns are counted.
    pub encoding: Encoding,
}

impl LineIndex {
    /// Index the lines of `text`.
    pub fn new(text: &str, encoding: Encoding) -> LineIndex {
        let b = text.as_bytes();
        let mut starts = vec![0];
        for i in memchr::memchr2_iter(b'\n', b'\r', b) {
            // `\r\n` is one break, after the `\n`.
            if b[i] == b'\n' || b.get(i + 1) != Some(&b'\n') {
                starts.push(i as u32 + 1);
            }
        }
        LineIndex { starts, encoding }
    }

    /// The byte range of line `line`'s content (its line break left out).
    fn content(&self, text: &str, line: usize) -> (usize, usize) {
        let start = self.starts[line] as usize;
        let mut end = self
            .starts
            .get(line + 1)
            .map_or(text.len(), |&s| s as usize);
        let b = text.as_bytes();
        if end > start && b[end - 1] == b'\n' {
            end -= 1;
        }
        if end > start && b[end - 1] == b'\r' {
            end -= 1;
        }
        (start, end)
    }

    /// The position of byte `offset` (clamped to the text; an offset inside a character or a
    /// line break counts as the character's start or the line's end).
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let offset = offset.min(text.len());
        let line = self.starts.partition_point(|&s| s as usize <= offset) - 1;
        let (start, end) = self.content(text, line);
        let mut at = offset.min(end);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let column = match self.encoding {
            Encoding::Utf8 => (at - start) as u32,
            Encoding::Utf16 => text[start..at].chars().map(char::len_utf16).sum::<usize>() as u32,
        };
        Position::new(line as u32, column)
    }

    /// The byte offset of `pos` (clamped as the module says).
    pub fn offset(&self, text: &str, pos: Position) -> usize {
        let Some(&line_start) = self.starts.get(pos.line as usize) else {
            return text.len();
        };
        let (start, end) = self.content(text, pos.line as usize);
        debug_assert_eq!(start, line_start as usize);
        let mut units = 0u32;
        for (i, c) in text[start..end].char_indices() {
            let n = self.encoding.len(c);
            if units + n > pos.character {
                return start + i;
            }
            units += n;
        }
        end
    }

    /// The LSP range of a byte span.
    pub fn range(&self, text: &str, span: Span) -> Range {
        Range::new(
            self.position(text, span.start as usize),
            self.position(text, span.end as usize),
        )
    }

    /// The byte span of an LSP range (start and end clamped, end never before start).
    pub fn span(&self, text: &str, range: Range) -> Span {
        let start = self.offset(text, range.start);
        let end = self.offset(text, range.end).max(start);
        Span::new(start as u32, end as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A slow, obviously right model: walk every char, keeping line and column.
    fn model_position(text: &str, offset: usize, enc: Encoding) -> Position {
        let (mut line, mut col) = (0u32, 0u32);
        let mut chars = text.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if i >= offset {
                break;
            }
            match c {
                '\n' => (line, col) = (line + 1, 0),
                '\r' => {
                    if chars.peek().is_some_and(|&(_, n)| n == '\n') {
                        if i + 1 >= offset {
                            // Between `\r` and `\n`: still the end of this line.
                            break;
                        }
                        chars.next();
                    }
                    (line, col) = (line + 1, 0);
                }
                c => {
                    if i + c.len_utf8() > offset {
                        break;
                    }
                    col += enc.len(c);
                }
            }
        }
        Position::new(line, col)
    }

    fn pieces() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("a".to_owned()),
            Just("{".to_owned()),
            Just("é".to_owned()),
            Just("中".to_owned()),
            Just("😀".to_owned()),
            Just("\n".to_owned()),
            Just("\r\n".to_owned()),
            Just("\r".to_owned()),
            Just("\u{10FFFF}".to_owned()),
        ];
        prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
    }

    #[test]
    fn examples() {
        let text = "é😀x\r\nab\rc\n";
        let idx = LineIndex::new(text, Encoding::Utf16);
        // é = 1 unit, 😀 = 2 units.
        assert_eq!(idx.position(text, 2), Position::new(0, 1));
        assert_eq!(idx.position(text, 6), Position::new(0, 3));
        assert_eq!(idx.position(text, 7), Position::new(0, 4)); // the `\r`
        assert_eq!(idx.position(text, 8), Position::new(0, 4)); // between `\r` and `\n`
        assert_eq!(idx.position(text, 9), Position::new(1, 0));
        assert_eq!(idx.position(text, 12), Position::new(2, 0));
        assert_eq!(idx.position(text, 14), Position::new(3, 0));
        // Inside the surrogate pair: the emoji's start.
        assert_eq!(idx.offset(text, Position::new(0, 2)), 2);
        assert_eq!(idx.offset(text, Position::new(0, 3)), 6);
        assert_eq!(idx.offset(text, Position::new(0, 99)), 7);
        assert_eq!(idx.offset(text, Position::new(99, 0)), text.len());
        let utf8 = LineIndex::new(text, Encoding::Utf8);
        assert_eq!(utf8.position(text, 6), Position::new(0, 6));
        assert_eq!(utf8.offset(text, Position::new(0, 6)), 6);
        assert_eq!(utf8.offset(text, Position::new(0, 3)), 2);
    }

    proptest! {
        #[test]
        fn positions_match_the_model(text in pieces(), at in 0usize..200) {
            let at = at.min(text.len());
            for enc in [Encoding::Utf16, Encoding::Utf8] {
                let idx = LineIndex::new(&text, enc);
                prop_assert_eq!(idx.position(&text, at), model_position(&text, at, enc));
            }
        }

        /// Every char boundary that is not inside a line break survives the round trip.
        #[test]
        fn offsets_round_trip(text in pieces()) {
            for enc in [Encoding::Utf16, Encoding::Utf8] {
                let idx = LineIndex::new(&text, enc);
                for (i, _) in text.char_indices().chain([(text.len(), ' ')]) {
                    if i > 0 && text.as_bytes()[i - 1] == b'\r' && text.as_bytes().get(i) == Some(&b'\n') {
                        continue;
                    }
                    let pos = idx.position(&text, i);
                    prop_assert_eq!(idx.offset(&text, pos), i, "{:?} at {}", text, i);
                }
            }
        }

        /// Any position maps to a char boundary, and back to a position no later than it.
        #[test]
        fn any_position_lands_on_a_boundary(text in pieces(), line in 0u32..12, col in 0u32..12) {
            for enc in [Encoding::Utf16, Encoding::Utf8] {
                let idx = LineIndex::new(&text, enc);
                let o = idx.offset(&text, Position::new(line, col));
                prop_assert!(text.is_char_boundary(o));
                let back = idx.position(&text, o);
                prop_assert!(back <= Position::new(line, col) || line as usize >= idx.starts.len());
            }
        }
    }
}
