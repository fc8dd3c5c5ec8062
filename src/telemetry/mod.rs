//! OpenTelemetry export of runs: spans and GenAI metrics sent as OTLP over HTTP to the
//! collector a team already runs (Jaeger, Tempo, Honeycomb, Phoenix, Langfuse, …).
//!
//! Off unless an endpoint is configured ([`settings`]). A run records finished spans as plain
//! data ([`span::Span`]) and hands them over in batches; the [`export`] thread encodes them
//! ([`otlp`], with the official protocol types) and posts them, off the run's path. What a
//! run's spans are — the run, its phases, items, agent calls, scripts — is the run's business
//! (`run::trace`); this module knows only spans, ids ([`ids`], W3C `traceparent`) and
//! [`metrics`].

pub mod export;
pub mod ids;
pub mod metrics;
mod otlp;
pub mod settings;
pub mod span;

use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use ids::{IdGen, SpanContext, SpanId, TraceId};
pub use settings::{Resolved, Settings};
pub use span::Span;

/// Spans a run hands over at once, at most.
pub const BATCH: usize = 2048;

/// Where finished spans go.
enum Sink {
    /// To a collector, through the exporter thread.
    Otlp(export::Exporter),
    /// Kept in memory (tests, and callers that look at spans themselves).
    Memory(Arc<Mutex<Collected>>),
}

/// What a [`Telemetry::in_memory`] sink has received.
#[derive(Debug, Default)]
pub struct Collected {
    /// Every span, in the order they were handed over.
    pub spans: Vec<Span>,
    /// The latest metrics.
    pub metrics: Option<metrics::Metrics>,
}

/// Export switched on: the settings and where spans go. Shared by every run of a process.
pub struct Telemetry {
    settings: Arc<Settings>,
    sink: Sink,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Telemetry {
    /// Export to the collector `settings` name; problems go to `warn`, one line at most.
    pub fn start(settings: Settings, warn: export::Warn) -> Arc<Telemetry> {
        let settings = Arc::new(settings);
        Arc::new(Telemetry {
            sink: Sink::Otlp(export::Exporter::start(settings.clone(), warn)),
            settings,
        })
    }

    /// Keep spans and metrics in memory instead of sending them.
    pub fn in_memory(settings: Settings) -> (Arc<Telemetry>, Arc<Mutex<Collected>>) {
        let collected = Arc::new(Mutex::new(Collected::default()));
        let t = Telemetry {
            settings: Arc::new(settings),
            sink: Sink::Memory(collected.clone()),
        };
        (Arc::new(t), collected)
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// An empty batch for this sink: spans are encoded as they are added when they go to a
    /// collector (on the recording thread, without a message per span), kept as they are in
    /// memory.
    pub fn batch(&self) -> Batch {
        Batch {
            keep: matches!(self.sink, Sink::Memory(_)),
            spans: Vec::new(),
            encoded: Vec::new(),
            scratch: Vec::new(),
            count: 0,
        }
    }

    /// Hand over the spans of `batch` (which is then empty).
    pub fn hand_over(&self, batch: &mut Batch) {
        let count = std::mem::take(&mut batch.count);
        let capacity = batch.encoded.capacity();
        let encoded = std::mem::replace(&mut batch.encoded, Vec::with_capacity(capacity));
        let spans = std::mem::take(&mut batch.spans);
        if count == 0 || self.settings.traces.is_none() {
            return;
        }
        match &self.sink {
            Sink::Otlp(e) => e.spans(encoded, count),
            Sink::Memory(c) => lock(c).spans.extend(spans),
        }
    }

    /// Hand over the metrics' totals as of `now_ns`.
    pub fn metrics(&self, m: &metrics::Metrics, now_ns: u64) {
        if m.is_empty() || self.settings.metrics.is_none() {
            return;
        }
        match &self.sink {
            Sink::Otlp(e) => e.metrics(m.clone(), now_ns),
            Sink::Memory(c) => lock(c).metrics = Some(m.clone()),
        }
    }

    /// Wait, at most `within`, until what was handed over has been sent.
    pub fn flush(&self, within: Duration) -> bool {
        match &self.sink {
            Sink::Otlp(e) => e.flush(within),
            Sink::Memory(_) => true,
        }
    }

    /// What the exporter did so far (zeros for an in-memory sink).
    pub fn stats(&self) -> export::Stats {
        match &self.sink {
            Sink::Otlp(e) => e.stats(),
            Sink::Memory(_) => export::Stats::default(),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Finished spans waiting to be handed over ([`Telemetry::batch`]).
pub struct Batch {
    keep: bool,
    spans: Vec<Span>,
    encoded: Vec<u8>,
    scratch: Vec<u8>,
    count: usize,
}

impl Batch {
    /// Add a finished span.
    pub fn push(&mut self, span: Span) {
        self.count += 1;
        if self.keep {
            self.spans.push(span);
        } else {
            otlp::encode_span(&span, &mut self.scratch, &mut self.encoded);
        }
    }

    /// Spans added since the last hand-over.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Nothing added since the last hand-over.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

/// Nanoseconds since the Unix epoch, now.
pub fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}
