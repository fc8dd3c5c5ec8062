//! The exporter: one background thread that encodes batches and posts them, so that a run
//! never waits on the network. The queue is bounded (a batch that does not fit is dropped and
//! counted), every request is bounded by the export timeout, and the first problem is told in
//! one warning line — a dead or slow collector never slows or fails a run. [`Exporter::flush`]
//! waits, at most a given time, until what was queued before it has been sent.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TrySendError, bounded};

use super::metrics::Metrics;
use super::settings::{Settings, Target};
use crate::agent::http::{Guard, HttpError, Url, post};

/// Batches waiting for the exporter thread, at most (each up to [`super::BATCH`] spans or
/// [`super::CHUNK`] bytes).
const QUEUE: usize = 64;

/// One request carries at most this many bytes of spans (queued batches are joined up to it).
const REQUEST_BYTES: usize = 4 << 20;

/// Spans wait at most this long for others to join their request.
const LINGER: Duration = Duration::from_secs(1);

/// A warning line's sink.
pub type Warn = Arc<dyn Fn(&str) + Send + Sync>;

enum Job {
    /// Spans as a batch wrote them, and how many.
    Spans(Vec<u8>, u64),
    Metrics(Box<Metrics>, u64),
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
    /// Emptied span buffers, for the next batches (a run writes into memory that is already
    /// there).
    buffers: std::sync::Mutex<Vec<Vec<u8>>>,
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
    tx: Sender<Job>,
    shared: Arc<Shared>,
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
}

impl Exporter {
    /// Start the thread for `settings`; problems go to `warn` (one line).
    pub fn start(settings: Arc<Settings>, warn: Warn) -> Exporter {
        let (tx, rx) = bounded(QUEUE);
        let shared = Arc::new(Shared {
            warn,
            warned: AtomicBool::new(false),
            dropped: AtomicU64::new(0),
            sent: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            buffers: std::sync::Mutex::new(Vec::new()),
        });
        let thread_shared = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("tfc-otlp".into())
            .spawn(move || serve(&settings, &rx, &thread_shared));
        if let Err(e) = spawned {
            shared.warn_once(&format!("cannot start the exporter thread: {e}"));
        }
        Exporter { tx, shared }
    }

    /// An empty buffer for a batch's spans: one the thread is done with when there is one.
    pub fn buffer(&self) -> Vec<u8> {
        let reused = super::lock(&self.shared.buffers).pop();
        reused.unwrap_or_else(|| Vec::with_capacity(super::CHUNK + super::CHUNK / 4))
    }

    /// Queue `count` finished spans, encoded (never blocks).
    pub fn spans(&self, encoded: Vec<u8>, count: usize) {
        let n = count as u64;
        self.queue(Job::Spans(encoded, n), n);
    }

    /// Queue the metrics' current totals, as of `now_ns`.
    pub fn metrics(&self, m: Metrics, now_ns: u64) {
        self.queue(Job::Metrics(Box::new(m), now_ns), 0);
    }

    fn queue(&self, job: Job, spans: u64) {
        match self.tx.try_send(job) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                self.shared.dropped.fetch_add(spans, Ordering::Relaxed);
                self.shared
                    .warn_once("the collector is not keeping up, so some spans were dropped");
            }
            Err(TrySendError::Disconnected(_)) => {
                self.shared.dropped.fetch_add(spans, Ordering::Relaxed);
            }
        }
    }

    /// Wait until everything queued so far was sent (or failed), for at most `within`.
    /// `false`: the time ran out first (a warning says so).
    pub fn flush(&self, within: Duration) -> bool {
        let until = Instant::now() + within;
        let (done_tx, done_rx) = bounded(1);
        if self.tx.send_deadline(Job::Flush(done_tx), until).is_err() {
            self.shared
                .warn_once("the collector did not take the last spans in time");
            return false;
        }
        match done_rx.recv_deadline(until) {
            Ok(()) => true,
            Err(_) => {
                self.shared
                    .warn_once("the collector did not take the last spans in time");
                false
            }
        }
    }

    /// What was sent, failed and dropped.
    pub fn stats(&self) -> Stats {
        Stats {
            sent: self.shared.sent.load(Ordering::Relaxed),
            failed: self.shared.failed.load(Ordering::Relaxed),
            dropped: self.shared.dropped.load(Ordering::Relaxed),
        }
    }
}

/// The thread: jobs in order. Span batches are joined into one request until it holds
/// [`super::BATCH`] spans or [`REQUEST_BYTES`], [`LINGER`] has passed since the first, or
/// another job (a flush, metrics) comes.
fn serve(settings: &Settings, rx: &Receiver<Job>, shared: &Shared) {
    let mut next = None;
    while let Some(job) = next.take().or_else(|| rx.recv().ok()) {
        match job {
            Job::Spans(first, n) => {
                let until = Instant::now() + LINGER;
                let (mut chunks, mut count, mut bytes) = (vec![first], n, 0);
                bytes += chunks[0].len();
                while bytes < REQUEST_BYTES && (count as usize) < super::BATCH {
                    match rx.recv_deadline(until) {
                        Ok(Job::Spans(more, n)) => {
                            bytes += more.len();
                            count += n;
                            chunks.push(more);
                        }
                        Ok(other) => {
                            next = Some(other);
                            break;
                        }
                        Err(_) => break,
                    }
                }
                export_spans(settings, shared, &chunks, count);
                let mut free = super::lock(&shared.buffers);
                for mut c in chunks {
                    if free.len() < QUEUE {
                        c.clear();
                        free.push(c);
                    }
                }
            }
            Job::Metrics(m, now) => {
                let Some(target) = &settings.metrics else {
                    continue;
                };
                let body = super::otlp::metrics(&settings.resource, &m, now, target.protocol);
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
            Job::Flush(done) => {
                let _ = done.send(());
            }
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
            shared.warn_once(&format!("spans could not be exported: {e}"));
            shared.failed.fetch_add(count, Ordering::Relaxed)
        }
    };
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

/// Whether the traces endpoint answers: an empty export request, as `tfc doctor` sends it.
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
        .map_err(|e| e.to_string())
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

    #[test]
    fn spans_and_metrics_reach_the_endpoint() {
        let (url, paths) = endpoint(200, Duration::ZERO);
        let (warn, lines) = warnings();
        let e = Exporter::start(settings(&url, Duration::from_secs(5)), warn);
        e.spans(Vec::new(), 0);
        let m = one_call();
        e.metrics(m, 2);
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
    fn an_endpoint_without_metrics_is_named() {
        let (url, _) = endpoint(405, Duration::ZERO);
        let (warn, lines) = warnings();
        let e = Exporter::start(settings(&url, Duration::from_secs(5)), warn);
        let m = one_call();
        e.metrics(m, 2);
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
        let one = crate::telemetry::span::Span {
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
        let started = Instant::now();
        let (mut scratch, mut span) = (Vec::new(), Vec::new());
        crate::telemetry::otlp::encode_span(&one, &mut scratch, &mut span);
        // Each as big as a batch gets, so that none are joined.
        for _ in 0..(QUEUE + 10) {
            e.spans(span.clone(), crate::telemetry::BATCH);
        }
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "queueing never blocks"
        );
        assert!(
            e.stats().dropped >= 9 * crate::telemetry::BATCH as u64,
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
