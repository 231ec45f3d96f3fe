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


class Recording(Updater):
    """Also keeps the text of each message it is handed."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[list[str]] = []

    async def cancel(self, message: Any) -> None:
        self.texts.append([part.text for part in message])
        await super().cancel(message)


def test_a_caller_leaving_while_the_turn_runs_cancels_it_with_the_reason() -> None:
    async def main() -> tuple[Any, ...]:
        tasks, updater, caller = TurnTasks(), Recording(), Caller()
        started = asyncio.Event()

        async def hang() -> None:
            started.set()
            await asyncio.sleep(3600)

        running = asyncio.ensure_future(hang())
        state = _Turn(cast(Any, updater), running=cast(Any, running))
        tasks._turns["t"] = state
        driving = asyncio.ensure_future(tasks._drive("t", state, caller))
        await started.wait()
        waiting = not driving.done()
        caller.leave()
        await asyncio.wait_for(driving, 30)  # the bound ends a hung run only
        return waiting, running.cancelled(), tasks._turns, updater.texts, state.woken

    waiting, cancelled, turns, texts, woken = asyncio.run(main())
    assert (waiting, cancelled, turns) == (True, True, {})
    assert texts == [["canceled: the caller disconnected before the answer"]]
    assert woken is None


def test_a_paused_turn_is_left_waiting_for_the_callers_answer() -> None:
    async def main() -> tuple[Any, ...]:
        tasks, updater = TurnTasks(), Recording()
        running = asyncio.ensure_future(asyncio.sleep(3600))
        state = _Turn(cast(Any, updater), paused=True, running=cast(Any, running))
        tasks._turns["t"] = state
        await asyncio.wait_for(tasks._drive("t", state, None), 30)  # the bound: a hang only
        outcome = (running.done(), list(tasks._turns), updater.published)
        running.cancel()
        return outcome

    assert asyncio.run(main()) == (False, ["t"], [])
