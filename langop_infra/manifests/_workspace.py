"""An agent's persistent workspace as plain data: its claim, the ConfigMap of its initial
files and the init container that copies them.

The init container copies a file only when the workspace has none of that name, so what
the agent wrote survives every restart and every change of the initial files.
"""

from __future__ import annotations

from langop_infra.config import _names as names
from langop_infra.config._pod import Resources
from langop_infra.config.agent import AgentSpec, Workspace
from langop_infra.manifests._k8s_types import (
    ContainerDict,
    PersistentVolumeClaimSpecDict,
    ResourceRequirementsDict,
    SecurityContextDict,
    VolumeDict,
)

FILES_VOLUME = "initial-files"
FILES_DIR = "/initial-files"
INIT_CONTAINER = "init-workspace"
INIT_RESOURCES = Resources.model_validate(
    {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"cpu": "100m", "memory": "64Mi"}}
)

# POSIX sh. A ConfigMap volume holds each key as a symlink next to hidden "..data" entries,
# which the globs skip; `cat` follows the link and writes a plain file the agent may edit.
INIT_SCRIPT = """set -eu
for src in "$INITIAL_FILES_DIR"/* "$INITIAL_FILES_DIR"/.[!.]*; do
  [ -f "$src" ] || continue
  dest="$WORKSPACE_DIR/${src##*/}"
  if [ -e "$dest" ] || [ -L "$dest" ]; then
    echo "keep $dest"
  else
    cat "$src" > "$dest.copying" && mv "$dest.copying" "$dest"
    echo "copied $dest"
  fi
done
"""


def mount_path(agent: AgentSpec) -> str:
    if agent.workspace is not None and agent.workspace.mount_path:
        return agent.workspace.mount_path
    return agent.workspace_path


def claim_spec(workspace: Workspace) -> PersistentVolumeClaimSpecDict:
    """The PersistentVolumeClaim ``<agent>-workspace``."""
    spec: PersistentVolumeClaimSpecDict = {
        "accessModes": list(workspace.access_modes),
        "resources": {"requests": {"storage": workspace.size}},
    }
    if workspace.storage_class_name:
        spec["storageClassName"] = workspace.storage_class_name
    return spec


def files_config_map(agent: AgentSpec) -> str | None:
    """The ConfigMap the initial files come from: the user's, ours, or None without any."""
    workspace = agent.workspace
    if workspace is None or not workspace.has_initial_files:
        return None
    return workspace.initial_files_config_map or names.initial_files_name(agent.name)


def volumes(agent: AgentSpec) -> list[VolumeDict]:
    """The workspace volume (the claim) and, with initial files, their ConfigMap's volume."""
    out: list[VolumeDict] = [
        {
            "name": "workspace",
            "persistentVolumeClaim": {"claimName": names.workspace_claim_name(agent.name)},
        }
    ]
    files = files_config_map(agent)
    if files is not None:
        out.append({"name": FILES_VOLUME, "configMap": {"name": files}})
    return out


def init_container(
    agent: AgentSpec, security_context: SecurityContextDict, resources: ResourceRequirementsDict
) -> ContainerDict | None:
    """The init container that copies the initial files, or None without any."""
    if agent.workspace is None or files_config_map(agent) is None:
        return None
    target = mount_path(agent)
    return {
        "name": INIT_CONTAINER,
        "image": agent.workspace.init_image,
        "command": ["sh", "-c", INIT_SCRIPT],
        "env": [
            {"name": "INITIAL_FILES_DIR", "value": FILES_DIR},
            {"name": "WORKSPACE_DIR", "value": target},
        ],
        "resources": resources,
        "securityContext": security_context,
        "volumeMounts": [
            {"name": FILES_VOLUME, "mountPath": FILES_DIR, "readOnly": True},
            {"name": "workspace", "mountPath": target},
        ],
    }
