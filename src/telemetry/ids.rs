//! Trace and span ids, and the W3C `traceparent` header that carries them between processes
//! (<https://www.w3.org/TR/trace-context/>): `00-<trace id>-<parent id>-<flags>`.

use std::fmt;

/// A 16-byte trace id (never all zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TraceId(pub [u8; 16]);

/// An 8-byte span id (never all zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SpanId(pub [u8; 8]);

impl fmt::Display for TraceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        hex(&self.0, f)
    }
}

impl fmt::Display for SpanId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        hex(&self.0, f)
    }
}

fn hex(bytes: &[u8], f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let mut buf = [0u8; 32];
    f.write_str(hex_into(bytes, &mut buf))
}

/// Lowercase hex of `bytes` (at most 16) in `buf`: a table, not the formatter (ids are
/// written on the run's path, once per call and script).
fn hex_into<'b>(bytes: &[u8], buf: &'b mut [u8; 32]) -> &'b str {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let n = bytes.len().min(16);
    for (i, b) in bytes[..n].iter().enumerate() {
        buf[2 * i] = DIGITS[usize::from(b >> 4)];
        buf[2 * i + 1] = DIGITS[usize::from(b & 15)];
    }
    std::str::from_utf8(&buf[..2 * n]).unwrap_or_default()
}

/// Lowercase hex of exactly `N` bytes, not all zero.
fn unhex<const N: usize>(s: &str) -> Option<[u8; N]> {
    let b = s.as_bytes();
    if b.len() != 2 * N {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; N];
    for (i, pair) in b.chunks_exact(2).enumerate() {
        out[i] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    (out != [0u8; N]).then_some(out)
}

impl TraceId {
    /// Parse 32 lowercase hex digits (not all zero).
    pub fn parse(s: &str) -> Option<TraceId> {
        unhex(s).map(TraceId)
    }
}

impl SpanId {
    /// Parse 16 lowercase hex digits (not all zero).
    pub fn parse(s: &str) -> Option<SpanId> {
        unhex(s).map(SpanId)
    }
}

/// A span in another process or run: what a `traceparent` names, or a link's target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpanContext {
    /// Its trace.
    pub trace: TraceId,
    /// The span.
    pub span: SpanId,
    /// The `sampled` flag: the caller records this trace.
    pub sampled: bool,
}

impl SpanContext {
    /// Read a `traceparent` value. Version `00` must have exactly four fields; a later version
    /// may add fields after the flags (the header's forward-compatibility rule); version `ff`,
    /// uppercase hex and all-zero ids are invalid.
    pub fn from_traceparent(value: &str) -> Option<SpanContext> {
        let mut parts = value.trim().split('-');
        let version = parts.next()?;
        let (trace, span, flags) = (parts.next()?, parts.next()?, parts.next()?);
        let extra = parts.next().is_some();
        if version.len() != 2 || version == "ff" || u8::from_str_radix(version, 16).is_err() {
            return None;
        }
        if version.bytes().any(|c| c.is_ascii_uppercase()) || (version == "00" && extra) {
            return None;
        }
        if flags.len() != 2 || flags.bytes().any(|c| c.is_ascii_uppercase()) {
            return None;
        }
        let flags = u8::from_str_radix(flags, 16).ok()?;
        Some(SpanContext {
            trace: TraceId::parse(trace)?,
            span: SpanId::parse(span)?,
            sampled: flags & 1 == 1,
        })
    }

    /// The `traceparent` value naming this span (version 00).
    pub fn traceparent(&self) -> String {
        let mut out = String::with_capacity(55);
        let mut buf = [0u8; 32];
        out.push_str("00-");
        out.push_str(hex_into(&self.trace.0, &mut buf));
        out.push('-');
        out.push_str(hex_into(&self.span.0, &mut buf));
        out.push_str(if self.sampled { "-01" } else { "-00" });
        out
    }
}

impl SpanId {
    /// The span id of operation `op` of the run traced as `trace`: a function of the two, so
    /// that another process (a Temporal worker running the operation) names the same span
    /// as the process recording it.
    pub fn of_op(trace: TraceId, op: u64) -> SpanId {
        let (hi, lo) = trace.0.split_at(8);
        let mut ids = IdGen(
            u64::from_be_bytes(hi.try_into().unwrap_or_default())
                ^ u64::from_be_bytes(lo.try_into().unwrap_or_default()).rotate_left(29)
                ^ op.wrapping_mul(0xd6e8_feb8_6659_fd93),
        );
        ids.span()
    }

    /// The span id of attempt `attempt` of the call of node `node` in the run traced as
    /// `trace`: for calls that are not the run's operations (a Temporal shard's), named the
    /// same by the worker that makes the call and the process recording it.
    pub fn of_call(trace: TraceId, node: &str, attempt: u32) -> SpanId {
        // FNV-1a: the same in every process (no per-process hash seed).
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in node.bytes().chain(attempt.to_le_bytes()) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        SpanId::of_op(trace, h.rotate_left(32) ^ 0x5348_4152_4443_414c)
    }
}

/// Random ids: splitmix64 seeded from the clock, the process id and an address. Not for
/// secrets; unique enough for traces (128 and 64 random bits).
#[derive(Clone, Debug)]
pub struct IdGen(u64);

impl IdGen {
    /// A generator seeded from this moment.
    pub fn new() -> IdGen {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let local = 0u8;
        let addr = &local as *const u8 as u64;
        IdGen(nanos ^ (u64::from(std::process::id()) << 32) ^ addr.rotate_left(17))
    }

    /// A generator with a fixed seed (tests).
    pub fn seeded(seed: u64) -> IdGen {
        IdGen(seed)
    }

    /// The generator of the spans under root `root` of trace `trace`: the same sequence in
    /// every process, so that two processes told the same run name its spans alike.
    pub fn under(trace: TraceId, root: SpanId) -> IdGen {
        let (hi, lo) = trace.0.split_at(8);
        IdGen(
            u64::from_be_bytes(root.0)
                ^ u64::from_be_bytes(hi.try_into().unwrap_or_default()).rotate_left(13)
                ^ u64::from_be_bytes(lo.try_into().unwrap_or_default()).rotate_left(41)
                ^ 0x7370_616e_7321_2121,
        )
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A fresh span id.
    pub fn span(&mut self) -> SpanId {
        loop {
            let v = self.next();
            if v != 0 {
                return SpanId(v.to_be_bytes());
            }
        }
    }

    /// A fresh trace id.
    pub fn trace(&mut self) -> TraceId {
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&self.next().to_be_bytes());
        out[8..].copy_from_slice(&self.span().0);
        TraceId(out)
    }
}

impl Default for IdGen {
    fn default() -> IdGen {
        IdGen::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TP: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn call_ids_are_a_function_of_trace_node_and_attempt() {
        let t = TraceId([7; 16]);
        let id = SpanId::of_call(t, "each#3", 1);
        assert_eq!(id, SpanId::of_call(t, "each#3", 1));
        assert_eq!(
            id.to_string(),
            "90006c034c7e0395",
            "stable across versions and hosts"
        );
        for other in [
            SpanId::of_call(t, "each#3", 2),
            SpanId::of_call(t, "each#4", 1),
            SpanId::of_call(TraceId([8; 16]), "each#3", 1),
        ] {
            assert_ne!(id, other);
        }
    }

    #[test]
    fn a_traceparent_round_trips() {
        let c = SpanContext::from_traceparent(TP).expect("valid");
        assert_eq!(c.trace.to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(c.span.to_string(), "00f067aa0ba902b7");
        assert!(c.sampled);
        assert_eq!(c.traceparent(), TP);
        let unsampled = SpanContext::from_traceparent(&TP.replace("-01", "-00")).unwrap();
        assert!(!unsampled.sampled);
    }

    #[test]
    fn invalid_traceparents_are_refused() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "0x-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-zz",
        ] {
            assert_eq!(SpanContext::from_traceparent(bad), None, "{bad:?}");
        }
        // A later version may carry more fields.
        let future = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more";
        assert!(SpanContext::from_traceparent(future).is_some());
    }

    #[test]
    fn operation_span_ids_are_the_same_everywhere_and_distinct() {
        let t = TraceId([7; 16]);
        assert_eq!(SpanId::of_op(t, 3), SpanId::of_op(t, 3));
        let ids: std::collections::HashSet<SpanId> =
            (0..10_000).map(|op| SpanId::of_op(t, op)).collect();
        assert_eq!(ids.len(), 10_000);
        assert_ne!(SpanId::of_op(t, 3), SpanId::of_op(TraceId([8; 16]), 3));
    }

    #[test]
    fn generated_ids_are_distinct_and_non_zero() {
        let mut g = IdGen::seeded(0);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..10_000 {
            let s = g.span();
            assert_ne!(s.0, [0; 8]);
            assert!(seen.insert(s));
        }
        assert_ne!(g.trace(), g.trace());
    }
}
