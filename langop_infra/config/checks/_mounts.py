"""Cross-field checks of a workload's escape hatches (``volumes``, ``volumeMounts``,
``initContainers``, ``serviceAccount``): references, names and paths, each problem at its
field path, before anything is registered."""

from __future__ import annotations

import re
from collections.abc import Iterable

from langop_infra.config import _names as names
from langop_infra.config._volumes import PodExtensionsSpec, VolumeMountSpec
from langop_infra.config.agent import AgentSpec
from langop_infra.config.tool import ToolSpec
from langop_infra.core.problems import Problem, join_path

# Volumes and init containers every pod of the package may already have (manifests/_pods.py,
# manifests/_workspace.py): a user's of the same name would replace or clash with them.
GENERATED_VOLUMES = ("tmp", "config", "workspace", "initial-files", "data")
SIDECAR_TMP = re.compile(r"^sidecar-[0-9]+-tmp$")
INIT_CONTAINER = "init-workspace"


def generated_mounts(workload: PodExtensionsSpec) -> dict[str, str]:
    """Mount paths the package gives the main container, by what they hold."""
    if isinstance(workload, ToolSpec):
        return {workload.persistence.mount_path: "persistence"} if workload.persistence else {}
    if isinstance(workload, AgentSpec):
        path = workload.workspace_path
        if workload.workspace is not None and workload.workspace.mount_path:
            path = workload.workspace.mount_path
        return {path: "the agent's workspace"}
    return {}


def mount_problems(workload: PodExtensionsSpec, path: str = "") -> list[Problem]:
    """Every problem of the workload's volumes, mounts, init containers and identity."""
    problems: list[Problem] = []
    declared: dict[str, int] = {}
    for i, volume in enumerate(workload.volumes):
        where = join_path(path, f"volumes[{i}].name")
        if volume.name in declared:
            problems.append(Problem(where, f"volume {volume.name!r} is given twice"))
        elif volume.name in GENERATED_VOLUMES or SIDECAR_TMP.fullmatch(volume.name):
            problems.append(
                Problem(
                    where,
                    f"volume name {volume.name!r} is one langop-infra generates "
                    f"({', '.join(GENERATED_VOLUMES)}, sidecar-<n>-tmp); pick another name",
                )
            )
        declared.setdefault(volume.name, i)
    taken = {names.TMP_DIR: "/tmp", **generated_mounts(workload)}
    if isinstance(workload, AgentSpec):
        taken[names.CONFIG_DIR] = "config.yaml"
    problems += _mounts(workload.volume_mounts, declared, taken, join_path(path, "volumeMounts"))
    problems += _init_containers(workload, declared, path)
    if workload.service_account is not None and workload.service_account_name is not None:
        problems.append(
            Problem(
                join_path(path, "serviceAccount"),
                "give serviceAccount or serviceAccountName, not both (serviceAccount: {name} "
                "is the same as serviceAccountName)",
            )
        )
    return problems


def _mounts(
    mounts: Iterable[VolumeMountSpec], declared: dict[str, int], taken: dict[str, str], path: str
) -> list[Problem]:
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for j, mount in enumerate(mounts):
        if mount.name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            problems.append(
                Problem(
                    join_path(path, f"[{j}].name"),
                    f"no volume named {mount.name!r} under volumes (known: {known}); "
                    "declare it under volumes or fix the name",
                )
            )
        where = join_path(path, f"[{j}].mountPath")
        if mount.mount_path in taken:
            problems.append(
                Problem(
                    where,
                    f"{mount.mount_path} is where langop-infra mounts {taken[mount.mount_path]}; "
                    "pick another path",
                )
            )
        elif mount.mount_path in seen:
            problems.append(
                Problem(
                    where, f"{mount.mount_path} is mounted twice (also [{seen[mount.mount_path]}])"
                )
            )
        seen.setdefault(mount.mount_path, j)
    return problems


def _init_containers(
    workload: PodExtensionsSpec, declared: dict[str, int], path: str
) -> list[Problem]:
    problems: list[Problem] = []
    reserved = {
        workload.name: "the workload's own container",
        INIT_CONTAINER: "the workspace's init container",
    }
    if isinstance(workload, AgentSpec):
        # A sidecar tool joins the agent's pod as a container named after the tool.
        reserved.update({ref.name: "a tool the agent references" for ref in workload.tools})
    seen: set[str] = set()
    for k, init in enumerate(workload.init_containers):
        where = join_path(path, f"initContainers[{k}]")
        if init.name in reserved:
            problems.append(
                Problem(
                    join_path(where, "name"),
                    f"{init.name!r} is the name of {reserved[init.name]} in this pod; pick another",
                )
            )
        elif init.name in seen:
            problems.append(Problem(join_path(where, "name"), f"{init.name!r} is given twice"))
        seen.add(init.name)
        taken = {names.TMP_DIR: "/tmp"}
        problems += _mounts(init.volume_mounts, declared, taken, join_path(where, "volumeMounts"))
    return problems
