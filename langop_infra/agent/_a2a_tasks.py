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
from typing import Any

from a2a.helpers import new_data_part, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.server.tasks import InMemoryTaskStore, TaskStore, TaskUpdater
from a2a.types import ListTasksRequest, ListTasksResponse, Task, TaskState

from langop_infra.agent._loop import Observer, TurnOutcome

__all__ = ["MAX_TASKS", "BoundedTaskStore", "Observer", "TurnTasks"]

MAX_TASKS = 1000  # tasks kept for tasks/get; the oldest is dropped first
Turn = Callable[[Observer], Coroutine[Any, Any, TurnOutcome]]


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


class TurnTasks:
    """Runs turns as Tasks and cancels them by task id."""

    def __init__(self) -> None:
        self._running: dict[str, asyncio.Task[TurnOutcome]] = {}

    async def run(self, context: RequestContext, queue: EventQueue, turn: Turn) -> None:
        """Run ``turn`` as the request's Task, publishing its lifecycle on ``queue``."""
        task = context.current_task
        if task is None:
            if context.message is None:
                raise ValueError("a task needs a message")
            task = new_task_from_user_message(context.message)
            await queue.enqueue_event(task)
        updater = TaskUpdater(queue, task.id, task.context_id)
        await updater.start_work()

        async def observe(tool: str, arguments: dict[str, Any]) -> None:
            shown = json.dumps(arguments, default=str)[:500]
            message = updater.new_agent_message([new_text_part(f"calling {tool} {shown}")])
            await updater.update_status(TaskState.TASK_STATE_WORKING, message=message)

        running = asyncio.get_running_loop().create_task(turn(observe))
        self._running[task.id] = running
        try:
            outcome = await running
        except asyncio.CancelledError:
            return  # tasks/cancel: cancel() published the canceled status
        finally:
            self._running.pop(task.id, None)
        parts = [new_text_part(outcome.answer), new_data_part(outcome.to_dict())]
        await updater.add_artifact(parts, name="answer")
        if outcome.ok:
            await updater.complete()
        else:
            await updater.failed(updater.new_agent_message([new_text_part(outcome.answer)]))

    async def cancel(self, context: RequestContext, queue: EventQueue) -> None:
        """Stop the task's turn (its tool calls are cancelled with it) and mark it canceled."""
        task_id = context.task_id or ""
        running = self._running.pop(task_id, None)
        if running is not None:
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)
        updater = TaskUpdater(queue, task_id, context.context_id or "")
        await updater.cancel(updater.new_agent_message([new_text_part("canceled by the caller")]))
