"""``langop-infra tools call``: call one tool, with the same transports, auth and caps.

    langop-infra tools call http://memory:8080/mcp remember --arguments '{"content": "hi"}'
    langop-infra tools --arguments '{"q": "x"}' call search -- python -m my_server

Prints the tool's text content (other content as a one-line summary), or with ``--json``
``{"content", "isError", "structuredContent"}``. Exit 1 when the call fails or the tool
reports an error (``isError``), with a one-line reason on stderr.

``TOOL`` ``-`` runs many operations in one session (one login): each stdin line is a JSON
object, ``{"name": TOOL, "arguments": {...}}`` to call a tool or ``{"list": true}`` to list
them, and each gets one JSON line back (the call's document, ``{"tools": [...]}``, or
``{"error": "..."}``), flushed at once so a script can read an answer before it writes on.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from typing import Any, cast
from urllib.parse import urlsplit

import langop_infra._json as _json
from langop_infra.cli._tool_client import (
    UsageError,
    fail,
    log_in_first,
    options,
    scrub,
    scrubbed_json,
    secrets_sent,
)
from langop_infra.cli._tool_table import escape


def call_form(
    rest: list[str], transport: str, resolve: Callable[[list[str], str], str | list[str]]
) -> tuple[str | list[str], str]:
    """``URL TOOL`` or ``TOOL COMMAND ARGS`` (after ``call``): the target and the tool."""
    if len(rest) == 2 and urlsplit(rest[0]).scheme in ("http", "https"):
        return resolve(rest[:1], transport), rest[1]
    if len(rest) >= 2 and urlsplit(rest[0]).scheme not in ("http", "https"):
        return resolve(rest[1:], "stdio" if transport == "auto" else transport), rest[0]
    raise UsageError(
        "give `tools call URL TOOL [--arguments JSON]`, or "
        "`tools [--arguments JSON] call TOOL -- COMMAND ARGS` for a stdio server"
    )


def parse_arguments(text: str, what: str = "--arguments") -> dict[str, Any]:
    """``--arguments`` (or a stdin line): a JSON object."""
    try:
        value = _json.read(text)
    except ValueError as exc:
        raise UsageError(f"{what} is not JSON ({exc}); give an object, e.g. '{{}}'") from None
    if not isinstance(value, dict):
        raise UsageError(f"{what} must be a JSON object")
    return cast("dict[str, Any]", value)


def run_call(
    args: argparse.Namespace,
    target: str | list[str],
    tool: str,
    arguments: dict[str, object],
    headers: dict[str, str],
) -> int:
    """Call ``tool`` at the resolved ``target`` (a URL or a stdio command) and print it."""
    from langop_infra.mcp import MCPError

    secrets = secrets_sent(args, headers)
    if tool == "-":
        try:
            log_in_first(args, target)
        except MCPError as exc:
            return fail(exc, secrets)
        return asyncio.run(run_lines(target, options(args, headers), secrets))
    try:
        log_in_first(args, target)
        result = asyncio.run(call_within_deadline(target, tool, arguments, options(args, headers)))
    except MCPError as exc:
        if args.output == "json":  # JSON on stdout in every case, the one-line error on stderr
            print(scrubbed_json(failure_document(exc), secrets))
        return fail(exc, secrets)
    document = {
        "content": result.content,
        "isError": result.is_error,
        "structuredContent": result.structured_content,
    }
    if args.output == "json":
        print(scrubbed_json(document, secrets))
    else:
        for line in content_lines(scrub(document, secrets)):
            print(line)
    if result.is_error:
        return fail(Exception(f"tool {tool} reported an error (isError)"), secrets)
    return 0


def failure_document(exc: Exception) -> dict[str, Any]:
    """A failed call as ``-o json`` prints it: the result shape, ``isError`` true, and the
    error (a JSON-RPC error's ``code``, ``message`` and ``data`` as the server sent them)."""
    from langop_infra.mcp._errors import JSONRPCError

    error: dict[str, object] = {"kind": getattr(exc, "kind", type(exc).__name__), "text": str(exc)}
    if isinstance(exc, JSONRPCError):
        error.update({"code": exc.code, "message": exc.message})
        if exc.data is not None:
            error["data"] = exc.data
    return {"content": [], "isError": True, "structuredContent": None, "error": error}


async def call_within_deadline(
    target: str | list[str], tool: str, arguments: dict[str, Any], options: Any
) -> Any:
    """Connect, call, close: all within ``options.deadline``, like a listing."""
    from langop_infra.mcp import Session
    from langop_infra.mcp._timeouts import timeout_after

    session = Session(target, options)
    try:
        async with timeout_after(options.deadline):
            await session.initialize()
            return await session.call_tool(tool, arguments)
    except TimeoutError:
        raise session.deadline_error(f"calling {tool}") from None
    finally:
        await session.aclose()


async def run_lines(target: str | list[str], options: Any, secrets: list[str]) -> int:
    """One session for every operation on stdin; 1 when any of them failed."""
    from langop_infra.core._redact import redact
    from langop_infra.mcp import MCPError, Session

    failed = False
    session = Session(target, options)
    try:
        while line := await asyncio.to_thread(sys.stdin.readline):
            if not line.strip():
                continue
            try:
                document = await _operation(session, line, options.deadline)
            except (MCPError, UsageError) as exc:
                failed = True
                document = {"error": redact(str(exc), secrets, limit=2000)}
            print(scrubbed_json(document, secrets, indent=None), flush=True)
    finally:
        await session.aclose()
    return 1 if failed else 0


async def _operation(session: Any, line: str, deadline: float | None) -> dict[str, Any]:
    from langop_infra.mcp._timeouts import timeout_after

    request = parse_arguments(line, what="a stdin line")
    name = request.get("name")
    if not request.get("list") and not isinstance(name, str):
        raise UsageError('a stdin line is {"name": TOOL, "arguments": {...}} or {"list": true}')
    try:
        async with timeout_after(deadline):
            if request.get("list"):
                return {"tools": await session.list_tools()}
            arguments: object = request.get("arguments") or {}
            if not isinstance(arguments, dict):
                raise UsageError(f"the arguments for {name} must be a JSON object")
            result = await session.call_tool(name, cast("dict[str, Any]", arguments))
    except TimeoutError:
        raise session.deadline_error(f"calling {name}") from None
    return {
        "content": result.content,
        "isError": result.is_error,
        "structuredContent": result.structured_content,
    }


def content_lines(document: dict[str, Any]) -> list[str]:
    """Text content as is (terminal-safe), anything else as a one-line summary."""
    lines: list[str] = []
    for item in document["content"]:
        kind = item.get("type")
        if kind == "text":
            lines.append(escape_keeping_lines(str(item.get("text", ""))))
        elif kind in ("image", "audio"):
            size = len(str(item.get("data", ""))) * 3 // 4
            lines.append(f"[{kind} {escape(str(item.get('mimeType', '?')))}, {size} bytes]")
        elif kind in ("resource", "resource_link"):
            resource = item.get("resource") if kind == "resource" else item
            linked = cast("dict[str, Any]", resource) if isinstance(resource, dict) else {}
            uri = linked.get("uri", "?")
            lines.append(f"[{kind} {escape(str(uri))}]")
        else:
            lines.append(f"[{escape(str(kind))} content]")
    if not lines and document.get("structuredContent") is not None:
        from langop_infra.core._redact import json_text

        lines.append(json_text(document["structuredContent"]))
    return lines


def escape_keeping_lines(text: str) -> str:
    """``text`` terminal-safe, its line breaks and tabs kept."""
    from langop_infra.core._redact import escape as terminal_safe

    return terminal_safe(text, keep="\n\t")
