//! The GenAI client metrics (OpenTelemetry semantic conventions): `gen_ai.client.token.usage`
//! (tokens per call, by `gen_ai.token.type`) and `gen_ai.client.operation.duration` (seconds
//! per call), as explicit-bucket histograms with the conventions' advised boundaries, kept per
//! operation, provider (the backend) and model. Cumulative: each export carries the totals
//! since the process started recording.

/// Advised boundaries of `gen_ai.client.token.usage`.
pub const TOKEN_BOUNDS: &[f64] = &[
    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0,
    16777216.0, 67108864.0,
];

/// Advised boundaries of `gen_ai.client.operation.duration` (seconds).
pub const DURATION_BOUNDS: &[f64] = &[
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/// One histogram's data point.
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    /// Upper bounds of the buckets (one more bucket holds the rest).
    pub bounds: &'static [f64],
    /// Counts per bucket (`bounds.len() + 1`).
    pub counts: Vec<u64>,
    /// Values recorded.
    pub count: u64,
    /// Their sum.
    pub sum: f64,
    /// The least.
    pub min: f64,
    /// The greatest.
    pub max: f64,
}

impl Histogram {
    fn new(bounds: &'static [f64]) -> Histogram {
        Histogram {
            bounds,
            counts: vec![0; bounds.len() + 1],
            count: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }

    /// Add the values `other` recorded (same bounds).
    fn add(&mut self, other: &Histogram) {
        for (c, o) in self.counts.iter_mut().zip(&other.counts) {
            *c += o;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Count `v` (a bucket holds values up to and including its bound).
    pub fn record(&mut self, v: f64) {
        let i = self.bounds.partition_point(|b| *b < v);
        self.counts[i] += 1;
        self.count += 1;
        self.sum += v;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }
}

/// What a data point is kept by: its attributes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Point {
    /// `gen_ai.operation.name`.
    pub operation: &'static str,
    /// `gen_ai.provider.name`: the backend.
    pub provider: String,
    /// `gen_ai.request.model`, when known.
    pub model: Option<String>,
    /// `gen_ai.token.type` (`input` or `output`) of a token histogram.
    pub token_type: Option<&'static str>,
    /// `error.type` of a failed call's duration.
    pub error: Option<&'static str>,
}

/// The two histograms, per data point (a run has few: a linear search finds one without
/// building a key).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Metrics {
    /// `gen_ai.client.token.usage`.
    pub tokens: Vec<(Point, Histogram)>,
    /// `gen_ai.client.operation.duration`.
    pub duration: Vec<(Point, Histogram)>,
    /// When recording started (ns since the epoch).
    pub start_ns: u64,
}

impl Metrics {
    /// Empty, recording from `start_ns`.
    pub fn new(start_ns: u64) -> Metrics {
        Metrics {
            start_ns,
            ..Metrics::default()
        }
    }

    /// One call: its duration, and its tokens when the backend reported them.
    pub fn call(&mut self, call: Call<'_>, seconds: f64, tokens: Option<(u64, u64)>) {
        if let Some((input, output)) = tokens {
            for (ty, n) in [("input", input), ("output", output)] {
                point(&mut self.tokens, &call, Some(ty), None, TOKEN_BOUNDS).record(n as f64);
            }
        }
        point(&mut self.duration, &call, None, call.error, DURATION_BOUNDS)
            .record(seconds.max(0.0));
    }

    /// Nothing recorded yet.
    pub fn is_empty(&self) -> bool {
        self.duration.is_empty() && self.tokens.is_empty()
    }

    /// Add the calls `other` counted (another run's) to these totals.
    pub fn merge(&mut self, other: &Metrics) {
        if self.is_empty() {
            self.start_ns = other.start_ns;
        }
        self.start_ns = self.start_ns.min(other.start_ns);
        for (mine, theirs) in [
            (&mut self.tokens, &other.tokens),
            (&mut self.duration, &other.duration),
        ] {
            for (p, h) in theirs {
                match mine.iter_mut().find(|(q, _)| q == p) {
                    Some((_, total)) => total.add(h),
                    None => mine.push((p.clone(), h.clone())),
                }
            }
        }
    }
}

/// What one call's data points are kept by, borrowed.
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    /// `gen_ai.operation.name`.
    pub operation: &'static str,
    /// `gen_ai.provider.name`.
    pub provider: &'a str,
    /// `gen_ai.request.model`.
    pub model: Option<&'a str>,
    /// `error.type`, when it failed.
    pub error: Option<&'static str>,
}

/// The histogram of `call`'s point in `list`, made when new.
fn point<'l>(
    list: &'l mut Vec<(Point, Histogram)>,
    call: &Call<'_>,
    token_type: Option<&'static str>,
    error: Option<&'static str>,
    bounds: &'static [f64],
) -> &'l mut Histogram {
    let found = list.iter().position(|(p, _)| {
        p.operation == call.operation
            && p.provider == call.provider
            && p.model.as_deref() == call.model
            && p.token_type == token_type
            && p.error == error
    });
    let i = found.unwrap_or_else(|| {
        list.push((
            Point {
                operation: call.operation,
                provider: call.provider.to_owned(),
                model: call.model.map(str::to_owned),
                token_type,
                error,
            },
            Histogram::new(bounds),
        ));
        list.len() - 1
    });
    &mut list[i].1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call() -> Call<'static> {
        Call {
            operation: "invoke_agent",
            provider: "claude",
            model: Some("sonnet"),
            error: None,
        }
    }

    #[test]
    fn merged_totals_are_those_of_both_runs() {
        let (mut a, mut b) = (Metrics::new(5), Metrics::new(3));
        a.call(call(), 0.5, Some((10, 2)));
        b.call(call(), 1.5, Some((30, 4)));
        b.call(
            Call {
                provider: "codex",
                ..call()
            },
            2.0,
            None,
        );
        a.merge(&b);
        assert_eq!(a.start_ns, 3);
        assert_eq!(a.duration.len(), 2, "one point per provider");
        let claude = &a.duration[0].1;
        assert_eq!(
            (claude.count, claude.sum, claude.min, claude.max),
            (2, 2.0, 0.5, 1.5)
        );
        let input = &a.tokens[0].1;
        assert_eq!((input.count, input.sum), (2, 40.0));
        let mut empty = Metrics::new(9);
        empty.merge(&b);
        assert_eq!(empty, b, "merged into nothing: the same totals");
    }

    #[test]
    fn buckets_hold_values_up_to_their_bound() {
        let mut h = Histogram::new(&[1.0, 4.0]);
        for v in [0.5, 1.0, 1.5, 4.0, 9.0] {
            h.record(v);
        }
        assert_eq!(h.counts, vec![2, 2, 1]);
        assert_eq!((h.count, h.sum, h.min, h.max), (5, 16.0, 0.5, 9.0));
    }

    #[test]
    fn calls_are_kept_per_point_and_token_type() {
        let mut m = Metrics::new(7);
        m.call(call(), 1.5, Some((100, 20)));
        m.call(call(), 0.5, None);
        m.call(
            Call {
                error: Some("timeout"),
                ..call()
            },
            0.5,
            None,
        );
        assert_eq!(
            m.duration.len(),
            2,
            "a failed call's duration is its own point"
        );
        assert_eq!(m.duration[0].1.count, 2);
        assert_eq!(m.duration[0].0.model.as_deref(), Some("sonnet"));
        assert_eq!(m.tokens.len(), 2);
        assert_eq!(m.tokens[0].0.token_type, Some("input"));
        assert_eq!(m.tokens[0].1.sum, 100.0);
    }
}
