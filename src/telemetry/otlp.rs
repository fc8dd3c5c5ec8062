//! Spans and metrics as OTLP requests (`ExportTraceServiceRequest`,
//! `ExportMetricsServiceRequest`), with the official OpenTelemetry protocol types
//! (`opentelemetry-proto`): binary protobuf for `http/protobuf`, the OTLP JSON mapping (hex
//! ids, integer enums, 64-bit integers as strings) for `http/json`. A span is written field
//! by field by the run that records it ([`span_start`] … [`span_end`]); the requests are
//! built on the exporter's thread.

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1 as pm;
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1 as pt;
use prost::Message;

use super::ids::SpanContext;
use super::metrics::{Histogram, Metrics, Point};
use super::settings::Protocol;
use super::span::{Attr, Head, Kind};
#[cfg(test)]
use super::span::{Span, Status};

/// The instrumentation scope every span and metric is reported under.
const SCOPE: &str = "tfc";

/// W3C trace flags of a sampled span (OTLP `flags` keep them in the low byte).
const SAMPLED: u32 = 1;

/// The body of one traces export: `chunks` hold spans as a batch wrote them
/// ([`span_end`]), joined in order. The spans are copied once, into the body.
pub fn traces<C: AsRef<[u8]>>(
    resource: &[(String, String)],
    chunks: &[C],
    protocol: Protocol,
) -> Vec<u8> {
    let resource = resource_of(resource).encode_to_vec();
    let scope = scope().encode_to_vec();
    let spans: usize = chunks.iter().map(|c| c.as_ref().len()).sum();
    // ExportTraceServiceRequest { resource_spans: [ResourceSpans { resource, scope_spans:
    // [ScopeSpans { scope, spans }] }] }, lengths first.
    let scope_spans = len_of_bytes(scope.len()) + spans;
    let resource_spans = len_of_bytes(resource.len()) + len_of_bytes(scope_spans);
    let mut request = Vec::with_capacity(len_of_bytes(resource_spans));
    key(&mut request, 1, LEN);
    varint(&mut request, resource_spans as u64);
    bytes_field(&mut request, 1, &resource);
    key(&mut request, 2, LEN);
    varint(&mut request, scope_spans as u64);
    bytes_field(&mut request, 1, &scope);
    for c in chunks {
        request.extend_from_slice(c.as_ref());
    }
    match protocol {
        Protocol::Protobuf => request,
        // The JSON mapping from the official types: the request read back, then written.
        Protocol::Json => ExportTraceServiceRequest::decode(request.as_slice())
            .ok()
            .and_then(|r| serde_json::to_vec(&r).ok())
            .unwrap_or_default(),
    }
}

/// Append `s` to `out` as one `ScopeSpans.spans` entry, as a run's batch writes it.
#[cfg(test)]
pub fn encode_span(s: &Span, out: &mut Vec<u8>) {
    let (what, which) = s.name.split_once(' ').unwrap_or((&s.name, ""));
    let at = span_start(out, &s.head(), (what, which));
    for (k, v) in &s.attrs {
        span_attr(out, k, v.as_attr());
    }
    for l in &s.links {
        span_link(out, l);
    }
    if let Status::Error(m) = &s.status {
        span_error(out, m);
    }
    span_end(out, at);
}

// A span is written field by field at the end of its batch as the run records it (protobuf
// allows fields in any order): no message structs, no copies of the run's strings. Its
// length, unknown until it ends, gets a two-byte slot that [`span_end`] fills (and resizes
// in the rare span shorter than 128 or longer than 16,383 bytes).

/// Start a `ScopeSpans.spans` entry at the end of `b`: its ids, name (`what which`), kind
/// and times. What comes back marks it for [`span_end`].
pub fn span_start(b: &mut Vec<u8>, h: &Head, (what, which): (&str, &str)) -> usize {
    b.reserve(256);
    b.extend_from_slice(&[2 << 3 | LEN, 0, 0]);
    let at = b.len();
    bytes_field(b, 1, &h.trace.0);
    bytes_field(b, 2, &h.id.0);
    if let Some(p) = h.parent {
        bytes_field(b, 4, &p.0);
    }
    let name = if which.is_empty() {
        what.len()
    } else {
        what.len() + 1 + which.len()
    };
    key(b, 5, LEN);
    varint(b, name as u64);
    b.extend_from_slice(what.as_bytes());
    if !which.is_empty() {
        b.push(b' ');
        b.extend_from_slice(which.as_bytes());
    }
    let kind = match h.kind {
        Kind::Internal => pt::span::SpanKind::Internal,
        Kind::Client => pt::span::SpanKind::Client,
    } as u8;
    b.extend_from_slice(&[6 << 3 | VARINT, kind, 7 << 3 | FIXED64]);
    b.extend_from_slice(&h.start_ns.to_le_bytes());
    b.push(8 << 3 | FIXED64);
    b.extend_from_slice(&h.end_ns.max(h.start_ns).to_le_bytes());
    at
}

/// An attribute of the span in `b` (a `KeyValue`, field 9).
#[inline]
pub fn span_attr(b: &mut Vec<u8>, k: &str, v: Attr<'_>) {
    let k = k.as_bytes();
    // Nearly every attribute is short: all its lengths are one byte, written at once.
    match v {
        Attr::Str(s) if k.len() + s.len() <= SHORT => {
            let s = s.as_bytes();
            let any = 2 + s.len();
            let kv = 2 + k.len() + 2 + any;
            b.reserve(2 + kv);
            b.extend_from_slice(&[9 << 3 | LEN, kv as u8, 1 << 3 | LEN, k.len() as u8]);
            b.extend_from_slice(k);
            b.extend_from_slice(&[2 << 3 | LEN, any as u8, 1 << 3 | LEN, s.len() as u8]);
            b.extend_from_slice(s);
        }
        Attr::Int(n) if k.len() <= SHORT => {
            let mut int = [0u8; 11];
            int[0] = 3 << 3 | VARINT;
            let n = write_varint(&mut int[1..], n as u64);
            let any = 1 + n;
            let kv = 2 + k.len() + 2 + any;
            b.reserve(2 + kv);
            b.extend_from_slice(&[9 << 3 | LEN, kv as u8, 1 << 3 | LEN, k.len() as u8]);
            b.extend_from_slice(k);
            b.extend_from_slice(&[2 << 3 | LEN, any as u8]);
            b.extend_from_slice(&int[..any]);
        }
        _ => long_attr(b, k, v),
    }
}

/// Keys and values up to this many bytes together make a [`span_attr`] whose lengths are
/// all one byte.
const SHORT: usize = 100;

/// Write `v` as a varint at the start of `out` (at least 10 bytes); its length comes back.
#[inline]
fn write_varint(out: &mut [u8], mut v: u64) -> usize {
    let mut i = 0;
    while v >= 0x80 {
        out[i] = v as u8 | 0x80;
        v >>= 7;
        i += 1;
    }
    out[i] = v as u8;
    i + 1
}

/// An attribute with a long key or value, or a number that is not an integer.
fn long_attr(b: &mut Vec<u8>, k: &[u8], v: Attr<'_>) {
    let any = match v {
        Attr::Str(s) => len_of_bytes(s.len()),
        Attr::Int(n) => 1 + varint_len(n as u64),
        Attr::F64(_) => 1 + 8,
        Attr::Bool(_) => 2,
    };
    let kv = len_of_bytes(k.len()) + len_of_bytes(any);
    b.reserve(1 + varint_len(kv as u64) + kv);
    key(b, 9, LEN);
    varint(b, kv as u64);
    bytes_field(b, 1, k);
    key(b, 2, LEN);
    varint(b, any as u64);
    match v {
        Attr::Str(s) => bytes_field(b, 1, s.as_bytes()),
        Attr::Int(n) => {
            key(b, 3, VARINT);
            varint(b, n as u64);
        }
        Attr::F64(x) => {
            key(b, 4, FIXED64);
            b.extend_from_slice(&x.to_le_bytes());
        }
        Attr::Bool(x) => b.extend_from_slice(&[2 << 3 | VARINT, u8::from(x)]),
    }
}

/// A link of the span in `b` to a span of another trace (field 13).
pub fn span_link(b: &mut Vec<u8>, l: &SpanContext) {
    // trace_id (2 + 16) + span_id (2 + 8) + flags (1 + 4)
    key(b, 13, LEN);
    varint(b, 18 + 10 + 5);
    bytes_field(b, 1, &l.trace.0);
    bytes_field(b, 2, &l.span.0);
    key(b, 6, FIXED32);
    b.extend_from_slice(&u32::from(l.sampled).to_le_bytes());
}

/// The span in `b` failed with `message` (its `Status`, field 15).
pub fn span_error(b: &mut Vec<u8>, message: &str) {
    let code = pt::status::StatusCode::Error as u64;
    key(b, 15, LEN);
    varint(b, (len_of_bytes(message.len()) + 2) as u64);
    bytes_field(b, 2, message.as_bytes());
    key(b, 3, VARINT);
    varint(b, code);
}

/// The span in `b` is complete: append it to `out` as one `ScopeSpans.spans` entry.
pub fn span_end(b: &mut Vec<u8>, at: usize) {
    key(b, 16, FIXED32);
    b.extend_from_slice(&SAMPLED.to_le_bytes());
    let len = b.len() - at;
    let mut slot = [0u8; 10];
    let n = write_varint(&mut slot, len as u64);
    if n != 2 {
        // Move the span so that its length fits before it.
        let old = b.len();
        if n > 2 {
            b.resize(old + n - 2, 0);
        }
        b.copy_within(at..old, at - 2 + n);
        b.truncate(at - 2 + n + len);
    }
    b[at - 2..at - 2 + n].copy_from_slice(&slot[..n]);
}

const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;
const FIXED32: u8 = 5;

#[inline]
fn key(b: &mut Vec<u8>, field: u32, wire: u8) {
    varint(b, u64::from(field << 3 | u32::from(wire)));
}

#[inline]
fn varint(b: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        b.push(v as u8 | 0x80);
        v >>= 7;
    }
    b.push(v as u8);
}

#[inline]
fn varint_len(v: u64) -> usize {
    // 7 bits a byte: (bits used + 6) / 7, with the multiply-shift for / 7 on 0..=70.
    let bits = 64 - (v | 1).leading_zeros() as usize;
    ((bits + 6) * 37) >> 8
}

/// The length of a length-delimited field of `n` bytes, after its key (one byte).
#[inline]
fn len_of_bytes(n: usize) -> usize {
    1 + varint_len(n as u64) + n
}

#[inline]
fn bytes_field(b: &mut Vec<u8>, field: u32, data: &[u8]) {
    key(b, field, LEN);
    varint(b, data.len() as u64);
    b.extend_from_slice(data);
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
    use crate::telemetry::ids::IdGen;
    use crate::telemetry::span::Value;

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
                ("gen_ai.operation.name", Value::from("invoke_agent")),
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

    fn encoded(spans: &[Span]) -> Vec<u8> {
        let mut out = Vec::new();
        for s in spans {
            encode_span(s, &mut out);
        }
        out
    }

    #[test]
    fn every_field_decodes_with_the_official_types() {
        let mut s = sample();
        s.attrs.push(("neg", Value::Int(-5)));
        s.attrs.push(("big", Value::Str("x".repeat(300))));
        s.attrs.push(("yes", Value::Bool(true)));
        let body = traces(
            &[],
            &[encoded(&[s.clone()]), encoded(&[s.clone()])],
            Protocol::Protobuf,
        );
        let req = ExportTraceServiceRequest::decode(body.as_slice()).expect("valid protobuf");
        let spans = &req.resource_spans[0].scope_spans[0].spans;
        assert_eq!(spans.len(), 2);
        let got = &spans[1];
        assert_eq!(got.span_id, s.id.0.to_vec());
        assert_eq!(got.name, "invoke_agent reviewer");
        assert_eq!(got.flags, SAMPLED);
        assert_eq!(got.start_time_unix_nano, s.start_ns);
        let attr = |k: &str| {
            got.attributes
                .iter()
                .find(|a| a.key == k)
                .and_then(|a| a.value.clone())
                .and_then(|v| v.value)
        };
        assert_eq!(attr("neg"), Some(any_value::Value::IntValue(-5)));
        assert_eq!(
            attr("tfc.cost_usd"),
            Some(any_value::Value::DoubleValue(0.25))
        );
        assert_eq!(attr("yes"), Some(any_value::Value::BoolValue(true)));
        assert_eq!(
            attr("big"),
            Some(any_value::Value::StringValue("x".repeat(300)))
        );
        let link = &got.links[0];
        assert_eq!(
            (link.trace_id.len(), link.span_id.len(), link.flags),
            (16, 8, 1)
        );
        // A span with neither parent nor error has no such fields.
        let bare = Span {
            parent: None,
            status: Status::Unset,
            links: Vec::new(),
            ..sample()
        };
        let body = traces(&[], &[encoded(&[bare])], Protocol::Protobuf);
        let req = ExportTraceServiceRequest::decode(body.as_slice()).expect("valid protobuf");
        let got = &req.resource_spans[0].scope_spans[0].spans[0];
        assert!(got.parent_span_id.is_empty() && got.status.is_none() && got.links.is_empty());
    }

    #[test]
    fn varint_lengths() {
        let edges = (0..64).flat_map(|bit| [(1u64 << bit) - 1, 1u64 << bit]);
        for v in edges.chain([u64::MAX]) {
            let mut b = Vec::new();
            varint(&mut b, v);
            assert_eq!(b.len(), varint_len(v), "{v}");
            let mut out = [0u8; 10];
            let n = write_varint(&mut out, v);
            assert_eq!(&out[..n], b.as_slice(), "{v}");
        }
    }

    #[test]
    fn spans_of_every_length_decode() {
        // Under 128 bytes (a one-byte length), the usual two bytes, and over 16,383 (three).
        for extra in [None, Some(10), Some(20_000)] {
            let mut s = Span {
                attrs: Vec::new(),
                links: Vec::new(),
                status: Status::Unset,
                name: "s".into(),
                parent: None,
                ..sample()
            };
            if let Some(n) = extra {
                s.attrs.push(("big", Value::Str("x".repeat(n))));
            }
            let mut body = vec![0xAA];
            encode_span(&s, &mut body);
            encode_span(&s, &mut body);
            let spans = traces(&[], &[&body[1..]], Protocol::Protobuf);
            let req = ExportTraceServiceRequest::decode(spans.as_slice()).expect("valid protobuf");
            let got = &req.resource_spans[0].scope_spans[0].spans;
            assert_eq!(got.len(), 2, "{extra:?}");
            assert_eq!(got[1].attributes.len(), usize::from(extra.is_some()));
            assert_eq!(body[0], 0xAA, "what came before is kept");
        }
    }

    #[test]
    fn short_attributes_are_written_as_long_ones_are() {
        let text = "k".repeat(130);
        for k in [1, 30, 99, 100, 101, 120] {
            let key = &text[..k];
            let mut values = vec![
                Attr::Int(0),
                Attr::Int(-1),
                Attr::Int(i64::MAX),
                Attr::Int(300),
            ];
            for n in [0, 1, 100 - k.min(100), 101 - k.min(101), 127] {
                values.push(Attr::Str(&text[..n]));
            }
            for v in values {
                let (mut short, mut long) = (Vec::new(), Vec::new());
                span_attr(&mut short, key, v);
                long_attr(&mut long, key.as_bytes(), v);
                assert_eq!(short, long, "{k}-byte key, {v:?}");
            }
        }
    }

    #[test]
    fn protobuf_decodes_back_to_the_same_span() {
        let s = sample();
        let body = traces(
            &[("service.name".into(), "tfc".into())],
            &[encoded(std::slice::from_ref(&s))],
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
        let body = traces(&[], &[encoded(std::slice::from_ref(&s))], Protocol::Json);
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
