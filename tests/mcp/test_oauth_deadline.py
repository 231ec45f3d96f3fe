"""Every request of the OAuth flow runs under the command's deadline.

Before: with ``--client-id ci --client-secret-env SEC``, a protected-resource-metadata
endpoint sending one byte a second hung ``langop-infra tools`` with no output (each byte
came within the per-read timeout). The stand-in server below is a fake, deliberately slow.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from langop_infra.mcp.oauth import OAuth2Auth, OAuthError
from tests.faultservers import lifespan, read_body

DRIP_SECONDS = 60.0


def dripping_metadata_app(interval: float) -> Any:
    """An MCP endpoint that demands a token; its metadata comes one byte per ``interval``."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        await read_body(receive)
        host = dict(scope["headers"])[b"host"].decode()
        if scope["path"] == "/mcp":
            challenge = (
                f'Bearer resource_metadata="http://{host}/.well-known/oauth-protected-resource"'
            )
            headers = [(b"www-authenticate", challenge.encode()), (b"content-length", b"0")]
            await send({"type": "http.response.start", "status": 401, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        give_up = time.monotonic() + DRIP_SECONDS
        while time.monotonic() < give_up:
            await send({"type": "http.response.body", "body": b" ", "more_body": True})
            await asyncio.sleep(interval)
        await send({"type": "http.response.body", "body": b"{}"})

    return app


@pytest.fixture
def dripping(serve_app: Any) -> Iterator[str]:
    with serve_app(dripping_metadata_app(0.2)) as base:
        yield base + "/mcp"


def test_login_stops_at_the_deadline_against_dripping_metadata(dripping: str) -> None:
    auth = OAuth2Auth(client_id="ci", client_secret="sec-4f1e", timeout=1.0, deadline=1.0)
    with pytest.raises(OAuthError, match=r"did not finish within the 1s deadline"):
        asyncio.run(auth.login(dripping))


@pytest.mark.slow
def test_cli_stops_within_its_deadline_against_dripping_metadata(serve_app: Any) -> None:
    with serve_app(dripping_metadata_app(1.0)) as base:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "langop_infra",
                "tools",
                base + "/mcp",
                "--timeout",
                "2",
                "--client-id",
                "ci",
                "--client-secret-env",
                "SEC",
                "--oauth-issuer",
                base,
            ],
            capture_output=True,
            text=True,
            timeout=90,
            env={"SEC": "sec-4f1e-canary", "PATH": "/usr/bin:/bin"},
        )
    assert done.returncode == 1, done.stderr
    assert "did not finish within the 30s deadline" in done.stderr
    assert "Traceback" not in done.stderr and "sec-4f1e-canary" not in done.stderr
