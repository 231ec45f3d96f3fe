"""``langop-infra tools``: list an MCP server's tools, or every tool an agent config gives.

    langop-infra tools http://memory.prod.svc.cluster.local:8080          # /mcp is added
    langop-infra tools https://search.example.com/mcp --header 'Authorization: Bearer x'
    langop-infra tools --transport stdio -- python -m my_server --flag
    langop-infra tools --agent-config /etc/agent/config.yaml               # + MCP_SERVERS
    langop-infra tools https://mcp.example.com/mcp --client-id ci --client-secret-env SECRET
    langop-infra tools https://mcp.example.com/mcp --oauth-redirect browser  # a person logs in
    langop-infra tools URL --protocol 2025-11-25 --max-bytes 64MiB --max-pages 500

OAuth (any of --client-id, --client-secret-env, --scope, --grant, --oauth-redirect) answers
the server's 401 per the MCP authorization spec; tokens stay in memory.

``-o json`` (or ``-o yaml``) prints ``{"server", "protocolVersion", "transport", "tools"}`` (with
``--agent-config``: ``{"tools", "failures"}``). The table escapes control characters and
bidi overrides a server put in its names and descriptions, and aligns by display cells.

Exit status: 0 on success, 1 with a one-line error on stderr, 2 for usage errors.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import unicodedata
from typing import Any
from urllib.parse import urlsplit

from langop_infra.cli._output import add_output_argument, dump

# Literal here rather than imported: `tools --help` must not import httpx.
_TRANSPORTS = ("auto", "streamable-http", "sse", "stdio")
_PROTOCOLS = ("auto", "2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
_DEFAULT_TIMEOUT = 10.0
_DESCRIPTION_WIDTH = 70
_GRANTS = ("auto", "client-credentials", "authorization-code")
_REDIRECTS = ("browser", "print", "follow")
_LOGIN_SECONDS = 300.0  # how long a person has to approve in the browser
_SIZE = re.compile(r"(\d+)\s*(|b|k|kb|kib|m|mb|mib|g|gb|gib)", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
# Bidi embeddings, overrides and isolates, and the marks: they reorder what follows them.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``tools`` subcommand's arguments."""
    parser.add_argument(
        "target",
        nargs="*",
        metavar="URL | -- COMMAND ARGS",
        help="MCP endpoint URL (no path: /mcp is added), or after -- a stdio server command",
    )
    parser.add_argument(
        "-H",
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="HTTP header sent with every request (repeatable)",
    )
    parser.add_argument("--transport", choices=_TRANSPORTS, default="auto")
    parser.add_argument(
        "--protocol",
        choices=_PROTOCOLS,
        default="auto",
        help="protocol version; auto tries 2026-07-28 (server/discover), then initialize",
    )
    parser.add_argument(
        "--max-bytes",
        metavar="SIZE",
        help="cap on all tools/list pages together, e.g. 64MiB (default 32MiB)",
    )
    parser.add_argument(
        "--max-pages", type=int, metavar="N", help="cap on tools/list pages (default 100)"
    )
    parser.add_argument(
        "--max-tools", type=int, metavar="N", help="cap on tools listed (default 10000)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="S",
        help=f"seconds per request (default {_DEFAULT_TIMEOUT:g}; the whole run gets 3x, 30 s min)",
    )
    add_output_argument(
        parser, ("table", "json", "yaml"), "table", "the full tool list as", json_alias=True
    )
    parser.add_argument("--ca-bundle", metavar="PATH", help="CA bundle to verify HTTPS with")
    parser.add_argument(
        "--agent-config",
        metavar="PATH",
        help="list every tool of an agent's config.yaml (and MCP_SERVERS from the environment)",
    )
    parser.add_argument(
        "--naming",
        choices=("ark", "mcp"),
        default="ark",
        help="registry names with --agent-config: server__tool (ark) or mcp:server:tool",
    )
    _add_oauth_arguments(parser.add_argument_group("OAuth 2.1 (used when the server answers 401)"))


def _add_oauth_arguments(oauth: argparse._ArgumentGroup) -> None:
    oauth.add_argument("--client-id", metavar="ID", help="pre-registered OAuth client id")
    oauth.add_argument(
        "--client-secret-env",
        metavar="VAR",
        help="environment variable holding the client secret (never pass it as an argument)",
    )
    oauth.add_argument(
        "--scope",
        action="append",
        default=[],
        metavar="SCOPE",
        help="scope to request besides what the server asks for (repeatable)",
    )
    oauth.add_argument(
        "--grant",
        choices=_GRANTS,
        default=None,
        help="auto (default): client credentials with a secret where offered, else a login",
    )
    oauth.add_argument(
        "--oauth-redirect",
        choices=_REDIRECTS,
        default=None,
        help="login: print the URL (default), also open a browser, or follow the "
        "authorization server's redirects without a person",
    )


def run(args: argparse.Namespace) -> int:
    """List the tools; see the module docstring for the exit status."""
    try:
        headers = _parse_headers(args.header)
        if args.timeout is not None and not args.timeout > 0:
            raise _UsageError("--timeout must be a positive number of seconds")
        args.auth = _oauth(args)
        args.max_bytes = _size(args.max_bytes)
        for flag in ("max_pages", "max_tools"):
            if getattr(args, flag) is not None and getattr(args, flag) < 1:
                raise _UsageError(f"--{flag.replace('_', '-')} must be at least 1")
        if args.agent_config:
            if args.target:
                raise _UsageError("give either --agent-config or a URL/command, not both")
            return _run_agent_config(args, headers)
        target = _target(args.target, args.transport)
    except _UsageError as exc:
        print(f"langop-infra tools: error: {exc}", file=sys.stderr)
        return 2

    from langop_infra.mcp import MCPError, fetch_tool_listing

    try:
        if isinstance(target, str) and args.auth is not None:
            # Authorize first, so the request timeouts do not run while a person approves.
            asyncio.run(args.auth.login(target))
        listing = asyncio.run(fetch_tool_listing(target, _options(args, headers)))
    except MCPError as exc:
        print(f"langop-infra tools: error: {escape(str(exc))}", file=sys.stderr)
        return 1
    if args.output != "table":
        document = {
            "server": listing.server_info,
            "protocolVersion": listing.protocol_version,
            "transport": listing.transport,
            "tools": listing.tools,
        }
        sys.stdout.write(dump(document, args.output))
        return 0
    _print_table(listing.tools)
    server = " ".join(
        escape(str(listing.server_info.get(key)))[:80]
        for key in ("name", "version")
        if listing.server_info.get(key)
    )
    count = len(listing.tools)
    print(
        f"\n{count} tool{'s' if count != 1 else ''} from {server or 'the server'} "
        f"({listing.transport}, protocol {escape(listing.protocol_version)[:40]})"
    )
    return 0


def _run_agent_config(args: argparse.Namespace, headers: dict[str, str]) -> int:
    from langop_infra.agent.runtime import (
        AgentConfigError,
        connect_tool_registry,
        load_agent_servers,
    )

    try:
        servers = load_agent_servers(args.agent_config)
    except AgentConfigError as exc:
        print(f"langop-infra tools: error: {exc}", file=sys.stderr)
        return 1

    async def collect() -> tuple[list[dict[str, Any]], list[Any], list[str], int]:
        registry = await connect_tool_registry(servers, _options(args, headers), naming=args.naming)
        async with registry:
            return (
                registry.definitions(),
                registry.failures,
                registry.warnings,
                len(registry.sessions),
            )

    tools, failures, warnings, connected = asyncio.run(collect())
    for warning in warnings:
        print(f"warning: {escape(warning)}", file=sys.stderr)
    for failure in failures:
        print(
            escape(f"skipped server {failure.name} ({failure.kind}): {failure.message}"),
            file=sys.stderr,
        )
    if args.output != "table":
        skipped = [{"name": f.name, "kind": f.kind, "message": f.message} for f in failures]
        sys.stdout.write(dump({"tools": tools, "failures": skipped}, args.output))
    else:
        _print_table(tools)
        print(f"\n{len(tools)} tools from {connected} of {connected + len(failures)} servers")
    # Skipped servers are reported, not fatal (as for the agent); all of them failing is.
    return 1 if failures and not connected else 0


class _UsageError(Exception):
    pass


def _parse_headers(values: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for value in values:
        name, colon, content = value.partition(":")
        if not colon or not name.strip() or any(c.isspace() for c in name.strip()):
            raise _UsageError(f"--header {value!r} is not 'Name: value'")
        headers[name.strip()] = content.strip()
    return headers


def _target(target: list[str], transport: str) -> str | list[str]:
    if not target:
        raise _UsageError("give a URL, or --transport stdio -- COMMAND ARGS, or --agent-config")
    if transport == "stdio" or len(target) > 1:
        if transport not in ("auto", "stdio"):
            raise _UsageError(f"a command needs --transport stdio, not {transport}")
        return list(target)
    url = target[0]
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise _UsageError(
            f"{url!r} is not an http(s) URL; for a stdio server use --transport stdio -- COMMAND"
        )
    if parts.path in ("", "/"):
        url = url.rstrip("/") + "/mcp" if not parts.query else url
    return url


def _options(args: argparse.Namespace, headers: dict[str, str]) -> Any:
    from langop_infra.mcp import ClientOptions

    timeout = args.timeout or _DEFAULT_TIMEOUT
    caps = {
        name: value
        for name, value in (
            ("max_total_bytes", args.max_bytes),
            ("max_pages", args.max_pages),
            ("max_tools", args.max_tools),
        )
        if value is not None
    }
    return ClientOptions(
        headers=headers,
        timeout=timeout,
        deadline=max(30.0, 3 * timeout),
        auth=getattr(args, "auth", None),
        transport=args.transport,
        verify=args.ca_bundle or True,
        protocol=args.protocol,
        **caps,
    )


def _oauth(args: argparse.Namespace) -> Any:
    """The OAuth2Auth the flags ask for, or None when no OAuth flag is given."""
    scopes = [scope for value in args.scope for scope in value.split()]
    wanted = (args.client_id, args.client_secret_env, scopes, args.grant, args.oauth_redirect)
    if not any(wanted):
        return None
    secret = None
    if args.client_secret_env:
        if not args.client_id:
            raise _UsageError("--client-secret-env needs --client-id")
        secret = os.environ.get(args.client_secret_env)
        if not secret:
            raise _UsageError(
                f"environment variable {args.client_secret_env} (--client-secret-env) is unset "
                "or empty; export the client secret in it"
            )
    grant = (args.grant or "auto").replace("-", "_")
    if grant == "client_credentials" and not secret:
        raise _UsageError("--grant client-credentials needs --client-id and --client-secret-env")

    from langop_infra.mcp.oauth import FollowRedirect, LoopbackRedirect, OAuth2Auth

    redirect = args.oauth_redirect or "print"
    return OAuth2Auth(
        client_id=args.client_id,
        client_secret=secret,
        scopes=scopes,
        grant=grant,
        redirect=FollowRedirect()
        if redirect == "follow"
        else LoopbackRedirect(open_browser=redirect == "browser", timeout=_LOGIN_SECONDS),
    )


def _size(value: str | None) -> int | None:
    if value is None:
        return None
    match = _SIZE.fullmatch(value.strip())
    if not match or int(match.group(1)) < 1:
        raise _UsageError(f"--max-bytes {value!r} is not a size such as 33554432, 512KiB, 64MiB")
    return int(match.group(1)) * _UNITS[match.group(2)[:1].lower()]


def escape(text: str) -> str:
    """``text`` safe for a terminal: control characters and bidi controls as ``\\uXXXX``."""
    return "".join(
        f"\\u{ord(c):04x}" if c in _BIDI or unicodedata.category(c) in ("Cc", "Zl", "Zp") else c
        for c in text
    )


def cells(text: str) -> int:
    """How many terminal cells ``text`` takes: wide East Asian characters two, marks none."""
    return sum(_cell(c) for c in text)


def _cell(char: str) -> int:
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _clip(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` cells, with "..." when cut."""
    if cells(text) <= width:
        return text
    kept, used = [], 0
    for char in text:
        if used + _cell(char) > width - 3:
            break
        kept.append(char)
        used += _cell(char)
    return "".join(kept) + "..."


def _pad(text: str, width: int) -> str:
    return text + " " * (width - cells(text))


def _print_table(tools: list[dict[str, Any]]) -> None:
    rows = [("NAME", "TITLE", "REQUIRED", "DESCRIPTION")]
    for tool in tools:
        schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {}
        required = schema.get("required") if isinstance(schema.get("required"), list) else []
        annotations = tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {}
        title = tool.get("title") or annotations.get("title") or "-"
        description = " ".join(str(tool.get("description") or "-").split())
        description = _clip(escape(description), _DESCRIPTION_WIDTH)
        rows.append(
            (
                _clip(escape(str(tool["name"])), 80),
                _clip(escape(str(title)), 60),
                _clip(escape(", ".join(map(str, required))) or "-", 60),
                description,
            )
        )
    widths = [max(cells(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print(
            "  ".join(_pad(cell, width) for cell, width in zip(row[:3], widths, strict=True))
            + "  "
            + row[3]
        )
