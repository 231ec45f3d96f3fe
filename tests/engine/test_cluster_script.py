"""`tools/engine/cluster up` and `down`, as a contributor runs them: the kubeconfig's path as
the last line, a cluster whose node is Ready and whose every port is on loopback, and nothing of
it left running after `down`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.engine import python_project
from tests.support.kube import Kube, LocalCluster
from tests.support.repo_tools import TOOLS

pytestmark = pytest.mark.engine


def cluster_script(action: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(TOOLS / "engine" / "cluster"), action, "--name", "script"],
        env={**os.environ, "LANGOP_CLUSTER_HOME": str(home)},
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


def listening_ports(pids: list[int]) -> list[str]:
    """The local addresses these processes listen on (`ss -ltnp`)."""
    done = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True)
    return [
        line.split()[3]
        for line in done.stdout.splitlines()
        if any(f"pid={pid}," in line for pid in pids)
    ]


def test_up_prints_a_kubeconfig_of_a_loopback_cluster_and_down_leaves_nothing(
    cluster_bin: Path, tmp_path: Path
) -> None:
    cluster = LocalCluster(cluster_bin, "script", tmp_path)
    pids: list[int] = []
    try:
        started = cluster_script("up", tmp_path)
        assert started.returncode == 0, started.stderr
        kubeconfig = Path(started.stdout.strip().splitlines()[-1])
        assert kubeconfig == cluster.kubeconfig and kubeconfig.is_file()
        server = yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
        assert server.startswith("https://127.0.0.1:")
        nodes = Kube(cluster).kubectl("get", "nodes", "-o", "name").stdout.split()
        assert nodes == ["node/node-000000"]
        pids = cluster.running_pids()
        assert len(pids) == 5  # etcd, kube-apiserver, -controller-manager, -scheduler, kwok
        addresses = listening_ports(pids)
        assert addresses and all(a.startswith("127.0.0.1:") for a in addresses), addresses
    finally:
        stopped = cluster_script("down", tmp_path)
    assert stopped.returncode == 0, stopped.stderr
    assert cluster.running_pids() == [] and listening_ports(pids) == []
    assert not cluster.folder.exists()


def docs_commands() -> str:
    """The commands of docs/deploying.md's "Try it on a local cluster", as printed."""
    page = (TOOLS.parent / "docs" / "deploying.md").read_text()
    section = page.split("## Try it on a local cluster", 1)[1]
    return section.split("```bash\n", 1)[1].split("```", 1)[0]


def test_the_local_cluster_commands_in_the_docs_run_as_printed(
    cluster_bin: Path, tmp_path: Path
) -> None:
    project = python_project(tmp_path / "project", stacks=("dev",))
    (project / "tools").symlink_to(TOOLS)
    env = {
        **os.environ,
        "LANGOP_CLUSTER_HOME": str(tmp_path / "clusters"),
        "LANGOP_ENGINE_HOME": str(tmp_path / "engine-home"),
        "PULUMI_SKIP_CONFIRMATIONS": "true",  # a reader answers the prompts
    }
    cluster = LocalCluster(cluster_bin, "langop", tmp_path / "clusters")
    try:
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", docs_commands()],
            cwd=project, env=env, capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
    finally:
        cluster.down()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "deployment.apps/memory" in done.stdout and "service/memory" in done.stdout
    assert "no route to host" in done.stdout  # each tool's sync: phase Error, with its reason
    assert cluster.running_pids() == []
