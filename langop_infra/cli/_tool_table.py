"""The ``tools`` command's table: terminal-safe cells, aligned by display width."""

from __future__ import annotations

import unicodedata
from typing import Any, cast

_DESCRIPTION_WIDTH = 70


def escape(text: str) -> str:
    """``text`` safe for a terminal (see :func:`langop_infra.core._redact.escape`)."""
    from langop_infra.core._redact import escape as terminal_safe  # pydantic: not for --help

    return terminal_safe(text)


def cells(text: str) -> int:
    """How many terminal cells ``text`` takes: wide East Asian characters two, marks none."""
    return sum(_cell(c) for c in text)


def _cell(char: str) -> int:
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _clip(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` cells, with "..." when cut."""
    if cells(text) <= width:
        return text
    kept: list[str] = []
    used = 0
    for char in text:
        if used + _cell(char) > width - 3:
            break
        kept.append(char)
        used += _cell(char)
    return "".join(kept) + "..."


def _pad(text: str, width: int) -> str:
    return text + " " * (width - cells(text))


def _mapping(value: object) -> dict[str, object]:
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


def print_table(tools: list[dict[str, object]]) -> None:
    rows = [("NAME", "TITLE", "REQUIRED", "DESCRIPTION")]
    for tool in tools:
        schema: dict[str, object] = _mapping(tool.get("inputSchema"))
        listed: object = schema.get("required") or []
        required = cast("list[Any]", listed) if isinstance(listed, list) else []
        annotations = _mapping(tool.get("annotations"))
        title = tool.get("title") or annotations.get("title") or "-"
        description = " ".join(str(tool.get("description") or "-").split())
        description = _clip(escape(description), _DESCRIPTION_WIDTH)
        rows.append(
            (
                _clip(escape(str(tool["name"])), 80),
                _clip(escape(str(title)), 60),
                _clip(escape(", ".join(map(str, required))) or "-", 60),
                description,
            )
        )
    widths = [max(cells(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print(
            "  ".join(_pad(cell, width) for cell, width in zip(row[:3], widths, strict=True))
            + "  "
            + row[3]
        )
