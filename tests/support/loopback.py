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
    thread = threading.Thread(target=server.run, name="test-server", daemon=True)
    thread.start()
    give_up = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > give_up:
            raise RuntimeError("test server did not start")
        time.sleep(0.005)
    bound = server.servers[0].sockets[0].getsockname()[1]
    scheme = "https" if config.get("ssl_certfile") else "http"
    try:
        yield f"{scheme}://{host}:{bound}"
    finally:
        server.should_exit = True
        thread.join(10)
