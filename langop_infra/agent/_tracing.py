"""OpenTelemetry spans of the built-in runtime, named and tagged by the GenAI semantic
conventions: ``invoke_agent <agent>`` for a turn, ``chat <model>`` for each model call and
``execute_tool <tool>`` for each tool call, the calls children of their turn.

Exported over OTLP where ``OTEL_EXPORTER_OTLP_ENDPOINT`` points (the variables
``defaults.observability`` injects); with it unset, nothing is set up and the spans are
no-ops. The SDK and its OTLP exporter come with Pulumi's SDK, a dependency of the package.
"""

from __future__ import annotations

from collections.abc import Mapping

from opentelemetry import trace
from opentelemetry.trace import Tracer

__all__ = ["configure_tracing", "default_tracer"]

TRACER_NAME = "langop_infra.agent"


def default_tracer() -> Tracer:
    """The process's tracer (a no-op until :func:`configure_tracing` sets a provider)."""
    return trace.get_tracer(TRACER_NAME)


def configure_tracing(env: Mapping[str, str]) -> object | None:
    """Export spans over OTLP/gRPC when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or its traces
    variant) is set, as ``OTEL_SERVICE_NAME`` (else ``AGENT_NAME``); the provider, or None
    when nothing is to be exported."""
    endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT"
    )
    if not endpoint:
        return None
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    name = env.get("OTEL_SERVICE_NAME") or env.get("AGENT_NAME") or "langop-agent"
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    trace.set_tracer_provider(provider)
    return provider
