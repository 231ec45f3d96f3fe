"""An agent's persistent workspace as plain data: its claim, seed ConfigMap and seeding
init container.

The seeding container copies a file only when the workspace has none of that name, so what
the agent wrote survives every restart and every change of the seed files.
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

SEED_VOLUME = "workspace-seed"
SEED_DIR = "/seed"
SEED_CONTAINER = "seed-workspace"
SEED_RESOURCES = Resources.model_validate(
    {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"cpu": "100m", "memory": "64Mi"}}
)

# POSIX sh. A ConfigMap volume holds each key as a symlink next to hidden "..data" entries,
# which the globs skip; `cat` follows the link and writes a plain file the agent may edit.
SEED_SCRIPT = """set -eu
for src in "$SEED_DIR"/* "$SEED_DIR"/.[!.]*; do
  [ -f "$src" ] || continue
  dest="$WORKSPACE_DIR/${src##*/}"
  if [ -e "$dest" ] || [ -L "$dest" ]; then
    echo "keep $dest"
  else
    cat "$src" > "$dest.seeding" && mv "$dest.seeding" "$dest"
    echo "seeded $dest"
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


def seed_config_map(agent: AgentSpec) -> str | None:
    """The ConfigMap the seed files come from: the user's, ours, or None without seeding."""
    workspace = agent.workspace
    if workspace is None or not workspace.seeded:
        return None
    return workspace.seed_config_map or names.workspace_seed_name(agent.name)


def volumes(agent: AgentSpec) -> list[VolumeDict]:
    """The workspace volume (the claim) and, when seeded, the seed ConfigMap's volume."""
    out: list[VolumeDict] = [
        {
            "name": "workspace",
            "persistentVolumeClaim": {"claimName": names.workspace_claim_name(agent.name)},
        }
    ]
    seed = seed_config_map(agent)
    if seed is not None:
        out.append({"name": SEED_VOLUME, "configMap": {"name": seed}})
    return out


def seed_container(
    agent: AgentSpec, security_context: SecurityContextDict, resources: ResourceRequirementsDict
) -> ContainerDict | None:
    """The init container that seeds the workspace, or None without seed files."""
    if agent.workspace is None or seed_config_map(agent) is None:
        return None
    target = mount_path(agent)
    return {
        "name": SEED_CONTAINER,
        "image": agent.workspace.seed_image,
        "command": ["sh", "-c", SEED_SCRIPT],
        "env": [
            {"name": "SEED_DIR", "value": SEED_DIR},
            {"name": "WORKSPACE_DIR", "value": target},
        ],
        "resources": resources,
        "securityContext": security_context,
        "volumeMounts": [
            {"name": SEED_VOLUME, "mountPath": SEED_DIR, "readOnly": True},
            {"name": "workspace", "mountPath": target},
        ],
    }
