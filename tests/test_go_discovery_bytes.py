"""language-operator's discovery request (seed 000), byte for byte as its controller sends
it (Go's ``http.Client.Post``: no ``Accept`` header, ``Accept-Encoding: gzip`` added by the
transport), against every MCP server the package makes or ships: ``toolkit.serve`` (with the
tool kit's own tools), examples/datetime_tool, and examples/memory_tool (the memory preset's
server). Each must answer one JSON body that ``json.Unmarshal`` reads, while clients that ask
for an event stream (the official SDK's client) are still served."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from starlette.applications import Starlette

from langop_infra.toolkit import MCPToolRegistry
from langop_infra.toolkit._server import build_app as toolkit_app
from tests.support.loopback import serve

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
# The seed's request body as Go's json.Marshal writes a struct of these fields: compact.
BODY = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'


def go_post(host: str, port: int, body: bytes = BODY, extra: bytes = b"") -> bytes:
    """The bytes net/http writes for ``client.Post(url, "application/json", body)``: Host,
    User-Agent, Content-Length, the caller's headers in sorted order, then the transport's
    Accept-Encoding. ``extra`` adds header lines (for the ``Accept: */*`` variant)."""
    return (
        b"POST /mcp HTTP/1.1\r\n"
        + f"Host: {host}:{port}\r\n".encode()
        + b"User-Agent: Go-http-client/1.1\r\n"
        + f"Content-Length: {len(body)}\r\n".encode()
        + extra
        + b"Content-Type: application/json\r\n"
        + b"Accept-Encoding: gzip\r\n"
        + b"\r\n"
        + body
    )


def exchange(url: str, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``request`` over a raw socket; the status, headers (lower-cased) and body."""
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(request)
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
            if _complete(raw):
                break
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def _complete(raw: bytes) -> bool:
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            return len(body) >= int(value)
    return False  # no length: read until the server closes


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _toolkit(_tmp: Path) -> Starlette:
    return toolkit_app(MCPToolRegistry())  # the tool kit's built-in tools


def _datetime(_tmp: Path) -> Starlette:
    return _load(EXAMPLES / "datetime_tool" / "server.py", "datetime_for_bytes").build_app()


def _memory(tmp: Path) -> Starlette:
    module = _load(EXAMPLES / "memory_tool" / "server.py", "memory_for_bytes")
    return module.build_app(tmp / "memory.db")


SERVERS: dict[str, tuple[Callable[[Path], Starlette], set[str]]] = {
    "toolkit.serve": (_toolkit, {"get_current_datetime"}),
    "examples/datetime_tool": (_datetime, {"get_current_datetime"}),
    "examples/memory_tool (memory preset)": (_memory, {"remember", "recall"}),
}


@pytest.fixture(scope="module", params=sorted(SERVERS))
def shipped(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, set[str]]]:
    build, tools = SERVERS[request.param]
    with serve(build(tmp_path_factory.mktemp("bytes"))) as url:
        yield url, tools


def _tools_in(body: bytes) -> set[str]:
    message: dict[str, Any] = json.loads(body)  # what Go's json.Unmarshal needs: one document
    assert (message["jsonrpc"], message["id"]) == ("2.0", 1)
    return {tool["name"] for tool in message["result"]["tools"]}


def test_gos_exact_request_gets_one_json_body(shipped: tuple[str, set[str]]) -> None:
    url, tools = shipped
    parts = urlsplit(url)
    status, headers, body = exchange(url, go_post(str(parts.hostname), int(parts.port or 0)))
    assert status == 200, body
    assert headers["content-type"].split(";")[0] == "application/json"
    assert _tools_in(body) == tools


def test_accept_any_gets_one_json_body(shipped: tuple[str, set[str]]) -> None:
    url, tools = shipped
    parts = urlsplit(url)
    request = go_post(str(parts.hostname), int(parts.port or 0), extra=b"Accept: */*\r\n")
    status, headers, body = exchange(url, request)
    assert status == 200, body
    assert headers["content-type"].split(";")[0] == "application/json"
    assert _tools_in(body) == tools


def test_a_client_that_asks_for_event_streams_is_still_served(
    shipped: tuple[str, set[str]],
) -> None:
    """The official SDK's client sends ``Accept: application/json, text/event-stream``."""
    url, tools = shipped

    async def listed() -> set[str]:
        async with (
            streamable_http_client(f"{url}/mcp") as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return {tool.name for tool in (await session.list_tools()).tools}

    assert asyncio.run(listed()) == tools


def test_an_accept_that_excludes_json_is_still_refused(shipped: tuple[str, set[str]]) -> None:
    """Only a missing Accept is read as "anything": a client that names types gets them."""
    url, _tools = shipped
    parts = urlsplit(url)
    request = go_post(str(parts.hostname), int(parts.port or 0), extra=b"Accept: text/html\r\n")
    status, _headers, body = exchange(url, request)
    assert status == 406, body
    assert b"must accept application/json" in body
