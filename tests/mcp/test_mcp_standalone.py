"""``langop_infra/mcp/`` is a standalone library: it imports nothing of langop_infra outside it
but the two roots that import nothing of ours themselves: the error root (``_errors``) and
the one bounded JSON reader (``_json``)."""

from __future__ import annotations

import ast
from pathlib import Path

import langop_infra.mcp
from tests.support.source import parse_source

PACKAGE = Path(langop_infra.mcp.__file__).parent
ROOTS = ("langop_infra.mcp", "langop_infra._errors", "langop_infra._json")


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(parse_source(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_mcp_imports_nothing_of_langop_infra_outside_itself() -> None:
    modules = sorted(PACKAGE.glob("*.py"))
    assert len(modules) >= 15
    outside = {
        f"{path.name}: {name}"
        for path in modules
        for name in _imports(path)
        if name.startswith("langop_infra") and not name.startswith(ROOTS) and name != "langop_infra"
    }
    bare = {f"{path.name}" for path in modules if "langop_infra" in _imports(path)}
    assert outside == set()
    assert bare == set()  # not even the package's __init__ (its version comes from metadata)
