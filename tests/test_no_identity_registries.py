"""No module-level registry of objects by identity carries facts between layers: validation
hands on a ``CheckedCluster``, a Secret carries its own data for the rollout digest, and each
program run owns the index of the components it built (``core/_program_index.py``), nothing
of it read from the SDK's private state."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.source import parse_source

PACKAGE = Path(__file__).resolve().parents[1] / "langop_infra"
WEAK = {"WeakKeyDictionary", "WeakValueDictionary", "WeakSet", "ref"}
ALLOWED: set[tuple[str, str]] = set()


def _called(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Subscript):  # WeakKeyDictionary[K, V]()
        node = node.value
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def module_registries(tree: ast.Module) -> list[str]:
    """Names bound at module level to a weak-reference container or an ``id()``-keyed set."""
    found = []
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets, value = [statement.target], statement.value
        else:
            continue
        if isinstance(value, ast.Call):
            name = _called(value.func)
            if name in WEAK or ((name or "").endswith("Set") and name != "frozenset"):
                found += [ast.unparse(t) for t in targets]
    return found


def test_no_module_keeps_objects_by_identity() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        names = module_registries(parse_source(path.read_text(), str(path)))
        found += [(where, n) for n in names if (where, n) not in ALLOWED]
    assert found == []


def test_the_check_finds_what_it_looks_for() -> None:
    source = (
        "import weakref\n"
        "A: weakref.WeakKeyDictionary[object, int] = weakref.WeakKeyDictionary()\n"
        "B = SpecSet()\n"
        "C = frozenset()\n"
        "def f():\n    D = weakref.WeakSet()\n"
    )
    assert module_registries(parse_source(source)) == ["A", "B"]


def test_nothing_tells_program_runs_apart_by_the_sdks_run_state() -> None:
    """The run's list of pending RPCs told runs apart before; nothing reads it now (the SDK
    adapter only clears it, between the mock engine's runs)."""
    readers = [
        path.relative_to(PACKAGE).as_posix()
        for path in sorted(PACKAGE.rglob("*.py"))
        if "rpc_manager.rpcs" in path.read_text() or "pending_rpcs" in path.read_text()
    ]
    assert readers == []
