"""The tree is the architecture (docs/ARCHITECTURE.md): each subpackage is one layer and says
its job in its ``__init__`` docstring; imports run only down the layers; no module imports
itself back through others; the MCP client imports nothing outside itself; modules and
functions stay short enough to read."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

from tests.support.source import parse_source

PACKAGE = Path(__file__).resolve().parents[1] / "langop_infra"

# Lowest first; each entry is a subpackage (or a module at the package root). A name not
# listed here fails the test: place it on purpose.
LAYERS: list[tuple[str, set[str]]] = [
    ("the error root", {"_errors"}),
    # Ctrl-C from a command's first instant: langop_infra/__init__ installs it first thing.
    ("the first instant's interrupt handler", {"_interrupt"}),
    # The one bounded JSON reader: imports only the error root, so mcp/ may use it too.
    ("the JSON reader", {"_json"}),
    ("core", {"core"}),
    ("the NetworkPolicy evaluator", {"netpol"}),
    ("stack config and document checks", {"config"}),
    ("pure manifest builders", {"manifests"}),
    ("schema sync", {"sync"}),
    # seed 003's tool kit for tool authors; the agent runtime yields its records
    ("tool kit", {"toolkit"}),
    ("agent-side library", {"agent"}),
    ("components", {"components"}),
    ("programs", {"program"}),
    ("public API", {"__init__"}),
    ("offline tooling", {"offline"}),
    ("test helpers", {"testing"}),
    ("policy pack", {"policy"}),
    ("command line", {"cli"}),
    # Entry points, and the provider's module path that Pulumi state written before the
    # layout move names (schema_sync; see its docstring).
    ("entry points and the state-named path", {"__main__", "schema_sync"}),
]
MCP = "mcp"
SUBPACKAGES = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())
# Modules over the size limit hold one algorithm each.
LONG_MODULES = {
    "sync/_compare.py": "the schema comparison: one recursive classification",
    "components/args.py": "generated from the specs (python tools/generate_args.py)",
    "config/_field_docs.py": "generated from the specs (python tools/generate_field_docs.py)",
}
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" and len(parts) > 2 else parts)


def top(dotted: str) -> str:
    """``langop_infra.offline._render`` → ``offline``; the package itself → ``__init__``."""
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imported(path: Path, package: Path = PACKAGE) -> set[str]:
    """Every langop_infra module a file imports, also inside functions; not those under
    ``if TYPE_CHECKING:``, which never run (a type checker's view of a circle is no circle)."""
    found: set[str] = set()
    own = module_name(path, package).split(".")
    package_parts = own if path.name == "__init__.py" else own[:-1]
    tree = parse_source(path.read_text())
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If)
        and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
        for statement in node.body
        for inner in ast.walk(statement)
    }
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("langop_infra")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package_parts[: len(package_parts) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            if not base.startswith("langop_infra"):
                continue
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                found.add(submodule if is_module(submodule, package) else base)
    return found


def is_module(dotted: str, package: Path = PACKAGE) -> bool:
    path = package.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def layer_of(name: str) -> int:
    for index, (_, members) in enumerate(LAYERS):
        if name in members:
            return index
    raise AssertionError(f"langop_infra.{name} is on no layer; add it to LAYERS on purpose")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def import_graph(files: Iterable[Path], package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module → the modules it imports; a package's own ``__init__`` counts as the package."""
    graph: dict[str, set[str]] = {}
    for path in files:
        name = module_name(path, package)
        graph[name] = {target for target in imported(path, package) if target != name}
    return graph


FILES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=[module_name(p) for p in FILES])
def test_imports_follow_the_layers(path: Path) -> None:
    here = top(module_name(path))
    for target in sorted(imported(path)):
        there = top(target)
        if here == MCP:
            assert there in (MCP, "_errors", "_json"), (
                f"{module_name(path)} imports {target}: mcp/ stands alone (but for _errors "
                "and the JSON reader)"
            )
            continue
        if there == MCP:
            continue  # the client library sits beneath everything
        if there == here:
            continue
        assert layer_of(there) <= layer_of(here), (
            f"{module_name(path)} ({LAYERS[layer_of(here)][0]}) imports {target} "
            f"({LAYERS[layer_of(there)][0]}), a layer above it"
        )


def test_no_import_circles() -> None:
    assert cycles(import_graph(FILES)) == []


def test_every_subpackage_says_its_job() -> None:
    assert set(SUBPACKAGES) - {MCP} <= {n for _, members in LAYERS for n in members}
    for name in SUBPACKAGES:
        doc = ast.get_docstring(parse_source((PACKAGE / name / "__init__.py").read_text()))
        assert doc and len(doc) >= 40, f"langop_infra/{name}/__init__.py states no job"


def test_modules_and_functions_stay_readable() -> None:
    too_long = []
    for path in FILES:
        relative = path.relative_to(PACKAGE).as_posix()
        source = path.read_text()
        lines = len(source.splitlines())
        if lines > MAX_MODULE_LINES and relative not in LONG_MODULES:
            too_long.append(f"{relative}: {lines} lines")
        for node in ast.walk(parse_source(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                if length > MAX_FUNCTION_LINES:
                    too_long.append(f"{relative}: {node.name}() is {length} lines")
    assert too_long == []


def test_the_check_catches_an_upward_import(tmp_path: Path) -> None:
    """The walker sees imports inside functions, relative ones, and submodules imported from
    a package, and a config module importing a component is caught."""
    package = tmp_path / "langop_infra"
    (package / "components").mkdir(parents=True)
    (package / "config").mkdir()
    for name in ("__init__.py", "components/__init__.py", "config/__init__.py"):
        (package / name).write_text("")
    (package / "components" / "cluster.py").write_text("")
    (package / "components" / "tool.py").write_text("")
    source = package / "config" / "tool.py"
    source.write_text(
        "def f():\n    from ..components.tool import LanguageTool\n"
        "    from langop_infra.components import cluster\n"
    )
    found = imported(source, package)
    assert found == {"langop_infra.components.tool", "langop_infra.components.cluster"}
    here = layer_of(top(module_name(source, package)))
    assert layer_of(top("langop_infra.components.tool")) > here


def test_the_check_catches_a_circle(tmp_path: Path) -> None:
    package = tmp_path / "langop_infra"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from langop_infra import b\n")
    (package / "b.py").write_text("def f():\n    from langop_infra.a import x\n")
    (package / "c.py").write_text("from langop_infra import a\n")
    graph = import_graph(sorted(package.glob("*.py")), package)
    assert cycles(graph) == [["langop_infra.a", "langop_infra.b"]]


def test_every_folder_of_modules_is_a_package() -> None:
    """A folder without ``__init__.py`` imports as a namespace package here but is left out
    of the wheel (setuptools finds regular packages only)."""
    folders = {p.parent for p in FILES if p.parent != PACKAGE}
    bare = [f.relative_to(PACKAGE).as_posix() for f in folders if not (f / "__init__.py").exists()]
    assert bare == []


def test_the_layers_have_names_that_say_what_they_hold() -> None:
    """No folder is named like tests (``spec/``) or build output (``build/``); the stack
    config, the manifest builders and the NetworkPolicy evaluator are where docs say."""
    assert not {"spec", "build"} & set(SUBPACKAGES)
    assert {"config", "manifests"} <= set(SUBPACKAGES)
    assert (PACKAGE / "config" / "checks" / "__init__.py").is_file()
    assert (PACKAGE / "netpol.py").is_file() and (PACKAGE / "_errors.py").is_file()
    assert not (PACKAGE / "testing" / "reachability.py").exists()


def test_the_error_root_imports_nothing() -> None:
    tree = parse_source((PACKAGE / "_errors.py").read_text())
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    from langop_infra import LangopError, _errors
    from langop_infra.mcp import _errors as errors

    assert LangopError is _errors.LangopError is errors.LangopError


def test_the_json_reader_imports_only_the_error_root() -> None:
    """mcp/ may import it, so it must pull nothing else of ours in."""
    assert imported(PACKAGE / "_json.py") == {"langop_infra._errors"}


CORE_FILES = sorted((PACKAGE / "core").glob("*.py"))


@pytest.mark.parametrize("path", CORE_FILES, ids=[p.name for p in CORE_FILES])
def test_core_imports_nothing_of_the_package_but_the_error_root(path: Path) -> None:
    """What core/__init__ says: core/ is beneath everything, the MCP client included."""
    outside = {t for t in imported(path) if top(t) not in ("core", "_errors")}
    assert outside == set(), f"core/{path.name} imports {sorted(outside)}"


def test_the_redaction_mark_is_one_string_everywhere() -> None:
    from langop_infra import _errors
    from langop_infra.core import _redact as redact
    from langop_infra.mcp import _errors as errors
    from langop_infra.offline import _formats as formats

    assert _errors.REDACTED == "[secret]"
    assert errors.REDACTED is redact.MARK is formats.REDACTED is _errors.REDACTED


# The public modules: what __all__ and the user docs (python-api.md, api.md, mcp-client.md,
# agent-contract.md, policy.md) name, the entry points (the CLI's main; program/stack and
# program/package that Pulumi.yaml's program and provider/ run; policy/pack that
# policy-pack/ runs) and the path Pulumi state names (sync/provider, schema_sync). Every
# other module is private by name (issue 37): /work/scratch/privatize.py makes it so.
PUBLIC_MODULES = {
    "netpol",
    "schema_sync",
    "sync/provider",
    "sync/card_sync",
    "sync/rollout_key",
    "cli/main",
    "program/stack",
    "program/package",
    "policy/pack",
    "policy/offline",
    "components/tool",
    "components/agent",
    "components/model",
    "components/cluster",
    "components/args",
    "components/agent_args",
    "config/tool",
    "config/agent",
    "config/cluster",
    "core/problems",
    "testing/secrets",
    "agent/runtime",
    "agent/http_tools",
}


def test_internals_are_private_by_name() -> None:
    modules = {
        p.relative_to(PACKAGE).with_suffix("").as_posix()
        for p in PACKAGE.rglob("*.py")
        if p.name not in ("__init__.py", "__main__.py")
    }
    assert modules >= PUBLIC_MODULES, sorted(PUBLIC_MODULES - modules)
    public = {m for m in modules if not m.rpartition("/")[2].startswith("_")}
    assert sorted(public - PUBLIC_MODULES) == []
