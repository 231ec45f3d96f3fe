"""A2A push notifications, with ``a2a-sdk``'s store and sender, for an agent whose card
claims them (``capabilities.pushNotifications``; the request handler refuses the
``tasks/pushNotificationConfig/*`` methods otherwise, and a message's own push config is
only honoured where they are served).

A caller registers a webhook for a task (``tasks/pushNotificationConfig/set``, A2A 1.0's
``CreateTaskPushNotificationConfig``, or in ``message/send``'s configuration); each of the
task's events is POSTed there as A2A's ``StreamResponse`` JSON, with the caller's token in
``X-A2A-Notification-Token`` and its ``authentication`` as ``Authorization``. The runtime
posts only to http(s) URLs whose host resolves to no loopback, link-local (the cloud
metadata address), multicast, reserved or unspecified address: it would otherwise post into
its own pod (its sidecar tools, its own ports) or to the node's metadata service for anyone
allowed to call it. In-cluster and public hosts are left to the agent's egress policy.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

import httpx

from langop_infra.agent._a2a_sdk import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InvalidParamsError,
    ServerCallContext,
    TaskPushNotificationConfig,
)
from langop_infra.mcp._ports import effective_port

__all__ = ["MAX_CONFIGS_PER_TASK", "BoundedPushConfigStore", "push_parts", "push_url_allowed"]

MAX_CONFIGS_PER_TASK = 10
MAX_PUSH_TASKS = 1000  # as many as the task store keeps
PUSH_TIMEOUT = 10.0  # a webhook that does not answer in time loses that notification

UrlCheck = Callable[[str], Awaitable[bool]]


class BoundedPushConfigStore(InMemoryPushNotificationConfigStore):
    """``a2a-sdk``'s in-memory store, holding the configs of at most ``max_tasks`` tasks (the
    oldest task's dropped first) and at most ``MAX_CONFIGS_PER_TASK`` per task."""

    def __init__(self, max_tasks: int = MAX_PUSH_TASKS) -> None:
        super().__init__()
        self.max_tasks = max_tasks
        self._order: OrderedDict[str, ServerCallContext] = OrderedDict()

    async def set_info(
        self,
        task_id: str,
        notification_config: TaskPushNotificationConfig,
        context: ServerCallContext,
    ) -> TaskPushNotificationConfig:
        known = await self.get_info(task_id, context)
        if len(known) >= MAX_CONFIGS_PER_TASK and all(
            c.id != notification_config.id for c in known
        ):
            raise InvalidParamsError(
                f"task {task_id} has {MAX_CONFIGS_PER_TASK} push notification configs, the "
                "most it keeps: delete one first"
            )
        stored = await super().set_info(task_id, notification_config, context)
        self._order[task_id] = context
        self._order.move_to_end(task_id)
        while len(self._order) > self.max_tasks:
            old, old_context = self._order.popitem(last=False)
            await self.delete_info(old, old_context)
        return stored


async def push_url_allowed(url: str) -> bool:
    """Whether the runtime may POST notifications to ``url``: http(s), and every address its
    host resolves to neither loopback, link-local, multicast, reserved nor unspecified."""
    try:
        parts = urlsplit(url)
        port = effective_port(parts.scheme, parts.port)
    except ValueError:
        return False
    if port is None or not parts.hostname:  # not http(s)
        return False
    try:
        found = await asyncio.get_running_loop().getaddrinfo(
            parts.hostname, port, type=socket.SOCK_STREAM
        )
    except OSError:
        return False  # fail closed: the POST would fail anyway
    return bool(found) and not any(_internal(str(info[4][0])) for info in found)


def _internal(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (
        ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or (ip.is_unspecified)
    )


def push_parts(
    url_allowed: UrlCheck = push_url_allowed,
) -> tuple[BoundedPushConfigStore, BasePushNotificationSender]:
    """The config store and the sender (its own HTTP client: redirects not followed, each
    POST bounded by ``PUSH_TIMEOUT``) for the request handler."""
    store = BoundedPushConfigStore()
    http = httpx.AsyncClient(timeout=PUSH_TIMEOUT, follow_redirects=False)
    sender = BasePushNotificationSender(http, store, push_url_validator=url_allowed)
    return store, sender
