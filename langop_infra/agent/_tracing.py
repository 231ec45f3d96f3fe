"""OpenTelemetry spans of the built-in runtime, named and tagged by the GenAI semantic
conventions: ``invoke_agent <agent>`` for a turn, ``chat <model>`` for each model call and
``execute_tool <tool>`` for each tool call, the calls children of their turn.

Exported over OTLP where ``OTEL_EXPORTER_OTLP_ENDPOINT`` points (the variables
``defaults.observability`` injects); with it unset, nothing is set up, the spans are no-ops
and a2a-sdk's own spans are off. The SDK and its OTLP exporter come with Pulumi's SDK, a
dependency of the package.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Generator, Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import INVALID_SPAN, NoOpTracer, ProxyTracerProvider, Span, Tracer

__all__ = [
    "a2a_sdk_spans_off_unless_exported",
    "configure_tracing",
    "default_tracer",
    "runtime_tracer",
]

TRACER_NAME = "langop_infra.agent"
# a2a-sdk reads it once, when its telemetry module is first imported
A2A_SDK_SWITCH = "OTEL_INSTRUMENTATION_A2A_SDK_ENABLED"


def default_tracer() -> Tracer:
    """The process's tracer (a no-op until :func:`configure_tracing` sets a provider)."""
    return trace.get_tracer(TRACER_NAME)


class SilentTracer(NoOpTracer):
    """A tracer for a process where nothing takes spans: each span is the invalid span,
    entered without touching the OpenTelemetry context (the API's no-op spans still attach
    and detach it, about 14 µs a span, four spans a turn)."""

    _silent = contextlib.nullcontext(INVALID_SPAN)

    def start_as_current_span(  # pyright: ignore[reportIncompatibleMethodOverride]
        self, *args: Any, **kwargs: Any
    ) -> contextlib.AbstractContextManager[Span]:
        return self._silent


def runtime_tracer(env: Mapping[str, str]) -> Tracer:
    """The runtime's tracer, once :func:`configure_tracing` has run: the process's, unless
    no tracer provider is set and nothing would export spans (then :class:`SilentTracer`)."""
    if exports_spans(env) or not isinstance(trace.get_tracer_provider(), ProxyTracerProvider):
        return default_tracer()
    return SilentTracer()


def _endpoint(env: Mapping[str, str]) -> str:
    return env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT", ""
    )


def exports_spans(env: Mapping[str, str]) -> bool:
    """Whether spans may be exported: an OTLP endpoint (where :func:`configure_tracing`
    exports), or ``OTEL_TRACES_EXPORTER`` naming an exporter (auto-instrumentation's)."""
    exporter = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    return bool(_endpoint(env)) or exporter not in ("", "none")


@contextlib.contextmanager
def a2a_sdk_spans_off_unless_exported(env: Mapping[str, str]) -> Generator[None]:
    """Import a2a-sdk inside: its own spans are then off when nothing would export them
    (they cost CPU on every request, docs/performance.md) and ``env`` does not set
    ``OTEL_INSTRUMENTATION_A2A_SDK_ENABLED``. ``os.environ`` is as it was afterwards, so
    child processes see only what the operator set."""
    if exports_spans(env) or A2A_SDK_SWITCH in env or A2A_SDK_SWITCH in os.environ:
        yield
        return
    os.environ[A2A_SDK_SWITCH] = "false"
    try:
        yield
    finally:
        os.environ.pop(A2A_SDK_SWITCH, None)


def configure_tracing(env: Mapping[str, str]) -> object | None:
    """Export spans over OTLP/gRPC when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or its traces
    variant) is set, as ``OTEL_SERVICE_NAME`` (else ``AGENT_NAME``); the provider, or None
    when nothing is to be exported."""
    endpoint = _endpoint(env)
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
