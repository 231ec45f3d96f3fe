"""A turn as an A2A Task, with ``a2a-sdk``'s server pieces: the task is ``submitted``, then
``working`` (one status per tool call, which ``message/stream`` streams as it happens), and
ends ``completed`` with the answer as an artifact (a text part and a data part with the
turn's records), or ``failed`` with the error, or ``canceled`` by ``tasks/cancel`` (the turn
and its tool calls are cancelled). Tasks are kept in a bounded store.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import langop_infra._json as _json
from langop_infra.agent._a2a_sdk import (
    EventQueue,
    InMemoryTaskStore,
    ListTasksRequest,
    ListTasksResponse,
    RequestContext,
    ServerCallContext,
    Task,
    TaskState,
    TaskStore,
    TaskUpdater,
    new_data_part,
    new_task_from_user_message,
    new_text_part,
)
from langop_infra.agent._caller_watch import CALLER, Caller
from langop_infra.agent._loop import Approver, Observer, TurnOutcome

__all__ = ["MAX_TASKS", "BoundedTaskStore", "Observer", "TurnTasks"]

MAX_TASKS = 1000  # tasks kept for tasks/get; the oldest is dropped first
ANSWER_HOW = "Answer yes to approve, anything else rejects."
APPROVALS = frozenset({"yes", "y", "ok", "approve", "approved"})
# The requests whose caller waits on the connection for the answer, under A2A 1.0's and 0.3's
# names; a stream's caller may come back (tasks/resubscribe), so its turn runs on.
WAITING_METHODS = frozenset({"SendMessage", "message/send"})
Turn = Callable[[Observer, Approver], Coroutine[Any, Any, TurnOutcome]]


class BoundedTaskStore(TaskStore):
    """``a2a-sdk``'s in-memory store, holding at most ``max_tasks`` tasks."""

    def __init__(self, max_tasks: int = MAX_TASKS) -> None:
        self._inner, self.max_tasks = InMemoryTaskStore(), max_tasks
        self._order: OrderedDict[str, ServerCallContext] = OrderedDict()

    async def save(self, task: Task, context: ServerCallContext) -> None:
        await self._inner.save(task, context)
        self._order[task.id] = context
        while len(self._order) > self.max_tasks:
            old, old_context = self._order.popitem(last=False)
            await self._inner.delete(old, old_context)

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        return await self._inner.get(task_id, context)

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        return await self._inner.list(params, context)

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        self._order.pop(task_id, None)
        await self._inner.delete(task_id, context)


@dataclass
class _Turn:
    """A task's turn: the request's updater it publishes through (the latest request's,
    after a resume), and the approval it waits for, if any."""

    updater: TaskUpdater
    paused: bool = False
    decision: asyncio.Future[bool] | None = None
    running: asyncio.Task[TurnOutcome] | None = None
    woken: asyncio.Future[None] | None = None  # what _drive waits on: the turn ends or pauses

    def wake(self, *_: object) -> None:
        if self.woken is not None and not self.woken.done():
            self.woken.set_result(None)


class TurnTasks:
    """Runs turns as Tasks, pauses them for approvals (``input-required``), resumes them on
    the caller's next message, and cancels them by task id."""

    def __init__(self) -> None:
        self._turns: dict[str, _Turn] = {}

    async def run(self, context: RequestContext, queue: EventQueue, turn: Turn) -> None:
        """Run ``turn`` as the request's Task, publishing its lifecycle on ``queue``; or, when
        the task waits for an approval, take this message as the answer and go on."""
        task = context.current_task
        if task is None:
            if context.message is None:
                raise ValueError("a task needs a message")
            task = new_task_from_user_message(context.message)
            await queue.enqueue_event(task)
        updater = TaskUpdater(queue, task.id, task.context_id)
        await updater.start_work()
        waiting = self._turns.get(task.id)
        if waiting is not None and waiting.decision is not None:
            waiting.updater, decision = updater, waiting.decision
            waiting.decision = None
            waiting.paused = False
            decision.set_result(approves(context.get_user_input()))
            await self._drive(task.id, waiting, abandoned(context))
            return
        state = _Turn(updater)
        hooks = _hooks(state)
        state.running = asyncio.get_running_loop().create_task(turn(*hooks))
        self._turns[task.id] = state
        await self._drive(task.id, state, abandoned(context))

    async def _drive(self, task_id: str, state: _Turn, caller: Caller | None) -> None:
        """Until the turn ends (publish its answer), waits for an approval (return: the
        task is ``input-required``) or its caller leaves (the turn is cancelled)."""
        assert state.running is not None
        if not (state.running.done() or state.paused or _left(caller)):
            # A future the turn's end, pause or caller resolves, not a task waiting on each:
            # a turn is answered on every request, and each task costs a scheduling round.
            state.woken = asyncio.get_running_loop().create_future()
            state.running.add_done_callback(state.wake)
            forget = caller.on_leave(state.wake) if caller is not None else None
            try:
                await state.woken
            finally:
                state.running.remove_done_callback(state.wake)
                if forget is not None:
                    forget()
                state.woken = None
        # A paused turn waits for its caller's next message: the caller leaving is expected.
        if not state.running.done() and (state.paused or not _left(caller)):
            return
        self._turns.pop(task_id, None)
        if not state.running.done():
            await _stop(state, "canceled: the caller disconnected before the answer")
            return
        if state.running.cancelled():
            return  # tasks/cancel: cancel() published the canceled status
        outcome = state.running.result()
        updater = state.updater
        parts = [new_text_part(outcome.answer), new_data_part(outcome.to_dict())]
        await updater.add_artifact(parts, name="answer")
        if outcome.ok:
            await updater.complete()
        else:
            await updater.failed(updater.new_agent_message([new_text_part(outcome.answer)]))

    async def cancel(self, context: RequestContext, queue: EventQueue) -> None:
        """Stop the task's turn (its tool calls are cancelled with it) and mark it canceled."""
        task_id = context.task_id or ""
        state = self._turns.pop(task_id, None)
        if state is not None and state.running is not None:
            state.running.cancel()
            await asyncio.gather(state.running, return_exceptions=True)
        updater = TaskUpdater(queue, task_id, context.context_id or "")
        await updater.cancel(updater.new_agent_message([new_text_part("canceled by the caller")]))


def abandoned(context: RequestContext) -> Caller | None:
    """The request's caller, if its leaving abandons the turn: a ``message/send`` that waits
    for the answer and registers no push webhook."""
    config = context.configuration
    if context.call_context.state.get("method") not in WAITING_METHODS or (
        config is not None
        and (config.return_immediately or config.HasField("task_push_notification_config"))
    ):
        return None
    return CALLER.get(None)


def _left(caller: Caller | None) -> bool:
    return caller is not None and caller.gone.is_set()


async def _stop(state: _Turn, why: str) -> None:
    """Cancel the turn (and its tool calls) and publish ``canceled`` with the reason."""
    assert state.running is not None
    state.running.cancel()
    await asyncio.gather(state.running, return_exceptions=True)
    await state.updater.cancel(state.updater.new_agent_message([new_text_part(why)]))


def approves(text: str) -> bool:
    """Whether a caller's answer approves: it starts with yes, y, ok, approve(d)."""
    words = text.strip().lower().split()
    return bool(words) and words[0].strip(".,!") in APPROVALS


def _hooks(state: _Turn) -> tuple[Observer, Approver]:
    """The turn's observer (a ``working`` status per tool call) and approver (the task goes
    ``input-required`` with the call, until the caller's next message answers)."""

    async def observe(tool: str, arguments: dict[str, Any]) -> None:
        shown = json.dumps(arguments, default=str)[:500]
        message = state.updater.new_agent_message([new_text_part(f"calling {tool} {shown}")])
        await state.updater.update_status(TaskState.TASK_STATE_WORKING, message=message)

    async def approve(tool: str, arguments: dict[str, Any]) -> bool:
        written = json.dumps(arguments, default=str)
        question = f"May I call {tool} with {written[:2000]}? {ANSWER_HOW}"
        decision = asyncio.get_running_loop().create_future()
        state.decision = decision
        # As written: a data part holds JSON values only.
        data = {"approval": {"tool": tool, "arguments": _json.read(written)}}
        parts = [new_text_part(question), new_data_part(data)]
        await state.updater.requires_input(state.updater.new_agent_message(parts))
        state.paused = True
        state.wake()
        return await decision

    return observe, approve
