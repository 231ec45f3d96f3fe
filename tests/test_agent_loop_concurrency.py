"""The loop's tool calls of one model reply run at once (bounded by ``tool_concurrency``),
and a model that answers 429/5xx is asked again, after what its ``Retry-After`` says, within
the turn's deadline. The model is the scripted fake of tests/fake_openai.py (no real model
runs here), behind a FAKE gateway that fails the first requests on purpose."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from langop_infra.agent._loop import AgentLoop, TurnOutcome
from langop_infra.agent._metrics import RuntimeMetrics
from langop_infra.agent._model_client import ChatModel
from langop_infra.mcp._session import ToolCallResult
from tests.fake_openai import FakeOpenAI
from tests.support.agent_parts import tool_results
from tests.support.loopback import serve

GUARD = 10.0  # seconds a call waits for the others to start: a guard against a hang only


class SlowTools:
    """A FAKE registry: tools ``a``, ``b`` and ``c`` that record when each call starts and
    ends. With ``together`` set, a call ends only once that many calls have started, so calls
    run one after another never get past the first (the guard ends it as an error)."""

    def __init__(self, together: int = 0) -> None:
        self.events: list[tuple[str, str]] = []
        self.together = together
        self._started = 0
        self._all_started = asyncio.Event()

    def llm_definitions(self, format: Any) -> tuple[list[dict[str, Any]], dict[str, str]]:
        names = ("a", "b", "c")
        functions = [{"type": "function", "function": {"name": n, "parameters": {}}} for n in names]
        return functions, {n: n for n in names}

    async def call_tool(self, name: str, arguments: Any = None) -> ToolCallResult:
        self.events.append(("start", name))
        self._started += 1
        if self._started >= self.together:
            self._all_started.set()
        try:
            await asyncio.wait_for(self._all_started.wait(), GUARD)
        except asyncio.TimeoutError:
            self.events.append(("alone", name))
            return ToolCallResult([{"type": "text", "text": f"{name} ran alone"}], True)
        for _ in range(3):  # let any other call run, if one may
            await asyncio.sleep(0)
        self.events.append(("end", name))
        return ToolCallResult([{"type": "text", "text": f"{name} done"}], False)


def calls_at_once(*names: str) -> Any:
    """The model's script: ask for every tool in ``names`` in one reply, then answer with
    the results it read, in the order they came back."""

    def script(body: dict[str, Any]) -> dict[str, Any]:
        results = tool_results(body)
        if not results:
            calls = [
                {"id": f"call_{n}", "type": "function", "function": {"name": n, "arguments": "{}"}}
                for n in names
            ]
            return {"role": "assistant", "content": None, "tool_calls": calls}
        return {"role": "assistant", "content": ", ".join(r["text"] for r in results)}

    return script


async def no_wait(_seconds: float) -> None:
    """The retries' sleep, skipped: the delays asked for are in ``ChatModel.retry_delays``."""


def turn(
    url: str, tools: SlowTools | Callable[[], SlowTools], **options: Any
) -> tuple[TurnOutcome, ChatModel, RuntimeMetrics]:
    async def run() -> tuple[TurnOutcome, ChatModel, RuntimeMetrics]:
        metrics = RuntimeMetrics()
        model = ChatModel(url, "scripted", None, 10, metrics, sleep=no_wait)
        loop = AgentLoop(
            model, tools if isinstance(tools, SlowTools) else tools(), metrics, **options
        )
        try:
            return await loop.run("go", "c1"), model, metrics
        finally:
            await model.aclose()

    return asyncio.run(run())


def test_two_slow_calls_of_one_reply_run_at_once() -> None:
    box: dict[str, SlowTools] = {}

    def make() -> SlowTools:
        box["tools"] = SlowTools(together=2)
        return box["tools"]

    fake = FakeOpenAI(script=calls_at_once("a", "b"))
    with serve(fake.app()) as url:
        outcome, _, _ = turn(url, make, tool_timeout=GUARD * 2)
    events = box["tools"].events
    assert sorted(events[:2]) == [("start", "a"), ("start", "b")]  # both before either ended
    assert sorted(events[2:]) == [("end", "a"), ("end", "b")]
    assert outcome.answer == "a done, b done"
    assert [s.tool_name for s in outcome.steps] == ["a", "b"]
    answered = [
        m["tool_call_id"] for m in fake.requests[1]["body"]["messages"] if m["role"] == "tool"
    ]
    assert answered == ["call_a", "call_b"]


def test_the_bound_keeps_calls_one_at_a_time() -> None:
    tools = SlowTools(together=1)
    fake = FakeOpenAI(script=calls_at_once("a", "b", "c"))
    with serve(fake.app()) as url:
        outcome, _, _ = turn(url, tools, tool_concurrency=1)
    assert tools.events == [(e, n) for n in "abc" for e in ("start", "end")]
    assert outcome.answer == "a done, b done, c done"


class FailingFirst:
    """A FAKE gateway: answers the first requests with ``statuses`` (status, headers), then
    passes each request to the scripted model. ``seen`` counts every request."""

    def __init__(self, statuses: list[tuple[int, dict[str, str]]], fake: FakeOpenAI) -> None:
        self.pending, self.inner, self.seen = list(statuses), fake.app(), 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.pending:
            if scope["type"] == "http":
                self.seen += 1
            await self.inner(scope, receive, send)
            return
        self.seen += 1
        status, headers = self.pending.pop(0)
        await JSONResponse({"error": {"message": "busy"}}, status, headers)(scope, receive, send)


def requests_counted(metrics: RuntimeMetrics) -> dict[str, float]:
    name = "langop_agent_model_requests_total"
    return {
        o: metrics.registry.get_sample_value(name, {"outcome": o}) or 0 for o in ("ok", "error")
    }


def test_a_503_then_a_200_completes_the_turn_after_its_retry_after() -> None:
    fake = FakeOpenAI()
    gateway = FailingFirst([(503, {"Retry-After": "7"})], fake)
    with serve(gateway) as url:
        outcome, model, metrics = turn(url, SlowTools())
    assert (outcome.error, outcome.answer) == (None, "hello from scripted")
    assert model.retry_delays == [7.0]
    assert (gateway.seen, len(fake.requests)) == (2, 1)
    assert requests_counted(metrics) == {"ok": 1.0, "error": 1.0}


def test_no_retry_past_the_deadline_nor_after_a_client_error() -> None:
    late = FailingFirst([(429, {"Retry-After": "30"})], FakeOpenAI())
    refused = FailingFirst([(400, {})], FakeOpenAI())
    with serve(late) as late_url, serve(refused) as refused_url:
        too_late, model, _ = turn(late_url, SlowTools(), turn_timeout=5)
        bad, _, _ = turn(refused_url, SlowTools())
    assert too_late.error == (
        f"the model at {late_url}/chat/completions answered HTTP 429: "
        '{"error":{"message":"busy"}} (no retry: it would pass the turn\'s deadline)'
    )
    assert (late.seen, model.retry_delays) == (1, [])
    assert bad.error is not None and bad.error.endswith('HTTP 400: {"error":{"message":"busy"}}')
    assert refused.seen == 1


def test_a_model_that_keeps_failing_is_given_up_after_the_retries() -> None:
    busy = FailingFirst([(502, {})] * 5, FakeOpenAI())
    with serve(busy) as url:
        outcome, model, metrics = turn(url, SlowTools())
    assert outcome.error is not None and outcome.error.endswith("(gave up after 4 attempts)")
    assert (busy.seen, len(model.retry_delays)) == (4, 3)
    assert requests_counted(metrics) == {"ok": 0, "error": 4.0}
