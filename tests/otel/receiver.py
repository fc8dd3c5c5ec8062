"""A strict OTLP/HTTP receiver for the tests of tfc's OpenTelemetry export (tests/otel_receiver.rs).

    python receiver.py OUT_DIR [--port N] [--delay SECONDS] [--status CODE] [--traces-path PATH]

Listens on 127.0.0.1 (port N, or one the system picks) and prints the port as its first line
on stdout. It takes POST /v1/traces and /v1/metrics (and PATH for traces, for an
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT used as is), in both encodings OTLP/HTTP allows:

- `application/x-protobuf`: parsed with the official `opentelemetry-proto` messages;
- `application/json` (OTLP/JSON): ids are hex strings, enums integers, keys lowerCamelCase;
  parsed with `google.protobuf.json_format.ParseDict(..., ignore_unknown_fields=False)`
  once the hex ids are turned into bytes.

A body that does not parse is answered 400; a wrong path 404; a wrong method 405; another
content type or encoding 415. Unknown protobuf fields (a wrong field number or wire type),
snake_case JSON keys, enum names instead of numbers, ids of the wrong length or all zeros, an
unset span kind, end before start and similar are recorded as errors (the request is still
answered as asked). Everything lands in OUT_DIR, one JSON object a line:

- requests.jsonl: path, contentType, contentEncoding, bytes, status answered;
- spans.jsonl: one line a span (ids as lowercase hex, parentSpanId "" for none, attributes
  and resource attributes flattened to objects, its links, the content type it came in);
- metrics.jsonl: one line a data point (metric name, type, unit, data point attributes,
  count/sum/value);
- errors.jsonl: path, contentType, error.

Lines are written before the request is answered, so a client that has its answer finds them.
`--delay` sleeps that long before answering and `--status` answers with that code (after
recording), to play a slow or broken collector.
"""

import argparse
import base64
import gzip
import json
import os
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format, unknown_fields
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
# OTLP/JSON id fields, hex strings of this many bytes (spans, links, exemplars).
ID_BYTES = {"traceId": 16, "spanId": 8, "parentSpanId": 8}
# OTLP/JSON enum fields: integers only.
ENUM_KEYS = {"kind", "code", "aggregationTemporality", "severityNumber"}


class Rejected(Exception):
    """The request is answered with `status` and recorded as an error."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class Store:
    """The output files, appended to under one lock."""

    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.lock = threading.Lock()
        for name in ("requests", "spans", "metrics", "errors"):
            open(os.path.join(out_dir, name + ".jsonl"), "a").close()

    def write(self, name, records):
        if not records:
            return
        with self.lock, open(os.path.join(self.out_dir, name + ".jsonl"), "a") as f:
            for r in records:
                f.write(json.dumps(r, sort_keys=True) + "\n")
            f.flush()


def any_value(v):
    """An AnyValue as plain JSON (bytes as lowercase hex, an empty value as None)."""
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [any_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in v.kvlist_value.values}
    if kind == "bytes_value":
        return v.bytes_value.hex()
    return getattr(v, kind)


def attributes(kvs, where, errors):
    out = {}
    for kv in kvs:
        if not kv.key:
            errors.append(f"{where}: an attribute with an empty key")
        if kv.key in out:
            errors.append(f"{where}: attribute {kv.key!r} given twice")
        out[kv.key] = any_value(kv.value)
    return out


def unknown_field_errors(msg, where, errors):
    """Fields the schema does not know (a wrong number or wire type), at any depth."""
    unknown = [(f.field_number, f.wire_type) for f in unknown_fields.UnknownFieldSet(msg)]
    if unknown:
        errors.append(f"{where}: unknown fields (number, wire type) {unknown}")
    for field, value in msg.ListFields():
        if field.message_type is None:
            continue
        if field.is_repeated and not (field.message_type.GetOptions().map_entry):
            for i, item in enumerate(value):
                unknown_field_errors(item, f"{where}.{field.name}[{i}]", errors)
        elif not field.is_repeated:
            unknown_field_errors(value, f"{where}.{field.name}", errors)


def check_id(raw, size, where, errors, allow_empty=False):
    if allow_empty and raw == b"":
        return ""
    if len(raw) != size:
        errors.append(f"{where}: {len(raw)} bytes, not {size}")
    elif raw == bytes(size):
        errors.append(f"{where}: all zeros")
    return raw.hex()


def links_of(span, where, errors):
    """A span's links as plain JSON; a link's ids are checked as a span's are."""
    out = []
    for k, link in enumerate(span.links):
        at = f"{where}.links[{k}]"
        out.append(
            {
                "traceId": check_id(link.trace_id, 16, f"{at}.traceId", errors),
                "spanId": check_id(link.span_id, 8, f"{at}.spanId", errors),
                "traceState": link.trace_state,
                "flags": link.flags,
                "attributes": attributes(link.attributes, at, errors),
            }
        )
    return out


def json_to_message(body, message, errors):
    """Parse an OTLP/JSON body into `message`, checking what ParseDict lets through."""
    try:
        doc = json.loads(body)
    except (UnicodeDecodeError, ValueError) as e:
        raise Rejected(400, f"not JSON: {e}")
    if not isinstance(doc, dict):
        raise Rejected(400, "the body is not a JSON object")

    def walk(node, where):
        if isinstance(node, list):
            return [walk(x, f"{where}[{i}]") for i, x in enumerate(node)]
        if not isinstance(node, dict):
            return node
        out = {}
        for key, value in node.items():
            at = f"{where}.{key}"
            if "_" in key:
                errors.append(f"{at}: keys are lowerCamelCase in OTLP/JSON, not snake_case")
            if key in ID_BYTES and isinstance(value, str):
                try:
                    raw = bytes.fromhex(value)
                except ValueError:
                    raise Rejected(400, f"{at}: {value!r} is not hex (OTLP/JSON ids are hex, not base64)")
                if value and len(raw) != ID_BYTES[key]:
                    raise Rejected(400, f"{at}: {value!r} is not {ID_BYTES[key]} bytes of hex")
                out[key] = base64.b64encode(raw).decode()
                continue
            if key in ENUM_KEYS and not isinstance(value, int):
                errors.append(f"{at}: enum values are integers in OTLP/JSON, not {value!r}")
            out[key] = walk(value, at)
        return out

    try:
        json_format.ParseDict(walk(doc, "$"), message, ignore_unknown_fields=False)
    except json_format.ParseError as e:
        raise Rejected(400, f"not an OTLP/JSON {type(message).__name__}: {e}")


def spans_of(req, errors, extra):
    lines = []
    for r, rs in enumerate(req.resource_spans):
        resource = attributes(rs.resource.attributes, f"resourceSpans[{r}].resource", errors)
        if not isinstance(resource.get("service.name"), str) or not resource["service.name"]:
            errors.append(f"resourceSpans[{r}].resource: no service.name")
        for s, ss in enumerate(rs.scope_spans):
            for i, span in enumerate(ss.spans):
                at = f"resourceSpans[{r}].scopeSpans[{s}].spans[{i}] {span.name!r}"
                line = {
                    "traceId": check_id(span.trace_id, 16, f"{at}.traceId", errors),
                    "spanId": check_id(span.span_id, 8, f"{at}.spanId", errors),
                    "parentSpanId": check_id(
                        span.parent_span_id, 8, f"{at}.parentSpanId", errors, allow_empty=True
                    ),
                    "name": span.name,
                    "kind": span.kind,
                    "startTimeUnixNano": span.start_time_unix_nano,
                    "endTimeUnixNano": span.end_time_unix_nano,
                    "attributes": attributes(span.attributes, at, errors),
                    "status": {"code": span.status.code, "message": span.status.message},
                    "links": links_of(span, at, errors),
                    "resource": resource,
                    "scope": ss.scope.name,
                }
                line.update(extra)
                if not span.name:
                    errors.append(f"{at}: no name")
                if span.kind == 0:
                    errors.append(f"{at}: kind SPAN_KIND_UNSPECIFIED")
                if span.kind > 5:
                    errors.append(f"{at}: kind {span.kind} is not a SpanKind")
                if span.status.code > 2:
                    errors.append(f"{at}: status code {span.status.code} is not a StatusCode")
                if span.start_time_unix_nano == 0 or span.end_time_unix_nano == 0:
                    errors.append(f"{at}: a zero start or end time")
                elif span.end_time_unix_nano < span.start_time_unix_nano:
                    errors.append(f"{at}: ends before it starts")
                lines.append(line)
    return lines


def points_of(req, errors, extra):
    lines = []
    for r, rm in enumerate(req.resource_metrics):
        resource = attributes(rm.resource.attributes, f"resourceMetrics[{r}].resource", errors)
        if not isinstance(resource.get("service.name"), str) or not resource["service.name"]:
            errors.append(f"resourceMetrics[{r}].resource: no service.name")
        for s, sm in enumerate(rm.scope_metrics):
            for i, metric in enumerate(sm.metrics):
                at = f"resourceMetrics[{r}].scopeMetrics[{s}].metrics[{i}] {metric.name!r}"
                kind = metric.WhichOneof("data")
                if not metric.name:
                    errors.append(f"{at}: no name")
                if kind is None:
                    errors.append(f"{at}: no data")
                    continue
                data = getattr(metric, kind)
                temporality = getattr(data, "aggregation_temporality", None)
                if temporality == 0:
                    errors.append(f"{at}: aggregation temporality unspecified")
                for p, point in enumerate(data.data_points):
                    where = f"{at}.dataPoints[{p}]"
                    line = {
                        "name": metric.name,
                        "type": kind,
                        "unit": metric.unit,
                        "attributes": attributes(point.attributes, where, errors),
                        "resource": resource,
                        "scope": sm.scope.name,
                    }
                    line.update(extra)
                    if point.time_unix_nano == 0:
                        errors.append(f"{where}: a zero time")
                    if kind in ("histogram", "exponential_histogram", "summary"):
                        line["count"] = point.count
                        line["sum"] = point.sum
                    if kind == "histogram":
                        counts, bounds = list(point.bucket_counts), list(point.explicit_bounds)
                        if counts and len(counts) != len(bounds) + 1:
                            errors.append(f"{where}: {len(counts)} buckets for {len(bounds)} bounds")
                        if counts and sum(counts) != point.count:
                            errors.append(f"{where}: buckets add up to {sum(counts)}, count is {point.count}")
                        if bounds != sorted(bounds):
                            errors.append(f"{where}: explicit bounds not in order")
                    if kind in ("gauge", "sum"):
                        which = point.WhichOneof("value")
                        line["value"] = getattr(point, which) if which else None
                    lines.append(line)
    return lines


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "tfc-otlp-receiver"

    def log_message(self, *args):
        pass

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def answer(self, status, content_type, payload):
        delay = self.server.options.delay
        if delay:
            time.sleep(delay)
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except OSError:
            pass  # the client gave up (a slow-collector test)

    def do_GET(self):
        self.reject_method()

    def do_PUT(self):
        self.reject_method()

    def reject_method(self):
        store = self.server.store
        store.write("errors", [{"path": self.path, "contentType": None, "error": f"method {self.command}"}])
        store.write("requests", [{"path": self.path, "method": self.command, "status": 405}])
        self.answer(405, "text/plain", b"POST only\n")

    def do_POST(self):
        store, options = self.server.store, self.server.options
        path = self.path
        content_type = self.headers.get("Content-Type")
        encoding = self.headers.get("Content-Encoding")
        raw = self.body()
        errors = []
        signal, lines = None, []
        status = 200
        try:
            if path in ("/v1/traces", options.traces_path):
                signal, request, response = "spans", ExportTraceServiceRequest(), ExportTraceServiceResponse()
            elif path == "/v1/metrics":
                signal, request, response = "metrics", ExportMetricsServiceRequest(), ExportMetricsServiceResponse()
            else:
                raise Rejected(404, f"no such path {path}")
            if content_type not in (PROTOBUF, JSON):
                raise Rejected(415, f"content type {content_type!r} (OTLP/HTTP takes {PROTOBUF} or {JSON})")
            if encoding in (None, "", "identity"):
                body = raw
            elif encoding == "gzip":
                try:
                    body = gzip.decompress(raw)
                except (OSError, EOFError, zlib.error) as e:
                    raise Rejected(400, f"not gzip: {e}")
            else:
                raise Rejected(415, f"content encoding {encoding!r}")
            if content_type == PROTOBUF:
                try:
                    request.ParseFromString(body)
                except DecodeError as e:
                    raise Rejected(400, f"not a protobuf {type(request).__name__}: {e}")
                unknown_field_errors(request, "$", errors)
            else:
                json_to_message(body, request, errors)
            extra = {"contentType": content_type, "path": path}
            lines = spans_of(request, errors, extra) if signal == "spans" else points_of(request, errors, extra)
            if not lines:
                errors.append("an export request with nothing in it")
            payload = response.SerializeToString() if content_type == PROTOBUF else b"{}"
            answer_type = content_type
        except Rejected as e:
            errors.append(str(e))
            status, payload, answer_type = e.status, (str(e) + "\n").encode(), "text/plain"
        if status == 200 and options.status != 200:
            status, payload, answer_type = options.status, b"collector failure (test)\n", "text/plain"
        if lines:
            store.write(signal, lines)
        store.write("errors", [{"path": path, "contentType": content_type, "error": e} for e in errors])
        store.write(
            "requests",
            [
                {
                    "path": path,
                    "method": "POST",
                    "contentType": content_type,
                    "contentEncoding": encoding,
                    "bytes": len(raw),
                    "status": status,
                }
            ],
        )
        self.answer(status, answer_type, payload)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--status", type=int, default=200)
    parser.add_argument("--traces-path", default="/v1/traces")
    options = parser.parse_args()
    os.makedirs(options.out_dir, exist_ok=True)
    server = ThreadingHTTPServer(("127.0.0.1", options.port), Handler)
    server.daemon_threads = True
    server.store = Store(options.out_dir)
    server.options = options
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
