"""No import cycles in the package, not even type-only ones: pyright's ``reportImportCycles``
over ``langop_infra/`` finds none (issue 37). The generated ``components/args.py`` imports
nothing of the components; the component-typed aliases live with their components."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from tests.support.pyright import run_pyright
from tests.support.source import parse_source

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "langop_infra"


def _cycles(tmp_path: Path, *paths: str) -> list[str]:
    config = tmp_path / "pyrightconfig.json"
    # Only the cycle check: the typing tests run pyright's other rules.
    config.write_text(json.dumps({"typeCheckingMode": "off", "reportImportCycles": "error"}))
    result = run_pyright("-p", str(config), *paths, cwd=ROOT)
    summary = re.search(r"(\d+) errors?", result.stdout)
    assert summary, result.stdout[-2000:] + result.stderr[-2000:]
    chains = re.findall(r"Cycle detected in import chain\n((?:\s+\S+\.py.*\n)+)", result.stdout)
    assert int(summary.group(1)) == len(chains), result.stdout[-3000:]
    return [" -> ".join(Path(p.split()[0]).name for p in c.strip().splitlines()) for c in chains]


@pytest.mark.slow
def test_pyright_finds_no_import_cycle_in_the_package(tmp_path: Path) -> None:
    assert _cycles(tmp_path, "langop_infra") == []


@pytest.mark.slow
def test_the_cycle_check_sees_a_cycle(tmp_path: Path) -> None:
    """The same check over two modules that import each other reports the cycle: the test
    above cannot pass because pyright stopped looking."""
    pkg = tmp_path / "cyc"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from cyc.b import B\n"
    )
    (pkg / "b.py").write_text("from cyc.a import TYPE_CHECKING as B\n")
    assert _cycles(tmp_path, str(pkg)) == ["a.py -> b.py"]


def test_the_generated_args_import_nothing_of_the_components() -> None:
    tree = parse_source((PACKAGE / "components" / "args.py").read_text())
    imported = {
        node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
    } | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert {m for m in imported if m.startswith("langop_infra")} == {"langop_infra.config._model"}
