"""``Mocks.find`` that finds nothing says why (issue 51 §5): most often another module's
``set_mocks`` replaced the mocks the test holds, which then saw none of its resources."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pulumi
import pytest

from langop_infra import LanguageTool
from langop_infra.testing import Mocks

IMAGE = "ghcr.io/acme/memory-mcp:1.4.0"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"


def test_find_on_mocks_no_longer_installed_names_the_cause(langop_mocks: Mocks) -> None:
    stale = Mocks()
    with pytest.raises(LookupError) as caught:
        stale.find(DEPLOYMENT, "memory")
    message = str(caught.value)
    assert message.startswith(
        f"no registration of {DEPLOYMENT} named 'memory': these mocks are not the ones Pulumi "
        "uses now: another pulumi.runtime.set_mocks call"
    )
    assert "use the langop_mocks fixture in every test" in message


@pulumi.runtime.test
def test_find_of_an_unregistered_name_lists_the_registered_ones(
    langop_mocks: Mocks,
) -> pulumi.Output:
    tool = LanguageTool("memory", image=IMAGE, namespace="apps")

    def check(_: object) -> None:
        with pytest.raises(LookupError) as caught:
            langop_mocks.find(DEPLOYMENT, "memroy")
        assert str(caught.value) == (
            f"no registration of {DEPLOYMENT} named 'memroy': registered of that type: memory"
        )
        with pytest.raises(LookupError, match="nothing of that type was registered"):
            langop_mocks.find("kubernetes:batch/v1:CronJob", "memory")

    assert tool.deployment is not None
    return tool.deployment.id.apply(check)


# The run: one module calls set_mocks at import, another uses the fixture.
AT_IMPORT = """
import pulumi
from langop_infra import LanguageTool
from langop_infra.testing import Mocks

mocks = Mocks()
pulumi.runtime.set_mocks(mocks, preview=False)

@pulumi.runtime.test
def test_at_import():
    tool = LanguageTool("memory", image="ghcr.io/acme/memory-mcp:1.4.0", namespace="apps")
    return tool.deployment.id.apply(
        lambda _: mocks.find("kubernetes:apps/v1:Deployment", "memory"))
"""
WITH_FIXTURE = """
import pulumi
from langop_infra import LanguageTool

@pulumi.runtime.test
def test_with_fixture(langop_mocks):
    tool = LanguageTool("files", image="ghcr.io/acme/memory-mcp:1.4.0", namespace="apps")
    return tool.deployment.id.apply(
        lambda _: langop_mocks.find("kubernetes:apps/v1:Deployment", "files"))
"""


@pytest.mark.slow
def test_a_run_mixing_set_mocks_at_import_and_the_fixture_says_why(tmp_path: Path) -> None:
    (tmp_path / "test_a_fixture.py").write_text(textwrap.dedent(WITH_FIXTURE))
    (tmp_path / "test_b_import.py").write_text(textwrap.dedent(AT_IMPORT))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "1 failed, 1 passed" in done.stdout, done.stdout[-3000:]
    assert "these mocks are not the ones Pulumi uses now" in done.stdout
