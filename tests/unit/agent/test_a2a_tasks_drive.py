"""``TurnTasks._drive`` and the caller leaving (issue 49 §2): a waiting turn is cancelled when
its caller leaves, a turn paused for an approval is not (its caller is expected to hang up and
come back with the answer)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import langop_infra.agent  # noqa: F401  # first: a2a-sdk without its gRPC parts
from langop_infra.agent._a2a_tasks import TurnTasks, _Turn
from langop_infra.agent._caller_watch import Caller


class Updater:
    """Records what the driver publishes (a stand-in for a2a-sdk's TaskUpdater)."""

    def __init__(self) -> None:
        self.published: list[str] = []

    def new_agent_message(self, parts: list[Any]) -> list[Any]:
        return parts

    async def cancel(self, message: Any) -> None:
        self.published.append("canceled")


def drive(paused: bool) -> tuple[bool, bool, list[str]]:
    async def main() -> tuple[bool, bool, list[str]]:
        tasks, updater = TurnTasks(), Updater()
        running = asyncio.ensure_future(asyncio.sleep(3600))
        state = _Turn(cast(Any, updater), paused=paused, running=cast(Any, running))
        tasks._turns["t"] = state
        caller = Caller()
        caller.leave()
        await tasks._drive("t", state, caller)
        await asyncio.sleep(0)
        outcome = (running.cancelled(), "t" in tasks._turns, updater.published)
        running.cancel()
        return outcome

    return asyncio.run(main())


def test_a_running_turn_whose_caller_left_is_cancelled() -> None:
    assert drive(paused=False) == (True, False, ["canceled"])


def test_a_turn_paused_for_an_approval_is_kept_when_its_caller_leaves() -> None:
    assert drive(paused=True) == (False, True, [])
