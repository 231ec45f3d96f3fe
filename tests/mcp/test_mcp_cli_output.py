"""``langop-infra tools`` output a hostile server cannot abuse, and the listing caps' flags."""

from __future__ import annotations

from typing import Any

import pytest

from langop_infra.cli._tool_table import cells, escape
from langop_infra.cli.main import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["tools", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_escape_turns_terminal_controls_and_bidi_into_text() -> None:
    assert escape("a\x1b[2Jb") == "a\\u001b[2Jb"
    assert escape("title\x1b]0;pwned\x07") == "title\\u001b]0;pwned\\u0007"
    assert escape("abc\u202edcba") == "abc\\u202edcba"
    assert escape("x\u2066y\u2069\u200f\x85") == "x\\u2066y\\u2069\\u200f\\u0085"
    assert escape("plain café 工具 ✓") == "plain café 工具 ✓"


def test_cells_counts_wide_characters_twice_and_marks_not_at_all() -> None:
    assert cells("abc") == 3
    assert cells("工具") == 4
    assert cells("e\u0301") == 1  # e + combining acute
    assert cells("\uff54\uff4f\uff4f\uff4c") == 8  # fullwidth "tool"


def test_table_escapes_and_aligns_a_hostile_listing(
    capsys: pytest.CaptureFixture[str], fault_server: tuple[str, Any]
) -> None:
    """The names come from the scripted server (a fake: no real server sends these)."""
    base, _ = fault_server
    code, out, err = run(capsys, f"{base}/hostile", "--timeout", "5")
    assert (code, err) == (0, "")
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    assert "\\u001b]0;pwned\\u0007 hi" in out
    rows = out.splitlines()[1:4]
    assert [row.split("  ")[0] for row in rows] == ["工具", "ok\\u001b[2J", "rtl\\u202eevil"]
    # The second column starts at the same display cell on every row.
    starts = {cells(row[: row.index("Echo")]) for row in rows if "Echo" in row}
    assert len(starts) == 1


def test_max_pages_and_max_bytes_flags(
    capsys: pytest.CaptureFixture[str], fault_server: tuple[str, Any]
) -> None:
    base, _ = fault_server
    code, _, err = run(capsys, f"{base}/endless", "--max-pages", "3", "--timeout", "5")
    assert code == 1
    assert "kept paging tools/list past 3 pages" in err
    code, _, err = run(capsys, f"{base}/endless", "--max-bytes", "1KiB", "--timeout", "5")
    assert code == 1
    assert "sent more than 1024 bytes of tools/list pages" in err
    code, _, err = run(capsys, f"{base}/endless", "--max-tools", "4", "--timeout", "5")
    assert code == 1
    assert "listed more than 4 tools" in err
    code, _, err = run(capsys, f"{base}/endless", "--max-bytes", "lots")
    assert code == 2
    assert "--max-bytes 'lots' is not a size" in err
