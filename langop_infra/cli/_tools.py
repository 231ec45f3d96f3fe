"""``langop-infra tools``: list an MCP server's tools, or every tool an agent config gives.

    langop-infra tools http://memory.prod.svc.cluster.local:8080          # /mcp is added
    langop-infra tools https://search.example.com/mcp --header 'Authorization: Bearer x'
    langop-infra tools --transport stdio -- python -m my_server --flag
    langop-infra tools --agent-config /etc/agent/config.yaml               # + MCP_SERVERS
    langop-infra tools https://mcp.example.com/mcp --client-id ci --client-secret-env SECRET
    langop-infra tools https://mcp.example.com/mcp --oauth-redirect browser  # a person logs in
    langop-infra tools URL --protocol 2025-11-25 --max-bytes 64MiB --max-pages 500
    langop-infra tools call URL echo --arguments '{"text": "hi"}'          # call one tool
    langop-infra tools --arguments '{}' call TOOL -- python -m my_server   # ... over stdio

OAuth (any of --client-id, --client-secret-env with --oauth-issuer, --private-key-file,
--client-metadata-url, --scope, --grant, --oauth-redirect) answers the server's 401 per the
MCP authorization spec; tokens stay in memory. A login that may need a person happens first,
so request timeouts do not run while they approve.

``-o json`` (or ``-o yaml``) prints ``{"server", "protocolVersion", "transport", "tools"}`` (with
``--agent-config``: ``{"tools", "failures"}``). The table escapes control characters and
bidi overrides a server put in its names and descriptions, and aligns by display cells.

Exit status: 0 on success, 1 with a one-line error on stderr, 2 for usage errors.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from typing import Any
from urllib.parse import urlsplit

from langop_infra.cli import _tools_agent as tools_agent, _tools_check as tools_check
from langop_infra.cli._output import add_output_argument, dump, emit
from langop_infra.cli._stack import UsageError
from langop_infra.cli._tool_client import (
    DEFAULT_TIMEOUT,
    add_oauth_arguments,
    fail,
    log_in_first,
    oauth,
    options,
    scrub,
    scrubbed_json,
    secrets_sent,
)
from langop_infra.cli._tool_table import escape, print_table
from langop_infra.mcp._options import PROTOCOLS, TRANSPORTS  # no httpx: mcp/ imports lazily

_SIZE = re.compile(r"(\d+)\s*(|b|k|kb|kib|m|mb|mib|g|gb|gib)", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``tools`` subcommand's arguments."""
    parser.add_argument(
        "target",
        nargs="*",
        metavar="[call] URL [TOOL] | [call TOOL] -- COMMAND ARGS",
        help="MCP endpoint URL (no path: /mcp is added), or after -- a stdio server command; "
        "`call URL TOOL` calls a tool instead of listing",
    )
    parser.add_argument(
        "-H",
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="HTTP header sent with every request (repeatable)",
    )
    parser.add_argument("--transport", choices=TRANSPORTS, default="auto")
    parser.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="auto",
        help="protocol version; auto tries 2026-07-28 (server/discover), then initialize",
    )
    parser.add_argument(
        "--max-bytes",
        metavar="SIZE",
        help="cap on all tools/list pages together, e.g. 64MiB (default 32MiB)",
    )
    parser.add_argument(
        "--max-response-bytes",
        metavar="SIZE",
        help="cap on one response or event, decoded, e.g. 16MiB (default 8MiB)",
    )
    parser.add_argument(
        "--arguments",
        metavar="JSON",
        default="{}",
        help="with `tools call`: the tool's arguments as a JSON object (default {})",
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
        help=f"seconds per request (default {DEFAULT_TIMEOUT:g}; the whole run gets 3x, 30 s min)",
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
    add_oauth_arguments(parser.add_argument_group("OAuth 2.1 (used when the server answers 401)"))
    tools_agent.add_arguments(parser)  # tools call --agent-config, --format


def run(args: argparse.Namespace) -> int:
    """List the tools, or call one; see the module docstring for the exit status."""
    try:
        headers = _parse_headers(args.header)
        if args.timeout is not None and not args.timeout > 0:
            raise UsageError("--timeout must be a positive number of seconds")
        args.auth = oauth(args)
        args.max_bytes = _size(args.max_bytes, "--max-bytes")
        args.max_response_bytes = _size(args.max_response_bytes, "--max-response-bytes")
        for flag in ("max_pages", "max_tools"):
            if getattr(args, flag) is not None and getattr(args, flag) < 1:
                raise UsageError(f"--{flag.replace('_', '-')} must be at least 1")
        if tools_check.wanted(args) and not args.agent_config:
            return tools_check.run(args, options(args, headers))
        calling = bool(args.target) and args.target[0] == "call"
        tool, arguments = "", {}
        if args.agent_config:
            if tools_agent.wanted(args):
                return tools_agent.run(args, options(args, headers))
            if args.target:
                raise UsageError("give either --agent-config or a URL/command, not both")
            return _run_agent_config(args, headers)
        if calling:
            from langop_infra.cli._tool_call import call_form, parse_arguments

            target, tool = call_form(args.target[1:], args.transport, _target)
            arguments = parse_arguments(args.arguments)
        else:
            target = _target(args.target, args.transport)
    except UsageError as exc:
        print(f"langop-infra tools: error: {exc}", file=sys.stderr)
        return 2
    if calling:
        from langop_infra.cli._tool_call import run_call

        return run_call(args, target, tool, arguments, headers)
    return _run_listing(args, target, headers)


def _run_listing(args: argparse.Namespace, target: str | list[str], headers: dict[str, str]) -> int:
    from langop_infra.mcp import MCPError, fetch_tool_listing

    secrets = secrets_sent(args, headers)
    try:
        log_in_first(args, target)
        listing = asyncio.run(fetch_tool_listing(target, options(args, headers)))
    except MCPError as exc:
        return fail(exc, secrets)
    if args.output != "table":
        document = {
            "server": listing.server_info,
            "protocolVersion": listing.protocol_version,
            "transport": listing.transport,
            "tools": listing.tools,
        }
        if args.output == "json":
            print(scrubbed_json(document, secrets))
        else:
            emit(dump(scrub(document, secrets), args.output))
        return 0
    print_table(scrub(listing.tools, secrets))
    info = scrub(listing.server_info, secrets)
    server = " ".join(
        escape(str(info.get(key)))[:80] for key in ("name", "version") if info.get(key)
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
        registry = await connect_tool_registry(servers, options(args, headers), naming=args.naming)
        async with registry:
            return (
                registry.definitions(),
                registry.failures,
                registry.warnings,
                len(registry.sessions),
            )

    from langop_infra.core._log_scrub import watch
    from langop_infra.core._redact import Scrubber, redact, secret_strings

    secrets = secret_strings(
        secrets_sent(args, headers), [[e.headers, e.env] for e in servers.servers]
    )
    watch(Scrubber(secrets))
    tools, failures, warnings, connected = asyncio.run(collect())
    tools = scrub(tools, secrets)
    for warning in warnings:
        print(f"warning: {redact(warning, secrets, limit=2000)}", file=sys.stderr)
    for failure in failures:
        line = f"skipped server {failure.name} ({failure.kind}): {failure.message}"
        print(redact(line, secrets, limit=2000), file=sys.stderr)
    if args.output != "table":
        skipped = [{"name": f.name, "kind": f.kind, "message": f.message} for f in failures]
        document = {"tools": tools, "failures": skipped}
        if args.output == "json":
            print(scrubbed_json(document, secrets))
        else:
            emit(dump(scrub(document, secrets), args.output))
    else:
        print_table(tools)
        print(f"\n{len(tools)} tools from {connected} of {connected + len(failures)} servers")
    # Skipped servers are reported, not fatal (as for the agent); all of them failing is.
    return 1 if failures and not connected else 0


def _parse_headers(values: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for value in values:
        name, colon, content = value.partition(":")
        if not colon or not name.strip() or any(c.isspace() for c in name.strip()):
            raise UsageError(f"--header {value!r} is not 'Name: value'")
        headers[name.strip()] = content.strip()
    return headers


def _target(target: list[str], transport: str) -> str | list[str]:
    if not target:
        raise UsageError("give a URL, or --transport stdio -- COMMAND ARGS, or --agent-config")
    if transport == "stdio" or len(target) > 1:
        if transport not in ("auto", "stdio"):
            raise UsageError(f"a command needs --transport stdio, not {transport}")
        return list(target)
    url = target[0]
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(
            f"{url!r} is not an http(s) URL; for a stdio server use --transport stdio -- COMMAND"
        )
    if parts.path in ("", "/"):
        url = url.rstrip("/") + "/mcp" if not parts.query else url
    return url


def _size(value: str | None, flag: str) -> int | None:
    if value is None:
        return None
    match = _SIZE.fullmatch(value.strip())
    if not match or int(match.group(1)) < 1:
        raise UsageError(f"{flag} {value!r} is not a size such as 33554432, 512KiB, 64MiB")
    return int(match.group(1)) * _UNITS[match.group(2)[:1].lower()]
