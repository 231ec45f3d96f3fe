"""A local Kubernetes cluster of processes, for `tools/engine/cluster` and the `engine` tests.

kwokctl's binary runtime starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler
and kwok's controller from the binaries `tools/engine/build --cluster` made, every one bound to
127.0.0.1. kwok stands in for the kubelets: pods are scheduled onto its fake node, become Ready
and fill their Services' endpoints, while no container runs. Admission (Pod Security among it)
and RBAC are on, as in a real cluster.

Clusters live under `$LANGOP_CLUSTER_HOME` (default: `clusters/` beside the engine cache).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from local import HERE

DEFAULT_NAME = "langop"
# Every request's metadata goes to logs/audit.log (leases apart: they are most of the traffic),
# so a test can see what reached the API server, and from whom.
AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [
        {"level": "None", "resources": [{"group": "coordination.k8s.io", "resources": ["leases"]}]},
        {"level": "Metadata"},
    ],
}
# kwok's node template gives pods addresses of this range. No pod is there: while the cluster
# runs, the range is unreachable here (a route of low priority), so the API server's proxy
# never sends a pod's traffic out through the default route. A test that serves the pods
# itself routes the range to a network namespace of its own, ahead of this route.
POD_RANGE = "10.0.0.0/24"
POD_RANGE_GUARD = ("unreachable", POD_RANGE, "metric", "4000")
# The storage a cluster admin would provide (the local cluster has no provisioner): volumes a
# claim of up to 10Gi binds to, without a class or of class `ssd` (prod's memory). Never
# mounted: kwok runs no container.
STORAGE_POOL = {"": 6, "ssd": 2}
# Bound a hung start or stop only: a cached start takes well under a minute here.
START_LIMIT = 300
STOP_LIMIT = 60


def cluster_home() -> Path:
    """Where kwokctl keeps its clusters (its workdir)."""
    if explicit := os.environ.get("LANGOP_CLUSTER_HOME"):
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "langop-infra" / "clusters"


def kube_version() -> str:
    return json.loads((HERE / "pins.json").read_text())["cluster"]["kubernetes"]


@dataclass(frozen=True)
class LocalCluster:
    """One kwokctl cluster: its name, kwokctl's workdir and the folder of its binaries."""

    bin_dir: Path
    name: str = DEFAULT_NAME
    home: Path | None = None

    @property
    def workdir(self) -> Path:
        return self.home or cluster_home()

    @property
    def folder(self) -> Path:
        return self.workdir / "clusters" / self.name

    @property
    def kubeconfig(self) -> Path:
        return self.folder / "kubeconfig.yaml"

    @property
    def audit_log(self) -> Path:
        return self.folder / "logs" / "audit.log"

    def configuration(self, audit_policy: Path) -> dict[str, object]:
        """kwokctl's options: local binaries, loopback only, admission and RBAC on."""
        binary = {
            "kubeApiserverBinary": "kube-apiserver",
            "kubeControllerManagerBinary": "kube-controller-manager",
            "kubeSchedulerBinary": "kube-scheduler",
            "kubectlBinary": "kubectl",
            "etcdBinary": "etcd",
            "etcdctlBinary": "etcd",
            "kwokControllerBinary": "kwok",
        }
        return {
            "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
            "kind": "KwokctlConfiguration",
            "options": {
                "runtime": "binary",
                "bindAddress": "127.0.0.1",
                "kubeVersion": kube_version(),
                "securePort": True,
                "kubeAuthorization": True,
                "kubeAdmission": True,
                "quietPull": True,
                "kubeAuditPolicy": str(audit_policy),
                **{key: str(self.bin_dir / name) for key, name in binary.items()},
            },
        }

    def kwokctl(self, *args: str, limit: float = START_LIMIT) -> str:
        """kwokctl's output; SystemExit with all of it when it fails."""
        env = {**os.environ, "KWOK_WORKDIR": str(self.workdir)}
        done = subprocess.run(
            [str(self.bin_dir / "kwokctl"), "--name", self.name, *args],
            env=env, capture_output=True, text=True, timeout=limit, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"kwokctl {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
        return done.stdout

    def up(self) -> Path:
        """Start the cluster (a leftover one of this name is stopped first) with one fake
        node; the path of its kubeconfig."""
        self.down()
        config = self.workdir / f"{self.name}.kwokctl.json"
        audit = self.workdir / f"{self.name}.audit-policy.json"
        config.parent.mkdir(parents=True, exist_ok=True)
        audit.write_text(json.dumps(AUDIT_POLICY, indent=2))
        config.write_text(json.dumps(self.configuration(audit), indent=2))
        try:
            self.kwokctl("create", "cluster", "--config", str(config), "--wait", f"{START_LIMIT}s")
            guard_pod_range(True)
            self.kwokctl("scale", "node", "--replicas", "1")
            self.kubectl_apply(self.storage_pool())
        except BaseException:
            self.down()
            raise
        return self.kubeconfig

    def storage_pool(self) -> dict[str, object]:
        """STORAGE_POOL as hostPath PersistentVolumes under the cluster's folder."""
        volumes = [
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": f"pool-{storage_class or 'default'}-{index}"},
                "spec": {
                    "capacity": {"storage": "10Gi"},
                    "accessModes": ["ReadWriteOnce"],
                    "persistentVolumeReclaimPolicy": "Retain",
                    "storageClassName": storage_class,
                    "hostPath": {"path": str(self.folder / "volumes" / f"{storage_class}{index}")},
                },
            }
            for storage_class, count in STORAGE_POOL.items()
            for index in range(count)
        ]
        return {"apiVersion": "v1", "kind": "List", "items": volumes}

    def kubectl(
        self, *args: str, stdin: str | None = None, limit: float = START_LIMIT
    ) -> subprocess.CompletedProcess[str]:
        """kubectl with the cluster's kubeconfig; its output captured, its exit code as is."""
        return subprocess.run(
            [str(self.bin_dir / "kubectl"), "--kubeconfig", str(self.kubeconfig), *args],
            input=stdin, capture_output=True, text=True, timeout=limit, check=False,
        )  # fmt: skip

    def kubectl_apply(self, document: dict[str, object]) -> None:
        done = self.kubectl("apply", "-f", "-", stdin=json.dumps(document))
        if done.returncode != 0:
            raise SystemExit(f"kubectl apply failed:\n{done.stdout}{done.stderr}")

    def down(self) -> None:
        """Stop the cluster and wait until none of its processes is left (even when kwokctl
        cannot delete it)."""
        pids = self.running_pids()
        try:
            if self.folder.exists():
                self.kwokctl("delete", "cluster", limit=STOP_LIMIT)
        finally:
            for pid in pids:
                _stop(pid)
            guard_pod_range(False)

    def running_pids(self) -> list[int]:
        """The cluster's processes that still run, from kwokctl's pid files."""
        pids = []
        for path in (self.folder / "pids").glob("*.pid"):
            try:
                pid = int(path.read_text().strip())
                os.kill(pid, 0)
            except (ValueError, ProcessLookupError, PermissionError):
                continue
            pids.append(pid)
        return pids


def guard_pod_range(on: bool) -> None:
    """Add (or remove) the route that makes POD_RANGE unreachable; it needs root (CAP_NET_ADMIN)
    and is left out, with a note, without it."""
    args = ["ip", "route", "replace" if on else "del", *POD_RANGE_GUARD]
    done = subprocess.run(args, capture_output=True, text=True, timeout=30, check=False)
    if on and done.returncode != 0:
        print(
            f"cluster: cannot route {POD_RANGE} nowhere ({done.stderr.strip()}); the API "
            "server's proxy may send pod traffic out the default route",
            file=sys.stderr,
        )


def _stop(pid: int) -> None:
    """SIGTERM until the process is gone; SIGKILL once STOP_LIMIT has passed."""
    deadline = time.monotonic() + STOP_LIMIT
    while True:
        try:
            os.kill(pid, signal.SIGKILL if time.monotonic() > deadline else signal.SIGTERM)
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        except ProcessLookupError:
            return
        time.sleep(0.2)
