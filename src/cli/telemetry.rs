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

/// Send what is still queued, waiting at most the export timeout.
pub fn flush(export: &Export) {
    if let Some(t) = &export.telemetry {
        let within = t.settings().timeout.min(Duration::from_secs(30));
        t.flush(within);
    }
}
