"""The package's modules import only from their own layer or the layers below it
(docs/ARCHITECTURE.md), and the MCP client imports nothing outside itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "langop_infra"

# Lowest first. A module not listed here fails the test: place it on purpose.
LAYERS: list[tuple[str, set[str]]] = [
    ("base", {"errors", "yaml_io", "names", "redact", "gc_tuning", "pacing"}),
    ("specs", {"specs", "model_specs"}),
    (
        "validation",
        {
            "validation",
            "admission",
            "model_validation",
            "collisions",
            "egress_check",
            "references",
            "secret_refs",
            "advice",
        },
    ),
    (
        "builders",
        {
            "contract",
            "pods",
            "pod_settings",
            "workspace",
            "policies",
            "inputs",
            "schema_compare",
            "gateway",
            "gateway_policies",
            "agent_models",
            "agent_objects",
        },
    ),
    (
        "schema sync and agent runtime",
        {"schema_sync", "schema_lock", "kube_proxy", "agent_runtime", "agent_registry"},
    ),
    ("components", {"k8s", "tool", "agent", "cluster", "model"}),
    ("programs", {"stack_program", "package", "__init__"}),
    ("tooling", {"offline", "commands", "cli", "testing", "__main__"}),
]
MCP = "mcp"


def module_name(path: Path, package: Path = PACKAGE) -> str:
    return ".".join(path.relative_to(package.parent).with_suffix("").parts)


def top(dotted: str) -> str:
    """``langop_infra.offline.render`` → ``offline``; the package itself → ``__init__``."""
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imported(path: Path, package: Path = PACKAGE) -> set[str]:
    """Every langop_infra module a file imports, also inside functions."""
    found: set[str] = set()
    package_parts = module_name(path, package).split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("langop_infra")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package_parts[: len(package_parts) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            if not base.startswith("langop_infra"):
                continue
            if base == "langop_infra":
                found |= {
                    f"langop_infra.{a.name}" if is_module(a.name, package) else "langop_infra"
                    for a in node.names
                }
            else:
                found.add(base)
    return found


def is_module(name: str, package: Path = PACKAGE) -> bool:
    return (package / f"{name}.py").exists() or (package / name).is_dir()


def layer_of(name: str) -> int:
    for index, (_, members) in enumerate(LAYERS):
        if name in members:
            return index
    raise AssertionError(f"langop_infra.{name} is on no layer; add it to LAYERS on purpose")


FILES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=[module_name(p) for p in FILES])
def test_imports_follow_the_layers(path: Path) -> None:
    here = top(module_name(path))
    for target in sorted(imported(path)):
        there = top(target)
        if here == MCP:
            assert there == MCP, f"{module_name(path)} imports {target}: mcp/ stands alone"
            continue
        if there == MCP:
            continue  # the client library sits beneath everything
        if there == here:
            continue
        assert layer_of(there) <= layer_of(here), (
            f"{module_name(path)} ({LAYERS[layer_of(here)][0]}) imports {target} "
            f"({LAYERS[layer_of(there)][0]}), a layer above it"
        )


def test_the_check_catches_an_upward_import(tmp_path: Path) -> None:
    """The walker sees imports inside functions, relative ones, and submodules imported from
    the package, and a specs module importing a component is caught."""
    package = tmp_path / "langop_infra"
    package.mkdir()
    (package / "cluster.py").write_text("")
    source = package / "specs.py"
    source.write_text(
        "def f():\n    from .tool import LanguageTool\n    from langop_infra import cluster\n"
    )
    assert imported(source, package) == {"langop_infra.tool", "langop_infra.cluster"}
    assert layer_of(top("langop_infra.tool")) > layer_of(top("langop_infra.specs"))
