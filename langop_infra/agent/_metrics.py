"""The built-in runtime's Prometheus metrics (``GET /metrics``), in a registry of its own.

Tool calls count per registry tool name (STOA's ``invocationCount`` and ``errorCount``,
summed across pods by Prometheus), a name the model made up under :data:`UNKNOWN_TOOL`, so
the series stay as many as the agent's tools; model requests count per outcome (``ok``,
``error``).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

__all__ = ["UNKNOWN_TOOL", "RuntimeMetrics"]

UNKNOWN_TOOL = "_unknown"  # the one label of every tool name the model made up


class RuntimeMetrics:
    """Counters and latency histograms of one runtime."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.tool_invocations = Counter(
            "langop_agent_tool_invocations",
            "Tool calls made by the agent",
            ["tool"],
            registry=self.registry,
        )
        self.tool_errors = Counter(
            "langop_agent_tool_errors",
            "Tool calls that returned an error result",
            ["tool"],
            registry=self.registry,
        )
        self.tool_seconds = Histogram(
            "langop_agent_tool_call_seconds",
            "Tool call latency",
            ["tool"],
            registry=self.registry,
        )
        self.model_requests = Counter(
            "langop_agent_model_requests",
            "Chat completion requests to the model",
            ["outcome"],
            registry=self.registry,
        )
        self.model_seconds = Histogram(
            "langop_agent_model_request_seconds",
            "Chat completion latency",
            registry=self.registry,
        )
        self.turns = Counter(
            "langop_agent_turns", "Turns answered", ["outcome"], registry=self.registry
        )
        self.turn_seconds = Histogram(
            "langop_agent_turn_seconds", "Turn latency (model and tools)", registry=self.registry
        )
