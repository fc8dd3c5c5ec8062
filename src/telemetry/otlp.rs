//! Spans and metrics as OTLP requests (`ExportTraceServiceRequest`,
//! `ExportMetricsServiceRequest`), with the official OpenTelemetry protocol types
//! (`opentelemetry-proto`): binary protobuf for `http/protobuf`, the OTLP JSON mapping (hex
//! ids, integer enums, 64-bit integers as strings) for `http/json`. Runs on the exporter's
//! thread, never on a run's.

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1 as pm;
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1 as pt;
use prost::Message;

use super::metrics::{Histogram, Metrics, Point};
use super::settings::Protocol;
use super::span::{Kind, Span, Status, Value};

/// The instrumentation scope every span and metric is reported under.
const SCOPE: &str = "tfc";

/// W3C trace flags of a sampled span (OTLP `flags` keep them in the low byte).
const SAMPLED: u32 = 1;

/// The body of one traces export.
pub fn traces(resource: &[(String, String)], spans: &[Span], protocol: Protocol) -> Vec<u8> {
    let req = ExportTraceServiceRequest {
        resource_spans: vec![pt::ResourceSpans {
            resource: Some(resource_of(resource)),
            scope_spans: vec![pt::ScopeSpans {
                scope: Some(scope()),
                spans: spans.iter().map(span).collect(),
                schema_url: String::new(),
            }],
            schema_url: String::new(),
        }],
    };
    encode(&req, protocol)
}

/// The body of one metrics export (`now_ns`: the data points' time).
pub fn metrics(
    resource: &[(String, String)],
    m: &Metrics,
    now_ns: u64,
    protocol: Protocol,
) -> Vec<u8> {
    let histogram = |name: &str, description: &str, unit: &str, points: Vec<_>| pm::Metric {
        name: name.into(),
        description: description.into(),
        unit: unit.into(),
        data: Some(pm::metric::Data::Histogram(pm::Histogram {
            data_points: points,
            aggregation_temporality: pm::AggregationTemporality::Cumulative as i32,
        })),
        ..pm::Metric::default()
    };
    let points = |of: &[(Point, Histogram)]| {
        of.iter()
            .map(|(p, h)| data_point(p, h, m.start_ns, now_ns))
            .collect::<Vec<_>>()
    };
    let mut list = Vec::new();
    if !m.tokens.is_empty() {
        list.push(histogram(
            "gen_ai.client.token.usage",
            "Tokens used per agent call, by token type",
            "{token}",
            points(&m.tokens),
        ));
    }
    if !m.duration.is_empty() {
        list.push(histogram(
            "gen_ai.client.operation.duration",
            "How long agent calls take",
            "s",
            points(&m.duration),
        ));
    }
    let req = ExportMetricsServiceRequest {
        resource_metrics: vec![pm::ResourceMetrics {
            resource: Some(resource_of(resource)),
            scope_metrics: vec![pm::ScopeMetrics {
                scope: Some(scope()),
                metrics: list,
                schema_url: String::new(),
            }],
            schema_url: String::new(),
        }],
    };
    encode(&req, protocol)
}

fn encode<T: Message + serde::Serialize>(req: &T, protocol: Protocol) -> Vec<u8> {
    match protocol {
        Protocol::Protobuf => req.encode_to_vec(),
        // The request types serialize infallibly (no maps with non-string keys).
        Protocol::Json => serde_json::to_vec(req).unwrap_or_default(),
    }
}

fn scope() -> InstrumentationScope {
    InstrumentationScope {
        name: SCOPE.into(),
        version: env!("CARGO_PKG_VERSION").into(),
        ..InstrumentationScope::default()
    }
}

fn resource_of(attrs: &[(String, String)]) -> Resource {
    Resource {
        attributes: attrs
            .iter()
            .map(|(k, v)| kv(k, any_value::Value::StringValue(v.clone())))
            .collect(),
        ..Resource::default()
    }
}

fn kv(key: &str, v: any_value::Value) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue { value: Some(v) }),
        ..KeyValue::default()
    }
}

fn value(v: &Value) -> any_value::Value {
    match v {
        Value::Str(s) => any_value::Value::StringValue(s.clone()),
        Value::Static(s) => any_value::Value::StringValue((*s).to_owned()),
        Value::Int(n) => any_value::Value::IntValue(*n),
        Value::F64(n) => any_value::Value::DoubleValue(*n),
        Value::Bool(b) => any_value::Value::BoolValue(*b),
    }
}

fn span(s: &Span) -> pt::Span {
    let (code, message) = match &s.status {
        Status::Unset => (pt::status::StatusCode::Unset, String::new()),
        Status::Error(m) => (pt::status::StatusCode::Error, m.clone()),
    };
    pt::Span {
        trace_id: s.trace.0.to_vec(),
        span_id: s.id.0.to_vec(),
        parent_span_id: s.parent.map(|p| p.0.to_vec()).unwrap_or_default(),
        flags: SAMPLED,
        name: s.name.clone(),
        kind: match s.kind {
            Kind::Internal => pt::span::SpanKind::Internal,
            Kind::Client => pt::span::SpanKind::Client,
        } as i32,
        start_time_unix_nano: s.start_ns,
        end_time_unix_nano: s.end_ns.max(s.start_ns),
        attributes: s.attrs.iter().map(|(k, v)| kv(k, value(v))).collect(),
        links: s
            .links
            .iter()
            .map(|l| pt::span::Link {
                trace_id: l.trace.0.to_vec(),
                span_id: l.span.0.to_vec(),
                flags: u32::from(l.sampled),
                ..pt::span::Link::default()
            })
            .collect(),
        status: Some(pt::Status {
            message,
            code: code as i32,
        }),
        ..pt::Span::default()
    }
}

fn data_point(p: &Point, h: &Histogram, start_ns: u64, now_ns: u64) -> pm::HistogramDataPoint {
    let mut attributes = vec![
        kv(
            "gen_ai.operation.name",
            any_value::Value::StringValue(p.operation.into()),
        ),
        kv(
            "gen_ai.provider.name",
            any_value::Value::StringValue(p.provider.clone()),
        ),
    ];
    if let Some(m) = &p.model {
        attributes.push(kv(
            "gen_ai.request.model",
            any_value::Value::StringValue(m.clone()),
        ));
    }
    if let Some(t) = p.token_type {
        attributes.push(kv(
            "gen_ai.token.type",
            any_value::Value::StringValue(t.into()),
        ));
    }
    if let Some(e) = p.error {
        attributes.push(kv("error.type", any_value::Value::StringValue(e.into())));
    }
    pm::HistogramDataPoint {
        attributes,
        start_time_unix_nano: start_ns,
        time_unix_nano: now_ns.max(start_ns),
        count: h.count,
        sum: Some(h.sum),
        bucket_counts: h.counts.clone(),
        explicit_bounds: h.bounds.to_vec(),
        min: (h.count > 0).then_some(h.min),
        max: (h.count > 0).then_some(h.max),
        ..pm::HistogramDataPoint::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::ids::{IdGen, SpanContext};

    fn sample() -> Span {
        let mut ids = IdGen::seeded(1);
        Span {
            trace: ids.trace(),
            id: ids.span(),
            parent: Some(ids.span()),
            name: "invoke_agent reviewer".into(),
            kind: Kind::Client,
            start_ns: 1_700_000_000_000_000_000,
            end_ns: 1_700_000_001_500_000_000,
            attrs: vec![
                ("gen_ai.operation.name", Value::Static("invoke_agent")),
                ("gen_ai.usage.input_tokens", Value::Int(120)),
                ("tfc.cost_usd", Value::F64(0.25)),
                ("tfc.cache_hit", Value::Bool(false)),
            ],
            status: Status::Error("timed out".into()),
            links: vec![SpanContext {
                trace: ids.trace(),
                span: ids.span(),
                sampled: true,
            }],
        }
    }

    #[test]
    fn protobuf_decodes_back_to_the_same_span() {
        let s = sample();
        let body = traces(
            &[("service.name".into(), "tfc".into())],
            std::slice::from_ref(&s),
            Protocol::Protobuf,
        );
        let req = ExportTraceServiceRequest::decode(body.as_slice()).expect("valid protobuf");
        let rs = &req.resource_spans[0];
        let res = rs.resource.as_ref().unwrap();
        assert_eq!(res.attributes[0].key, "service.name");
        let got = &rs.scope_spans[0].spans[0];
        assert_eq!(got.trace_id, s.trace.0.to_vec());
        assert_eq!(got.parent_span_id, s.parent.unwrap().0.to_vec());
        assert_eq!(got.kind, pt::span::SpanKind::Client as i32);
        assert_eq!(
            got.end_time_unix_nano - got.start_time_unix_nano,
            1_500_000_000
        );
        assert_eq!(got.attributes.len(), 4);
        assert_eq!(got.status.as_ref().unwrap().code, 2);
        assert_eq!(got.status.as_ref().unwrap().message, "timed out");
        assert_eq!(got.links.len(), 1);
    }

    #[test]
    fn json_follows_the_otlp_mapping() {
        let s = sample();
        let body = traces(&[], std::slice::from_ref(&s), Protocol::Json);
        let v: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
        let span = &v["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
        // Ids are lowercase hex, 64-bit integers strings, enums integers.
        assert_eq!(span["traceId"], s.trace.to_string());
        assert_eq!(span["spanId"], s.id.to_string());
        assert_eq!(span["parentSpanId"], s.parent.unwrap().to_string());
        assert_eq!(span["startTimeUnixNano"], "1700000000000000000");
        assert_eq!(span["kind"], 3);
        assert_eq!(span["status"]["code"], 2);
        assert_eq!(span["attributes"][1]["key"], "gen_ai.usage.input_tokens");
        assert_eq!(span["attributes"][1]["value"]["intValue"], "120");
        assert_eq!(
            v["resourceSpans"][0]["scopeSpans"][0]["scope"]["name"],
            "tfc"
        );
    }

    #[test]
    fn metrics_carry_both_histograms() {
        let mut m = Metrics::new(5);
        m.call(
            crate::telemetry::metrics::Call {
                operation: "invoke_agent",
                provider: "claude",
                model: None,
                error: None,
            },
            2.0,
            Some((10, 3)),
        );
        let body = metrics(&[], &m, 9, Protocol::Protobuf);
        let req = ExportMetricsServiceRequest::decode(body.as_slice()).expect("valid protobuf");
        let names: Vec<&str> = req.resource_metrics[0].scope_metrics[0]
            .metrics
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "gen_ai.client.token.usage",
                "gen_ai.client.operation.duration"
            ]
        );
        let json: serde_json::Value =
            serde_json::from_slice(&metrics(&[], &m, 9, Protocol::Json)).expect("JSON");
        let point = &json["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][1]["histogram"]["dataPoints"]
            [0];
        assert_eq!(point["count"], "1");
        assert_eq!(point["sum"], 2.0);
    }
}
