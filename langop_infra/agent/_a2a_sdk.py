"""What the runtime uses of a2a-sdk, imported with its gRPC parts taken as not installed.

Its gRPC handler and transport load googleapis' ``google/rpc/status.proto``, whose
``google.rpc.Status`` Pulumi's SDK also defines (``pulumi/runtime/proto/status_pb2``), and
one protobuf descriptor pool cannot hold both. a2a-sdk's packages import their gRPC parts
when first imported, and treat one that cannot be imported as gRPC not installed: so for
that first import, and for it only, those modules read as absent. The process is left as it
was: another library may import them, or Pulumi's, afterwards.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Generator
from types import CodeType, FunctionType
from typing import cast

GRPC_MODULES = (
    "a2a.server.request_handlers.grpc_handler",
    "a2a.client.transports.grpc",
    "a2a.utils.grpc_status",
)


@contextlib.contextmanager
def grpc_absent() -> Generator[None, None, None]:
    """a2a-sdk's gRPC modules unimportable inside, those not imported already; afterwards
    ``sys.modules`` holds none of the stand-ins."""
    added = [name for name in GRPC_MODULES if name not in sys.modules]
    for name in added:
        sys.modules[name] = None  # pyright: ignore[reportArgumentType]  # import's own mark
    try:
        yield
    finally:
        for name in added:
            # The stand-in None is what typeshed's ModuleType values do not admit.
            if name in sys.modules and cast("object", sys.modules[name]) is None:
                del sys.modules[name]


with grpc_absent():
    from a2a.client import Client, ClientConfig, ClientFactory
    from a2a.client.card_resolver import parse_agent_card
    from a2a.helpers import (
        get_data_parts,
        get_text_parts,
        new_data_part,
        new_message,
        new_task_from_user_message,
        new_text_part,
    )
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.context import ServerCallContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_jsonrpc_routes
    from a2a.server.tasks import (
        BasePushNotificationSender,
        InMemoryPushNotificationConfigStore,
        InMemoryTaskStore,
        TaskStore,
        TaskUpdater,
    )
    from a2a.types import (
        AgentCard,
        Artifact,
        ListTasksRequest,
        ListTasksResponse,
        Message,
        Role,
        SendMessageRequest,
        StreamResponse,
        Task,
        TaskPushNotificationConfig,
        TaskState,
    )
    from a2a.utils import telemetry
    from a2a.utils.errors import InvalidParamsError

__all__ = [
    "AgentCard",
    "AgentExecutor",
    "Artifact",
    "BasePushNotificationSender",
    "Client",
    "ClientConfig",
    "ClientFactory",
    "DefaultRequestHandler",
    "EventQueue",
    "InMemoryPushNotificationConfigStore",
    "InMemoryTaskStore",
    "InvalidParamsError",
    "ListTasksRequest",
    "ListTasksResponse",
    "Message",
    "RequestContext",
    "Role",
    "SendMessageRequest",
    "ServerCallContext",
    "StreamResponse",
    "Task",
    "TaskPushNotificationConfig",
    "TaskState",
    "TaskStore",
    "TaskUpdater",
    "create_jsonrpc_routes",
    "get_data_parts",
    "get_text_parts",
    "new_data_part",
    "new_message",
    "new_task_from_user_message",
    "new_text_part",
    "parse_agent_card",
]


def _wrapper_codes() -> frozenset[CodeType]:
    """The code of a2a-sdk's span wrappers (one for coroutine functions, one for others)."""

    async def sample_coroutine() -> None: ...

    def sample() -> None: ...

    # a2a-sdk types its decorator's callables as bare Callable
    trace = cast(
        "Callable[[Callable[..., object]], FunctionType]",
        telemetry.trace_function,  # pyright: ignore[reportUnknownMemberType]
    )
    return frozenset({trace(sample_coroutine).__code__, trace(sample).__code__})


def unwrap_spans_when_off() -> int:
    """With a2a-sdk's spans off, replace each wrapper its ``trace_class``/``trace_function``
    put around a method of its loaded modules by the method itself, and return how many.

    Off, a wrapper still enters a no-op span and logs a debug line on every call (a
    message's task events pass through dozens of them); with spans on, nothing changes."""
    if telemetry.otel_installed and telemetry.otel_enabled:
        return 0
    codes, count = _wrapper_codes(), 0
    for name, module in list(sys.modules.items()):
        # A module marked missing (see grpc_absent) is None, which typeshed does not admit.
        if cast("object", module) is None or not name.startswith("a2a."):
            continue
        owners = [module, *(v for v in vars(module).values() if _defined_in(v, name))]
        for owner in owners:
            for attribute, value in list(vars(owner).items()):
                if getattr(value, "__code__", None) not in codes:
                    continue
                while getattr(value, "__code__", None) in codes:  # a subclass wraps again
                    value = value.__wrapped__
                setattr(owner, attribute, value)
                count += 1
    return count


def _defined_in(value: object, module: str) -> bool:
    return isinstance(value, type) and value.__module__ == module


UNWRAPPED = unwrap_spans_when_off()
