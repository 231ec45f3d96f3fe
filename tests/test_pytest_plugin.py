"""The pytest plugin (issue 35 §2): a user's project outside this repository with three test
modules, each building the same components, run in one pytest process and under xdist; the
``langop_mocks`` fixture installs fresh mocks for each test."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

import pytest

MODULE = """
import pulumi
import pytest

from langop_infra import LanguageAgent, LanguageTool

TAG = "{tag}"


def build():
    memory = LanguageTool("memory", image="ghcr.io/acme/memory-mcp:1.4.0", namespace="apps",
                          labels={{"suite": TAG}})
    helper = LanguageAgent("helper", image="ghcr.io/acme/helper:2.0.0", namespace="apps",
                           tools=[{{"name": "memory"}}], env={{"SUITE": TAG}})
    return memory, helper


@pulumi.runtime.test
def test_{tag}_registers_its_own_objects(langop_mocks):
    memory, helper = build()

    def check(_):
        service = langop_mocks.find("kubernetes:core/v1:Service", "memory")
        assert service["metadata"]["labels"]["suite"] == TAG
        assert [r.name for r in langop_mocks.resources].count("apps/memory") == 2

    # Once the objects it reads are registered (their ids resolve after registration).
    ids = [helper.deployment.id, memory.deployment.id, memory.service.id]
    return pulumi.Output.all(*ids).apply(check)


@pytest.mark.langop_mocks(schemas={{"memory": [{{"name": "recall_{tag}",
                                                "inputSchema": {{"type": "object"}}}}]}})
@pulumi.runtime.test
def test_{tag}_sees_its_own_listing(langop_mocks):
    memory, _ = build()

    def check(args):
        phase, names = args
        assert (phase, names) == ("Registered", ["recall_{tag}"])

    return pulumi.Output.all(memory.phase, memory.tool_names).apply(check)
"""


def project(tmp_path: Path) -> Path:
    folder = tmp_path / "shop-tests"
    folder.mkdir()
    for tag in ("alpha", "beta", "gamma"):
        (folder / f"test_{tag}.py").write_text(textwrap.dedent(MODULE.format(tag=tag)))
    return folder


def run(folder: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_plugin_is_registered_as_a_pytest11_entry_point() -> None:
    found = [e.value for e in entry_points(group="pytest11") if e.name == "langop_infra"]
    assert found == ["langop_infra.testing._pytest_plugin"]


@pytest.mark.slow
def test_three_modules_run_together_in_one_process(tmp_path: Path) -> None:
    result = run(project(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "6 passed" in result.stdout


@pytest.mark.slow
def test_three_modules_run_together_under_xdist(tmp_path: Path) -> None:
    result = run(project(tmp_path), "-n", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "6 passed" in result.stdout


@pytest.mark.slow
def test_an_unknown_marker_setting_is_a_usage_error(tmp_path: Path) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "test_bad.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.langop_mocks(schema={})\n"
        "def test_x(langop_mocks):\n    pass\n"
    )
    result = run(folder)
    assert result.returncode != 0
    assert "@pytest.mark.langop_mocks: unknown settings ['schema']" in result.stdout


@pytest.mark.slow
def test_a_module_after_asyncio_run_still_gets_mocks(tmp_path: Path) -> None:
    # asyncio.run leaves the main thread without an event loop; the fixture gives it one.
    folder = project(tmp_path)
    (folder / "test_aaa_async.py").write_text(
        "import asyncio\n\n\ndef test_runs_a_coroutine():\n"
        "    assert asyncio.run(asyncio.sleep(0, result=7)) == 7\n"
    )
    result = run(folder, "-p", "no:randomly")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "7 passed" in result.stdout
