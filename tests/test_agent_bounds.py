"""The built-in runtime's bounds (issue 49 §2), each measured in bytes read or kept, or in
series, never in time: the A2A request body (413), the history per conversation and in all,
the model's and a peer's answers read no further than their caps, and the tool label of
``/metrics`` for names the model makes up.

Before: a 100 MB request was read whole (890 MB RSS), 30 turns of 5 MB were all kept, the
model's and the card's bodies were read in full before their caps, and 3,000 made-up tool
names were 3,000 series.
"""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from langop_infra.agent import _loop
from langop_infra.agent._a2a_client import A2AClientError, PeerClient
from langop_infra.agent._a2a_server import a2a_routes, build_app
from langop_infra.agent._body_limit import BodyLimit
from langop_infra.agent._loop import AgentLoop
from langop_infra.agent._metrics import RuntimeMetrics
from langop_infra.agent._model_client import ChatModel, ModelError, ModelReply, RequestedCall
from langop_infra.agent._settings import Peer
from langop_infra.mcp._session import ToolCallResult
from tests.support.loopback import serve

MiB = 1024 * 1024
CHUNK = 64 * 1024


class Counting(httpx.AsyncBaseTransport):
    """A real transport that counts the response bytes its caller pulled."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.read = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        inner = response.stream
        assert isinstance(inner, httpx.AsyncByteStream)
        counter = self

        class Stream(httpx.AsyncByteStream):
            async def __aiter__(self) -> AsyncIterator[bytes]:
                async for chunk in inner:
                    counter.read += len(chunk)
                    yield chunk

            async def aclose(self) -> None:
                await inner.aclose()

        return httpx.Response(
            response.status_code, headers=response.headers, stream=Stream(), extensions={}
        )


def endless(status: int, total: int = 64 * MiB, **headers: str) -> Any:
    async def body() -> AsyncIterator[bytes]:
        for _ in range(total // CHUNK):
            yield b" " * CHUNK

    async def handler(_request: Request) -> Response:
        return StreamingResponse(body(), status_code=status, headers=headers)

    return handler


class Scripted:
    """A model that asks for ``calls`` once, then answers."""

    def __init__(self, calls: list[str]) -> None:
        self.calls, self.asked = calls, 0

    async def complete(self, messages: Any, tools: Any, deadline: Any = None) -> ModelReply:
        self.asked += 1
        if self.asked > 1 or not self.calls:
            return ModelReply("done", (), {"role": "assistant", "content": "done"})
        calls = tuple(RequestedCall(f"c{i}", name, "{}") for i, name in enumerate(self.calls))
        return ModelReply("", calls, {})


class OneTool:
    def llm_definitions(self, format: Any) -> tuple[list[Any], dict[str, str]]:
        return [], {"calc": "calc"}

    async def call_tool(self, name: str, arguments: Any = None) -> ToolCallResult:
        return ToolCallResult([{"type": "text", "text": "4"}], False)


def series(metrics: RuntimeMetrics, name: str) -> list[str]:
    (family,) = [f for f in metrics.registry.collect() if f.name == name]
    return sorted({s.labels["tool"] for s in family.samples})


def test_made_up_tool_names_fold_into_one_series() -> None:
    metrics = RuntimeMetrics()
    names = ["calc", *(f"invented_{i}" for i in range(3000))]
    loop = AgentLoop(Scripted(names), OneTool(), metrics)
    outcome = asyncio.run(loop.run("go", "c1"))
    assert len(outcome.tool_results) == 3001
    assert series(metrics, "langop_agent_tool_invocations") == ["_unknown", "calc"]
    assert series(metrics, "langop_agent_tool_errors") == ["_unknown"]
    value = metrics.registry.get_sample_value
    assert value("langop_agent_tool_invocations_total", {"tool": "_unknown"}) == 3000


def kept(loop: AgentLoop, conversations: list[str]) -> int:
    return sum(
        len(json.dumps(m, default=str).encode()) for c in conversations for m in loop.history(c)
    )


def test_history_is_capped_in_bytes_per_conversation_and_in_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop = AgentLoop(Scripted([]), OneTool(), RuntimeMetrics(), history_bytes=256 * 1024)
    for _ in range(30):
        asyncio.run(loop.run("x" * 100_000, "one"))
    assert 200_000 < kept(loop, ["one"]) <= 256 * 1024  # the last two turns
    assert loop.history("one")[0]["role"] == "user"

    monkeypatch.setattr(_loop, "TOTAL_HISTORY_BYTES", 2 * MiB)
    many = [f"c{i}" for i in range(40)]
    for conversation in many:
        asyncio.run(loop.run("y" * 100_000, conversation))
    assert 2 * MiB - 256 * 1024 < kept(loop, ["one", *many]) <= 2 * MiB
    assert loop.history("c39") and not loop.history("c0")  # the least recent went first


def test_a_model_answer_is_read_no_further_than_its_cap() -> None:
    app = Starlette(
        routes=[
            Route("/ok/chat/completions", endless(200), methods=["POST"]),
            Route("/bad/chat/completions", endless(500), methods=["POST"]),
        ]
    )
    with serve(app) as url:
        for path, cap in (("ok", 8 * MiB), ("bad", 16 * 1024)):
            counting = Counting()
            client = httpx.AsyncClient(transport=counting)
            # No retry: a 500 is asked again otherwise, and each attempt reads up to the cap.
            model = ChatModel(
                f"{url}/{path}", "m", None, 30, RuntimeMetrics(), client, max_retries=0
            )
            with pytest.raises(ModelError) as caught:
                asyncio.run(model.complete([{"role": "user", "content": "hi"}], []))
            assert counting.read <= cap + CHUNK, (path, counting.read)
            if path == "ok":
                assert str(caught.value) == "the model's answer is over 8388608 bytes"
            else:
                assert str(caught.value).startswith(f"the model at {url}/bad/chat/completions")


def test_a_peer_card_is_read_no_further_than_its_cap() -> None:
    squeezed = gzip.compress(b"{}" + b" " * MiB)

    async def compressed(_request: Request) -> Response:
        return Response(squeezed, headers={"content-encoding": "gzip"})

    app = Starlette(
        routes=[
            Route("/big/.well-known/agent-card.json", endless(200), methods=["GET"]),
            Route("/gz/.well-known/agent-card.json", compressed, methods=["GET"]),
        ]
    )
    with serve(app) as url:
        counting = Counting()
        peers = [
            Peer("big", f"{url}/big/", f"{url}/big/.well-known/agent-card.json"),
            Peer("gz", f"{url}/gz/", f"{url}/gz/.well-known/agent-card.json"),
        ]
        client = PeerClient(peers, timeout=30, transport=counting)
        with pytest.raises(A2AClientError, match=r"over 262144 bytes"):
            asyncio.run(client.send("big", "hi"))
        assert counting.read <= 256 * 1024 + CHUNK
        with pytest.raises(A2AClientError, match=r"is compressed \(gzip\)"):
            asyncio.run(client.send("gz", "hi"))


def test_an_a2a_request_over_the_cap_is_413_and_not_read() -> None:
    """A declared length over the cap is refused before a byte is read; a chunked 100 MB
    body is read only up to the cap (the bytes ``receive`` gave are the measure)."""

    class NoModel:
        async def complete(self, messages: Any, tools: Any, deadline: Any = None) -> ModelReply:
            raise AssertionError("no turn runs")

    loop = AgentLoop(NoModel(), OneTool(), RuntimeMetrics())
    app = build_app(a2a_routes(None, "/", lambda: loop, "helper"), max_request_bytes=MiB)
    with serve(app) as url:
        declared = httpx.post(f"{url}/", content=b"x" * (2 * MiB), timeout=30)

        def chunks() -> Any:
            for _ in range(8 * MiB // CHUNK):
                yield b"x" * CHUNK

        try:
            chunked = httpx.post(f"{url}/", content=chunks(), timeout=30)
        except httpx.TransportError:  # refused while the client still sends: also fine
            chunked = None
    assert declared.status_code == 413
    assert declared.json() == {
        "error": "the request body is over 1048576 bytes (A2A_MAX_REQUEST_BYTES)"
    }
    assert chunked is None or chunked.status_code == 413

    pulled = 0

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        pulled += CHUNK
        return {"type": "http.request", "body": b"x" * CHUNK, "more_body": pulled < 100 * MiB}

    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def never(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("the app is not called")

    scope = {"type": "http", "headers": [(b"transfer-encoding", b"chunked")]}
    asyncio.run(BodyLimit(never, MiB)(scope, receive, send))
    assert pulled <= MiB + CHUNK
    assert sent[0]["status"] == 413


def test_a_body_under_the_cap_reaches_the_app_whole() -> None:
    seen: list[bytes] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append((await receive())["body"])
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    parts = [b"a" * 1000, b"b" * 1000, b""]

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": parts.pop(0), "more_body": bool(parts)}

    async def send(message: Any) -> None:
        pass

    scope = {"type": "http", "headers": [(b"content-length", b"2000")]}
    asyncio.run(BodyLimit(app, 2000)(scope, receive, send))
    assert seen == [b"a" * 1000 + b"b" * 1000]
