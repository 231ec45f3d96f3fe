"""STOA (``gostoa.dev/v1alpha1``) Tool: an HTTP tool, which is an entry of ``httpTools``.

Two shapes are read: STOA's documented one (``authentication: {type, secretRef,
headerName}``, ``rateLimit: {requestsPerMinute, burst}``) and the chart's CRD
(``charts/stoa-platform/crds/tools.gostoa.dev.yaml``: ``auth`` a string, ``rateLimit`` an
expression such as ``100/min``)."""

from __future__ import annotations

import re

from langop_infra.offline.importers._common import (
    Converter,
    Imported,
    Json,
    Manifest,
    compact,
    drop_status,
    leftovers,
    mapping,
    note,
    refuse,
)

GROUP = "gostoa.dev"
_CARRIED = (
    "displayName",
    "description",
    "endpoint",
    "method",
    "version",
    "tags",
    "inputSchema",
    "timeout",
    "enabled",
    "apiRef",
)
_PLACEHOLDER = re.compile(r"<[^<>]*>|\$\{[^}]*\}|\{\{.*?\}\}")
_RATE = re.compile(r"^\s*(\d+)\s*/\s*(s|sec|second|m|min|minute|h|hour)\s*$")
_PER_MINUTE = {
    "s": 60,
    "sec": 60,
    "second": 60,
    "m": 1,
    "min": 1,
    "minute": 1,
    "h": 1 / 60,
    "hour": 1 / 60,
}


def _authentication(out: Imported, m: Manifest, entry: Json) -> None:
    spec = m.spec
    auth = mapping(spec.get("authentication"))
    if auth:
        secret = mapping(auth.get("secretRef"))
        entry["authentication"] = compact(
            {
                "type": auth.get("type"),
                "secretRef": {"name": secret.get("name"), "key": secret.get("key")}
                if secret
                else None,
                "headerName": auth.get("headerName"),
            }
        )
        if secret:
            out.secret(str(secret.get("name")))
        return
    kind = spec.get("auth")
    if kind in ("bearer", "service_account"):
        note(
            out,
            m,
            "spec.auth",
            f"auth: {kind} names no Secret; the credential lives in STOA's gateway",
            "set authentication: {type: bearer, secretRef: {name, key}}",
        )


def _rate_limit(out: Imported, m: Manifest, entry: Json) -> None:
    value = m.spec.get("rateLimit")
    if isinstance(value, dict):
        entry["rateLimit"] = value
        return
    if value is None:
        return
    match = _RATE.match(str(value))
    if match is None:
        note(
            out,
            m,
            "spec.rateLimit",
            f"{value!r} is not N/second, N/min or N/hour",
            "set rateLimit: {requestsPerMinute, burst}",
        )
        return
    per_minute = max(1, round(int(match.group(1)) * _PER_MINUTE[match.group(2)]))
    entry["rateLimit"] = {"requestsPerMinute": per_minute, "burst": min(per_minute, 1000)}
    note(
        out,
        m,
        "spec.rateLimit",
        "an expression has no burst",
        f"burst set to {entry['rateLimit']['burst']}; lower it if calls should be spread",
    )


def tool(m: Manifest, out: Imported) -> None:
    spec = m.spec
    metadata = m.metadata
    entry: Json = {
        "name": m.name,
        "namespace": m.namespace,
        "labels": metadata.get("labels"),
        "annotations": metadata.get("annotations"),
    }
    entry.update({key: spec[key] for key in _CARRIED if key in spec})
    endpoint = str(spec.get("endpoint", ""))
    placeholder = _PLACEHOLDER.search(endpoint)
    if placeholder:
        refuse(
            out,
            m,
            "spec.endpoint",
            f"{endpoint!r} holds the placeholder {placeholder.group(0)}, which no stack deploys",
            "replace it with the real URL in the manifest, then import again",
        )
    _authentication(out, m, entry)
    _rate_limit(out, m, entry)
    handled = {*_CARRIED, "authentication", "auth", "rateLimit"}
    leftovers(
        out,
        m,
        spec,
        handled,
        {
            "outputSchema": (
                "an HttpTool's answer is not checked against a schema",
                "leave it out",
            ),
            "annotations": (
                "MCP tool annotations are not sent for HTTP tools",
                "say it in the description if the LLM should know",
            ),
        },
    )
    drop_status(out, m)
    out.add("httpTools", compact(entry))


CONVERTERS: dict[tuple[str, str], Converter] = {(GROUP, "Tool"): tool}
