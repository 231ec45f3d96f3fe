"""``langop-infra tools check URL``: a running tool against language-operator's
LanguageTool contract.

    langop-infra tools check http://localhost:8080          # MCP at /mcp, health at /health

Four checks, each pass or FAIL with what was seen:

1. ``GET /health`` answers 200 with the JSON ``{"status": "ok"}``;
2. language-operator's discovery request, exactly as its Go controller sends it (``POST /mcp``,
   ``Content-Type: application/json``, no ``Accept`` header, ``{"jsonrpc": "2.0", "id": 1,
   "method": "tools/list", "params": {}}``, no ``initialize`` first) gets one
   ``application/json`` body (an event stream fails: ``json.Unmarshal`` cannot read it) with
   the tools, each with a name and an ``inputSchema`` object;
3. ``tools/list`` through a full MCP session (initialize first) lists at least one tool;
4. a call to a tool that does not exist gets the MCP error format: a JSON-RPC error or an
   ``isError`` result, never an HTTP 5xx.

Exit status: 0 when every check passes, 1 when one fails, 2 for usage errors. ``--json``
prints ``[{"check", "passed", "detail"}]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import asdict, dataclass
from typing import Any, cast
from urllib.parse import urlsplit

import langop_infra._json as _json

DISCOVERY_REQUEST: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/list",
    "params": {},
}
MISSING_TOOL = "langop-contract-check-no-such-tool"


@dataclass(frozen=True)
class Check:
    check: str
    passed: bool
    detail: str


def wanted(args: argparse.Namespace) -> bool:
    return list(getattr(args, "target", None) or [])[:1] == ["check"]


def run(args: argparse.Namespace, options: object) -> int:
    target = list(args.target)
    if len(target) != 2:
        print("langop-infra tools: error: tools check needs one URL", file=sys.stderr)
        return 2
    url: str = target[1]
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        print(f"langop-infra tools: error: {target[1]!r} is not an http(s) URL", file=sys.stderr)
        return 2
    base = f"{parts.scheme}://{parts.netloc}"
    mcp = target[1] if parts.path not in ("", "/") else f"{base}/mcp"
    checks = asyncio.run(check_tool(base, mcp, options))
    if args.output == "json":
        print(json.dumps([asdict(c) for c in checks], indent=2, ensure_ascii=False))
    else:
        width = max(len(c.check) for c in checks)
        for c in checks:
            print(f"{c.check.ljust(width)}  {'pass' if c.passed else 'FAIL'}  {_clean(c.detail)}")
        failed = sum(not c.passed for c in checks)
        print(f"\n{len(checks) - failed} of {len(checks)} checks passed")
    return 0 if all(c.passed for c in checks) else 1


async def check_tool(base: str, mcp: str, options: Any) -> list[Check]:
    """Every check against the tool at ``base`` (health) and ``mcp`` (its MCP endpoint)."""
    import httpx

    async with httpx.AsyncClient(timeout=options.timeout, verify=options.verify) as client:
        health = await _health(client, f"{base}/health")
        discovery = await _discovery(client, mcp)
    return [health, discovery, await _listing(mcp, options), await _error_format(mcp, options)]


async def _health(client: Any, url: str) -> Check:
    name = "GET /health"
    try:
        response = await client.get(url)
    except Exception as exc:  # any transport failure is the finding
        return Check(name, False, f"no answer: {type(exc).__name__}: {exc}")
    if response.status_code != 200:
        return Check(name, False, f"HTTP {response.status_code}; the contract wants 200")
    try:
        body = _json.read(response.content)
    except ValueError:
        return Check(name, False, f"200 but not JSON: {response.text[:80]!r}")
    if not isinstance(body, dict) or cast("dict[str, Any]", body).get("status") != "ok":
        return Check(name, False, f'200 but {json.dumps(body)[:80]}; want {{"status": "ok"}}')
    return Check(name, True, '200 {"status": "ok"}')


async def _discovery(client: Any, url: str) -> Check:
    name = "language-operator discovery (tools/list, no initialize)"
    try:
        body = json.dumps(DISCOVERY_REQUEST, separators=(",", ":")).encode()  # as Go marshals it
        response = await client.send(go_post(url, body))
    except Exception as exc:
        return Check(name, False, f"no answer: {type(exc).__name__}: {exc}")
    if response.status_code != 200:
        return Check(
            name,
            False,
            f"HTTP {response.status_code}: {response.text[:120]!r}; language-operator sends "
            "tools/list without initialize and without Accept (serve stateless, JSON responses)",
        )
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        return Check(name, False, f"answered {kind or 'no Content-Type'}; {_WANTS_JSON}")
    message = _message(response.text, DISCOVERY_REQUEST["id"])
    tools = (message or {}).get("result", {}).get("tools") if message else None
    if not isinstance(tools, list):
        return Check(name, False, f"no JSON-RPC result with tools in {response.text[:120]!r}")
    listed = cast("list[object]", tools)
    for item in listed:
        tool = cast("dict[str, Any]", item) if isinstance(item, dict) else None
        if tool is None or not isinstance(tool.get("name"), str):
            return Check(name, False, f"a tool without a name: {json.dumps(item)[:80]}")
        if not isinstance(tool.get("inputSchema"), dict):
            return Check(name, False, f"tool {tool['name']!r} has no inputSchema object")
    return Check(name, True, f"{len(listed)} tools ({kind})")


_WANTS_JSON = (
    "language-operator reads the body with json.Unmarshal and needs one application/json "
    "document (serve with json_response=True)"
)


def go_post(url: str, body: bytes) -> Any:
    """The request Go's ``http.Client.Post(url, "application/json", body)`` sends, header for
    header: no ``Accept`` (httpx's client would add ``Accept: */*``, so the request is built
    here and sent as is), Go's User-Agent, ``Accept-Encoding: gzip``."""
    import httpx

    host = urlsplit(url).netloc
    headers = [
        ("Host", host),
        ("User-Agent", "Go-http-client/1.1"),
        ("Content-Length", str(len(body))),
        ("Content-Type", "application/json"),
        ("Accept-Encoding", "gzip"),
    ]
    return httpx.Request("POST", url, headers=headers, content=body)


async def _listing(url: str, options: Any) -> Check:
    from langop_infra.mcp import MCPError, fetch_tool_listing

    name = "tools/list (MCP session)"
    try:
        listing = await fetch_tool_listing(url, options)
    except MCPError as exc:
        return Check(name, False, f"{exc} [{exc.kind}]")
    if not listing.tools:
        return Check(name, False, "the server lists no tools")
    return Check(name, True, f"{len(listing.tools)} tools, protocol {listing.protocol_version}")


async def _error_format(url: str, options: Any) -> Check:
    from langop_infra.mcp import MCPError
    from langop_infra.mcp._session import Session

    name = "MCP error format (unknown tool)"
    try:
        async with Session(url, options) as session:
            result = await session.call_tool(MISSING_TOOL, {})
    except MCPError as exc:
        if exc.kind == "jsonrpc":
            return Check(name, True, f"JSON-RPC error: {str(exc)[-80:]}")
        return Check(name, False, f"{exc} [{exc.kind}]; want a JSON-RPC error, not HTTP 5xx")
    if result.is_error:
        text = next((b.get("text") for b in result.content if b.get("type") == "text"), "")
        return Check(name, True, f"isError result: {str(text)[:80]}")
    return Check(name, False, f"calling {MISSING_TOOL!r} succeeded; want an error")


def _message(text: str, request_id: object) -> dict[str, Any] | None:
    """The JSON-RPC answer to ``request_id`` in a JSON body."""
    try:
        value = _json.read(text)
    except ValueError:
        return None
    if isinstance(value, dict) and cast("dict[str, Any]", value).get("id") == request_id:
        return cast("dict[str, Any]", value)
    return None


def _clean(text: str) -> str:
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)
