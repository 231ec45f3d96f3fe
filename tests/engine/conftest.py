"""The `engine` tests: the Pulumi CLI, its language hosts and the Kubernetes provider, built
from Go modules by tools/engine/build, run as a user runs them (tests/support/engine.py).

They are left out of the default run (tests/conftest.py) and run by `pytest -m engine`, which
.ci/run calls after the other tests. A missing Go toolchain fails them: it never skips them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.engine import Engine, local
from tests.support.kube import Kube, LocalCluster


@pytest.fixture(scope="session")
def engine_bin() -> Path:
    """The engine's binaries, built (or found in the cache) once a session."""
    return local.build_engine()


@pytest.fixture
def engine(engine_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Engine:
    """The engine with a home (state backend, plugins) of the test's own: stacks of one test
    never meet another's."""
    return Engine(engine_bin, tmp_path_factory.mktemp("engine-home"))


@pytest.fixture(scope="session")
def cluster_bin() -> Path:
    """The engine's and the local cluster's binaries, in one folder (tools/engine/build
    --cluster), built or found in the cache once a session."""
    return local.build_engine(cluster=True)


@pytest.fixture(scope="module")
def kube(cluster_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kube]:
    """A local cluster for the module, stopped afterwards whatever happened."""
    cluster = LocalCluster(cluster_bin, "langop-test", tmp_path_factory.mktemp("kwok"))
    try:
        cluster.up()
        yield Kube(cluster)
    finally:
        cluster.down()
        assert cluster.running_pids() == [], "the cluster left processes running"
