"""A pytest plugin (entry point ``pytest11``): fresh Pulumi mocks for each test.

Installed with the package, pytest loads it in every project; it imports nothing heavy until
a test asks for its fixture. ``langop_mocks`` installs a new :class:`~langop_infra.testing.Mocks`
before the test runs and yields it, so test modules never share mocks: several modules run in
one process, and under pytest-xdist, each test seeing only its own registrations.

    @pulumi.runtime.test
    def test_the_tool_has_a_service(langop_mocks):
        tool = LanguageTool("memory", image="ghcr.io/acme/memory-mcp:1.4.0", namespace="apps")
        return tool.service.metadata.apply(lambda m: ...)

``@pytest.mark.langop_mocks(schemas={...}, preview=False, project=..., stack=...)`` sets the
mocks' tool listings and the run's settings for one test.
"""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from langop_infra.testing._mocks import Mocks

MARKER = "langop_mocks"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(schemas=None, server_info=None, preview=False, project='project', "
        "stack='stack'): settings of the langop_mocks fixture for this test",
    )


@pytest.fixture(name="langop_mocks")
def langop_mocks_fixture(request: pytest.FixtureRequest) -> Iterator[Mocks]:
    """New :class:`~langop_infra.testing.Mocks`, installed for this test only."""
    import pulumi

    from langop_infra.testing._mocks import Mocks

    marker = request.node.get_closest_marker(MARKER)
    options: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    mocks = Mocks(
        schemas=options.pop("schemas", None), server_info=options.pop("server_info", None)
    )
    ensure_event_loop()
    pulumi.runtime.set_mocks(
        mocks,
        monitor=mocks.monitor(),
        project=options.pop("project", "project"),
        stack=options.pop("stack", "stack"),
        preview=options.pop("preview", False),
    )
    if options:
        raise pytest.UsageError(f"@pytest.mark.{MARKER}: unknown settings {sorted(options)}")
    yield mocks
    # Finalize here the futures of Outputs that failed, which nobody retrieved: collected later,
    # asyncio logs their tracebacks wherever the collector runs, on Python 3.11 even inside
    # pytest's rewrite of a module, where the nested ast.parse breaks the interpreter.
    gc.collect()


def ensure_event_loop() -> None:
    """Give this thread an open event loop if it has none: the SDK's mocks need one, and a
    test before (``asyncio.run``, an async test plugin) may have left the thread without."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # 3.12, 3.13: "made one for you"
        try:
            closed = asyncio.get_event_loop().is_closed()
        except RuntimeError:  # none set for this thread: asyncio.run leaves none
            closed = True
    if closed:
        asyncio.set_event_loop(asyncio.new_event_loop())
