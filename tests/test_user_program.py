"""The "Testing your own program" example (docs/python-api.md) run as a user runs it: its own
pytest process, outside this repository's test configuration, on a file that imports only the
public API. Two tests build the same components: each ``@pulumi.runtime.test`` is a program."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pulumi
import pytest
from pulumi.runtime import settings

from langop_infra import LanguageTool, SpecError
from langop_infra.testing import Mocks
from tests.support.source import parse_source

EXAMPLE = Path(__file__).resolve().parent / "user_program" / "check_my_program.py"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "python-api.md"
PUBLIC = {"pulumi", "pytest", "yaml", "langop_infra", "langop_infra.testing"}


def test_the_example_imports_only_the_public_api() -> None:
    tree = parse_source(EXAMPLE.read_text())
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    modules |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert modules <= PUBLIC, modules - PUBLIC
    imported = {
        a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module == "langop_infra"
        for a in n.names
    }
    import langop_infra

    assert imported <= set(langop_infra.__all__)


def user_pytest(directory: Path, source: str) -> subprocess.CompletedProcess[str]:
    """``pytest`` as a user runs it on ``source``: its own process and directory."""
    (directory / "test_my_program.py").write_text(source)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_program.py"],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_the_example_passes_in_its_own_pytest_process(tmp_path: Path) -> None:
    done = user_pytest(tmp_path, EXAMPLE.read_text())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "5 passed" in done.stdout


@pytest.mark.slow
def test_the_documented_example_passes_as_written(tmp_path: Path) -> None:
    text = DOCS.read_text()
    section = text[text.index("### Testing your own program") :]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    done = user_pytest(tmp_path, code.group(1))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout


def test_each_runtime_test_is_one_program_for_the_duplicate_check() -> None:
    """In-process, as the example's module does: the second test may build the same tool;
    within one test a second one is refused."""
    mocks = Mocks(schemas={"memory": [{"name": "remember", "inputSchema": {"type": "object"}}]})
    pulumi.runtime.set_mocks(mocks, preview=False)

    def build() -> LanguageTool:
        return LanguageTool("memory", image="ghcr.io/acme/memory-mcp:1.4.0", namespace="apps")

    seen: list[str] = []

    @pulumi.runtime.test
    def a_test() -> pulumi.Output:
        return build().phase.apply(seen.append)

    @pulumi.runtime.test
    def a_test_with_a_duplicate() -> None:
        build()
        build()

    try:
        a_test()
        a_test()
        assert seen == ["Registered", "Registered"]
        with pytest.raises(SpecError, match="a LanguageTool named 'memory' already exists"):
            a_test_with_a_duplicate()
    finally:
        # The next program run (the mock engine's) starts from no root, as it expects.
        settings.ROOT.set(None)
