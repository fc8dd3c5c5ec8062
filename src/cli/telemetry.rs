//! OpenTelemetry export for the commands that run flows: the settings from the `OTEL_*`
//! variables and `[telemetry]`, `TRACEPARENT`, and the flush at exit.

use std::sync::Arc;
use std::time::Duration;

use tfc::agent::config::TelemetrySettings;
use tfc::telemetry::{Resolved, SpanContext, Telemetry};

/// What a run exports to, and the caller's span.
pub struct Export {
    /// `None`: export is off.
    pub telemetry: Option<Arc<Telemetry>>,
    /// `TRACEPARENT` from the environment.
    pub parent: Option<SpanContext>,
}

/// Decide whether this run is exported. A wrong setting is one warning line and no export:
/// telemetry never stops a run.
pub fn start(file: &TelemetrySettings, content: bool, quiet: bool) -> Export {
    let var = |k: &str| std::env::var(k).ok();
    let telemetry = match tfc::telemetry::settings::resolve(&var, file, content) {
        Resolved::On(settings) => Some(Telemetry::start(
            settings,
            Arc::new(|line: &str| sayln!("{line}")),
        )),
        Resolved::Off(_) => None,
        Resolved::Invalid(m) => {
            if !quiet {
                sayln!("warning: telemetry is off: {m}");
            }
            None
        }
    };
    let parent = match var("TRACEPARENT").filter(|v| !v.trim().is_empty()) {
        Some(tp) => match SpanContext::from_traceparent(&tp) {
            Some(c) => Some(c),
            None => {
                if !quiet && telemetry.is_some() {
                    sayln!(
                        "warning: TRACEPARENT '{tp}' is not a W3C traceparent \
                         (00-<32 hex>-<16 hex>-<2 hex>); the run starts a trace of its own"
                    );
                }
                None
            }
        },
        None => None,
    };
    // A caller that does not record its trace (sampled flag off) gets no spans from us.
    let telemetry = telemetry.filter(|_| parent.is_none_or(|p| p.sampled));
    Export { telemetry, parent }
}

/// The longest a run's exit waits for the collector (SPEC §16): its output and summary are
/// out by then, and a pipeline reading them never waits for it.
pub const EXIT_WAIT: Duration = Duration::from_secs(2);

/// The run's output and summary are out: send what is still queued, waiting at most
/// `min(export timeout, 2 s)`, and say once, on stderr, how many spans were not exported.
pub fn finish(export: &Export) {
    let Some(t) = &export.telemetry else {
        return;
    };
    let within = t.settings().timeout.min(EXIT_WAIT);
    let drained = t.drain(within);
    let unsent = t.stats().unsent();
    if let Some(line) = unsent_line(unsent, drained, within) {
        sayln!("{line}");
    }
}

/// The line that says how many spans were not exported (none when all were).
fn unsent_line(unsent: u64, drained: bool, within: Duration) -> Option<String> {
    let spans = format!("{unsent} span{}", if unsent == 1 { "" } else { "s" });
    match (unsent, drained) {
        (0, true) => None,
        (0, false) => Some(format!(
            "warning: telemetry: the collector did not answer within {:.1}s; the run's last spans may be lost",
            within.as_secs_f64()
        )),
        (_, false) => Some(format!(
            "warning: telemetry: {spans} dropped: the collector did not take them within {:.1}s",
            within.as_secs_f64()
        )),
        (_, true) => Some(format!(
            "warning: telemetry: {spans} dropped: the collector did not accept them"
        )),
    }
}

/// Send what is still queued, waiting at most the export timeout (a worker that stops).
#[cfg(feature = "temporal")]
pub fn flush(export: &Export) {
    if let Some(t) = &export.telemetry {
        let within = t.settings().timeout.min(Duration::from_secs(30));
        t.flush(within);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exit_says_once_what_was_not_exported() {
        let two = Duration::from_secs(2);
        assert_eq!(unsent_line(0, true, two), None);
        assert_eq!(
            unsent_line(7, false, two).as_deref(),
            Some(
                "warning: telemetry: 7 spans dropped: the collector did not take them within 2.0s"
            )
        );
        assert_eq!(
            unsent_line(1, true, two).as_deref(),
            Some("warning: telemetry: 1 span dropped: the collector did not accept them")
        );
        assert!(unsent_line(0, false, two).is_some_and(|l| l.contains("within 2.0s")));
    }
}
