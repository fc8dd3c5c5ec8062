//! The exporter: one background thread that encodes batches and posts them, so that a run
//! never waits on the network. The queue is bounded (a batch that does not fit is dropped and
//! counted), every request is bounded by the export timeout, and the first problem is told in
//! one warning line — a dead or slow collector never slows or fails a run. Handing a batch
//! over does not wake the thread: it wakes every `LINGER`, when the queue is half full, or
//! for a flush, and sends what gathered in as few requests as the limits allow.
//! [`Exporter::flush`] waits, at most a given time, until what was queued before it has been
//! sent.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Sender, bounded};

use super::metrics::Metrics;
use super::settings::{Settings, Target};
use crate::agent::http::{Guard, HttpError, Url, post};

/// Spans a run hands over at once, at most.
pub const BATCH: usize = 2048;

/// A run hands its spans over once they take this many bytes: the buffer it writes into
/// stays small enough to stay in cache, and is used again once sent.
pub const CHUNK: usize = 64 << 10;

/// Batches waiting for the exporter thread, at most (each up to [`BATCH`] spans or
/// [`CHUNK`] bytes).
const QUEUE: usize = 64;

/// One request carries at most this many bytes of spans (queued batches are joined up to it)…
const REQUEST_BYTES: usize = 4 << 20;

/// … and at most this many spans.
const REQUEST_SPANS: u64 = 8192;

/// Spans wait at most this long before they are sent (unless the queue fills first).
const LINGER: Duration = Duration::from_millis(500);

/// A warning line's sink.
pub type Warn = Arc<dyn Fn(&str) + Send + Sync>;

enum Job {
    /// Spans as a batch wrote them, and how many.
    Spans(Vec<u8>, u64),
    Flush(Sender<()>),
}

/// What the thread and its handles share.
struct Shared {
    warn: Warn,
    /// A problem was told already (one line per process).
    warned: AtomicBool,
    dropped: AtomicU64,
    sent: AtomicU64,
    failed: AtomicU64,
    /// Spans queued (handed over and not dropped).
    queued: AtomicU64,
    /// Emptied span buffers, for the next batches (a run writes into memory that is already
    /// there).
    buffers: Mutex<Vec<Vec<u8>>>,
    queue: Mutex<Queue>,
    /// The process's metrics totals, and whether they changed since they were last sent.
    metrics: Mutex<(Metrics, bool)>,
    /// The thread waits on it (woken only when needed: see [`Queue::asleep`]).
    wake: Condvar,
}

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    /// The thread is waiting for jobs.
    asleep: bool,
    /// Every handle is gone: send what is left, then stop.
    closed: bool,
}

impl Shared {
    fn warn_once(&self, message: &str) {
        if !self.warned.swap(true, Ordering::Relaxed) {
            (self.warn)(&format!(
                "warning: telemetry: {message}; the run goes on, and later export problems are not shown"
            ));
        }
    }
}

/// The handle of the exporter thread (cheap to clone).
#[derive(Clone)]
pub struct Exporter {
    shared: Arc<Shared>,
    _owner: Arc<Owner>,
}

/// Closes the queue when the last handle goes.
struct Owner(Arc<Shared>);

impl Drop for Owner {
    fn drop(&mut self) {
        lock(&self.0.queue).closed = true;
        self.0.wake.notify_one();
    }
}

/// What the exporter did so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Spans a collector accepted.
    pub sent: u64,
    /// Spans whose request failed.
    pub failed: u64,
    /// Spans dropped because the queue was full.
    pub dropped: u64,
    /// Spans queued to be sent (those dropped not included).
    pub queued: u64,
}

impl Stats {
    /// Spans handed over that no collector accepted (yet): dropped, failed or still queued.
    pub fn unsent(&self) -> u64 {
        self.dropped + self.queued.saturating_sub(self.sent)
    }
}

impl Exporter {
    /// Start the thread for `settings`; problems go to `warn` (one line).
    pub fn start(settings: Arc<Settings>, warn: Warn) -> Exporter {
        let shared = Arc::new(Shared {
            warn,
            warned: AtomicBool::new(false),
            dropped: AtomicU64::new(0),
            sent: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            queued: AtomicU64::new(0),
            buffers: Mutex::new(Vec::new()),
            queue: Mutex::new(Queue::default()),
            metrics: Mutex::new((Metrics::default(), false)),
            wake: Condvar::new(),
        });
        let thread_shared = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("tfc-otlp".into())
            .spawn(move || serve(&settings, &thread_shared));
        if let Err(e) = spawned {
            shared.warn_once(&format!("cannot start the exporter thread: {e}"));
            lock(&shared.queue).closed = true;
        }
        Exporter {
            _owner: Arc::new(Owner(shared.clone())),
            shared,
        }
    }

    /// An empty buffer for a batch's spans: one the thread is done with when there is one.
    pub fn buffer(&self) -> Vec<u8> {
        let reused = lock(&self.shared.buffers).pop();
        reused.unwrap_or_else(|| Vec::with_capacity(CHUNK + CHUNK / 4))
    }

    /// A buffer a batch did not use, for the next one.
    pub fn give_back(&self, mut buffer: Vec<u8>) {
        let mut free = lock(&self.shared.buffers);
        if free.len() < QUEUE && buffer.capacity() > 0 {
            buffer.clear();
            free.push(buffer);
        }
    }

    /// Queue `count` finished spans, encoded (never blocks).
    pub fn spans(&self, encoded: Vec<u8>, count: usize) {
        let n = count as u64;
        self.queue(Job::Spans(encoded, n), n, false);
    }

    /// Add a run's metrics to the process's totals, which the thread sends when it wakes.
    pub fn metrics(&self, m: &Metrics) {
        let mut totals = lock(&self.shared.metrics);
        totals.0.merge(m);
        totals.1 = true;
    }

    /// Queue `job` (`spans` spans); the thread is woken when `urgent`, or when the queue is
    /// half full.
    fn queue(&self, job: Job, spans: u64, urgent: bool) -> bool {
        let mut q = lock(&self.shared.queue);
        if q.closed || q.jobs.len() >= QUEUE {
            drop(q);
            self.shared.dropped.fetch_add(spans, Ordering::Relaxed);
            self.shared
                .warn_once("the collector is not keeping up, so some spans were dropped");
            return false;
        }
        q.jobs.push_back(job);
        self.shared.queued.fetch_add(spans, Ordering::Relaxed);
        let wake = q.asleep && (urgent || q.jobs.len() >= QUEUE / 2);
        drop(q);
        if wake {
            self.shared.wake.notify_one();
        }
        true
    }

    /// The last spans could not be sent in time (a warning says so, once).
    pub fn late(&self) {
        self.shared
            .warn_once("the collector did not take the last spans in time");
    }

    /// Wait until everything queued so far was sent (or failed), for at most `within`.
    /// `false`: the time ran out first (a warning says so).
    pub fn flush(&self, within: Duration) -> bool {
        self.drain(within) || {
            self.late();
            false
        }
    }

    /// [`Exporter::flush`] without the warning: `false` when the time ran out first.
    pub fn drain(&self, within: Duration) -> bool {
        let until = Instant::now() + within;
        let (done_tx, done_rx) = bounded(1);
        // A full queue makes room within the time, or the flush gives up.
        while !self.push_flush(Job::Flush(done_tx.clone())) {
            if Instant::now() >= until || lock(&self.shared.queue).closed {
                return false;
            }
            self.shared.wake.notify_one();
            std::thread::sleep(Duration::from_millis(5));
        }
        done_rx.recv_deadline(until).is_ok()
    }

    /// Queue a flush and wake the thread; `false` when the queue is full or closed (a
    /// flush carries no spans: nothing is counted or told).
    fn push_flush(&self, job: Job) -> bool {
        let mut q = lock(&self.shared.queue);
        if q.closed || q.jobs.len() >= QUEUE {
            return false;
        }
        q.jobs.push_back(job);
        let wake = q.asleep;
        drop(q);
        if wake {
            self.shared.wake.notify_one();
        }
        true
    }

    /// What was sent, failed and dropped.
    pub fn stats(&self) -> Stats {
        Stats {
            sent: self.shared.sent.load(Ordering::Relaxed),
            failed: self.shared.failed.load(Ordering::Relaxed),
            dropped: self.shared.dropped.load(Ordering::Relaxed),
            queued: self.shared.queued.load(Ordering::Relaxed),
        }
    }
}

/// The thread: jobs in order, taken when it wakes. Span batches queued one after another go
/// in one request, up to [`REQUEST_SPANS`] and [`REQUEST_BYTES`].
fn serve(settings: &Settings, shared: &Shared) {
    loop {
        let (jobs, closed) = {
            let mut q = lock(&shared.queue);
            if q.jobs.is_empty() && !q.closed {
                q.asleep = true;
                q = shared
                    .wake
                    .wait_timeout(q, LINGER)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
                q.asleep = false;
            }
            (std::mem::take(&mut q.jobs), q.closed)
        };
        let mut jobs = jobs.into_iter().peekable();
        while let Some(job) = jobs.next() {
            match job {
                Job::Spans(first, n) => {
                    let (mut chunks, mut count, mut bytes) = (vec![first], n, 0);
                    bytes += chunks[0].len();
                    while let Some(Job::Spans(more, n)) = jobs.peek() {
                        if bytes + more.len() > REQUEST_BYTES || count + n > REQUEST_SPANS {
                            break;
                        }
                        bytes += more.len();
                        count += n;
                        if let Some(Job::Spans(more, _)) = jobs.next() {
                            chunks.push(more);
                        }
                    }
                    export_spans(settings, shared, &chunks, count);
                    let mut free = lock(&shared.buffers);
                    for mut c in chunks {
                        if free.len() < QUEUE {
                            c.clear();
                            free.push(c);
                        }
                    }
                }
                Job::Flush(done) => {
                    export_metrics(settings, shared);
                    let _ = done.send(());
                }
            }
        }
        export_metrics(settings, shared);
        if closed && lock(&shared.queue).jobs.is_empty() {
            return;
        }
    }
}

/// Post `count` spans, written in `chunks`, in one request.
fn export_spans(settings: &Settings, shared: &Shared, chunks: &[Vec<u8>], count: u64) {
    let Some(target) = &settings.traces else {
        return;
    };
    let body = super::otlp::traces(&settings.resource, chunks, target.protocol);
    match send(target, &body, settings.timeout) {
        Ok(()) => shared.sent.fetch_add(count, Ordering::Relaxed),
        Err(e) => {
            let hint = match e {
                Failure::Status(415, _) => format!(" ({})", protocol_hint(target)),
                _ => String::new(),
            };
            shared.warn_once(&format!("spans could not be exported: {e}{hint}"));
            shared.failed.fetch_add(count, Ordering::Relaxed)
        }
    };
}

/// Post the metrics' totals, as of now, when they changed since they were last sent.
fn export_metrics(settings: &Settings, shared: &Shared) {
    let Some(target) = &settings.metrics else {
        return;
    };
    let body = {
        let mut totals = lock(&shared.metrics);
        if !std::mem::take(&mut totals.1) {
            return;
        }
        super::otlp::metrics(
            &settings.resource,
            &totals.0,
            super::span::now_ns(),
            target.protocol,
        )
    };
    match send(target, &body, settings.timeout) {
        Ok(()) => {}
        // Trace-only backends (Phoenix, Jaeger) have no metrics endpoint.
        Err(Failure::Status(404 | 405 | 415, _)) => shared.warn_once(&format!(
            "{} takes no metrics; set OTEL_METRICS_EXPORTER=none to send only traces",
            target.url
        )),
        Err(e) => shared.warn_once(&format!("metrics could not be exported: {e}")),
    }
}

/// `m`, locked (a panic elsewhere while it was held does not matter here).
pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Why an export request failed.
#[derive(Debug)]
pub enum Failure {
    /// The endpoint answered this status (with the text it said).
    Status(u16, String),
    /// No answer: connection, timeout, protocol.
    Other(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Status(_, m) | Failure::Other(m) => f.write_str(m),
        }
    }
}

/// POST one body; any 2xx answer is success.
pub fn send(target: &Target, body: &[u8], timeout: Duration) -> Result<(), Failure> {
    let url = Url::parse(&target.url).map_err(Failure::Other)?;
    let mut headers: Vec<(&str, String)> = vec![
        ("Content-Type", target.protocol.content_type().to_owned()),
        ("User-Agent", format!("tfc/{}", env!("CARGO_PKG_VERSION"))),
    ];
    headers.extend(target.headers.iter().map(|(k, v)| (k.as_str(), v.clone())));
    let guard = Guard {
        cancel: crate::process::Cancel::never(),
        idle: None,
        deadline: Some(Instant::now() + timeout),
    };
    let what = |e: HttpError| {
        Failure::Other(match e {
            HttpError::Io(m) => format!("{m} ({})", target.url),
            HttpError::Wall | HttpError::Idle => format!(
                "{} did not answer within {} ms (OTEL_EXPORTER_OTLP_TIMEOUT)",
                target.url,
                timeout.as_millis()
            ),
            HttpError::Cancelled => "cancelled".into(),
        })
    };
    smol::block_on(async {
        let mut response = post(&url, &headers, body, &guard).await.map_err(what)?;
        let status = response.status;
        // The answer's body (a partial-success note, or an error text) is read and dropped.
        let text = response
            .read_to_end(&guard, 64 * 1024)
            .await
            .unwrap_or_default();
        if (200..300).contains(&status) {
            Ok(())
        } else {
            let text = String::from_utf8_lossy(&text);
            let text = text.trim();
            let brief: String = text.chars().take(200).collect();
            Err(Failure::Status(
                status,
                format!(
                    "{} answered HTTP {status}{}",
                    target.url,
                    if brief.is_empty() {
                        String::new()
                    } else {
                        format!(": {brief}")
                    }
                ),
            ))
        }
    })
}

/// What to do when an endpoint refuses the protocol `target` sends (HTTP 415): name it,
/// and the one to set instead (Phoenix, for one, takes `http/protobuf` only).
fn protocol_hint(target: &Target) -> String {
    let other = match target.protocol {
        super::settings::Protocol::Json => super::settings::Protocol::Protobuf,
        super::settings::Protocol::Protobuf => super::settings::Protocol::Json,
    };
    format!(
        "it does not take {}: set OTEL_EXPORTER_OTLP_PROTOCOL={} (or protocol = \"{}\" under [telemetry])",
        target.protocol.as_str(),
        other.as_str(),
        other.as_str()
    )
}

/// Whether the traces endpoint answers: an empty export request, as `tfc doctor` sends it.
/// `Err`: why not — no answer (`not answering: …`), or the answer, with what to set when
/// the endpoint refuses the protocol (HTTP 415).
pub fn probe(settings: &Settings) -> Result<String, String> {
    let Some(target) = settings.traces.as_ref().or(settings.metrics.as_ref()) else {
        return Err("no endpoint".into());
    };
    let body = if settings.traces.is_some() {
        super::otlp::traces::<&[u8]>(&settings.resource, &[], target.protocol)
    } else {
        super::otlp::metrics(&settings.resource, &Metrics::default(), 0, target.protocol)
    };
    send(target, &body, settings.timeout.min(Duration::from_secs(5)))
        .map(|()| format!("{} answers", target.url))
        .map_err(|e| match e {
            Failure::Status(415, m) => format!("{m}; {}", protocol_hint(target)),
            Failure::Status(_, m) => m,
            Failure::Other(m) => format!("not answering: {m}"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::settings::Protocol;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::sync::Mutex;

    /// An endpoint that answers every request with `status` after `delay`; returns its URL
    /// and the paths it was sent.
    fn endpoint(status: u16, delay: Duration) -> (String, Arc<Mutex<Vec<String>>>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let paths = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let paths = paths.clone();
                std::thread::spawn(move || {
                    let mut r = BufReader::new(stream);
                    let (mut first, mut length) = (String::new(), 0usize);
                    r.read_line(&mut first).ok();
                    loop {
                        let mut line = String::new();
                        if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                            break;
                        }
                        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                            length = v.trim().parse().unwrap_or(0);
                        }
                    }
                    let mut body = vec![0; length];
                    r.read_exact(&mut body).ok();
                    paths
                        .lock()
                        .unwrap()
                        .push(first.split(' ').nth(1).unwrap_or("").to_owned());
                    std::thread::sleep(delay);
                    let _ = write!(
                        r.get_mut(),
                        "HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    );
                });
            }
        });
        (url, seen)
    }

    fn settings(url: &str, timeout: Duration) -> Arc<Settings> {
        let target = |p: &str| Target {
            url: format!("{url}/v1/{p}"),
            protocol: Protocol::Protobuf,
            headers: Vec::new(),
        };
        Arc::new(Settings {
            traces: Some(target("traces")),
            metrics: Some(target("metrics")),
            timeout,
            resource: vec![("service.name".into(), "t".into())],
            content: None,
            trace_url: None,
        })
    }

    fn warnings() -> (Warn, Arc<Mutex<Vec<String>>>) {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let keep = lines.clone();
        (
            Arc::new(move |l: &str| keep.lock().unwrap().push(l.to_owned())),
            lines,
        )
    }

    /// The metrics of one call.
    fn one_call() -> Metrics {
        let mut m = Metrics::new(1);
        m.call(
            crate::telemetry::metrics::Call {
                operation: "invoke_agent",
                provider: "p",
                model: None,
                error: None,
            },
            1.0,
            None,
        );
        m
    }

    /// One encoded span.
    fn one_span() -> Vec<u8> {
        let mut out = Vec::new();
        let s = crate::telemetry::span::Span {
            trace: crate::telemetry::ids::TraceId([1; 16]),
            id: crate::telemetry::ids::SpanId([1; 8]),
            parent: None,
            name: "s".into(),
            kind: crate::telemetry::span::Kind::Internal,
            start_ns: 1,
            end_ns: 2,
            attrs: Vec::new(),
            status: crate::telemetry::span::Status::Unset,
            links: Vec::new(),
        };
        crate::telemetry::otlp::encode_span(&s, &mut out);
        out
    }

    /// Wait up to `within` for `paths` to hold `n` entries.
    fn seen(paths: &Mutex<Vec<String>>, n: usize, within: Duration) -> Vec<String> {
        let until = Instant::now() + within;
        while paths.lock().unwrap().len() < n && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        paths.lock().unwrap().clone()
    }

    #[test]
    fn queued_batches_go_in_one_request() {
        let (url, paths) = endpoint(200, Duration::ZERO);
        let (warn, _) = warnings();
        let e = Exporter::start(settings(&url, Duration::from_secs(5)), warn);
        for _ in 0..3 {
            e.spans(one_span(), 1);
        }
        assert!(e.flush(Duration::from_secs(5)));
        assert_eq!(*paths.lock().unwrap(), ["/v1/traces"]);
        assert_eq!(e.stats().sent, 3);
    }

    #[test]
    fn spans_go_out_without_a_flush_within_the_linger() {
        let (url, paths) = endpoint(200, Duration::ZERO);
        let (warn, _) = warnings();
        let e = Exporter::start(settings(&url, Duration::from_secs(5)), warn);
        e.spans(one_span(), 1);
        assert!(
            paths.lock().unwrap().is_empty(),
            "handing over wakes nobody"
        );
        assert_eq!(seen(&paths, 1, LINGER * 4), ["/v1/traces"]);
    }

    #[test]
    fn what_is_queued_goes_out_when_the_last_handle_goes() {
        let (url, paths) = endpoint(200, Duration::ZERO);
        let (warn, _) = warnings();
        let e = Exporter::start(settings(&url, Duration::from_secs(5)), warn);
        let other = e.clone();
        e.spans(one_span(), 1);
        drop(e);
        other.spans(one_span(), 1);
        drop(other);
        assert_eq!(seen(&paths, 1, Duration::from_secs(2)), ["/v1/traces"]);
    }

    #[test]
    fn spans_and_metrics_reach_the_endpoint() {
        let (url, paths) = endpoint(200, Duration::ZERO);
        let (warn, lines) = warnings();
        let e = Exporter::start(settings(&url, Duration::from_secs(5)), warn);
        e.spans(Vec::new(), 0);
        let m = one_call();
        e.metrics(&m);
        assert!(e.flush(Duration::from_secs(5)));
        assert_eq!(*paths.lock().unwrap(), ["/v1/traces", "/v1/metrics"]);
        assert!(lines.lock().unwrap().is_empty());
    }

    #[test]
    fn a_slow_endpoint_costs_the_timeout_once_and_one_warning() {
        let (url, _) = endpoint(200, Duration::from_secs(30));
        let (warn, lines) = warnings();
        let e = Exporter::start(settings(&url, Duration::from_millis(300)), warn);
        let started = Instant::now();
        e.spans(Vec::new(), 0);
        e.spans(Vec::new(), 0);
        e.flush(Duration::from_secs(5));
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
        let lines = lines.lock().unwrap();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains("did not answer within 300 ms"),
            "{lines:?}"
        );
        assert_eq!(e.stats().failed, 0, "empty batches carry no spans");
    }

    #[test]
    fn a_drain_that_runs_out_of_time_tells_nothing_and_counts_the_unsent() {
        let (url, _) = endpoint(200, Duration::from_secs(30));
        let (warn, lines) = warnings();
        let e = Exporter::start(settings(&url, Duration::from_secs(20)), warn);
        e.spans(one_span(), 1);
        e.spans(one_span(), 2);
        let started = Instant::now();
        assert!(!e.drain(Duration::from_millis(300)));
        assert!(started.elapsed() < Duration::from_secs(2));
        assert!(lines.lock().unwrap().is_empty(), "the caller says it");
        assert_eq!(e.stats().queued, 3);
        assert_eq!(e.stats().unsent(), 3);
    }

    #[test]
    fn a_probe_refused_for_its_protocol_names_the_one_to_set() {
        let (url, _) = endpoint(415, Duration::ZERO);
        let mut s = (*settings(&url, Duration::from_secs(5))).clone();
        if let Some(t) = s.traces.as_mut() {
            t.protocol = Protocol::Json;
        }
        let e = probe(&s).unwrap_err();
        assert!(e.contains("answered HTTP 415"), "{e}");
        assert!(
            e.ends_with(
                "it does not take http/json: set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf \
                 (or protocol = \"http/protobuf\" under [telemetry])"
            ),
            "{e}"
        );
        let (ok, _) = endpoint(200, Duration::ZERO);
        assert!(probe(&settings(&ok, Duration::from_secs(5))).is_ok());
        let closed = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a port");
        let e = probe(&settings(
            &format!("http://{closed}"),
            Duration::from_secs(5),
        ))
        .unwrap_err();
        assert!(e.starts_with("not answering: "), "{e}");
    }

    #[test]
    fn an_endpoint_without_metrics_is_named() {
        let (url, _) = endpoint(405, Duration::ZERO);
        let (warn, lines) = warnings();
        let e = Exporter::start(settings(&url, Duration::from_secs(5)), warn);
        let m = one_call();
        e.metrics(&m);
        e.flush(Duration::from_secs(5));
        let lines = lines.lock().unwrap();
        assert!(
            lines[0].contains("takes no metrics; set OTEL_METRICS_EXPORTER=none"),
            "{lines:?}"
        );
    }

    #[test]
    fn a_full_queue_drops_and_counts_instead_of_waiting() {
        let (url, _) = endpoint(200, Duration::from_secs(30));
        let (warn, lines) = warnings();
        let e = Exporter::start(settings(&url, Duration::from_secs(20)), warn);
        let span = one_span();
        let started = Instant::now();
        // The thread takes what is queued when it wakes (at most a full queue), then hangs on
        // the endpoint: of four queues' worth, at least two cannot be kept.
        for _ in 0..(4 * QUEUE) {
            e.spans(span.clone(), BATCH);
        }
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "queueing never blocks"
        );
        assert!(
            e.stats().dropped >= (2 * QUEUE * BATCH) as u64,
            "{:?}",
            e.stats()
        );
        assert!(lines.lock().unwrap()[0].contains("spans were dropped"));
        assert!(
            !e.flush(Duration::from_millis(200)),
            "the flush gives up in time"
        );
    }
}
