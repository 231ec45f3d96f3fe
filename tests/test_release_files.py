"""What a release needs in the repository: the license, a changelog with upgrade notes, real
URLs or none, and dependency floors the code actually runs on."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]


def test_the_license_is_the_apache_2_text() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.lstrip().startswith("Apache License\n                           Version 2.0")
    assert "END OF TERMS AND CONDITIONS" in text
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert (project["license"], project["license-files"]) == ("Apache-2.0", ["LICENSE"])


def test_the_changelog_keeps_a_changelog_and_says_how_to_upgrade() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert "[Keep a Changelog](https://keepachangelog.com/" in text
    assert re.search(rf"^## \[{re.escape(version)}\] - ", text, re.MULTILINE)
    assert "## [Unreleased]" in text
    notes = text.split("### Upgrade notes", 1)[1]
    assert "`langop:index:*`" in notes and "`langop-infra:index:*`" in notes
    # The pre-layout import paths never shipped in a release: their removal is noted in the
    # first release, and they are really gone.
    removed = text.split(f"## [{version}]", 1)[1].split("\n## [", 1)[0]
    for old in ("stack_program", "package", "contract", "schema_compare", "agent_runtime"):
        assert f"`langop_infra.{old}`" in removed or f"`.{old}`" in removed
        assert not (ROOT / "langop_infra" / f"{old}.py").exists()


def test_the_newest_release_is_pyprojects_version_with_an_iso_date() -> None:
    """Keep a Changelog: `## [Unreleased]` on top, then the newest release as
    `## [X.Y.Z] - YYYY-MM-DD`, the version pyproject.toml gives (the git tag is `vX.Y.Z`)."""
    import datetime

    text = (ROOT / "CHANGELOG.md").read_text()
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    headings = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert headings[0] == "[Unreleased]", headings[:2]
    newest = re.fullmatch(r"\[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})", headings[1])
    assert newest is not None, headings[1]
    assert newest.group(1) == version
    assert datetime.date.fromisoformat(newest.group(2)).isoformat() == newest.group(2)
    # Every release heading is dated, and its link reference is there.
    assert all(re.fullmatch(r"\[[\d.]+\] - \d{4}-\d{2}-\d{2}", h) for h in headings[1:])
    assert re.search(rf"^\[{re.escape(version)}\]: ", text, re.MULTILINE)


def test_no_public_home_no_urls_and_the_readme_says_where_it_comes_from() -> None:
    """No index serves the package and it has no public home: pyproject names no URLs (a
    made-up one would mislead), and the README says to install from the wheel or the
    repository."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "urls" not in project
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "not yet published on any package index" in readme
    assert "install it from the wheel" in readme and "or from the repository" in readme


@pytest.mark.parametrize(
    "pattern", ["**/*.md", "pyproject.toml", "examples/**/*", "templates/**/*"]
)
def test_no_placeholder_urls(pattern: str) -> None:
    for path in ROOT.glob(pattern):
        if path.is_file() and ".venv" not in path.parts and "node_modules" not in path.parts:
            text = path.read_text(errors="replace")
            assert "<your-org>" not in text and "your-org" not in text, path


def test_the_pydantic_floor_has_validate_by_name() -> None:
    """The specs use ``validate_by_name`` (pydantic 2.11) and read the aliases of deferred
    models (``defer_build``), which 2.12 fills in at class creation: the floor must say so."""
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    [pydantic] = [d for d in dependencies if d.startswith("pydantic")]
    assert re.match(r"pydantic>=2\.(1[2-9]|[2-9]\d)", pydantic), pydantic
    assert any("validate_by_name" in p.read_text() for p in (ROOT / "langop_infra").rglob("*.py"))
    unbounded = [d for d in dependencies if "<" not in d]
    assert unbounded == [], unbounded


def peer_packages() -> dict[str, str]:
    """What .ci/side-envs (which .ci/run calls) installs into each peer's own virtualenv:
    package name → virtualenv."""
    ci = (ROOT / ".ci" / "side-envs").read_text()
    found = re.findall(r"(\.venv-[\w-]+)/bin/python -m pip install .*?'([A-Za-z0-9_.-]+)", ci)
    return {re.split(r"[\[=<>]", package)[0].lower(): venv for venv, package in found}


def test_the_test_extra_leaves_heavy_peers_to_their_own_environments() -> None:
    """``[test]`` stays slim: LiteLLM, checkov and mcp-proxy live in their own virtualenvs,
    and only the scripts run there import them."""
    peers = peer_packages()
    assert set(peers) == {"checkov", "litellm", "mcp-proxy"}, peers
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    in_test = {re.split(r"[\[=<>]", d)[0].lower() for d in extras["test"]}
    assert in_test & set(peers) == set(), in_test & set(peers)
    importers = [
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "tests").rglob("*.py")
        if re.search(r"^\s*(import|from) litellm\b|importorskip\(\"litellm", path.read_text(), re.M)
    ]
    assert sorted(importers) == [
        "tests/support/litellm_observer.py",
        "tests/support/litellm_router.py",
    ], importers


def test_no_side_environment_is_tracked() -> None:
    """A side environment (or a symlink to one a worktree made) never enters git: a clone
    would hold a link where .ci/side-envs must build the environment, and CI would skip."""
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert [f for f in tracked if f.split("/")[0] in SIDE_ENVS] == []


SIDE_ENVS = (".venv-checkov", ".venv-litellm", ".venv-mcp-proxy", ".conformance", ".a2a-js")


def test_ci_builds_the_docs_strictly_and_loudly() -> None:
    # mkdocs --quiet drops warnings before --strict counts them: broken links passed CI.
    script = (ROOT / ".ci" / "run").read_text().splitlines()
    commands = [line for line in script if "mkdocs build" in line]
    assert commands
    assert all("--strict" in c and "--quiet" not in c and " -q " not in c for c in commands)
