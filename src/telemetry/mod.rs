//! OpenTelemetry export of runs: spans and GenAI metrics sent as OTLP over HTTP to the
//! collector a team already runs (Jaeger, Tempo, Honeycomb, Phoenix, Langfuse, …).
//!
//! Off unless an endpoint is configured ([`settings`]). A run hands what happened to the
//! deferred-work thread ([`later`], [`Telemetry::defer`]), which writes each finished span
//! straight into a [`Batch`] as OTLP protobuf (`otlp`; no message structs) and hands full
//! batches over; the [`export`] thread joins them into requests and posts them with the
//! metrics' totals. Neither is on the run's path, and neither is woken for each hand-over
//! (waking a thread costs the run more than the work). An in-memory sink keeps spans as
//! plain data ([`span::Span`]) instead, made at once on the run's thread. What a run's spans
//! are — the run, its phases, items, agent calls, scripts — is the run's business
//! (`run::trace`); this module knows only spans, ids ([`ids`], W3C `traceparent`) and
//! [`metrics`].

pub mod export;
pub mod ids;
pub mod later;
pub mod metrics;
mod otlp;
pub mod settings;
pub mod span;

use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use ids::{IdGen, SpanContext, SpanId, TraceId};
pub use settings::{Resolved, Settings};
pub use span::{Attr, Head, Span};

use export::lock;
pub use export::{BATCH, CHUNK};
pub use span::now_ns;

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
    /// The metrics' totals of every run so far.
    pub metrics: Option<metrics::Metrics>,
}

/// Export switched on: the settings and where spans go. Shared by every run of a process.
pub struct Telemetry {
    settings: Arc<Settings>,
    sink: Sink,
    /// Where runs turn what happened into spans, off their path.
    later: later::Later,
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
            later: later::Later::default(),
        })
    }

    /// Keep spans and metrics in memory instead of sending them.
    pub fn in_memory(settings: Settings) -> (Arc<Telemetry>, Arc<Mutex<Collected>>) {
        let collected = Arc::new(Mutex::new(Collected::default()));
        let t = Telemetry {
            settings: Arc::new(settings),
            sink: Sink::Memory(collected.clone()),
            later: later::Later::default(),
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
            encoded: self.buffer(),
            count: 0,
        }
    }

    fn buffer(&self) -> Vec<u8> {
        match &self.sink {
            Sink::Otlp(e) => e.buffer(),
            Sink::Memory(_) => Vec::new(),
        }
    }

    /// Hand over the spans of `batch` (which is then empty).
    pub fn hand_over(&self, batch: &mut Batch) {
        let count = std::mem::take(&mut batch.count);
        let spans = std::mem::take(&mut batch.spans);
        if count == 0 || self.settings.traces.is_none() {
            batch.encoded.clear();
            return;
        }
        let encoded = std::mem::replace(&mut batch.encoded, self.buffer());
        match &self.sink {
            Sink::Otlp(e) => e.spans(encoded, count),
            Sink::Memory(c) => lock(c).spans.extend(spans),
        }
    }

    /// Add a run's metrics to the process's totals (sent with the next export).
    pub fn metrics(&self, m: &metrics::Metrics) {
        if m.is_empty() || self.settings.metrics.is_none() {
            return;
        }
        match &self.sink {
            Sink::Otlp(e) => e.metrics(m),
            Sink::Memory(c) => lock(c).metrics.get_or_insert_default().merge(m),
        }
    }

    /// The batch of a run that ended: its spans are handed over, its buffer kept for the
    /// next run.
    pub fn close(&self, mut batch: Batch) {
        if batch.count > 0 && self.settings.traces.is_some() {
            let encoded = std::mem::take(&mut batch.encoded);
            let count = std::mem::take(&mut batch.count);
            let spans = std::mem::take(&mut batch.spans);
            match &self.sink {
                Sink::Otlp(e) => e.spans(encoded, count),
                Sink::Memory(c) => lock(c).spans.extend(spans),
            }
        } else if let Sink::Otlp(e) = &self.sink {
            e.give_back(std::mem::take(&mut batch.encoded));
        }
    }

    /// Do `work` off the caller's path, after the work deferred before it (on the
    /// deferred-work thread; at once, here, for an in-memory sink, whose spans a caller
    /// looks at as soon as its run returns).
    pub fn defer(&self, work: later::Work) {
        match &self.sink {
            Sink::Otlp(_) => self.later.run(work),
            Sink::Memory(_) => work(),
        }
    }

    /// Wait, at most `within`, until the deferred work is done and what was handed over has
    /// been sent.
    pub fn flush(&self, within: Duration) -> bool {
        let until = std::time::Instant::now() + within;
        match &self.sink {
            Sink::Otlp(e) => {
                if !self.later.wait(until) {
                    e.late();
                    return false;
                }
                e.flush(until.saturating_duration_since(std::time::Instant::now()))
            }
            Sink::Memory(_) => true,
        }
    }

    /// The process is about to end (its output is out): wait, at most `within`, until the
    /// deferred work is done and what was handed over has been sent, telling nothing.
    /// `false`: the time ran out first. What was not exported is then in [`Telemetry::stats`]
    /// ([`export::Stats::unsent`]), for the caller to say once.
    pub fn drain(&self, within: Duration) -> bool {
        let until = std::time::Instant::now() + within;
        match &self.sink {
            Sink::Otlp(e) => {
                self.later.wait(until)
                    && e.drain(until.saturating_duration_since(std::time::Instant::now()))
            }
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

/// Finished spans waiting to be handed over ([`Telemetry::batch`]; the default one holds no
/// buffer).
#[derive(Default)]
pub struct Batch {
    keep: bool,
    spans: Vec<Span>,
    encoded: Vec<u8>,
    count: usize,
}

impl Batch {
    /// Write a finished span named `what which` (`phase build`): set its attributes and
    /// status on the writer, then [`SpanWriter::end`] it.
    pub fn span(&mut self, head: Head, (what, which): (&str, &str)) -> SpanWriter<'_> {
        let kept = if self.keep {
            let name = if which.is_empty() {
                what.to_owned()
            } else {
                format!("{what} {which}")
            };
            Some(Span {
                trace: head.trace,
                id: head.id,
                parent: head.parent,
                name,
                kind: head.kind,
                start_ns: head.start_ns,
                end_ns: head.end_ns.max(head.start_ns),
                attrs: Vec::new(),
                status: span::Status::Unset,
                links: Vec::new(),
            })
        } else {
            let at = otlp::span_start(&mut self.encoded, &head, (what, which));
            return SpanWriter {
                batch: self,
                kept: None,
                at,
            };
        };
        SpanWriter {
            batch: self,
            kept,
            at: 0,
        }
    }

    /// Time to hand the batch over: it holds [`BATCH`] spans or [`CHUNK`] bytes.
    pub fn is_full(&self) -> bool {
        self.count >= BATCH || self.encoded.len() >= CHUNK
    }

    /// Spans added since the last hand-over.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Nothing added since the last hand-over.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Drop what was added since the last hand-over (the buffers stay).
    pub fn clear(&mut self) {
        self.spans.clear();
        self.encoded.clear();
        self.count = 0;
    }
}

/// A span being written into a [`Batch`]: encoded as it goes for a collector, built as a
/// [`Span`] for an in-memory sink. The span is added to the batch when the writer ends
/// ([`SpanWriter::end`], or dropped).
pub struct SpanWriter<'b> {
    batch: &'b mut Batch,
    kept: Option<Span>,
    /// Where the span being encoded starts in the batch.
    at: usize,
}

impl SpanWriter<'_> {
    /// Set attribute `key`.
    #[inline]
    pub fn attr<'v>(&mut self, key: &'static str, value: impl Into<Attr<'v>>) -> &mut Self {
        let value = value.into();
        match &mut self.kept {
            Some(s) => s.attrs.push((key, value.into())),
            None => otlp::span_attr(&mut self.batch.encoded, key, value),
        }
        self
    }

    /// Set attribute `key` when there is a value.
    #[inline]
    pub fn attr_opt<'v, V: Into<Attr<'v>>>(
        &mut self,
        key: &'static str,
        value: Option<V>,
    ) -> &mut Self {
        if let Some(v) = value {
            self.attr(key, v);
        }
        self
    }

    /// The span's operation failed with `message`.
    pub fn error(&mut self, message: &str) -> &mut Self {
        match &mut self.kept {
            Some(s) => s.status = span::Status::Error(message.to_owned()),
            None => otlp::span_error(&mut self.batch.encoded, message),
        }
        self
    }

    /// The span follows from `to`, a span of another trace.
    pub fn link(&mut self, to: SpanContext) -> &mut Self {
        match &mut self.kept {
            Some(s) => s.links.push(to),
            None => otlp::span_link(&mut self.batch.encoded, &to),
        }
        self
    }

    /// The span is complete: add it to the batch (a writer that is dropped ends too).
    pub fn end(self) {}
}

impl Drop for SpanWriter<'_> {
    fn drop(&mut self) {
        let b = &mut *self.batch;
        b.count += 1;
        match self.kept.take() {
            Some(s) => b.spans.push(s),
            None => otlp::span_end(&mut b.encoded, self.at),
        }
    }
}
