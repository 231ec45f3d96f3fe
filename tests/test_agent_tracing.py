"""The loop's OpenTelemetry spans, exported to an in-memory exporter: one ``invoke_agent``
span per turn, its children a ``chat`` span per model call and an ``execute_tool`` span per
tool call (GenAI semantic conventions), a failed tool call's span marked as an error. The
model is the scripted fake of tests/fake_openai.py and the tools a FAKE registry."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import INVALID_SPAN, ProxyTracerProvider, StatusCode

from langop_infra.agent._loop import AgentLoop
from langop_infra.agent._metrics import RuntimeMetrics
from langop_infra.agent._model_client import ChatModel
from langop_infra.agent._tracing import SilentTracer, configure_tracing, runtime_tracer
from langop_infra.mcp._session import ToolCallResult
from tests.fake_openai import FakeOpenAI
from tests.support.agent_parts import tool_results
from tests.support.loopback import serve

ROOT = Path(__file__).resolve().parents[1]
# What the runtime's entry point imports, then what a2a-sdk and the environment say after it
IMPORTED = """
import os
from langop_infra.agent.__main__ import _import_runtime
_import_runtime()
import a2a.utils.telemetry as telemetry
print(telemetry.otel_enabled, os.environ.get("OTEL_INSTRUMENTATION_A2A_SDK_ENABLED"))
"""


class Tools:
    """A FAKE registry: ``ok`` answers, ``broken`` fails."""

    def llm_definitions(self, format: Any) -> tuple[list[dict[str, Any]], dict[str, str]]:
        names = ("ok", "broken")
        return [{"type": "function", "function": {"name": n}} for n in names], {n: n for n in names}

    async def call_tool(self, name: str, arguments: Any = None) -> ToolCallResult:
        return ToolCallResult([{"type": "text", "text": f"{name} ran"}], name == "broken")


def both_then_answer(body: dict[str, Any]) -> dict[str, Any]:
    if tool_results(body):
        return {"role": "assistant", "content": "done"}
    calls = [
        {"id": f"call_{n}", "type": "function", "function": {"name": n, "arguments": "{}"}}
        for n in ("ok", "broken")
    ]
    return {"role": "assistant", "content": None, "tool_calls": calls}


def test_a_turn_is_a_span_with_its_model_and_tool_calls_as_children() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    fake, metrics = FakeOpenAI(script=both_then_answer), RuntimeMetrics()

    async def run() -> None:
        model = ChatModel(model_url, "m1", None, 10, metrics)
        tracer = provider.get_tracer("test")
        loop = AgentLoop(model, Tools(), metrics, tracer=tracer, agent_name="helper")
        try:
            await loop.run("go", "c1")
        finally:
            await model.aclose()

    with serve(fake.app()) as model_url:
        asyncio.run(run())
    spans = {span.name: span for span in exporter.get_finished_spans()}
    assert sorted(spans) == [
        "chat m1",
        "execute_tool broken",
        "execute_tool ok",
        "invoke_agent helper",
    ]
    turn = spans.pop("invoke_agent helper")
    assert turn.parent is None
    assert dict(turn.attributes or {}) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "helper",
        "gen_ai.conversation.id": "c1",
    }
    assert turn.context is not None
    parents = {name: span.parent.span_id if span.parent else None for name, span in spans.items()}
    assert parents == {name: turn.context.span_id for name in spans}
    chats = [s for s in exporter.get_finished_spans() if s.name == "chat m1"]
    assert len(chats) == 2 and chats[0].attributes == {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m1",
    }
    broken, ok = spans["execute_tool broken"], spans["execute_tool ok"]
    assert (ok.status.status_code, broken.status.status_code) == (
        StatusCode.UNSET,
        StatusCode.ERROR,
    )
    assert (
        broken.attributes is not None and broken.attributes["gen_ai.tool.call.id"] == "call_broken"
    )


def test_nothing_is_exported_without_an_endpoint() -> None:
    assert configure_tracing({"AGENT_NAME": "helper"}) is None


@pytest.mark.parametrize(
    ("given", "printed"),
    [
        ({}, "False None"),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317"}, "True None"),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4317"}, "True None"),
        ({"OTEL_TRACES_EXPORTER": "console"}, "True None"),
        ({"OTEL_TRACES_EXPORTER": "none"}, "False None"),
        ({"OTEL_INSTRUMENTATION_A2A_SDK_ENABLED": "true"}, "True true"),
    ],
)
def test_a2a_sdk_spans_are_off_in_the_runtime_unless_something_exports_them(
    given: dict[str, str], printed: str
) -> None:
    """Nothing to export to: a2a-sdk's own spans are off in ``python -m langop_infra.agent``
    (its no-op spans cost CPU on every request); an exporter, or the operator's own setting,
    keeps them. The variable never reaches the process's environment (its children)."""
    quiet = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env = {**quiet, **given, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-c", IMPORTED], env=env, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == printed


@pytest.mark.parametrize(
    ("env", "provider", "silent"),
    [
        ({}, ProxyTracerProvider(), True),
        ({"OTEL_TRACES_EXPORTER": "none"}, ProxyTracerProvider(), True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317"}, ProxyTracerProvider(), False),
        ({"OTEL_TRACES_EXPORTER": "console"}, ProxyTracerProvider(), False),
        ({}, TracerProvider(), False),
    ],
)
def test_the_runtime_skips_spans_only_where_nothing_could_take_them(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], provider: Any, silent: bool
) -> None:
    """No provider set and nothing to export to: the runtime's tracer is silent (its spans
    would be no-ops anyway). A provider someone set (auto-instrumentation's, a test's) or an
    exporter named: the process's tracer, whose spans that provider records."""
    exporter = InMemorySpanExporter()
    if isinstance(provider, TracerProvider):
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    tracer = runtime_tracer(env)
    assert isinstance(tracer, SilentTracer) == silent
    with tracer.start_as_current_span("invoke_agent helper"):
        pass
    recorded = [s.name for s in exporter.get_finished_spans()]
    assert recorded == (
        [] if silent or isinstance(provider, ProxyTracerProvider) else ["invoke_agent helper"]
    )


def test_a_silent_span_is_invalid_and_leaves_the_current_span_alone() -> None:
    outer = TracerProvider().get_tracer("test")
    with outer.start_as_current_span("outer") as current:
        with SilentTracer().start_as_current_span("chat m", attributes={"a": "b"}) as span:
            assert span is INVALID_SPAN and not span.is_recording()
            assert trace.get_current_span() is current
            span.set_status(StatusCode.ERROR, "ignored")
        assert trace.get_current_span() is current


UNWRAPPED = """
import gc
from langop_infra.agent.__main__ import _import_runtime
_import_runtime()
import langop_infra.agent._a2a_sdk as sdk
codes = sdk._wrapper_codes()
gc.collect()
left = [f for f in gc.get_objects() if getattr(f, "__code__", None) in codes]
print(sdk.UNWRAPPED, len(left))
"""


@pytest.mark.parametrize(
    ("given", "off"),
    [({}, True), ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317"}, False)],
)
def test_a2a_sdks_span_wrappers_are_gone_where_its_spans_are_off(
    given: dict[str, str], off: bool
) -> None:
    """Spans off: no method of a2a-sdk's loaded modules is left inside one of its span
    wrappers (each still entered a no-op span on every call). Spans on: every wrapper stays."""
    quiet = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env = {**quiet, **given, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-c", UNWRAPPED], env=env, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr[-2000:]
    unwrapped, left = map(int, run.stdout.split())
    as_expected = (unwrapped > 100 and left == 0) if off else (unwrapped == 0 and left > 100)
    assert as_expected, (unwrapped, left)
