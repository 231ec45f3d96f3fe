"""Does each tool's ingress admit its own schema sync? Checked at render and validate.

Through the API server's proxy (``access`` ``auto`` for the in-cluster endpoints every
service and sidecar tool has, or ``apiserver-proxy``), the sync's request reaches the tool's
pod from the control plane. A service tool's ingress policy admits its agents, ``allowFrom``
and ``defaults.schemaSyncFrom``; a sidecar is reached in its agent's pod, whose ingress policy
admits ``schemaSyncFrom`` on synced sidecars' ports. With none of those that could hold the
control plane's address, the sync is refused by our own policy: a warning, or an error under
``defaults.strictEgress: true``.
"""

from __future__ import annotations

from collections.abc import Sequence

from langop_infra.config.cluster import ClusterSpec, Defaults
from langop_infra.config.tool import ToolSpec
from langop_infra.core.problems import Problem, join_path


def sync_path_verdict(tool: ToolSpec, defaults: Defaults) -> str | None:
    """None when the tool's sync does not go through the proxy or a policy may admit it;
    otherwise what is wrong, naming the setting that fixes it."""
    sync = tool.schema_sync
    if not sync.enabled:
        return None
    access = sync.access or defaults.schema_sync_access
    # A syncUrl makes auto call it directly; apiserver-proxy goes through the proxy anyway.
    if access == "direct" or (access == "auto" and sync.sync_url is not None):
        return None
    if defaults.schema_sync_from:
        return None
    sidecar = tool.deployment_mode == "sidecar"
    # An ipBlock of allowFrom may be the control plane's range: it cannot be told apart.
    if not sidecar and any(peer.ip_block is not None for peer in tool.allow_from):
        return None
    policy = "its agents' ingress policies admit" if sidecar else "its ingress policy admits"
    return (
        f"schema sync of tool {tool.name!r} goes through the API server proxy (access "
        f"{access}), whose requests come from the control plane, but {policy} no sync source; "
        "set defaults.schemaSyncFrom to the control plane's address range (docs/networking.md"
        "), or schemaSync.access: direct with a syncUrl"
    )


def through_proxy(tool: ToolSpec, defaults: Defaults) -> str | None:
    """The access mode when the tool's schema sync goes through the API server's proxy."""
    sync = tool.schema_sync
    access = sync.access or defaults.schema_sync_access
    if access == "direct" or (access == "auto" and sync.sync_url is not None):
        return None
    return access


def sync_auth_problem(tool: ToolSpec, defaults: Defaults) -> str | None:
    """Why ``schemaSync.auth`` cannot work for ``tool``, or None. Through the API server's
    proxy the request's ``Authorization`` header is the kubeconfig's credential, which the
    API server takes for itself: the OAuth token can never reach the tool, and the sync
    would fail with an error that blames the tool."""
    sync = tool.schema_sync
    access = through_proxy(tool, defaults) if sync.enabled and sync.auth else None
    if access is None:
        return None
    return (
        f"schemaSync.auth needs the tool's own Authorization header, but tool {tool.name!r} "
        f"syncs through the API server proxy (access {access}), whose Authorization header "
        "carries the kubeconfig's credential for the API server; set schemaSync.access: "
        "direct (with a syncUrl if the runner of pulumi up cannot reach the in-cluster "
        "endpoint), or drop schemaSync.auth"
    )


def sync_path_findings(
    cluster: ClusterSpec, path: str = "", tool_index: Sequence[int] | None = None
) -> list[Problem]:
    """One problem per tool of ``cluster`` whose schema sync its own policies refuse."""
    index = tool_index if tool_index is not None else range(len(cluster.tools))
    problems: list[Problem] = []
    for i, tool in zip(index, cluster.tools, strict=True):
        verdict = sync_path_verdict(tool, cluster.defaults)
        if verdict is not None:
            problems.append(Problem(join_path(path, f"tools[{i}].schemaSync"), verdict))
    return problems
