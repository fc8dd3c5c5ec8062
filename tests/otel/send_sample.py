"""Sends, with the official OpenTelemetry Python SDK, the trace and metrics that `tfc run` of the
changelog example is to export (the contract in tests/otel_receiver.rs), so the receivers and
the assertions of tests/otel_receiver.rs are proven on a client nobody here wrote.

    python send_sample.py BASE_URL protobuf|json [--traces-only]

protobuf: the SDK's own OTLP/HTTP exporters post to BASE_URL/v1/traces and /v1/metrics.
json: the SDK's OTLP encoders make the requests, sent as OTLP/JSON (ids hex, enums integers).
Prints what a run.json of that run would say (traceId, rootSpanId, runId, phases' type and
status) as one JSON line on stdout. --traces-only sends no metrics (Phoenix takes none).
"""

import argparse
import base64
import json
import sys
import urllib.request

from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

RUN_ID = "changelog-sample-000000"
PHASES = {
    "collect": {"type": "script", "status": "done"},
    "classify": {"type": "map", "status": "done"},
    "bump": {"type": "script", "status": "done"},
    "notes": {"type": "reduce", "status": "done"},
}


def hex_ids(node):
    """MessageToDict gives bytes as base64; OTLP/JSON wants the ids in hex."""
    if isinstance(node, list):
        return [hex_ids(x) for x in node]
    if isinstance(node, dict):
        return {
            k: base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId") else hex_ids(v)
            for k, v in node.items()
        }
    return node


def post_json(url, message):
    body = json.dumps(hex_ids(json_format.MessageToDict(message, use_integers_for_enums=True)))
    req = urllib.request.Request(
        url, data=body.encode(), method="POST", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 200, r.status


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("base_url")
    parser.add_argument("protocol", choices=["protobuf", "json"])
    parser.add_argument("--traces-only", action="store_true")
    args = parser.parse_args()
    base, protocol = args.base_url.rstrip("/"), args.protocol
    resource = Resource.create({"service.name": "tfc"})
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
    tracer = tracer_provider.get_tracer("tfc")
    meter = meter_provider.get_meter("tfc")
    tokens = meter.create_histogram("gen_ai.client.token.usage", unit="{token}")
    duration = meter.create_histogram("gen_ai.client.operation.duration", unit="s")

    def phase(pid):
        attrs = {"tfc.phase.id": pid, "tfc.phase.kind": PHASES[pid]["type"], "tfc.phase.status": "done"}
        return tracer.start_as_current_span(f"phase {pid}", attributes=attrs)

    def agent(name):
        attrs = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": "replay",
            "gen_ai.agent.name": name,
            "tfc.attempt": 1,
            "gen_ai.usage.input_tokens": 0,
            "gen_ai.usage.output_tokens": 0,
        }
        with tracer.start_as_current_span(f"invoke_agent {name}", kind=SpanKind.CLIENT, attributes=attrs):
            common = {"gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "replay"}
            tokens.record(0, {**common, "gen_ai.token.type": "input"})
            tokens.record(0, {**common, "gen_ai.token.type": "output"})
            duration.record(0.003, common)

    root_attrs = {"tfc.run.id": RUN_ID, "tfc.flow.name": "changelog", "tfc.run.status": "completed"}
    with tracer.start_as_current_span("run changelog", attributes=root_attrs) as root:
        with phase("collect"), tracer.start_as_current_span("script collect"):
            pass
        with phase("classify"):
            for i in range(4):
                with tracer.start_as_current_span(f"item classify#{i}"):
                    agent("analyst")
        with phase("bump"), tracer.start_as_current_span("script bump"):
            pass
        with phase("notes"):
            agent("writer")
    context = root.get_span_context()

    finished = spans.get_finished_spans()
    metrics = reader.get_metrics_data()
    if protocol == "protobuf":
        assert OTLPSpanExporter(endpoint=base + "/v1/traces").export(finished).name == "SUCCESS"
        if not args.traces_only:
            assert OTLPMetricExporter(endpoint=base + "/v1/metrics").export(metrics).name == "SUCCESS"
    else:
        post_json(base + "/v1/traces", encode_spans(finished))
        if not args.traces_only:
            post_json(base + "/v1/metrics", encode_metrics(metrics))
    run = {
        "traceId": format(context.trace_id, "032x"),
        "rootSpanId": format(context.span_id, "016x"),
        "runId": RUN_ID,
        "flow": "changelog",
        "status": "completed",
        "phases": PHASES,
    }
    print(json.dumps(run), flush=True)


if __name__ == "__main__":
    main()
