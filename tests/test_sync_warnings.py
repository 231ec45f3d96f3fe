"""A sync that ends in phase Error is printed as a warning by ``pulumi up`` and ``preview``.

The mock engine stands in for the engine; the ToolSchemaSync outputs come from the real
provider syncing against a loopback stand-in (``refuse``) that refuses and echoes the
credential."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from langop_infra.components.tool import LanguageTool
from langop_infra.offline._mock_engine import run_program
from langop_infra.sync.provider import ToolSchemaSyncProvider
from tests.support.loopback import serve

CANARY = "sync-warning-canary-7f3e9a"


async def refuse(request: Request) -> PlainTextResponse:
    """A stand-in for an MCP server behind an API-key check that refuses the key (401) and
    echoes it in the body, as careless gateways do: the warning must not repeat it.

    A fake, because no real part does this: the official SDK's server checks only Bearer
    tokens and its 401 body never repeats the credential. It is more hostile than the SDK
    there (it echoes the secret) and speaks no MCP at all: no JSON-RPC, no
    ``WWW-Authenticate`` challenge, no session; every method on ``/mcp`` gets the same 401.
    """
    return PlainTextResponse(f"invalid token {request.headers.get('x-api-key')}", 401)


@pytest.fixture(scope="module")
def refusing() -> Iterator[str]:
    app = Starlette(routes=[Route("/mcp", refuse, methods=["GET", "POST", "DELETE"])])
    with serve(app) as base:
        yield base


def real_sync(state: dict[str, Any]) -> dict[str, Any]:
    """The provider's own create on the registered inputs (what `pulumi up` records)."""
    return dict(ToolSchemaSyncProvider().create(state).outs)


def tool_program(base: str) -> Any:
    def program() -> None:
        LanguageTool(
            "memory",
            image="ghcr.io/acme/memory:1",
            namespace="apps",
            schema_sync={
                "syncUrl": f"{base}/mcp",
                "timeout": 3,
                "headers": [{"name": "X-Api-Key", "secret": CANARY}],
            },
        )

    return program


@pytest.mark.parametrize("preview", [False, True], ids=["up", "preview"])
def test_failed_sync_warns_with_the_tool_and_the_reason(refusing: str, preview: bool) -> None:
    run = run_program(tool_program(refusing), preview=preview, dynamic_state=real_sync)
    [warning] = [w for w in run.warnings if "schema sync" in w]
    assert warning.startswith("schema sync of tool 'memory' in namespace 'apps' failed")
    assert "401" in warning and "phase Error" in warning
    assert CANARY not in "\n".join(run.logs + run.warnings)


def test_a_registered_or_pending_sync_does_not_warn() -> None:
    for phase in ("Registered", "Pending"):
        run = run_program(
            tool_program("http://127.0.0.1:9"),
            dynamic_state=lambda state, p=phase: {"phase": p, "last_error": ""},
        )
        assert [w for w in run.warnings if "schema sync" in w] == []
