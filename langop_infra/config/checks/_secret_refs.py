"""Where a document refers to Secrets, and which of those references must be declared:
every ``secretKeyRef`` names a Secret under ``secrets`` or ``externalSecrets``, and what
schema sync sends must be a value this program holds."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import cast

from langop_infra.config._fields import SecretKeyRef, SecretSource
from langop_infra.config.agent import agent_headers
from langop_infra.config.cluster import ClusterSpec
from langop_infra.config.tool import ToolSpec
from langop_infra.core._text import did_you_mean
from langop_infra.core.problems import Problem, join_path


def secret_names(head: Mapping[str, object]) -> set[str] | None:
    """The Secret names a document declares, even when another of its fields is invalid;
    None when they cannot be read, so that no reference is called undeclared for that."""
    secrets = head.get("secrets", {})
    external = head.get("externalSecrets", head.get("external_secrets", []))
    if not isinstance(secrets, Mapping) or not isinstance(external, (list, tuple)):
        return None
    declared: list[object] = [*secrets, *external]
    return {str(name) for name in declared}


def sync_secret_refs(tool: ToolSpec) -> Iterator[tuple[str, SecretKeyRef]]:
    """The Secrets schema sync reads (header values, the OAuth client secret): ``pulumi up``
    cannot read the cluster's Secrets, so the program must hold these values itself."""
    for j, header in enumerate(tool.schema_sync.headers):
        if header.value_from is not None:
            yield f"schemaSync.headers[{j}].valueFrom", header.value_from.secret_key_ref
    if tool.schema_sync.auth is not None:
        yield "schemaSync.auth.clientSecret", tool.schema_sync.auth.client_secret.secret_key_ref


def sync_only_secrets(cluster: ClusterSpec) -> set[str]:
    """The ``secrets`` entries only schema sync reads. Sync runs where ``pulumi up`` runs and
    takes their values from the program, so no Kubernetes Secret is made for them: a cluster
    Secret nobody mounts would only widen who can read a deploy credential.

    Conservative: a name that appears anywhere else in the document (a ``secretKeyRef``, an
    ``envFrom``, an image pull secret, a model's key…) keeps its Secret."""
    synced = {ref.name for tool in cluster.tools for _, ref in sync_secret_refs(tool)}
    synced &= set(cluster.secrets)
    if not synced:
        return set()
    # A partially read item holds a placeholder where a field failed (a port that is no int):
    # no string, so nothing to find here, and no reason for pydantic to warn about it.
    excluded = {"secrets": True, "tools": {"__all__": {"schema_sync"}}}
    rest = cluster.model_dump(exclude=excluded, warnings=False)
    return synced - set(_strings(rest))


def _strings(value: object) -> Iterator[str]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, Mapping):
            stack.extend(cast("Mapping[object, object]", item).values())
        elif isinstance(item, (list, tuple, set)):
            stack.extend(cast("Iterable[object]", item))


def undeclared_secret_problems(
    cluster: ClusterSpec, path: str, tool_index: list[int], agent_index: list[int]
) -> list[Problem]:
    """A secretKeyRef to a Secret that neither ``secrets`` creates nor ``externalSecrets``
    names: a typo would otherwise surface only as a pod stuck in CreateContainerConfigError."""
    problems = [
        Problem(
            join_path(path, f"externalSecrets[{i}]"),
            f"{name!r} is also under secrets, which creates it; remove it from one of them",
        )
        for i, name in enumerate(cluster.external_secrets)
        if name in cluster.secrets
    ]
    known = {*cluster.secrets, *cluster.external_secrets}
    for where, ref in secret_refs(cluster, tool_index, agent_index):
        # Schema sync needs the value itself: a stricter check covers its headers.
        if ref.name in known or ".schemaSync." in where:
            continue
        problems.append(
            Problem(
                join_path(path, f"{where}.name"),
                f"no Secret {ref.name!r} under secrets or externalSecrets; "
                f"{did_you_mean(ref.name, known, 'Otherwise ')}declare it under secrets, or "
                "list it in externalSecrets if something outside this program creates it",
            )
        )
    return problems


def secret_refs(
    cluster: ClusterSpec, tool_index: list[int], agent_index: list[int]
) -> Iterator[tuple[str, SecretKeyRef]]:
    """Every reference to a Secret's key in the cluster, with its path."""
    for i, tool in zip(tool_index, cluster.tools, strict=True):
        for name, value in tool.secret_env.items():
            if isinstance(value, SecretSource):
                yield f"tools[{i}].secretEnv.{name}.secretKeyRef", value.secret_key_ref
        for j, header in enumerate(tool.schema_sync.headers):
            if header.value_from is not None:
                yield (
                    f"tools[{i}].schemaSync.headers[{j}].valueFrom.secretKeyRef",
                    header.value_from.secret_key_ref,
                )
        if tool.schema_sync.auth is not None:
            yield (
                f"tools[{i}].schemaSync.auth.clientSecret.secretKeyRef",
                tool.schema_sync.auth.client_secret.secret_key_ref,
            )
    for i, agent in zip(agent_index, cluster.agents, strict=True):
        for name, value in agent.secret_env.items():
            if isinstance(value, SecretSource):
                yield f"agents[{i}].secretEnv.{name}.secretKeyRef", value.secret_key_ref
        for where, _, header in agent_headers(agent):
            if header.value_from is not None:
                yield (
                    f"agents[{i}].{where}.valueFrom.secretKeyRef",
                    header.value_from.secret_key_ref,
                )
        for j, caller in enumerate(agent.a2a.callers if agent.a2a is not None else []):
            if caller.token_from is not None:
                yield (
                    f"agents[{i}].a2a.callers[{j}].tokenFrom.secretKeyRef",
                    caller.token_from.secret_key_ref,
                )
        for j, webhook in enumerate(agent.webhook_tools):
            if webhook.authentication.secret_ref is not None:
                yield (
                    f"agents[{i}].webhookTools[{j}].authentication.secretRef",
                    webhook.authentication.secret_ref,
                )
