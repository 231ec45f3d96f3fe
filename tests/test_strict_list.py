"""pyproject.toml's typing lists say what holds: every module of the package is either in
``[tool.pyright] strict`` or in ``[tool.langop-infra.typing] not-strict``, never both, and
each entry names a file that exists (a list that drifted said nine modules were not strict
when twelve were not)."""

from __future__ import annotations

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]


def lists() -> tuple[list[str], list[str]]:
    tools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]
    return tools["pyright"]["strict"], tools["langop-infra"]["typing"]["not-strict"]


def covered(path: str, entries: list[str]) -> bool:
    """A file is under an entry that names it, or its folder."""
    return any(path == e or path.startswith(e.rstrip("/") + "/") for e in entries)


def test_every_module_is_strict_or_listed_as_not() -> None:
    strict, not_strict = lists()
    modules = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "langop_infra").rglob("*.py"))
    assert [m for m in modules if not covered(m, strict) and m not in not_strict] == []
    assert [m for m in not_strict if covered(m, strict)] == []


def test_every_entry_names_what_exists() -> None:
    strict, not_strict = lists()
    assert [e for e in [*strict, *not_strict] if not (ROOT / e).exists()] == []
    assert len(set(strict)) == len(strict) and len(set(not_strict)) == len(not_strict)
    assert all(e.endswith(".py") for e in not_strict)


def test_the_comment_names_no_count_to_drift() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    comment = text[text.index("[tool.pyright]") : text.index("include = ")]
    assert not any(word in comment for word in ("nine", "twelve", " 9 ", " 12 "))
