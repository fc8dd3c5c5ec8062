//! Output capture: capped byte buffers ([`Keep`]), splitting stdout into lines for a line
//! handler.

use std::collections::VecDeque;

use super::spec::{Keep, LineFlow};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fed {
    /// No complete line yet.
    More,
    /// The handler's answer to the last line (an `Abort` or `Settle` wins over later ones).
    Flow(LineFlow),
    TooLong,
}

/// Split `bytes` into lines (`eof`: the rest is a last line) and hand them to `on_line`.
pub(crate) fn feed_lines(
    pending: &mut Vec<u8>,
    mut bytes: &[u8],
    eof: bool,
    max: usize,
    on_line: &mut (dyn FnMut(&[u8]) -> LineFlow + Send),
) -> Fed {
    let mut result = Fed::More;
    let mut deliver = |line: &[u8], result: &mut Fed| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let flow = on_line(line);
        match (*result, flow) {
            (Fed::Flow(LineFlow::Abort), _) => {}
            (_, LineFlow::Abort) => *result = Fed::Flow(LineFlow::Abort),
            (Fed::Flow(LineFlow::Settle(_)), LineFlow::Continue) => {}
            (_, f) => *result = Fed::Flow(f),
        }
        matches!(flow, LineFlow::Abort)
    };
    while let Some(i) = bytes.iter().position(|b| *b == b'\n') {
        if pending.len() + i > max {
            return Fed::TooLong;
        }
        let stop = if pending.is_empty() {
            deliver(&bytes[..i], &mut result)
        } else {
            pending.extend_from_slice(&bytes[..i]);
            let line = std::mem::take(pending);
            deliver(&line, &mut result)
        };
        bytes = &bytes[i + 1..];
        if stop {
            return result;
        }
    }
    if pending.len() + bytes.len() > max {
        return Fed::TooLong;
    }
    pending.extend_from_slice(bytes);
    if eof && !pending.is_empty() {
        let line = std::mem::take(pending);
        deliver(&line, &mut result);
    }
    result
}

/// A capped byte buffer.
pub(crate) struct Capture {
    keep: Keep,
    buf: VecDeque<u8>,
    pub(crate) truncated: bool,
}

impl Capture {
    pub(crate) fn new(keep: Keep) -> Capture {
        Capture {
            keep,
            buf: VecDeque::new(),
            truncated: false,
        }
    }

    pub(crate) fn push(&mut self, bytes: &[u8]) {
        match self.keep {
            Keep::Head(n) => {
                let room = n.saturating_sub(self.buf.len());
                if bytes.len() > room {
                    self.truncated = true;
                }
                self.buf.extend(&bytes[..bytes.len().min(room)]);
            }
            Keep::Tail(n) => {
                let bytes = if bytes.len() > n {
                    self.truncated = true;
                    &bytes[bytes.len() - n..]
                } else {
                    bytes
                };
                let over = (self.buf.len() + bytes.len()).saturating_sub(n);
                if over > 0 {
                    self.truncated = true;
                    self.buf.drain(..over);
                }
                self.buf.extend(bytes);
            }
        }
    }

    pub(crate) fn bytes(&mut self) -> Vec<u8> {
        self.buf.make_contiguous().to_vec()
    }

    pub(crate) fn into_bytes(self) -> Vec<u8> {
        Vec::from(self.buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(chunks: &[&[u8]], max: usize) -> (Vec<String>, Fed) {
        let mut got = Vec::new();
        let mut pending = Vec::new();
        let mut last = Fed::More;
        let mut on_line = |l: &[u8]| {
            got.push(String::from_utf8_lossy(l).into_owned());
            LineFlow::Continue
        };
        for (i, c) in chunks.iter().enumerate() {
            last = feed_lines(&mut pending, c, i + 1 == chunks.len(), max, &mut on_line);
            if last == Fed::TooLong {
                break;
            }
        }
        (got, last)
    }

    #[test]
    fn lines_split_across_chunks() {
        let (got, _) = lines(&[b"{\"a\"", b":1}\r\n{\"b\":2}\n", b"tail", b""], 100);
        assert_eq!(got, ["{\"a\":1}", "{\"b\":2}", "tail"]);
    }

    #[test]
    fn line_cap_counts_pending_bytes() {
        assert_eq!(
            lines(&[b"12345", b"6\n"], 6).1,
            Fed::Flow(LineFlow::Continue)
        );
        assert_eq!(lines(&[b"12345", b"67\n"], 6).1, Fed::TooLong);
        assert_eq!(lines(&[b"1234567"], 6).1, Fed::TooLong);
    }

    #[test]
    fn capture_head_and_tail() {
        let mut h = Capture::new(Keep::Head(4));
        h.push(b"ab");
        h.push(b"cdef");
        assert_eq!((h.bytes(), h.truncated), (b"abcd".to_vec(), true));
        let mut t = Capture::new(Keep::Tail(4));
        t.push(b"ab");
        assert!(!t.truncated);
        t.push(b"cdef");
        t.push(b"g");
        assert_eq!((t.bytes(), t.truncated), (b"defg".to_vec(), true));
        t.push(b"0123456789");
        assert_eq!(t.bytes(), b"6789");
    }
}
