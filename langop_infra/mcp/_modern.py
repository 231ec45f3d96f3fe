"""The 2026-07-28 wire: the per-request ``_meta`` envelope and the routing headers.

From 2026-07-28 on there is no ``initialize`` handshake and no session: ``server/discover``
tells the versions a server speaks, and every request carries its protocol version and the
client's capabilities in ``params._meta``, mirrored in the ``MCP-Protocol-Version``,
``Mcp-Method`` and ``Mcp-Name`` headers (and ``Mcp-Param-*`` for arguments a tool marks with
``x-mcp-header``). The names and encodings here follow the official Python SDK 2.3.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, cast

from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY

# Methods whose named parameter is mirrored in Mcp-Name.
_NAME_PARAMS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


def envelope(
    params: Mapping[str, Any],
    version: str,
    client_info: Mapping[str, Any],
    capabilities: Mapping[str, Any],
) -> dict[str, Any]:
    """``params`` with the per-request ``_meta`` keys of ``version`` added."""
    meta = dict(params.get("_meta") or {})
    meta[PROTOCOL_VERSION_META_KEY] = version
    meta[CLIENT_INFO_META_KEY] = dict(client_info)
    meta[CLIENT_CAPABILITIES_META_KEY] = dict(capabilities)
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
        from mcp.shared.inbound import encode_header_value  # the SDK's, loaded when used

        headers["Mcp-Name"] = encode_header_value(name)
    arguments = params.get("arguments")
    if method == "tools/call" and input_schema and isinstance(arguments, Mapping):
        headers.update(param_headers(input_schema, cast("Mapping[str, Any]", arguments)))
    return headers


def param_headers(
    input_schema: Mapping[str, object], arguments: Mapping[str, object]
) -> dict[str, str]:
    """``Mcp-Param-<token>`` for each argument whose property carries ``x-mcp-header`` (an
    RFC 9110 token; others are skipped), built as the SDK builds them."""
    from mcp.shared.inbound import mcp_param_headers, x_mcp_header_map

    marked = x_mcp_header_map(input_schema).items()
    return mcp_param_headers({p: t for p, t in marked if _TOKEN.fullmatch(t)}, arguments)


def supported_versions(data: object) -> list[str] | None:
    """``data.supported`` of a -32022 error, or None when it names no list of strings."""
    if not isinstance(data, Mapping):
        return None
    supported = cast("Mapping[str, Any]", data).get("supported")
    names = cast("list[object]", supported) if isinstance(supported, list) else None
    if names is not None and all(isinstance(v, str) for v in names):
        return cast("list[str]", names)
    return None
