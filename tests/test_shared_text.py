"""One home for shared text and shapes (issue 37 §3): one "did you mean" with one cutoff,
one map of default ports, every public exception under LangopError."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import langop_infra
from langop_infra.core._text import CUTOFF, closest, did_you_mean, one_line
from langop_infra.mcp._ports import DEFAULT_PORTS, effective_port

PACKAGE = Path(langop_infra.__file__).parent


@pytest.mark.parametrize(
    ("name", "known", "expected"),
    [
        ("memry", ["memory", "model"], "memory"),
        ("prdo", ["dev", "prod", "staging"], "prod"),  # two letters swapped
        ("db-credentials", ["search-credentials"], None),  # ratio 0.75: not a typo
        ("ticketin", {"ticketing", "search"}, "ticketing"),
        ("x", [], None),
        ("abc", ["acb", "bac"], "acb"),  # ties: the first in sorted order
    ],
)
def test_closest_suggests_typos_only(name: str, known: list[str], expected: str | None) -> None:
    assert closest(name, known) == expected


def test_did_you_mean_words_the_suggestion() -> None:
    assert CUTOFF == 0.8
    assert did_you_mean("memry", ["memory"]) == "did you mean 'memory'? Otherwise: "
    assert did_you_mean("memry", ["memory"], then="") == "did you mean 'memory'? "
    assert did_you_mean("zzz", ["memory"]) == ""
    assert one_line("a\n  b\tc") == "a b c"
    assert one_line("x" * 20, limit=10) == "xxxxxxx..."


def test_one_did_you_mean_and_one_port_map_in_the_package() -> None:
    copies = {
        str(p.relative_to(PACKAGE)): p.read_text()
        for p in sorted(PACKAGE.rglob("*.py"))
        if p.name != "args.py"
    }
    matchers = [f for f, text in copies.items() if "get_close_matches" in text]
    assert matchers == ["core/_text.py"]
    port_maps = [f for f, text in copies.items() if re.search(r"\b443\b", text)]
    assert port_maps == ["mcp/_ports.py"]


@pytest.mark.parametrize(
    ("scheme", "port", "expected"),
    [("https", None, 443), ("HTTP", None, 80), ("https", 8443, 8443), ("ftp", None, None)],
)
def test_effective_port(scheme: str, port: int | None, expected: int | None) -> None:
    assert effective_port(scheme, port) == expected
    assert effective_port("ftp", None, 80) == 80
    assert DEFAULT_PORTS == {"http": 80, "https": 443}


# Run in a fresh interpreter: importing every module of the package loads both a2a-sdk's and
# Pulumi's copies of google.rpc.Status, which one process refuses once a test has imported
# a2a-sdk's client (no program of the package imports both).
_WALK = """
import importlib, inspect, json, pkgutil
import langop_infra
from langop_infra._errors import LangopError
found = []
for info in pkgutil.walk_packages(langop_infra.__path__, "langop_infra."):
    if info.name.endswith("__main__"):
        continue
    module = importlib.import_module(info.name)
    for name, value in vars(module).items():
        if (inspect.isclass(value) and issubclass(value, BaseException)
                and value.__module__ == module.__name__ and not name.startswith("_")):
            found.append([module.__name__, name, issubclass(value, LangopError)])
print(json.dumps(found))
"""


def _public_exceptions() -> list[tuple[str, str, bool]]:
    """(module, name, under LangopError) of every public exception class of the package."""
    done = subprocess.run(
        [sys.executable, "-c", _WALK], capture_output=True, text=True, timeout=300, check=True
    )
    return [tuple(item) for item in json.loads(done.stdout)]


def test_every_public_exception_is_under_the_root() -> None:
    exceptions = _public_exceptions()
    names = {name for _, name, _ in exceptions}
    assert {"SchemaTooDeep", "SelectionError", "ServerBusy", "SpecError"} <= names
    outside = [f"{module}.{name}" for module, name, under in exceptions if not under]
    assert outside == []


def test_user_facing_text_names_the_real_systems() -> None:
    """No "seed" anywhere users read: not "seed 004" (users cannot know our source documents;
    the text names language-operator, ark, STOA's Tool and AgentLab), nor the workspace's
    "seed" files (they are its initial files, copied by ``init-workspace``). The one word let
    through is language-operator's own CRD field, which the importer must read as spelled."""
    root = PACKAGE.parent
    texts = [
        *PACKAGE.rglob("*.py"),
        *(root / "docs").rglob("*.md"),
        root / "README.md",
        root / "SECURITY.md",
        root / "schemas" / "stack-config.schema.json",
        *(root / "examples").rglob("*.py"),
        *(root / "examples").rglob("*.md"),
        *(root / "stacks").glob("*.yaml"),
    ]
    allowed = {("langop_infra/offline/importers/_language_operator.py", '"seedConfigMapRef"')}
    pattern = re.compile(r'"seedConfigMapRef"|seed', re.I)
    found = [
        f"{p.relative_to(root)}: {m.group(0)}"
        for p in texts
        for m in pattern.finditer(p.read_text())
        if (str(p.relative_to(root)), m.group(0)) not in allowed
    ]
    assert found == []
