"""AgentCardSync: a Pulumi dynamic resource recording an in-cluster A2A peer's agent card
(its skills) in state, as ToolSchemaSync records a tool's schema.

The card is fetched with ``GET /.well-known/agent-card.json`` on the peer's A2A port, through
the same access modes (``auto``, ``direct``, ``apiserver-proxy``), caps and rules as schema
sync: through the API server's proxy every request stays under the service's proxy prefix (no
redirect is followed there), the body is capped, credentials (the kubeconfig's) are secret
outputs and never reach ``last_error``. ``diff`` fetches the live card: a changed skill list
shows as a change in ``pulumi preview``, and ``skill_changes`` says which skills came and
went. A failed fetch is not fatal unless ``required``: phase ``Error`` and the last good
skills kept. The provider is stateless and pickled by reference.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime
import hashlib
import json
from collections.abc import Mapping
from typing import Any, cast

import pulumi
import pulumi.dynamic as dyn
from pulumi.runtime import rpc

import langop_infra._json as _json
from langop_infra._errors import LangopError
from langop_infra.core._redact import redact
from langop_infra.sync._crud import SyncProvider, plain_props
from langop_infra.sync._kube_proxy import (
    ProxyError,
    confinement_prefix,
    kubeconfig_secrets,
    proxied_refusal,
    proxy_url,
    service_prefix,
)
from langop_infra.sync.provider import proxy_access

# ``card_path`` is always set: it tells a card sync from a schema sync, which share the
# dynamic resource type (``langop-infra schemas``, the mocks and the policy pack look for it).
CARD_PATH_INPUT = "card_path"
INPUTS = (
    CARD_PATH_INPUT,
    "endpoint",
    "access",
    "namespace",
    "service",
    "port",
    "timeout",
    "required",
    "kube_context",
    "kubeconfig",
    "max_card_bytes",
)
SECRET_INPUTS = ("kubeconfig",)
OUTPUTS = (
    "skills",
    "skill_ids",
    "card_hash",
    "card_name",
    "phase",
    "last_error",
    "last_synced_at",
    "skill_changes",
)
CARD_PATH = "/.well-known/agent-card.json"
MAX_CARD_BYTES = 256 * 1024


class CardError(LangopError, RuntimeError):
    """The peer's answer is not an agent card this sync can record."""


def card_target(inputs: Mapping[str, object]) -> tuple[str, dict[str, str], dict[str, Any]]:
    """The card's URL, headers and client options for the access mode (see
    :func:`langop_infra.sync.provider.sync_target`: the same rules)."""
    proxy = proxy_access(inputs)
    if proxy is None:
        return str(inputs["endpoint"]), {}, {}
    host, auth_headers, tls = proxy
    prefix = service_prefix(inputs.get("namespace"), inputs.get("service"), inputs.get("port"))
    url = proxy_url(host, prefix, CARD_PATH)
    return url, dict(auth_headers), {**tls, "confine_to": confinement_prefix(host, prefix)}


async def _get_card(url: str, options: Any, limit: int) -> bytes:
    from langop_infra.mcp._http import HTTPConnection, status_failure

    http = HTTPConnection(url, options)
    try:
        response = await http.send(
            "GET", url, headers={"Accept": "application/json"}, what="agent card"
        )
        try:
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > limit:
                    raise CardError(f"the agent card is larger than {limit} bytes")
            if response.status_code != 200:
                raise status_failure(response, bytes(body), "agent card")
            return bytes(body)
        finally:
            await response.aclose()
    finally:
        await http.aclose()


def fetch_card(inputs: Mapping[str, Any], timeout: float | None = None) -> dict[str, Any]:
    """The peer's card as a JSON object, fetched as the inputs say."""
    from langop_infra.mcp import ClientOptions

    url, headers, tls = card_target(inputs)
    seconds = float(timeout or inputs.get("timeout") or 10.0)
    options = ClientOptions(
        headers=headers, timeout=seconds, deadline=seconds, connect_retries=1, **tls
    )
    limit = int(inputs.get("max_card_bytes") or MAX_CARD_BYTES)

    def run() -> bytes:
        return asyncio.run(_get_card(url, options, limit))

    try:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            body = run()
        else:
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                body = pool.submit(run).result()
    except Exception as exc:
        raise proxied_refusal(exc, tls.get("confine_to")) from None
    try:
        card = _json.read(body)
    except ValueError:
        raise CardError("the agent card is not JSON") from None
    if not isinstance(card, dict):
        raise CardError("the agent card is not a JSON object")
    return cast("dict[str, Any]", card)


def card_skills(card: Mapping[str, object]) -> list[dict[str, Any]]:
    """``{id, name, description, tags}`` of each skill, in the card's order."""
    skills = card.get("skills")
    if not isinstance(skills, list):
        raise CardError("the agent card has no skills list")
    out: list[dict[str, object]] = []
    for skill in cast("list[Any]", skills):
        if not isinstance(skill, Mapping):
            raise CardError("a skill of the agent card is not an object")
        entry = cast("Mapping[str, Any]", skill)
        if not isinstance(entry.get("id"), str):
            raise CardError("a skill of the agent card has no string id")
        tags = entry.get("tags")
        out.append(
            {
                "id": entry["id"],
                "name": str(entry.get("name") or ""),
                "description": str(entry.get("description") or ""),
                "tags": [str(t) for t in cast("list[Any]", tags)] if isinstance(tags, list) else [],
            }
        )
    return out


def skills_hash(skills: list[dict[str, object]]) -> str:
    text = json.dumps(skills, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def skill_changes(old: list[str], new: list[str]) -> str:
    """``"added: a, b; removed: c"``, or "" when the ids are the same."""
    added = [s for s in new if s not in old]
    removed = [s for s in old if s not in new]
    parts = [f"added: {', '.join(added)}"] if added else []
    parts += [f"removed: {', '.join(removed)}"] if removed else []
    return "; ".join(parts)


def credentials(inputs: Mapping[str, Any]) -> list[str]:
    return kubeconfig_secrets(inputs.get("kubeconfig"))


def sync_card(
    inputs: Mapping[str, Any], previous: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Fetch once: the resource's outputs. Raises only for a failed ``required`` fetch."""
    inputs = plain_props(dict(inputs))
    before: Mapping[str, Any] = plain_props(dict(previous or {}))
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    held: list[Any] = before.get("skill_ids") or []
    old_ids = [str(s) for s in held]
    try:
        card = fetch_card(inputs)
        skills = card_skills(card)
    except Exception as exc:
        known = (ProxyError, CardError)
        from langop_infra.mcp import MCPError

        text = str(exc) if isinstance(exc, (*known, MCPError)) else f"{type(exc).__name__}: {exc}"
        message = redact(text, credentials(inputs))[:300]
        if inputs.get("required"):
            raise RuntimeError(f"card sync of {inputs.get('service')} failed: {message}") from None
        kept = {k: before.get(k) for k in ("skills", "skill_ids", "card_hash", "card_name")}
        result = {**kept, "phase": "Error", "last_error": message, "skill_changes": ""}
    else:
        ids = [s["id"] for s in skills]
        result = {
            "skills": skills,
            "skill_ids": ids,
            "card_hash": skills_hash(skills),
            "card_name": str(card.get("name") or ""),
            "phase": "Synced",
            "last_error": "",
            "skill_changes": skill_changes(old_ids, ids) if previous else "",
        }
    outs = {k: inputs.get(k) for k in INPUTS}
    if outs.get("kubeconfig"):
        outs["kubeconfig"] = rpc.wrap_rpc_secret(outs["kubeconfig"])
    # Nothing new (the same card, or the same failure): the time stays, so `pulumi refresh`
    # reports no change.
    unchanged = bool(before) and all(before.get(k) == result.get(k) for k in result)
    return {**outs, **result, "last_synced_at": before.get("last_synced_at") if unchanged else now}


class AgentCardSyncProvider(SyncProvider):
    """The provider (the shape: :class:`~langop_infra.sync._crud.SyncProvider`): stateless,
    so it pickles to its class reference."""

    inputs = INPUTS
    hash_output = "card_hash"

    def sync(
        self, inputs: Mapping[str, Any], previous: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        return sync_card(inputs, previous)

    def live_hash(self, inputs: Mapping[str, Any], timeout: float) -> str:
        return skills_hash(card_skills(fetch_card(inputs, timeout)))

    def same(self, old: Any, new: Any) -> bool:
        return (old or None) == (new or None)

    def problems(self, known: Mapping[str, Any], news: Mapping[str, Any]) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        if known.get("access") not in (None, "auto", "direct", "apiserver-proxy"):
            problems.append(("access", "must be auto, direct or apiserver-proxy"))
        endpoint = known.get("endpoint")
        if endpoint is not None and not str(endpoint).startswith(("http://", "https://")):
            problems.append(("endpoint", "must be an http(s) URL"))
        return problems


class AgentCardSync(dyn.Resource):
    """The synced card of one in-cluster A2A peer; outputs land in the stack state."""

    skills: pulumi.Output[list[dict[str, Any]]]
    skill_ids: pulumi.Output[list[str]]
    card_hash: pulumi.Output[str]
    card_name: pulumi.Output[str]
    phase: pulumi.Output[str]
    last_error: pulumi.Output[str]
    last_synced_at: pulumi.Output[str]
    skill_changes: pulumi.Output[str]

    def __init__(
        self, name: str, inputs: Mapping[str, Any], opts: pulumi.ResourceOptions | None = None
    ) -> None:
        props: dict[str, Any] = {key: inputs.get(key) for key in INPUTS}
        props[CARD_PATH_INPUT] = CARD_PATH
        if props.get("kubeconfig"):
            props["kubeconfig"] = pulumi.Output.secret(props["kubeconfig"])
        props.update(dict.fromkeys(OUTPUTS))
        super().__init__(AgentCardSyncProvider(), name, props, opts)
        subject = f"A2A peer {inputs.get('service')!r} in namespace {inputs.get('namespace')!r}"
        pulumi.Output.all(self.phase, self.last_error, self.skill_changes).apply(
            lambda r: _report(subject, *r)
        )


def _report(subject: str, phase: object, last_error: object, changes: object) -> None:
    if phase == "Error":
        pulumi.log.warn(f"card sync of {subject} failed (phase Error): {last_error}")
    elif changes:
        pulumi.log.info(f"card sync of {subject}: skills {changes}")
