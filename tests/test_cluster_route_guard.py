"""The local cluster's pod-range guard route is one per machine: clusters running side by
side hold it together, and only the last one down removes it (tools/engine/local_cluster.py).

The route itself is not touched here (it needs root and is the machine's): ``guard_pod_range``
is replaced by a recorder of what would be run; a cluster "runs" while a process named by a
pid file in its folder does, as kwokctl's own pid files say.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "engine"))
import local_cluster  # tools/engine is not a package


@pytest.fixture
def routes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    done: list[str] = []
    monkeypatch.setattr(local_cluster, "GUARD_HOLDERS", tmp_path / "holders")
    monkeypatch.setattr(
        local_cluster, "guard_pod_range", lambda on: done.append("add" if on else "del")
    )
    return done


@pytest.fixture
def process() -> Iterator[subprocess.Popen[bytes]]:
    child = subprocess.Popen(["sleep", "600"])
    yield child
    child.kill()
    child.wait()


def cluster(tmp_path: Path, name: str, pid: int | None) -> local_cluster.LocalCluster:
    one = local_cluster.LocalCluster(tmp_path / "bin", name=name, home=tmp_path / name)
    (one.folder / "pids").mkdir(parents=True)
    if pid is not None:
        (one.folder / "pids" / "kube-apiserver.pid").write_text(f"{pid}\n")
    return one


def test_the_route_stays_while_another_cluster_runs(
    tmp_path: Path, routes: list[str], process: subprocess.Popen[bytes]
) -> None:
    first, second = cluster(tmp_path, "a", process.pid), cluster(tmp_path, "b", process.pid)
    first.hold_guard()
    second.hold_guard()
    first.release_guard()
    assert routes == ["add", "add"]
    process.kill()
    process.wait()
    second.release_guard()
    assert routes == ["add", "add", "del"]
    assert list(local_cluster.GUARD_HOLDERS.iterdir()) == []


def test_a_cluster_that_died_without_coming_down_holds_nothing(
    tmp_path: Path, routes: list[str]
) -> None:
    dead, other = cluster(tmp_path, "dead", None), cluster(tmp_path, "other", None)
    dead.hold_guard()  # and then its processes died: no pid file names a running one
    other.hold_guard()
    other.release_guard()
    assert routes == ["add", "add", "del"]
    assert list(local_cluster.GUARD_HOLDERS.iterdir()) == []


def test_releasing_without_holding_removes_a_leftover_route(
    tmp_path: Path, routes: list[str]
) -> None:
    cluster(tmp_path, "a", None).release_guard()  # `cluster down` after a crash
    assert routes == ["del"]
