"""Fixtures for the MCP client tests: real servers on loopback, each in a background thread.

Servers bind 127.0.0.1 on a free port (uvicorn's port 0), are shared by the whole session
where they keep no state the tests depend on, and stop when the session ends.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.loopback import serve

SERVERS = Path(__file__).resolve().parent / "servers"
STDIO_SERVER = SERVERS / "stdio_server.py"


def load_server_module(name: str) -> ModuleType:
    """Import ``servers/<name>.py`` under a unique name (the tests dir is no package)."""
    module_name = f"langop_mcp_test_servers_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, SERVERS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def serve_app() -> Any:
    """The :func:`serve` context manager, for tests that start servers of their own."""
    return serve


@pytest.fixture(scope="session")
def server_module() -> Any:
    """:func:`load_server_module`, for tests that build servers of their own."""
    return load_server_module


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def sdk_tools() -> ModuleType:
    return load_server_module("sdk_tools")


@pytest.fixture(scope="session")
def stateful_url(sdk_tools: ModuleType) -> Iterator[str]:
    """Official SDK, stateful streamable HTTP answering in SSE (the SDK's default)."""
    with serve(sdk_tools.build_server("sdk-stateful").streamable_http_app()) as base:
        yield base + "/mcp"


@pytest.fixture(scope="session")
def json_url(sdk_tools: ModuleType) -> Iterator[str]:
    """Official SDK, stateful streamable HTTP with ``json_response=True``."""
    with serve(sdk_tools.build_server("sdk-json").streamable_http_app(json_response=True)) as base:
        yield base + "/mcp"


@pytest.fixture(scope="session")
def stateless_url(sdk_tools: ModuleType) -> Iterator[str]:
    """Official SDK, ``stateless_http=True`` (no session id)."""
    app = sdk_tools.build_server("sdk-stateless").streamable_http_app(stateless_http=True)
    with serve(app) as base:
        yield base + "/mcp"


@pytest.fixture(scope="session")
def resumable_url(sdk_tools: ModuleType) -> Iterator[str]:
    """Official SDK with an event store: priming events, and streams resumable by GET."""
    app = sdk_tools.build_server("sdk-resumable").streamable_http_app(
        event_store=sdk_tools.MemoryEventStore(), retry_interval=20
    )
    with serve(app) as base:
        yield base + "/mcp"


@pytest.fixture(scope="session")
def legacy_sse_url(sdk_tools: ModuleType) -> Iterator[str]:
    """Official SDK, the legacy HTTP+SSE app (GET /sse, POST /messages/)."""
    with serve(sdk_tools.build_server("sdk-legacy").sse_app()) as base:
        yield base + "/sse"


@pytest.fixture(scope="session")
def paged_url() -> Iterator[str]:
    """Official SDK low-level server whose tools/list returns 3 pages."""
    with serve(load_server_module("paged").build_app()) as base:
        yield base + "/mcp"


@pytest.fixture
def seed_url() -> Iterator[str]:
    """The seed-style plain JSON-RPC server (fresh memory per test)."""
    with serve(load_server_module("seed").build_app()) as base:
        yield base + "/mcp"


@pytest.fixture(scope="session")
def fault_server() -> Iterator[tuple[str, Any]]:
    """(base URL, app) of the scripted misbehaving endpoints; ``app.requests`` records."""
    app = load_server_module("faults").FaultServer()
    with serve(app) as base:
        yield base, app


@pytest.fixture(scope="session")
def stdio_command() -> list[str]:
    """The command that runs the official-SDK server on stdio."""
    return [sys.executable, str(STDIO_SERVER)]


@pytest.fixture
def free_port() -> int:
    """A loopback port nothing listens on (for refused connections)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def modern_only_app(server: Any) -> Any:
    """The SDK's streamable HTTP app serving 2026-07-28 only (no initialize, no sessions).

    SDK 2.3 routes a request by its ``MCP-Protocol-Version`` header: 2025 versions (or
    none) to the session-based handler, anything else to its 2026-07-28 single-exchange
    handler. A 2026-only deployment is that handler for every request, which is what this
    wraps around the SDK's own app (its lifespan still starts the session manager).
    """
    from mcp.server._streamable_http_modern import handle_modern_request

    app = server.streamable_http_app()
    manager = server.session_manager

    async def modern_only(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != "/mcp":
            await app(scope, receive, send)
            return
        await handle_modern_request(
            manager.app,
            manager.security_settings,
            manager.json_response,
            manager._lifespan_state,
            scope,
            receive,
            send,
        )

    return modern_only


@pytest.fixture(scope="session")
def modern_only() -> Any:
    """:func:`modern_only_app`, for tests that build 2026-only servers of their own."""
    return modern_only_app


@pytest.fixture(scope="session")
def modern_only_url(sdk_tools: ModuleType) -> Iterator[str]:
    """Official SDK server speaking only 2026-07-28 (see :func:`modern_only_app`)."""
    with serve(modern_only_app(sdk_tools.build_server("sdk-modern"))) as base:
        yield base + "/mcp"


def pytest_configure(config: pytest.Config) -> None:
    # Registered here rather than in pyproject so this folder stays self-contained.
    config.addinivalue_line("markers", "slow: takes over 2 s (run in CI; -m 'not slow' skips)")
