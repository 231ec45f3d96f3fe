"""docs/ARCHITECTURE.md's table of modules names every module of the package (a package's
``__init__.py`` states its job itself: ``tests/test_layers.py``), and only paths that exist:
the table had missed about 45 modules and kept a folder that had moved."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "langop_infra"
REPO_FOLDERS = ("tools/",)  # entries of the repository, beside the package


def table_entries(text: str) -> list[str]:
    """The paths in the first column of the Modules table, ``a/{b,c}.py`` spelled out."""
    section = text[text.index("## Modules") : text.index("\n## ", text.index("## Modules") + 1)]
    entries: list[str] = []
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        for name in re.findall(r"`([^`]+)`", line.split("|")[1]):
            braces = re.fullmatch(r"(.*)\{([^}]*)\}(.*)", name)
            parts = braces.group(2).split(",") if braces else [""]
            entries += [f"{braces.group(1)}{p}{braces.group(3)}" if braces else name for p in parts]
    return entries


def covers(entry: str, module: str) -> bool:
    return module == entry or (entry.endswith("/") and module.startswith(entry))


def test_the_table_names_every_module() -> None:
    entries = table_entries((ROOT / "docs" / "ARCHITECTURE.md").read_text())
    modules = sorted(
        p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py") if p.name != "__init__.py"
    )
    assert [m for m in modules if not any(covers(e, m) for e in entries)] == []


def test_the_table_names_only_what_exists() -> None:
    entries = table_entries((ROOT / "docs" / "ARCHITECTURE.md").read_text())
    assert len(entries) > 100
    missing = [
        e for e in entries if not (ROOT / e if e.startswith(REPO_FOLDERS) else PACKAGE / e).exists()
    ]
    assert missing == []


def test_the_reader_spells_out_braces_and_folders() -> None:
    text = (
        "## Modules\n| module | does |\n|---|---|\n"
        "| `a/{b,_c}.py`, `d/` | x `e.py` |\n| not a row |\n## Decisions\n| `f.py` | y |\n"
    )
    assert table_entries(text) == ["a/b.py", "a/_c.py", "d/"]
    assert covers("d/", "d/e.py") and not covers("d/", "dd/e.py") and covers("a/b.py", "a/b.py")
