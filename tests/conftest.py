"""Shared fixtures: run code under the Pulumi mock engine and validate what it registers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from langop_infra.offline._mock_engine import run_program
from langop_infra.testing._pytest_plugin import ensure_event_loop
from tests.support.manifests import Rendered, validate_manifests
from tests.support.side_envs import missing_environment_lines

# Hypothesis judges by wall-clock time too (a 200 ms deadline per example, a health check on
# slow generation): on a loaded 2-core machine both fail tests that are right. The suite
# asserts on no time, so neither applies.
settings.register_profile("langop", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("langop")


@pytest.fixture(autouse=True)
def _an_open_event_loop() -> None:
    """Each test starts with an open event loop in its thread, whatever the tests before it
    did with theirs (``asyncio.run`` leaves none; the SDK's mocks need one)."""
    ensure_event_loop()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--bench", action="store_true", help="also run the bench-marked tests")
    parser.addoption("--engine", action="store_true", help="also run the engine-marked tests")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave the benchmarks' smoke runs and the real-engine tests out unless asked for
    (``-m bench``, ``-m engine``, ``--bench``, ``--engine``): an ``addopts = -m 'not bench'``
    would be replaced by any ``-m`` on the command line."""
    for marker in ("bench", "engine"):
        if config.getoption(f"--{marker}") or marker in (config.getoption("markexpr") or ""):
            continue
        left_out = [item for item in items if item.get_closest_marker(marker) is not None]
        if left_out:
            config.hook.pytest_deselected(items=left_out)
            items[:] = [item for item in items if item.get_closest_marker(marker) is None]


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """End a run that skipped tests for want of a side environment with one line per missing
    environment, naming the command that builds it (tests/support/side_envs.py)."""
    reasons = [
        str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
        for report in terminalreporter.stats.get("skipped", [])
    ]
    lines = missing_environment_lines(reasons)
    if lines:
        terminalreporter.section("side environments")
        for line in lines:
            terminalreporter.write_line(line)


@pytest.fixture
def render() -> Callable[..., Rendered]:
    """``render(program, **run_program_kwargs)``: run under mocks, validate every object."""

    def _render(program: Callable[[], Any], **kwargs: Any) -> Rendered:
        rendered = Rendered(run_program(program, **kwargs))
        validate_manifests(rendered.manifests)
        return rendered

    return _render
