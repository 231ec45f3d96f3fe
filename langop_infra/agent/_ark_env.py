"""ark's env contract, read when config.yaml does not say it: ``AGENT_MCP_SERVERS`` (JSON
``[{"name", "url"}]``), each server's ``ARK_MCP_<SERVER>_HEADER_<HEADER>`` variables, and
``AGENT_WEBHOOK_TOOLS`` (JSON list of webhook tools, ``inputSchema`` a JSON string).

:func:`ark_sections` turns them into the config.yaml sections they stand for (``mcpServers``,
``webhookTools``), for the keys the document lacks; config.yaml, where it has the key, wins.
A variable that is set but unusable is a failure, never 0 servers said nothing about.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import langop_infra._json as _json
from langop_infra.config._names import HEADER_ENV_PREFIX, env_token

__all__ = ["ARK_SERVERS_ENV", "ARK_WEBHOOKS_ENV", "ArkSections", "ark_sections", "header_name"]

ARK_SERVERS_ENV = "AGENT_MCP_SERVERS"
ARK_WEBHOOKS_ENV = "AGENT_WEBHOOK_TOOLS"


class ArkSections:
    """The sections found in env, the ``(name, problem)`` of each unusable entry, warnings."""

    def __init__(self) -> None:
        self.sections: dict[str, list[Any]] = {}
        self.failures: list[tuple[str, str]] = []
        self.warnings: list[str] = []


def header_name(token: str) -> str:
    """A header's name from its env token: ``X_API_KEY`` -> ``X-Api-Key`` (header names are
    case-insensitive; the token cannot tell ``-`` from ``_``, so ``-`` is chosen)."""
    return "-".join(part.capitalize() for part in token.split("_") if part)


def _json_list(env: Mapping[str, str], name: str, found: ArkSections) -> list[Any] | None:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return None
    try:
        value: object = _json.read(raw)
    except ValueError as exc:
        why = _json.reason(exc)
        found.failures.append((name, f"{name}: not JSON ({why}); expected a JSON list"))
        return None
    if not isinstance(value, list):
        found.failures.append((name, f"{name}: expected a JSON list, got {type(value).__name__}"))
        return None
    return cast("list[Any]", value)


def _headers(server: str, env: Mapping[str, str]) -> list[dict[str, str]]:
    prefix = f"{HEADER_ENV_PREFIX}{env_token(server)}_HEADER_"
    return [
        {"name": header_name(variable[len(prefix) :]), "valueFromEnv": variable}
        for variable in sorted(env)
        if variable.startswith(prefix) and len(variable) > len(prefix)
    ]


def ark_sections(document: Mapping[str, Any], env: Mapping[str, str]) -> ArkSections:
    """``mcpServers`` and ``webhookTools`` from ark's env, for those ``document`` lacks."""
    found = ArkSections()
    servers = _json_list(env, ARK_SERVERS_ENV, found)
    if servers is not None and "mcpServers" not in document:
        entries: list[Any] = []
        for spec in servers:
            if isinstance(spec, dict) and isinstance(cast("dict[str, Any]", spec).get("name"), str):
                fields = cast("dict[str, Any]", spec)
                headers = fields.get("headers") or _headers(fields["name"], env)
                entries.append({**fields, "headers": headers})
            else:
                entries.append(spec)  # reported by the config reader, with its index
        found.sections["mcpServers"] = entries
    named = {
        env_token(str(cast("dict[str, Any]", spec).get("name", "")))
        for spec in found.sections.get("mcpServers", [])
        if isinstance(spec, dict)
    }
    for variable in sorted(env):
        if variable.startswith(HEADER_ENV_PREFIX) and "_HEADER_" in variable:
            server = variable[len(HEADER_ENV_PREFIX) :].split("_HEADER_")[0]
            if "mcpServers" in found.sections and server not in named:
                found.warnings.append(
                    f"{variable} is set but {ARK_SERVERS_ENV} names no server {server}: "
                    "the header is not sent"
                )
    tools = _json_list(env, ARK_WEBHOOKS_ENV, found)
    if tools is not None and "webhookTools" not in document:
        found.sections["webhookTools"] = tools
    return found
