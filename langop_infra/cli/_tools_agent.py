"""``langop-infra tools --agent-config FILE`` beyond listing: call a tool of the agent's
registry (MCP or HTTP), or print the tools as an LLM API takes them.

    langop-infra tools call --agent-config /etc/agent/config.yaml fetch_ticket \\
        --arguments '{"ticketId": "SUP-1234"}'
    langop-infra tools --agent-config config.yaml --format openai     # or anthropic

The registry is the agent's own (:func:`langop_infra.agent.runtime.load_agent_servers`), with
the agent's env supplying the secrets: run it where the agent's env vars are set. ``call``
prints the result's content (text blocks as text, others as JSON; ``--json`` the whole
result) and exits 0, or 1 when the result is an error (printed to stderr). ``--format`` prints
``{"tools": [...], "names": {api name: registry name}}``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import unicodedata
from typing import Any, cast

import langop_infra._json as _json

FORMATS = ("openai", "anthropic")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--arguments`` and ``--format``, unless another part of ``tools`` added them."""
    if "--arguments" not in parser._option_string_actions:
        parser.add_argument(
            "--arguments", metavar="JSON", help="tools call: the tool's arguments, a JSON object"
        )
    parser.set_defaults(_positionals="target")  # `call NAME` may follow the options
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="with --agent-config: print the tools as the OpenAI or Anthropic API takes them, "
        "with the map back to registry names",
    )


def wanted(args: argparse.Namespace) -> bool:
    """Whether this module handles the command line: an agent config with ``call`` or
    ``--format``."""
    target = list(getattr(args, "target", None) or [])
    return bool(args.agent_config) and (target[:1] == ["call"] or args.format is not None)


def run(args: argparse.Namespace, options: object) -> int:
    """Run ``tools call`` or ``tools --format`` on an agent config; ``options`` are the
    client options the ``tools`` command built from its flags."""
    from langop_infra.agent.runtime import AgentConfigError, load_agent_servers

    target = list(args.target or [])
    arguments: object = {}
    if target[:1] == ["call"]:
        if len(target) != 2:
            return _usage("tools call --agent-config FILE needs exactly one tool NAME")
        try:
            arguments = _json.read(args.arguments) if args.arguments else {}
        except json.JSONDecodeError as exc:
            return _usage(f"--arguments is not JSON: {exc.msg} at column {exc.colno}")
        except ValueError as exc:  # over the JSON reader's size or depth limit
            return _usage(f"--arguments: {exc}")
        if not isinstance(arguments, dict):
            return _usage("--arguments must be a JSON object")
    elif target:
        return _usage("with --agent-config, give `call NAME` or no target")
    try:
        servers = load_agent_servers(args.agent_config)
    except AgentConfigError as exc:
        print(f"langop-infra tools: error: {exc}", file=sys.stderr)
        return 1
    if target:
        # ``call NAME``: ``arguments`` is the JSON object checked above.
        call = _call(servers, options, args, target[1], cast("dict[str, Any]", arguments))
        return asyncio.run(call)
    return asyncio.run(_definitions(servers, options, args))


async def _call(
    servers: Any, options: Any, args: argparse.Namespace, name: str, arguments: dict[str, Any]
) -> int:
    from langop_infra.agent.runtime import connect_tool_registry

    async with await connect_tool_registry(servers, options, naming=args.naming) as registry:
        # The registry's scrubber knows every credential the run sent (the flags' headers,
        # each server's, the HTTP tools'): nothing printed repeats one (docs/cli.md).
        scrubber = registry.scrubber
        for failure in registry.failures:
            _skipped(failure, scrubber)
        result = await registry.call_tool(name, arguments)
    document = scrubber.value(
        {
            "content": result.content,
            "isError": result.is_error,
            "structuredContent": result.structured_content,
        }
    )
    if args.output == "json":
        print(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        stream = sys.stderr if result.is_error else sys.stdout
        for block in document["content"]:
            text = block.get("text") if block.get("type") == "text" else None
            print(_clean(text) if isinstance(text, str) else json.dumps(block), file=stream)
    return 1 if result.is_error else 0


async def _definitions(servers: Any, options: Any, args: argparse.Namespace) -> int:
    from langop_infra.agent.runtime import connect_tool_registry

    async with await connect_tool_registry(servers, options, naming=args.naming) as registry:
        for failure in registry.failures:
            _skipped(failure, registry.scrubber)
        tools, names = registry.llm_definitions(args.format)
        document = registry.scrubber.value({"tools": tools, "names": names})
    print(json.dumps(document, indent=2, ensure_ascii=False))
    return 0


def _clean(text: str) -> str:
    """``text`` with control and format characters a server sent shown escaped, not run by
    the terminal (bidi overrides, escape sequences); newlines and tabs kept."""
    return "".join(
        c
        if c in "\n\t" or (c.isprintable() and unicodedata.category(c) != "Cf")
        else c.encode("unicode_escape").decode()
        for c in text
    )


def _skipped(failure: Any, scrubber: Any) -> None:
    line = f"skipped server {failure.name} ({failure.kind}): {failure.message}"
    print(_clean(scrubber.line(line, 2000)), file=sys.stderr)


def _usage(message: str) -> int:
    print(f"langop-infra tools: error: {message}", file=sys.stderr)
    return 2
