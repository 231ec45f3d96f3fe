"""The 2026-07-28 wire: the per-request ``_meta`` envelope and the routing headers.

From 2026-07-28 on there is no ``initialize`` handshake and no session: ``server/discover``
tells the versions a server speaks, and every request carries its protocol version and the
client's capabilities in ``params._meta``, mirrored in the ``MCP-Protocol-Version``,
``Mcp-Method`` and ``Mcp-Name`` headers (and ``Mcp-Param-*`` for arguments a tool marks with
``x-mcp-header``). The names and encodings here follow the official Python SDK 2.3.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator, Mapping
from typing import Any, cast

HANDSHAKE_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)
LATEST_MODERN = MODERN_VERSIONS[-1]
LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[-1]

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

HEADER_MISMATCH = -32020
UNSUPPORTED_PROTOCOL_VERSION = -32022

# Methods whose named parameter is mirrored in Mcp-Name.
_NAME_PARAMS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_HEADER_SAFE = re.compile(r"[\x20-\x7E]*")
_SENTINEL = re.compile(r"=\?base64\?.*\?=")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


def envelope(
    params: Mapping[str, Any],
    version: str,
    client_info: Mapping[str, Any],
    capabilities: Mapping[str, Any],
) -> dict[str, Any]:
    """``params`` with the per-request ``_meta`` keys of ``version`` added."""
    meta = dict(params.get("_meta") or {})
    meta[PROTOCOL_VERSION_KEY] = version
    meta[CLIENT_INFO_KEY] = dict(client_info)
    meta[CLIENT_CAPABILITIES_KEY] = dict(capabilities)
    return {**params, "_meta": meta}


def routing_headers(
    method: str,
    params: Mapping[str, object],
    version: str,
    input_schema: Mapping[str, object] | None = None,
) -> dict[str, str]:
    """The HTTP headers that mirror a request of ``version`` for routers and gateways."""
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    name = params.get(_NAME_PARAMS.get(method, ""))
    if isinstance(name, str):
        headers["Mcp-Name"] = encode_header_value(name)
    arguments = params.get("arguments")
    if method == "tools/call" and input_schema and isinstance(arguments, Mapping):
        headers.update(param_headers(input_schema, cast("Mapping[str, Any]", arguments)))
    return headers


def encode_header_value(value: str) -> str:
    """``value`` as is when HTTP carries it intact, else in the ``=?base64?…?=`` sentinel."""
    if _HEADER_SAFE.fullmatch(value) and value == value.strip() and not _SENTINEL.fullmatch(value):
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode('ascii')}?="


def param_headers(
    input_schema: Mapping[str, object], arguments: Mapping[str, object]
) -> dict[str, str]:
    """``Mcp-Param-<token>`` for each argument whose property carries ``x-mcp-header``."""
    headers: dict[str, str] = {}
    for path, token in _annotated(input_schema):
        value: object = arguments
        for key in path:
            parent = cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else None
            value = parent.get(key) if parent is not None else None
        if isinstance(value, bool):
            rendered = "true" if value else "false"
        elif isinstance(value, (str, int, float)):
            rendered = str(value)
        else:
            continue
        headers[f"Mcp-Param-{token}"] = encode_header_value(rendered)
    return headers


def _annotated(schema: Mapping[str, object]) -> Iterator[tuple[tuple[str, ...], str]]:
    # Only chains of plain "properties" are addressable by a header (as the SDK requires).
    stack: list[tuple[tuple[str, ...], object]] = [((), schema)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, Mapping):
            continue
        fields = cast("Mapping[str, Any]", node)
        token = fields.get("x-mcp-header")
        if path and isinstance(token, str) and _TOKEN.fullmatch(token):
            yield path, token
        properties = fields.get("properties")
        if isinstance(properties, Mapping) and len(path) < 32:
            children = cast("Mapping[Any, Any]", properties).items()
            stack.extend(((*path, str(key)), sub) for key, sub in children)


def supported_versions(data: object) -> list[str] | None:
    """``data.supported`` of a -32022 error, or None when it names no list of strings."""
    if not isinstance(data, Mapping):
        return None
    supported = cast("Mapping[str, Any]", data).get("supported")
    names = cast("list[object]", supported) if isinstance(supported, list) else None
    if names is not None and all(isinstance(v, str) for v in names):
        return cast("list[str]", names)
    return None
