"""Tool names in the agent's registry, and the names an LLM API accepts.

Registry names are ``<server>__<tool>`` (ark) or ``mcp:<server>:<tool>``
(language-operator's MCP client); HTTP tools are ``<tool>`` or ``http:<tool>``. OpenAI and
Anthropic accept tool names matching
``^[a-zA-Z0-9_-]{1,64}$`` only: :func:`llm_definitions` gives each tool such a name, unique,
and the map back to the registry name.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from langop_infra.agent.http_tools import HttpToolCaller

Naming = Literal["ark", "mcp"]
LlmFormat = Literal["openai", "anthropic"]
LLM_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_NOT_ALLOWED = re.compile(r"[^a-zA-Z0-9_-]+")


@dataclass(frozen=True)
class RegisteredTool:
    """A tool under its registry name, with the server and name to call it by (``server``
    is ``""`` for an HTTP tool)."""

    name: str
    server: str
    tool_name: str
    definition: dict[str, Any]


def _unique(name: str, taken: Iterable[str]) -> str:
    taken = set(taken)
    if name not in taken:
        return name
    return next(f"{name}_{n}" for n in itertools.count(2) if f"{name}_{n}" not in taken)


Overrides = Mapping[str, Mapping[str, str]]


def tool_overrides(value: object) -> dict[str, dict[str, str]] | None:
    """A config.yaml tool entry's ``overrides`` (``{tool: {name, description}}``; absent:
    none), or None when it is malformed or a name is not LLM-safe."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        return None
    found: dict[str, dict[str, str]] = {}
    for tool, override in cast("dict[object, object]", value).items():
        if not isinstance(tool, str) or not isinstance(override, dict):
            return None
        fields = cast("dict[object, object]", override)
        kept = {str(k): v for k, v in fields.items() if k in ("name", "description")}
        if not all(isinstance(v, str) and v for v in kept.values()):
            return None
        if "name" in kept and not LLM_NAME.match(str(kept["name"])):
            return None
        found[tool] = {k: str(v) for k, v in kept.items()}
    return found


def _shown(
    server: str,
    definition: dict[str, Any],
    overrides: Overrides,
    taken: set[str],
    warnings: list[str],
) -> dict[str, Any]:
    """``definition`` as the agent is shown it: renamed and described as its reference's
    overrides say, unless the new name is one the server's other tools already have."""
    override = overrides.get(definition["name"])
    if not override:
        return definition
    new = override.get("name", definition["name"])
    if new != definition["name"] and new in taken:
        warnings.append(
            f"{server}'s tool {definition['name']!r} cannot be offered as {new!r}: "
            "another of its tools is; kept its own name"
        )
        new = definition["name"]
    shown = {**definition, "name": new}
    if "description" in override:
        shown["description"] = override["description"]
    return shown


def register(
    listed: Mapping[str, Sequence[dict[str, Any]]],
    naming: Naming,
    warnings: list[str],
    overrides: Mapping[str, Overrides] | None = None,
) -> dict[str, RegisteredTool]:
    """Registry names for every server's tools, in server order, without collisions; a
    tool with an override is offered under its new name and description, and called by its
    own (``RegisteredTool.tool_name``)."""
    tools: dict[str, RegisteredTool] = {}
    for server, definitions in listed.items():
        seen: set[str] = set()
        renames = (overrides or {}).get(server, {})
        offered = {d["name"] for d in definitions if d["name"] not in renames}
        for definition in definitions:
            tool_name = definition["name"]
            if tool_name in seen:
                warnings.append(f"{server} lists tool {tool_name!r} twice; kept the first")
                continue
            seen.add(tool_name)
            definition = _shown(server, definition, renames, offered, warnings)
            offered.add(definition["name"])
            shown = definition["name"]
            name = f"{server}__{shown}" if naming == "ark" else f"mcp:{server}:{shown}"
            if name in tools:
                unique = _unique(name, tools)
                warnings.append(
                    f"tool name {name!r} is taken; {server}'s {tool_name!r} is {unique!r}"
                )
                name = unique
            tools[name] = RegisteredTool(name, server, tool_name, definition)
    return tools


def with_http(
    tools: dict[str, RegisteredTool], http: HttpToolCaller, naming: Naming, warnings: list[str]
) -> dict[str, RegisteredTool]:
    """``tools`` and the HTTP tools: ``<tool>`` (ark's inline tools) or ``http:<tool>``."""
    tools = dict(tools)
    for entry in http.tools.values():
        name = entry.name if naming == "ark" else f"http:{entry.name}"
        if name in tools:
            unique = _unique(name, tools)
            warnings.append(f"tool name {name!r} is taken; HTTP tool {entry.name!r} is {unique!r}")
            name = unique
        tools[name] = RegisteredTool(name, "", entry.name, entry.definition())
    return tools


def llm_name(name: str) -> str:
    """``name`` within ``^[a-zA-Z0-9_-]{1,64}$``: other characters become ``_``
    (``mcp:github:search`` -> ``mcp_github_search``); a longer name keeps 55 characters and
    a hash of the whole, so two long names stay apart."""
    cleaned = _NOT_ALLOWED.sub("_", name).strip("_") or "tool"
    if len(cleaned) <= 64:
        return cleaned
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{cleaned[:55]}_{digest}"


def llm_definitions(
    tools: Mapping[str, RegisteredTool], format: LlmFormat
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Tool definitions in an LLM API's shape, and the map from each API name back to the
    registry name (to route the model's tool call)."""
    definitions: list[dict[str, object]] = []
    reverse: dict[str, str] = {}
    for name, tool in tools.items():
        api_name = _unique(llm_name(name), reverse)
        if len(api_name) > 64:  # a rare second collision after the hash: shorten again
            api_name = _unique(api_name[:60], reverse)
        reverse[api_name] = name
        description = str(tool.definition.get("description") or "")
        schema: object = tool.definition.get("inputSchema") or {"type": "object", "properties": {}}
        if format == "openai":
            definitions.append(
                {
                    "type": "function",
                    "function": {
                        "name": api_name,
                        "description": description,
                        "parameters": schema,
                    },
                }
            )
        else:
            definitions.append(
                {"name": api_name, "description": description, "input_schema": schema}
            )
    return definitions, reverse
