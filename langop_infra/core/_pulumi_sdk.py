"""The Pulumi SDK's private internals, in one place: the rest of the package calls these
names, never the SDK's underscored ones.

The SDK offers no public way to wait for an Output from synchronous code, to make sure a
thread has an event loop, to read the marker of a secret in serialized properties, to reset
its per-run state, or to skip the stack walk at each registration. Each wrapper below names
the private part it stands on; ``tests/test_pulumi_sdk.py`` checks every one against the SDK
versions ``pyproject.toml`` allows, so an SDK upgrade that moves one fails there first.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Generator
from typing import Any, TypeVar

from pulumi.runtime import resource as _resource, rpc as _rpc, settings as _settings
from pulumi.runtime.proto import source_pb2
from pulumi.runtime.sync_await import _ensure_event_loop, _sync_await  # pyright: ignore[reportPrivateUsage]

T = TypeVar("T")

# The SDK versions this adapter is written against (pyproject's pin of ``pulumi``).
SUPPORTED = ">=3.237,<4"
# How a secret is marked in serialized properties: {SIG_KEY: SECRET_SIG, "value": ...}.
SIG_KEY: str = _rpc._special_sig_key  # pyright: ignore[reportPrivateUsage]
SECRET_SIG: str = _rpc._special_secret_sig  # pyright: ignore[reportPrivateUsage]


def sync_await(awaitable: Awaitable[T]) -> T:
    """Wait for ``awaitable`` from synchronous code by pumping the thread's event loop
    (``pulumi.runtime.sync_await._sync_await``)."""
    return _sync_await(awaitable)


def ensure_event_loop() -> asyncio.AbstractEventLoop:
    """The thread's event loop, made if it has none
    (``pulumi.runtime.sync_await._ensure_event_loop``)."""
    loop: asyncio.AbstractEventLoop = _ensure_event_loop()
    return loop


def current_monitor() -> object:
    """The running program's connection to the engine (``settings.get_monitor()``): one per
    ``pulumi up``, a new one for each ``set_mocks``; None outside any program."""
    return _settings.get_monitor()


def clear_root() -> None:
    """Forget the root resource of a previous run (``settings.ROOT``)."""
    _settings.ROOT.set(None)


def clear_run_state() -> None:
    """Forget the pending RPCs and Outputs of a previous run (``SETTINGS.rpc_manager``,
    ``SETTINGS.outputs``: run-time attributes its type does not declare)."""
    state: Any = _settings.SETTINGS
    state.rpc_manager.clear()
    state.outputs.clear()


@contextlib.contextmanager
def without_stack_traces() -> Generator[None, None, None]:
    """Registrations carry an empty stack trace inside (``resource._get_stack_trace``).

    At every registration the SDK walks the whole Python stack, reading each frame's source
    line, to tell the engine where the resource was made; the mock monitor never reads it.
    The walk grows with the depth of the program's stack, and on a large render it is a
    noticeable share of the CPU time.
    """
    saved = _resource._get_stack_trace  # pyright: ignore[reportPrivateUsage]
    _resource._get_stack_trace = source_pb2.StackTrace  # pyright: ignore[reportPrivateUsage]
    try:
        yield
    finally:
        _resource._get_stack_trace = saved  # pyright: ignore[reportPrivateUsage]
