"""The one bounded JSON reader (#36 §2): every JSON text langop-infra reads goes through
``langop_infra._json.read``, with the JSON-RPC decoder's depth and size limits, and no
``RecursionError`` gets out of it."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from langop_infra import _json
from langop_infra.mcp import _jsonrpc as jsonrpc
from langop_infra.mcp._errors import MalformedResponse
from langop_infra.mcp._options import ClientOptions
from tests.support.source import parse_source

PACKAGE = Path(__file__).resolve().parents[1] / "langop_infra"


def other_json_readers(path: Path) -> list[str]:
    """``json.load``/``json.loads`` calls, ``from json import load(s)`` and httpx's
    ``.json()`` (which calls ``json.loads``) in ``path``."""
    found = []
    for node in ast.walk(parse_source(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "json":
            found += [f"from json import {a.name}" for a in node.names if "load" in a.name]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = ast.unparse(node.func)
            if name in ("json.load", "json.loads") or (node.func.attr == "json" and not node.args):
                found.append(f"line {node.lineno}: {name}()")
    return found


def test_no_other_json_reader_is_left_in_the_package() -> None:
    found = {
        path.relative_to(PACKAGE).as_posix(): other_json_readers(path)
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "_json.py"
    }
    assert {k: v for k, v in found.items() if v} == {}


def test_the_check_sees_each_way_of_reading_json(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "import json\nfrom json import loads\njson.loads('1')\njson.load(f)\nresponse.json()\n"
    )
    assert other_json_readers(source) == [
        "from json import loads",
        "line 3: json.loads()",
        "line 4: json.load()",
        "line 5: response.json()",
    ]


@pytest.mark.parametrize(
    "text",
    ["[" * 15_000, '{"a":' * 5_000, "[" * 101 + "]" * 101, b"[" * 200 + b"]" * 200],
)
def test_too_deep_is_refused_before_parsing(text: str | bytes) -> None:
    with pytest.raises(_json.JSONTooDeep, match="more than 100 levels"):
        _json.read(text)
    with pytest.raises(ValueError):  # what every "not JSON" handler already catches
        _json.read(text)


def test_depth_at_the_limit_and_brackets_in_strings_are_fine() -> None:
    assert _json.read("[" * 100 + "]" * 100) == json.loads("[" * 100 + "]" * 100)
    tricky = json.dumps({"s": "[" * 500 + '\\"{' * 300, "t": ["]" * 50]})
    assert _json.read(tricky) == json.loads(tricky)
    assert _json.read("[" * 99 + '"x"' + "]" * 99)
    assert _json.read('"\\u00e9"'.encode("utf-16")) == "é"  # bytes as json.loads takes them
    siblings = "[" + ",".join(["[[]]"] * 300) + "]"  # 601 brackets, 3 levels
    assert len(_json.read(siblings)) == 300


def test_too_large_is_refused_before_parsing() -> None:
    with pytest.raises(_json.JSONTooLarge):
        _json.read(b" " * (_json.MAX_BYTES + 1) + b"1")
    assert _json.read("1" * 10, max_bytes=10) == 1111111111
    with pytest.raises(_json.JSONTooLarge):
        _json.read("1" * 11, max_bytes=10)


def test_the_limits_are_the_json_rpc_decoders() -> None:
    assert jsonrpc.MAX_DEPTH == _json.MAX_DEPTH == 100
    assert ClientOptions().max_response_bytes == _json.MAX_BYTES
    with pytest.raises(MalformedResponse, match="more than 100 levels"):
        jsonrpc.decode("[" * 15_000, source="s")
    with pytest.raises(MalformedResponse, match="more than 100 levels"):
        jsonrpc.decode(
            '{"jsonrpc":"2.0","id":1,"result":' + "[" * 150 + "]" * 150 + "}", source="s"
        )


def test_a_refusal_is_worded_by_its_cause() -> None:
    with pytest.raises(ValueError) as not_json:
        _json.read("{oops")
    with pytest.raises(ValueError) as too_deep:
        _json.read("[" * 200 + "]" * 200)
    assert _json.reason(not_json.value).startswith("Expecting property name")
    assert _json.reason(too_deep.value) == str(too_deep.value)
    assert "100 levels" in _json.reason(too_deep.value)
