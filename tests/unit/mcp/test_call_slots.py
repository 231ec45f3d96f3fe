"""The per-server call limit of ``Session.call_tool`` (issue 49 §2): at most
``max_concurrent_calls`` in flight, ``max_queued_calls`` more waiting (each at most
``timeout``), the rest refused at once with ``ServerBusy``. No server runs here: the session's
``tools/call`` is replaced by one that holds until the test opens a gate, so only the slot
logic is under test (tests/mcp/test_mcp_load.py bursts a real SDK server)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from langop_infra.mcp import ClientOptions, MCPTimeout, ServerBusy
from langop_infra.mcp._session import Session, ToolCallResult


class Unused:
    """A transport no call reaches (tools/call is replaced below)."""

    async def request(self, *args: object, **kwargs: object) -> Any:
        raise AssertionError("no request goes out in these tests")

    async def notify(self, *args: object, **kwargs: object) -> None:
        raise AssertionError("no notification goes out in these tests")

    async def close(self) -> None:
        return None


class HeldSession(Session):
    """A session whose tools/call waits for ``gate``; it counts the calls in flight."""

    def __init__(self, options: ClientOptions) -> None:
        super().__init__("held", options, transport=Unused())  # pyright: ignore[reportArgumentType]
        self.gate = asyncio.Event()
        self.running = self.peak = 0

    async def initialize(self) -> None:
        return None

    async def _call_tool(self, name: str, arguments: Mapping[str, Any] | None) -> ToolCallResult:
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            await self.gate.wait()
            return ToolCallResult(
                [{"type": "text", "text": f"{name} {dict(arguments or {})}"}], False
            )
        finally:
            self.running -= 1


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


def options(running: int, waiting: int, timeout: float = 30) -> ClientOptions:
    return ClientOptions(max_concurrent_calls=running, max_queued_calls=waiting, timeout=timeout)


def test_calls_past_the_limit_wait_and_past_the_queue_are_refused_at_once() -> None:
    async def main() -> tuple[int, int, list[str], int]:
        session = HeldSession(options(running=2, waiting=3))
        calls = [asyncio.ensure_future(session.call_tool("t", {"n": n})) for n in range(7)]
        await settle()
        refused = [str(c.exception()) for c in calls if c.done()]
        running, waiting = session.running, session._waiting
        session.gate.set()
        done = await asyncio.gather(
            *(c for c in calls if not c.cancelled()), return_exceptions=True
        )
        answered = [r for r in done if isinstance(r, ToolCallResult)]
        return running, waiting, refused, len(answered) * 10 + session.peak

    running, waiting, refused, answered_and_peak = asyncio.run(main())
    assert (running, waiting) == (2, 3)
    assert (
        refused
        == [
            "held is busy: 2 calls running and 3 waiting (max_concurrent_calls, max_queued_calls); "
            "try again shortly"
        ]
        * 2
    )
    assert answered_and_peak == 5 * 10 + 2  # five answered, never more than two at once


def test_a_refusal_is_server_busy_naming_the_target() -> None:
    async def main() -> ServerBusy:
        session = HeldSession(options(running=1, waiting=0))
        first = asyncio.ensure_future(session.call_tool("t"))
        await settle()
        with pytest.raises(ServerBusy) as refused:
            await session.call_tool("t")
        session.gate.set()
        await first
        return refused.value

    refused = asyncio.run(main())
    assert refused.target == "held"


def test_slots_come_back_after_each_call_whatever_its_end() -> None:
    async def main() -> tuple[int, int, str]:
        session = HeldSession(options(running=1, waiting=0))
        held = asyncio.ensure_future(session.call_tool("t"))
        await settle()
        held.cancel()
        await asyncio.gather(held, return_exceptions=True)
        session.gate.set()
        after = await session.call_tool("t", {"n": 1})
        return session.running, session._waiting, after.content[0]["text"]

    assert asyncio.run(main()) == (0, 0, "t {'n': 1}")


def test_a_waiting_call_that_gets_no_slot_in_time_is_a_timeout_naming_the_limit() -> None:
    async def main() -> tuple[str, str | None, int]:
        session = HeldSession(options(running=1, waiting=5, timeout=0.05))
        first = asyncio.ensure_future(session.call_tool("t"))
        await settle()
        with pytest.raises(MCPTimeout) as late:
            await session.call_tool("t")
        waiting = session._waiting
        session.gate.set()
        await first
        return str(late.value), late.value.target, waiting

    message, target, waiting = asyncio.run(main())
    assert message == (
        "no free call slot for held within 0.05s: 1 calls running (max_concurrent_calls); "
        "the server is slow"
    )
    assert (target, waiting) == ("held", 0)


def test_a_free_slot_is_taken_without_waiting_even_with_no_queue() -> None:
    async def main() -> list[str]:
        session = HeldSession(options(running=2, waiting=0))
        session.gate.set()
        results = await asyncio.gather(session.call_tool("a"), session.call_tool("b"))
        return [r.content[0]["text"] for r in results]

    assert asyncio.run(main()) == ["a {}", "b {}"]
