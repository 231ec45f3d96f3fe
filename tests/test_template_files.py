"""The ``pulumi new`` template as a user gets it (issue 35 §3): its requirements pin the
package, which comes from a local wheel folder, its dev requirements bring pytest, it
creates the Namespace its config describes, and it ignores its virtualenv.
(tests/test_release.py, slow, installs it from a built wheel with PIP_FIND_LINKS.)"""

from __future__ import annotations

import ast
from pathlib import Path

from packaging.requirements import Requirement

from tests.support.source import parse_source

TEMPLATE = Path(__file__).resolve().parents[1] / "templates" / "python"


def requirements(name: str) -> list[str]:
    lines = (TEMPLATE / name).read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_the_package_is_pinned_and_its_source_explained() -> None:
    [line] = requirements("requirements.txt")
    requirement = Requirement(line)
    assert requirement.name == "langop-infra"
    assert [s.operator for s in requirement.specifier] == ["=="]
    assert "PIP_FIND_LINKS" in (TEMPLATE / "requirements.txt").read_text()


def test_pytest_is_in_the_dev_requirements() -> None:
    lines = requirements("requirements-dev.txt")
    assert "-r requirements.txt" in lines
    assert any(Requirement(line).name == "pytest" for line in lines if not line.startswith("-"))


def test_the_virtualenv_is_ignored() -> None:
    ignored = (TEMPLATE / ".gitignore").read_text().split()
    assert {"venv/", "__pycache__/"} <= set(ignored)


def test_the_program_creates_the_namespace_it_deploys_into() -> None:
    tree = parse_source((TEMPLATE / "__main__.py").read_text())
    calls = [ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert "k8s.core.v1.Namespace" in calls
    # Its components take the namespace's name as an Output (issue 35 §1).
    given = {
        ast.unparse(n.func): ast.unparse(k.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        for k in n.keywords
        if k.arg == "namespace"
    }
    assert given == {"LanguageTool": "ns.metadata.name", "LanguageAgent": "ns.metadata.name"}
