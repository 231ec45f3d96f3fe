"""Checks across a namespace's workloads: egressTo under restricted egress, name clashes,
admission, image pins and the secret references schema sync sends."""

from __future__ import annotations

from collections.abc import Mapping

from langop_infra.config._fields import SecretKeyRef
from langop_infra.config._pod import Resources, WorkloadSpec
from langop_infra.config.checks._admission import (
    deploy_problems,
    resource_problems,
    security_problems,
)
from langop_infra.config.checks._collisions import name_clashes
from langop_infra.config.checks._egress_check import egress_findings
from langop_infra.config.checks._image_pins import unpinned_images
from langop_infra.config.checks._secret_refs import secret_refs, sync_secret_refs
from langop_infra.config.checks._sync_path_check import sync_auth_problem, sync_path_findings
from langop_infra.config.cluster import ClusterSpec, Defaults
from langop_infra.core._text import did_you_mean
from langop_infra.core.problems import Problem, join_path


def egress_to_problems(workload: WorkloadSpec, defaults: Defaults, path: str) -> list[Problem]:
    """``egressTo`` without restricted egress would be silently ignored."""
    if workload.egress_to and workload.egress is None and defaults.egress == "open":
        return [
            Problem(
                join_path(path, "egressTo"),
                "egressTo only applies with egress: restricted; set egress (here or in "
                "defaults) or remove egressTo",
                "langop_egress_to_unused",
            )
        ]
    return []


def namespace_wide_problems(
    cluster: ClusterSpec, path: str, tool_index: list[int], agent_index: list[int]
) -> list[Problem]:
    """Names that collide with generated objects, secrets, security and resource bounds."""
    defaults = cluster.defaults
    restricted = cluster.create_namespace
    problems = security_problems(
        defaults.security, join_path(path, "defaults"), fields=None, restricted=restricted
    )
    # Once here, not once for each workload that inherits them.
    problems += resource_problems(
        Resources(), defaults.resources, join_path(path, "defaults"), join_path(path, "defaults")
    )
    workloads: list[tuple[str, WorkloadSpec]] = [
        (f"tools[{i}]", t) for i, t in zip(tool_index, cluster.tools, strict=True)
    ]
    workloads += [(f"agents[{i}]", a) for i, a in zip(agent_index, cluster.agents, strict=True)]
    for where, workload in workloads:
        full = join_path(path, where)
        problems += deploy_problems(
            workload,
            defaults,
            full,
            join_path(path, "defaults"),
            restricted=restricted,
            check_defaults=False,
        )
    problems += name_clashes(cluster, path, tool_index, agent_index)
    if defaults.strict_egress:
        problems += egress_findings(cluster, path, agent_index)
        problems += sync_path_findings(cluster, path, tool_index)
    if defaults.require_image_digests:
        problems += unpinned_images(cluster, path, tool_index, agent_index)
    for where, ref in secret_refs(cluster, tool_index, agent_index):
        keys = cluster.secrets.get(ref.name)
        if isinstance(keys, Mapping) and ref.key not in keys:
            problems.append(
                Problem(
                    join_path(path, f"{where}.key"),
                    f"secret {ref.name!r} under secrets has no key {ref.key!r} (it has: "
                    f"{', '.join(sorted(keys))}); fix the key or add it",
                )
            )
    for i, tool in zip(tool_index, cluster.tools, strict=True):
        auth_problem = sync_auth_problem(tool, defaults)
        if auth_problem:
            problems.append(Problem(join_path(path, f"tools[{i}].schemaSync.auth"), auth_problem))
        for where, ref in sync_secret_refs(tool):
            if ref.name not in cluster.secrets:
                problems.append(
                    Problem(join_path(path, f"tools[{i}].{where}"), sync_ref_problem(ref, cluster))
                )
    return problems


def sync_ref_problem(ref: SecretKeyRef, cluster: ClusterSpec) -> str:
    if ref.name in cluster.external_secrets:
        # Schema sync runs where `pulumi up` runs and never reads the cluster's Secrets.
        return (
            f"secret {ref.name!r} is under externalSecrets, which this program never reads, "
            "and schema sync can only send values this program holds: put its value under "
            f"secrets (pulumi config set --secret --path 'secrets.{ref.name}.{ref.key}' ...), "
            "or read the Secret at deploy time in a Python program and pass its value in "
            "LanguageCluster's secrets (docs/schema-sync.md)"
        )
    return (
        f"secret {ref.name!r} key {ref.key!r} is not declared under secrets; "
        f"{did_you_mean(ref.name, cluster.secrets, then='')}schema sync can only send "
        "values this program holds"
    )
