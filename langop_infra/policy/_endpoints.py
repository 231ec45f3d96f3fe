"""``langop-endpoints``: URLs an agent or the gateway is given that point at a cloud metadata
service, a link-local address or the Kubernetes API server, or carry a credential in their
query string (:mod:`langop_infra.config.checks._endpoint_advice` decides, as validate does).

Advisory by default; a pack configuration of ``{"langop-endpoints": "mandatory"}`` makes it
block. It reads every env literal of every pod template and every ConfigMap value (and the
strings inside JSON and YAML text), so a program of plain ``pulumi_kubernetes`` objects is
judged too. A finding names the place, never a query value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

import langop_infra._json as _json
from langop_infra.config.checks._endpoint_advice import endpoint_risk, query_credentials
from langop_infra.core import _yaml_io as yaml_io
from langop_infra.policy._pod_security import containers
from langop_infra.policy._rules import Finding, Resource, workloads

_URL = re.compile(r"https?://[^\s\"',;<>`]+")


def risky_endpoints(resources: Sequence[Resource]) -> list[Finding]:
    """A finding per risky URL in an env literal or a ConfigMap."""
    findings: list[Finding] = []
    for w in workloads(resources):
        for c in containers(w.pod):
            variables: list[Mapping[str, object]] = c.get("env") or []
            for env in variables:
                where = f"{w.namespace}/{w.name}: container {c.get('name')} env {env.get('name')}"
                findings += [
                    Finding(w.resource.urn, f"{where}: {problem}")
                    for problem in problems(str(env.get("value") or ""))
                ]
    for resource in sorted(resources, key=lambda r: r.urn):
        if resource.kind != "ConfigMap":
            continue
        meta: Mapping[str, object] = resource.props.get("metadata") or {}
        where = f"ConfigMap {meta.get('namespace', '')}/{meta.get('name')}"
        data: Mapping[str, object] = resource.props.get("data") or {}
        for key, value in data.items():
            findings += [
                Finding(resource.urn, f"{where}: {key}: {problem}")
                for problem in problems(str(value or ""))
            ]
    return findings


def problems(text: str) -> Iterator[str]:
    """What is wrong with each URL in ``text`` (also inside JSON or YAML text)."""
    seen: set[str] = set()
    for url in _urls(text):
        if url in seen:
            continue
        seen.add(url)
        host = _shown(url)
        risk = endpoint_risk(url)
        if risk:
            yield f"{host}: {risk}"
        names = query_credentials(url)
        if names:
            yield (
                f"{host}: the query parameter(s) {', '.join(names)} look like a credential; "
                "send it from a Secret (a header or the field's secretKeyRef)"
            )


def _urls(text: str) -> Iterator[str]:
    yield from _URL.findall(text)
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")) and ":\n" not in text:
        return
    try:
        document: object = _json.read(stripped) if stripped[:1] in "{[" else yaml_io.load(text)
    except (ValueError, yaml_io.YAMLError):
        return
    stack: list[object] = [document]
    while stack:  # strings in structures whose text escapes them (JSON's \/)
        node = stack.pop()
        if isinstance(node, str):
            yield from _URL.findall(node)
        elif isinstance(node, Mapping):
            stack += list(cast("Mapping[str, Any]", node).values())
        elif isinstance(node, list):
            stack += cast("list[Any]", node)


def _shown(url: str) -> str:
    """``url`` without its query and userinfo: what a finding may quote."""
    base = url.split("?", 1)[0].split("#", 1)[0]
    scheme, _, rest = base.partition("://")
    return f"{scheme}://{rest.rsplit('@', 1)[-1]}"
