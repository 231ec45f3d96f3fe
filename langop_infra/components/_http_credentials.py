"""An HttpTool's credential and Outputs as a Python program gives them.

The credential: a value (``authentication.value``, a secret Output such as
``pulumi.Output.secret(...)`` or ``config.require_secret(...)``), kept in the tool's own Secret
``<tool>.http-tool``; or the user's own ``k8s.core.v1.Secret`` object as ``secretRef.name``.
Either is a Secret the agents' pods read, so its data is in their rollout digest
(components/_rollout.py). Other fields (``endpoint``, ``description``, ...) may be Outputs:
agents are handed the tool as the webhook tool entry it is, Outputs in place
(:func:`webhook_entry`), and wait for them field by field as for their own webhook tools.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import cast

import pulumi
import pulumi_kubernetes as k8s

from langop_infra.components import _inputs as inputs
from langop_infra.components._rollout import DigestedSecret
from langop_infra.config._http_tool import HttpToolSpec, as_webhook_tool
from langop_infra.config._names import http_tool_config_map_name
from langop_infra.config.agent import HttpToolFields
from langop_infra.core.problems import Problem, SpecError

CREDENTIAL_KEY = "credential"
# The webhook tool's name for an HttpTool field, where the two differ.
_WEBHOOK_FIELD = {"endpoint": "url"}


@dataclasses.dataclass(frozen=True)
class Credential:
    """What the tool's agents read its credential from, when the program gave it."""

    value: object = None  # to keep in the tool's own Secret
    secret: k8s.core.v1.Secret | None = None  # the user's own


def credential_secret_name(tool: str) -> str:
    """The tool's own Secret: named as its ConfigMap (another kind, so no clash)."""
    return http_tool_config_map_name(tool)


def taken(data: dict[str, object], subject: str) -> tuple[dict[str, object], Credential]:
    """``data`` with its credential replaced by a ``secretRef`` the spec can hold: to the
    tool's own Secret for a ``value``, to the user's Secret (its name, an Output) for a
    Secret object; and that credential."""
    auth = data.get("authentication")
    if not isinstance(auth, Mapping):
        return data, Credential()
    auth = dict(cast("Mapping[str, object]", auth))
    key = "secretRef" if "secretRef" in auth else "secret_ref"
    ref = auth.get(key)
    if "value" in auth:
        if ref is not None:
            problem = Problem(
                "authentication",
                "give the credential as value or as secretRef, not both; remove one",
            )
            raise SpecError([problem], subject=subject)
        value = auth.pop("value")
        auth[key] = {"name": credential_secret_name(str(data.get("name"))), "key": CREDENTIAL_KEY}
        return {**data, "authentication": auth}, Credential(value=value)
    if isinstance(ref, Mapping):
        fields = cast("Mapping[str, object]", ref)
        secret = fields.get("name")
        if isinstance(secret, k8s.core.v1.Secret):
            # Its name as it resolves (lifted: the whole metadata waits for the uid too).
            name: object = secret.metadata.name
            auth[key] = {**fields, "name": name}
            return {**data, "authentication": auth}, Credential(secret=secret)
    return data, Credential()


def webhook_entry(spec: HttpToolSpec, data: Mapping[str, object]) -> dict[str, object] | None:
    """The tool as an agent's ``webhook_tools`` entry: the fields agents read as ``data``
    (the tool's arguments) gives them, Outputs in place, the rest from ``spec``; None when
    no field agents read holds an Output."""
    entry = as_webhook_tool(spec).model_dump()
    found = False
    for key, value in data.items():
        field = _field_name(key)
        if field is None:
            continue
        found = found or any(True for _ in inputs.output_leaves(value))
        entry.pop(_WEBHOOK_FIELD.get(field, field), None)
        entry[_WEBHOOK_FIELD.get(key, key)] = value
    return entry if found else None


def _field_name(key: str) -> str | None:
    """The HttpToolFields field ``key`` names (either spelling), ``endpoint`` included."""
    if key == "endpoint":
        return key
    for name, field in HttpToolFields.model_fields.items():
        if key in (name, field.alias):
            return name
    return None


def plain_entry(spec: HttpToolSpec) -> dict[str, object]:
    """A tool with no Output as a ``webhook_tools`` entry."""
    return as_webhook_tool(spec).model_dump()


def tool_secret(
    resource_name: str,
    spec: HttpToolSpec,
    credential: Credential,
    meta: k8s.meta.v1.ObjectMetaArgsDict,
    opts: pulumi.ResourceOptions,
) -> list[k8s.core.v1.Secret]:
    """The Secrets agents' pods read for this tool: its own (registered here, holding the
    value as a Pulumi secret) or the user's; none without either."""
    if credential.secret is not None:
        return [credential.secret]
    if credential.value is None:
        return []
    value = pulumi.Output.secret(credential.value)
    own = DigestedSecret(
        f"{resource_name}-credential",
        name=credential_secret_name(spec.name),
        metadata=meta,
        data={CREDENTIAL_KEY: value},
        opts=opts,
    )
    return [own]
