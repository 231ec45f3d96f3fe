"""Run ASGI apps (real official-SDK MCP servers, or stand-ins) on 127.0.0.1 in a thread."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serve(
    app: Any, port: int | None = None, host: str = "127.0.0.1", **config: Any
) -> Iterator[str]:
    """Serve ``app`` with uvicorn on loopback until the block ends (a free port unless
    given; ``host`` another loopback address such as 127.0.0.2; ``config`` goes to
    ``uvicorn.Config``, e.g. TLS files); yields its base URL."""
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=host,
            port=port or 0,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=1,
            **config,
        )
    )
    with running(server):
        bound = server.servers[0].sockets[0].getsockname()[1]
        scheme = "https" if config.get("ssl_certfile") else "http"
        yield f"{scheme}://{host}:{bound}"


@contextmanager
def running(
    server: uvicorn.Server, sockets: list[socket.socket] | None = None, limit: float = 15
) -> Iterator[None]:
    """``server`` in a thread (on ``sockets`` when given) from its start until the block
    ends; ``limit`` bounds a hung start only."""
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": sockets}, name="test-server", daemon=True
    )
    thread.start()
    give_up = time.monotonic() + limit
    while not server.started:
        if not thread.is_alive() or time.monotonic() > give_up:
            raise RuntimeError("test server did not start")
        time.sleep(0.005)
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(10)
