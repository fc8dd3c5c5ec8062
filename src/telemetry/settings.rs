//! Whether and where runs are exported: the standard OpenTelemetry variables, then the
//! project's `[telemetry]` table. Nothing is exported unless an endpoint is given.
//!
//! Variables (each wins over the table's key of the same meaning):
//! `OTEL_SDK_DISABLED` (`true`: off), `OTEL_EXPORTER_OTLP_ENDPOINT` (base URL; `/v1/traces`
//! and `/v1/metrics` are appended), `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` and
//! `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` (used as they are), `OTEL_EXPORTER_OTLP_PROTOCOL`
//! (`http/protobuf`, the default, or `http/json`; the signal-specific `…_TRACES_PROTOCOL` /
//! `…_METRICS_PROTOCOL` too), `OTEL_EXPORTER_OTLP_HEADERS` (`key=value,…`, values
//! percent-decoded; `…_TRACES_HEADERS` / `…_METRICS_HEADERS` add to them),
//! `OTEL_EXPORTER_OTLP_TIMEOUT` (milliseconds, default 10000), `OTEL_SERVICE_NAME`,
//! `OTEL_RESOURCE_ATTRIBUTES` (`key=value,…`), `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER`
//! (`none`: that signal off; `metrics = false` in the table turns metrics off too).

use std::time::Duration;

use crate::agent::config::TelemetrySettings;

/// The wire format of the export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// `http/protobuf`: binary protobuf over HTTP (the default).
    Protobuf,
    /// `http/json`: the OTLP JSON mapping over HTTP.
    Json,
}

impl Protocol {
    /// The name the variables use.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Protobuf => "http/protobuf",
            Protocol::Json => "http/json",
        }
    }

    /// The request's `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            Protocol::Protobuf => "application/x-protobuf",
            Protocol::Json => "application/json",
        }
    }
}

/// Where one signal goes.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// The full URL (`…/v1/traces`).
    pub url: String,
    /// Its format.
    pub protocol: Protocol,
    /// Request headers (authentication, tenancy).
    pub headers: Vec<(String, String)>,
}

/// Export settings, once export is on.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Spans (`None`: traces off).
    pub traces: Option<Target>,
    /// Metrics (`None`: metrics off).
    pub metrics: Option<Target>,
    /// How long one export request may take.
    pub timeout: Duration,
    /// Resource attributes, `service.name` first.
    pub resource: Vec<(String, String)>,
    /// Prompts and outputs as span attributes, cut to this many characters (`None`: never).
    pub content: Option<usize>,
    /// A link to a trace in the team's tracing UI, with `{traceId}` in it.
    pub trace_url: Option<String>,
}

/// What the variables and the table decide.
#[derive(Clone, Debug, PartialEq)]
pub enum Resolved {
    /// Nothing is exported, and why.
    Off(String),
    /// Export with these settings.
    On(Settings),
    /// The settings are wrong: nothing is exported; the message says what to fix.
    Invalid(String),
}

/// How many characters of a prompt or output a span keeps by default when content is on.
pub const DEFAULT_CONTENT_CHARS: usize = 4096;

/// The export timeout when nothing sets one (the OTLP exporter default).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Decide from the environment (`var`), the `[telemetry]` table and `--otel-content`.
pub fn resolve(
    var: &dyn Fn(&str) -> Option<String>,
    file: &TelemetrySettings,
    content_flag: bool,
) -> Resolved {
    let var = |k: &str| {
        var(k)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    if var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return Resolved::Off("OTEL_SDK_DISABLED is true".into());
    }
    if file.enabled == Some(false) {
        return Resolved::Off("[telemetry] enabled = false".into());
    }
    match build(&var, file, content_flag) {
        Ok(Some(s)) => Resolved::On(s),
        Ok(None) => Resolved::Off(
            "no endpoint: set OTEL_EXPORTER_OTLP_ENDPOINT (or [telemetry] endpoint in \
             .tfc/config.toml) to export runs"
                .into(),
        ),
        Err(e) => Resolved::Invalid(e),
    }
}

fn build(
    var: &dyn Fn(&str) -> Option<String>,
    file: &TelemetrySettings,
    content_flag: bool,
) -> Result<Option<Settings>, String> {
    let base = var("OTEL_EXPORTER_OTLP_ENDPOINT")
        .map(|v| ("OTEL_EXPORTER_OTLP_ENDPOINT", v))
        .or_else(|| file.endpoint.clone().map(|v| ("[telemetry] endpoint", v)));
    let general_protocol = match var("OTEL_EXPORTER_OTLP_PROTOCOL") {
        Some(p) => Some(("OTEL_EXPORTER_OTLP_PROTOCOL", p)),
        None => file.protocol.clone().map(|p| ("[telemetry] protocol", p)),
    };
    let mut headers = Vec::new();
    if let Some(h) = var("OTEL_EXPORTER_OTLP_HEADERS") {
        headers = parse_pairs(&h, "OTEL_EXPORTER_OTLP_HEADERS")?;
    } else {
        headers.extend(file.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    let signal = |name: &str, path: &str, file_endpoint: &Option<String>| {
        let upper = name.to_ascii_uppercase();
        let exporter = format!("OTEL_{upper}_EXPORTER");
        if var(&exporter).is_some_and(|v| v.eq_ignore_ascii_case("none")) {
            return Ok(None);
        }
        let own = format!("OTEL_EXPORTER_OTLP_{upper}_ENDPOINT");
        let url = match (var(&own), file_endpoint, &base) {
            (Some(u), _, _) => (own.clone(), u),
            (None, Some(u), _) => (format!("[telemetry] {name}_endpoint"), u.clone()),
            (None, None, Some((from, b))) => ((*from).to_owned(), join(b, path)),
            (None, None, None) => return Ok(None),
        };
        check_url(&url.0, &url.1)?;
        let own_protocol = format!("OTEL_EXPORTER_OTLP_{upper}_PROTOCOL");
        let protocol = match var(&own_protocol) {
            Some(p) => protocol(&own_protocol, &p)?,
            None => match &general_protocol {
                Some((from, p)) => protocol(from, p)?,
                None => Protocol::Protobuf,
            },
        };
        let mut headers = headers.clone();
        let own_headers = format!("OTEL_EXPORTER_OTLP_{upper}_HEADERS");
        if let Some(h) = var(&own_headers) {
            for (k, v) in parse_pairs(&h, &own_headers)? {
                headers.retain(|(old, _)| !old.eq_ignore_ascii_case(&k));
                headers.push((k, v));
            }
        }
        Ok::<_, String>(Some(Target {
            url: url.1,
            protocol,
            headers,
        }))
    };
    let traces = signal("traces", "v1/traces", &file.traces_endpoint)?;
    // `metrics = false` under [telemetry] turns them off, as OTEL_METRICS_EXPORTER=none does.
    let metrics = match file.metrics {
        Some(false) => None,
        _ => signal("metrics", "v1/metrics", &file.metrics_endpoint)?,
    };
    if traces.is_none() && metrics.is_none() {
        return Ok(None);
    }
    let timeout = match var("OTEL_EXPORTER_OTLP_TIMEOUT") {
        Some(t) => match t.parse::<u64>() {
            Ok(ms) if ms > 0 => Duration::from_millis(ms),
            _ => {
                return Err(format!(
                    "OTEL_EXPORTER_OTLP_TIMEOUT: '{t}' is not a positive number of milliseconds"
                ));
            }
        },
        None => file
            .timeout_ms
            .map_or(DEFAULT_TIMEOUT, Duration::from_millis),
    };
    Ok(Some(Settings {
        traces,
        metrics,
        timeout,
        resource: resource(&var, file)?,
        content: (content_flag || file.content == Some(true)).then(|| {
            file.content_max_chars
                .map_or(DEFAULT_CONTENT_CHARS, |n| n as usize)
        }),
        trace_url: file.trace_url.clone(),
    }))
}

/// `base` + `/` + `path`, with one slash between them.
fn join(base: &str, path: &str) -> String {
    format!("{}/{path}", base.trim_end_matches('/'))
}

fn check_url(from: &str, url: &str) -> Result<(), String> {
    crate::agent::http::Url::parse(url)
        .map(|_| ())
        .map_err(|e| format!("{from}: {e}"))
}

fn protocol(from: &str, p: &str) -> Result<Protocol, String> {
    match p {
        "http/protobuf" => Ok(Protocol::Protobuf),
        "http/json" => Ok(Protocol::Json),
        "grpc" => Err(format!(
            "{from}: grpc is not supported; tfc exports OTLP over HTTP: use http/protobuf \
             (and the collector's HTTP port, usually 4318)"
        )),
        other => Err(format!(
            "{from}: unknown protocol '{other}' (expected http/protobuf or http/json)"
        )),
    }
}

/// The resource: `service.name` (`OTEL_SERVICE_NAME`, else the one in
/// `OTEL_RESOURCE_ATTRIBUTES`, else the table's, else `tfc`), the other attributes, and what
/// produced the telemetry.
fn resource(
    var: &dyn Fn(&str) -> Option<String>,
    file: &TelemetrySettings,
) -> Result<Vec<(String, String)>, String> {
    let mut attrs: Vec<(String, String)> = file
        .resource_attributes
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(r) = var("OTEL_RESOURCE_ATTRIBUTES") {
        for (k, v) in parse_pairs(&r, "OTEL_RESOURCE_ATTRIBUTES")? {
            attrs.retain(|(old, _)| *old != k);
            attrs.push((k, v));
        }
    }
    let from_attrs = attrs
        .iter()
        .position(|(k, _)| k == "service.name")
        .map(|i| attrs.remove(i).1);
    let service = var("OTEL_SERVICE_NAME")
        .or(from_attrs)
        .or_else(|| file.service_name.clone())
        .unwrap_or_else(|| "tfc".into());
    let mut out = vec![("service.name".to_owned(), service)];
    out.extend(attrs);
    for (k, v) in [
        ("telemetry.sdk.name", "tfc"),
        ("telemetry.sdk.language", "rust"),
        ("telemetry.sdk.version", env!("CARGO_PKG_VERSION")),
    ] {
        if !out.iter().any(|(old, _)| old == k) {
            out.push((k.to_owned(), v.to_owned()));
        }
    }
    Ok(out)
}

/// `key=value,key=value`, as the configuration reads it.
fn parse_pairs(text: &str, from: &str) -> Result<Vec<(String, String)>, String> {
    crate::agent::config::key_value_pairs(text).map_err(|e| format!("{from}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |k| map.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

    fn on(r: Resolved) -> Settings {
        match r {
            Resolved::On(s) => s,
            other => panic!("expected export on, got {other:?}"),
        }
    }

    #[test]
    fn nothing_set_means_off() {
        let r = resolve(&env(&[]), &TelemetrySettings::default(), true);
        assert!(matches!(r, Resolved::Off(ref why) if why.contains("OTEL_EXPORTER_OTLP_ENDPOINT")));
    }

    #[test]
    fn the_base_endpoint_gets_each_signals_path() {
        let s = on(resolve(
            &env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318/")]),
            &TelemetrySettings::default(),
            false,
        ));
        let traces = s.traces.expect("traces");
        assert_eq!(traces.url, "http://127.0.0.1:4318/v1/traces");
        assert_eq!(traces.protocol, Protocol::Protobuf);
        assert_eq!(
            s.metrics.expect("metrics").url,
            "http://127.0.0.1:4318/v1/metrics"
        );
        assert_eq!(s.timeout, DEFAULT_TIMEOUT);
        assert_eq!(s.content, None);
        assert_eq!(s.resource[0], ("service.name".into(), "tfc".into()));
    }

    #[test]
    fn a_signal_endpoint_is_used_as_it_is_and_alone_turns_only_that_signal_on() {
        let s = on(resolve(
            &env(&[
                (
                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                    "https://collector.example/otlp",
                ),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ]),
            &TelemetrySettings::default(),
            false,
        ));
        let t = s.traces.expect("traces");
        assert_eq!(t.url, "https://collector.example/otlp");
        assert_eq!(t.protocol, Protocol::Json);
        assert_eq!(s.metrics, None);
    }

    #[test]
    fn variables_win_over_the_table() {
        let file = TelemetrySettings {
            endpoint: Some("http://file:4318".into()),
            service_name: Some("from-file".into()),
            protocol: Some("http/json".into()),
            timeout_ms: Some(500),
            content: Some(true),
            content_max_chars: Some(100),
            trace_url: Some("http://jaeger:16686/trace/{traceId}".into()),
            ..TelemetrySettings::default()
        };
        let from_file = on(resolve(&env(&[]), &file, false));
        assert_eq!(
            from_file.traces.as_ref().unwrap().url,
            "http://file:4318/v1/traces"
        );
        assert_eq!(from_file.traces.as_ref().unwrap().protocol, Protocol::Json);
        assert_eq!(from_file.timeout, Duration::from_millis(500));
        assert_eq!(from_file.content, Some(100));
        assert_eq!(from_file.resource[0].1, "from-file");
        let s = on(resolve(
            &env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318"),
                ("OTEL_SERVICE_NAME", "ci"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
            ]),
            &file,
            false,
        ));
        assert_eq!(s.traces.as_ref().unwrap().url, "http://env:4318/v1/traces");
        assert_eq!(s.traces.unwrap().protocol, Protocol::Protobuf);
        assert_eq!(s.timeout, Duration::from_millis(2500));
        assert_eq!(s.resource[0].1, "ci");
    }

    #[test]
    fn headers_and_resource_attributes_are_decoded() {
        let s = on(resolve(
            &env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318"),
                ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%20b , x-tenant=t1"),
                ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "X-Tenant=t2"),
                (
                    "OTEL_RESOURCE_ATTRIBUTES",
                    "deployment.environment=ci,service.name=from-attrs",
                ),
            ]),
            &TelemetrySettings::default(),
            false,
        ));
        assert_eq!(
            s.traces.unwrap().headers,
            vec![
                ("api-key".into(), "a b".into()),
                ("X-Tenant".into(), "t2".into())
            ]
        );
        assert_eq!(
            s.metrics.unwrap().headers,
            vec![
                ("api-key".into(), "a b".into()),
                ("x-tenant".into(), "t1".into())
            ]
        );
        assert_eq!(s.resource[0], ("service.name".into(), "from-attrs".into()));
        assert_eq!(
            s.resource[1],
            ("deployment.environment".into(), "ci".into())
        );
        assert!(s.resource.iter().any(|(k, _)| k == "telemetry.sdk.version"));
    }

    #[test]
    fn switches_turn_export_or_a_signal_off() {
        let base = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318");
        let none = TelemetrySettings::default();
        assert!(matches!(
            resolve(&env(&[base, ("OTEL_SDK_DISABLED", "TRUE")]), &none, false),
            Resolved::Off(_)
        ));
        let disabled = TelemetrySettings {
            enabled: Some(false),
            ..TelemetrySettings::default()
        };
        assert!(matches!(
            resolve(&env(&[base]), &disabled, false),
            Resolved::Off(_)
        ));
        let s = on(resolve(
            &env(&[base, ("OTEL_METRICS_EXPORTER", "none")]),
            &none,
            false,
        ));
        assert!(s.traces.is_some() && s.metrics.is_none());
        let no_metrics = TelemetrySettings {
            metrics: Some(false),
            ..TelemetrySettings::default()
        };
        let s = on(resolve(&env(&[base]), &no_metrics, false));
        assert!(s.traces.is_some() && s.metrics.is_none(), "metrics = false");
        assert!(matches!(
            resolve(
                &env(&[
                    base,
                    ("OTEL_TRACES_EXPORTER", "none"),
                    ("OTEL_METRICS_EXPORTER", "none")
                ]),
                &none,
                false
            ),
            Resolved::Off(_)
        ));
    }

    #[test]
    fn wrong_settings_say_what_to_fix() {
        let none = TelemetrySettings::default();
        let invalid = |pairs: &[(&str, &str)]| match resolve(&env(pairs), &none, false) {
            Resolved::Invalid(m) => m,
            other => panic!("expected invalid, got {other:?}"),
        };
        let base = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318");
        assert!(
            invalid(&[base, ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]).contains("use http/protobuf")
        );
        assert!(
            invalid(&[base, ("OTEL_EXPORTER_OTLP_PROTOCOL", "thrift")])
                .contains("unknown protocol")
        );
        assert!(invalid(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318")]).contains("http://"));
        assert!(invalid(&[base, ("OTEL_EXPORTER_OTLP_TIMEOUT", "soon")]).contains("milliseconds"));
        assert!(invalid(&[base, ("OTEL_EXPORTER_OTLP_HEADERS", "novalue")]).contains("key=value"));
    }

    #[test]
    fn percent_decoding_keeps_what_is_not_an_escape() {
        let pairs = parse_pairs("a=a%20b%2Cc, b=100%,c=%zz", "X").expect("pairs");
        let values: Vec<&str> = pairs.iter().map(|(_, v)| v.as_str()).collect();
        assert_eq!(values, ["a b,c", "100%", "%zz"]);
    }
}
