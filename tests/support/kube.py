"""The local cluster (tools/engine/local_cluster.py) as the `engine` tests use it: kubectl with
the cluster's kubeconfig, objects read back as JSON, and a stack pointed at the cluster."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.support.engine import UNKNOWN_AT_RENDER, Engine
from tests.support.repo_tools import TOOLS

sys.path.insert(0, str(TOOLS / "engine"))
import local_cluster  # tools/engine is not a package

LocalCluster = local_cluster.LocalCluster
# Bounds a hung kubectl or a wait only.
KUBECTL_LIMIT = 120
WAIT_LIMIT = 180


@dataclass(frozen=True)
class Kube:
    """A running local cluster: kubectl and the kubeconfig's current context."""

    cluster: Any  # local_cluster.LocalCluster

    @property
    def kubeconfig(self) -> Path:
        return self.cluster.kubeconfig

    @property
    def context(self) -> str:
        return yaml.safe_load(self.kubeconfig.read_text())["current-context"]

    @property
    def server(self) -> str:
        clusters = yaml.safe_load(self.kubeconfig.read_text())["clusters"]
        return clusters[0]["cluster"]["server"]

    def kubectl(
        self, *args: str, stdin: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        done = self.cluster.kubectl(*args, stdin=stdin, limit=KUBECTL_LIMIT)
        if check and done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {done.stdout}{done.stderr}")
        return done

    def apply(self, *objects: dict[str, Any]) -> None:
        """``kubectl apply`` of these objects, as one List."""
        document = {"apiVersion": "v1", "kind": "List", "items": list(objects)}
        self.kubectl("apply", "-f", "-", stdin=json.dumps(document))

    def get(self, kind: str, name: str, namespace: str = "") -> dict[str, Any] | None:
        """The object as the API server keeps it, or None when it does not exist."""
        where = ["-n", namespace] if namespace else []
        done = self.kubectl("get", kind, name, *where, "-o", "json", check=False)
        if done.returncode != 0:
            assert "NotFound" in done.stderr, done.stderr
            return None
        return json.loads(done.stdout)

    def items(self, kinds: str, namespace: str) -> list[dict[str, Any]]:
        done = self.kubectl("get", kinds, "-n", namespace, "-o", "json")
        return json.loads(done.stdout)["items"]

    def wait_gone(self, kind: str, name: str, namespace: str = "") -> bool:
        """Whether the object is gone within WAIT_LIMIT (deletion finishes asynchronously)."""
        return self._wait(lambda: self.get(kind, name, namespace) is None)

    def wait_present(self, kind: str, name: str, namespace: str = "") -> bool:
        """Whether the object exists within WAIT_LIMIT (controllers add it asynchronously)."""
        return self._wait(lambda: self.get(kind, name, namespace) is not None)

    def _wait(self, done: Callable[[], bool]) -> bool:
        give_up = time.monotonic() + WAIT_LIMIT
        while time.monotonic() < give_up:
            if done():
                return True
            time.sleep(0.5)
        return False

    def point_stack(self, engine: Engine, project: Path, stack: str) -> None:
        """The stack's default Kubernetes provider (and schema sync) use this cluster."""
        for key, value in (
            ("kubernetes:kubeconfig", str(self.kubeconfig)),
            ("kubernetes:context", self.context),
        ):
            engine.run(project, "config", "set", "--stack", stack, key, value)


def static_volumes(claims: list[dict[str, Any]], host_dir: Path) -> list[dict[str, Any]]:
    """A PersistentVolume pre-bound to each claim, as a cluster's storage would provide (the
    local cluster has no provisioner); never mounted, since kwok runs no container."""
    volumes = []
    for claim in claims:
        meta, spec = claim["metadata"], claim["spec"]
        volume_spec: dict[str, Any] = {
            "capacity": {"storage": spec["resources"]["requests"]["storage"]},
            "accessModes": spec["accessModes"],
            "persistentVolumeReclaimPolicy": "Delete",
            "storageClassName": spec.get("storageClassName", ""),
            "hostPath": {"path": str(host_dir / meta["name"])},
            "claimRef": {"namespace": meta["namespace"], "name": meta["name"]},
        }
        volumes.append({
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": f"{meta['namespace']}-{meta['name']}"},
            "spec": volume_spec,
        })  # fmt: skip
    return volumes


def written_but_not_kept(path: tuple[str, ...], written: Any, kept: Any) -> list[str]:
    """Every field written that the API server did not keep as written (it may add fields:
    defaults, status, managed fields; it must not drop or change one). ``written`` is the
    offline render: a value it cannot know (UNKNOWN_AT_RENDER) matches any."""
    if isinstance(written, dict) and isinstance(kept, dict):
        return [
            d
            for key, value in written.items()
            for d in written_but_not_kept((*path, key), value, kept.get(key, "<absent>"))
        ]
    if isinstance(written, list) and isinstance(kept, list) and len(written) == len(kept):
        return [
            d
            for i, (a, b) in enumerate(zip(written, kept, strict=True))
            for d in written_but_not_kept((*path, str(i)), a, b)
        ]
    if written == kept or (written == "[unknown]" and path[-3:] in UNKNOWN_AT_RENDER):
        return []
    return [f"{'.'.join(path)}: wrote {written!r}, the API server keeps {kept!r}"]
