"""The `engine` tests: the Pulumi CLI, its language hosts and the Kubernetes provider, built
from Go modules by tools/engine/build, run as a user runs them (tests/support/engine.py).

They are left out of the default run (tests/conftest.py) and run by `pytest -m engine`, which
.ci/run calls after the other tests. A missing Go toolchain fails them: it never skips them.
"""

from __future__ import annotations

import pytest

from tests.support.engine import Engine, local


@pytest.fixture(scope="session")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    """The engine, built (or found in the cache), with a home of this session's own."""
    return Engine(local.build_engine(), tmp_path_factory.mktemp("engine-home"))
