"""tests/support/source.parse_source: the fresh-interpreter fallback when CPython 3.11's AST
converter reports "recursion depth mismatch", and no fallback for any other SystemError."""

from __future__ import annotations

import ast

import pytest

from tests.support import source


def test_a_depth_mismatch_is_parsed_again_in_a_fresh_interpreter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*_args: object, **_kwargs: object) -> ast.Module:
        raise SystemError("AST constructor recursion depth mismatch (before=144, after=201)")

    monkeypatch.setattr(source.ast, "parse", broken)
    tree = source.parse_source("x = 1\ndef f():\n    return x\n", "m.py")
    assert [type(node).__name__ for node in tree.body] == ["Assign", "FunctionDef"]


def test_another_system_error_is_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: object, **_kwargs: object) -> ast.Module:
        raise SystemError("something else")

    monkeypatch.setattr(source.ast, "parse", broken)
    with pytest.raises(SystemError, match="something else"):
        source.parse_source("x = 1\n")
