"""The faster lock read (issue 36, section 4) reads the same objects and refuses the same
texts as before: a JSON lock through the C decoder, YAML through the event builder's common
path, and schema hashes encoded once per tool. Timing is ``benchmarks/parse_cost.py``'s job.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
import yaml

from langop_infra import _json as json_reader
from langop_infra.core import _yaml_io as yaml_io
from langop_infra.sync import _lock as lock, _lock_json as lock_json
from langop_infra.sync._compare import MAX_NESTING, SchemaTooDeep, schema_hash
from langop_infra.sync._lock import LockEntry, LockError, dump_lock, parse_lock


def tools_of(server: int) -> list[dict[str, Any]]:
    """Tools with the values a lock holds: nested schemas, numbers, Unicode, null."""
    return [
        {
            "name": f"tool-{server}-{i}",
            "description": f"Tool {i}: é, ü, 中文, 'quoted', \"double\", a: colon, - dash",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "limit": {"type": "integer", "minimum": 0, "maximum": 100, "default": 10},
                    "ratio": {"type": "number", "default": 0.5, "multipleOf": 0.25},
                    "flag": {"type": "boolean", "default": True},
                    "tags": {"type": "array", "items": {"enum": ["yes", "no", "1", "null"]}},
                    "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                    "$defs": {"Deep": {"items": [[[{"x": -7}]]]}},
                },
                "required": ["limit"],
            },
        }
        for i in range(4)
    ]


def entries() -> dict[str, LockEntry]:
    return {f"server-{s}": LockEntry.from_tools(tools_of(s)) for s in range(3)}


def through_yaml(text: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``parse_lock`` as before the JSON route: every text read as YAML."""
    with monkeypatch.context() as patched:
        patched.setattr(lock_json, "_JSON_START", re.compile(r"(?!)"))
        return parse_lock(text, "schemas.lock.json")


def refusal(text: str, monkeypatch: pytest.MonkeyPatch | None = None) -> str:
    with pytest.raises(LockError) as caught:
        if monkeypatch is None:
            parse_lock(text, "schemas.lock.json")
        else:
            through_yaml(text, monkeypatch)
    return str(caught.value)


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_a_written_lock_reads_back_the_same_objects_by_either_route(
    fmt: lock.LockFormat, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = entries()
    text = dump_lock(written, fmt)
    assert text.startswith("{" if fmt == "json" else "tools:")
    read = parse_lock(text, f"schemas.lock.{fmt}")
    assert read == written
    assert read == through_yaml(text, monkeypatch)
    tool = read["server-1"].tools[2]
    assert tool["inputSchema"]["properties"]["ratio"] == {
        "type": "number",
        "default": 0.5,
        "multipleOf": 0.25,
    }
    assert tool["inputSchema"]["properties"]["tags"]["items"]["enum"] == ["yes", "no", "1", "null"]
    assert tool["inputSchema"]["properties"]["maybe"]["default"] is None


def test_the_json_route_is_taken_and_reads_json_numbers_as_json(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # YAML 1.1 reads 1e-05 as a string; the C decoder reads the float the lock was written
    # with, so the recomputed hash is the listing's.
    tools = [{"name": "t", "inputSchema": {"minimum": 1e-05}}]
    text = dump_lock({"s": LockEntry.from_tools(tools)}, "json")
    assert "1e-05" in text
    assert parse_lock(text)["s"].tools[0]["inputSchema"]["minimum"] == 1e-05
    assert parse_lock(text)["s"].schema_hash == schema_hash(tools)
    assert through_yaml(text, monkeypatch)["s"].tools[0]["inputSchema"]["minimum"] == "1e-05"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"version": 1, "version": 1, "tools": {}}', "key 'version' given twice, at line 1"),
        ('{"version": 1,\n "tools": {"a": {"tools": [{"name": "x", "name": "y"}]}}}', "at line 2"),
        ('{"version": 1, "tools": {}, "x": ' + "[" * 200 + "]" * 200 + "}", "nested more than"),
        ('{"version": 1, "tools": {}, "x": ' + "9" * 5000 + "}", "a number of 5000 digits"),
        ('{"version": 1, "tools": {"a": 1}', "not valid YAML or JSON"),
    ],
    ids=["duplicate-key", "duplicate-nested-key", "deep", "huge-int", "truncated"],
)
def test_a_json_lock_is_refused_as_before_with_the_line(
    text: str, says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    message = refusal(text)
    assert says in message
    assert message == refusal(text, monkeypatch)  # word for word as the YAML route


def test_the_json_route_keeps_the_nesting_limit_at_the_boundary(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def lock_nesting(levels: int) -> str:
        value: Any = "leaf"
        for _ in range(levels):
            value = [value]
        return json.dumps({"version": 1, "tools": {}, "x": value})

    # The document's own level, then the value's: 132 in all is read, 133 is not.
    assert parse_lock(lock_nesting(MAX_NESTING + 3)) == {}
    message = refusal(lock_nesting(MAX_NESTING + 4))
    assert f"nested more than {MAX_NESTING + 4} levels" in message
    assert message == refusal(lock_nesting(MAX_NESTING + 4), monkeypatch)


def test_a_surrogate_escape_and_a_bom_take_the_yaml_route(monkeypatch: pytest.MonkeyPatch) -> None:
    bad = '{"version": 1, "tools": {"a": {"tools": [{"name": "\\ud800"}]}}}'
    assert refusal(bad) == refusal(bad, monkeypatch)
    with_bom = "\ufeff" + dump_lock(entries(), "json")
    assert parse_lock(with_bom) == entries()


def test_a_json_lock_over_the_size_in_bytes_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lock, "MAX_LOCK_BYTES", 200)
    text = '{"version": 1, "tools": {}, "x": "' + "é" * 90 + '"}'  # 125 characters, 215 bytes
    assert len(text) < 200 < len(text.encode())
    assert "bytes; a config file may hold at most 200" in refusal(text)


def test_the_schema_hash_of_plain_json_is_that_of_the_general_path() -> None:
    def as_tuples(value: Any) -> Any:  # a tuple is not plain JSON: the general path
        if isinstance(value, dict):
            return {k: as_tuples(v) for k, v in value.items()}
        if isinstance(value, list):
            return tuple(as_tuples(v) for v in value)
        return value

    rng = random.Random(36)
    for server in range(20):
        tools = tools_of(server)
        rng.shuffle(tools)
        tools.append({"name": tools[0]["name"], "other": rng.random()})  # same name, sorted by text
        plain = schema_hash(tools)
        assert plain == schema_hash([as_tuples(t) for t in tools])
        assert plain == schema_hash(list(reversed(tools)))
    # Keys that are not strings: the general path, which names them as str() does.
    int_key: Any = {"name": "a", 1: True}
    bool_key: Any = {"name": "a", True: 1}
    assert schema_hash([int_key]) == schema_hash([{"name": "a", "1": True}])
    assert schema_hash([bool_key]) == schema_hash([{"name": "a", "True": 1}])


def test_the_schema_hash_depth_limit_is_unchanged() -> None:
    def nested(levels: int) -> Any:
        value: Any = "leaf"
        for _ in range(levels):
            value = [value]
        return value

    # The list of tools, a tool and "s" take three levels.
    schema_hash([{"name": "a", "s": nested(MAX_NESTING - 2)}])
    with pytest.raises(SchemaTooDeep):
        schema_hash([{"name": "a", "s": nested(MAX_NESTING - 1)}])


CASES = [
    "a: 'x'\nb: x\nc: \"x\"\nd: [x, 'x', \"x\"]\n",
    "ints: [0, 7, 10, 007, 0x1f, 0o17, 1_000, +5, -5, 1:30, 12345678901234567890]\n",
    "scalars: [yes, no, on, off, ~, null, true, 1.5, .inf, -.inf, 2001-12-14, '', x y]\n",
    "'1': quoted\n1: plain\n'true': quoted\ntrue: plain\n",
    "a: &x [1, 2]\nb: *x\nc: &y text\nd: *y\n",
    "long: " + "y" * 100 + "\nkey-" + "k" * 80 + ": 1\n",
    "- {a: 1, b: [2, {c: 3}]}\n- - x\n  - 5\n",
    "tagged: !!str 12\nbang: ! 12\nbinary: !!binary aGVsbG8=\n",
]


@pytest.mark.parametrize("text", CASES)
def test_the_event_builder_reads_what_safe_load_reads(text: str) -> None:
    assert yaml_io.load_config(text.encode()) == yaml.safe_load(text)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("a: 1\n'a': 2\n", "key 'a' given twice, at line 1 and line 2"),
        ('- {x: 1, "x": 2}\n', "key 'x' given twice, at line 1 and line 1"),
        ("a: 1\nb: 2\na: 3\n", "key 'a' given twice, at line 1 and line 3"),
    ],
)
def test_a_key_given_twice_is_refused_whatever_its_quoting(text: str, says: str) -> None:
    with pytest.raises(yaml_io.ConfigYAMLError, match=re.escape(says)):
        yaml_io.load_config(text.encode())


def test_a_quoted_and_a_plain_key_of_other_types_are_two_keys() -> None:
    assert yaml_io.load_config(b"'1': a\n1: b\n") == {"1": "a", 1: "b"}


@pytest.mark.parametrize("budget", [1, 2, 4, 6, 7, 8, 9])
def test_the_value_budget_counts_common_values_as_before(budget: int) -> None:
    text = b"a: [x, 'y', 3]\nb: 1\n"  # the mapping, 2 keys, the list, 3 items, 1 value: 8
    if budget >= 8:
        assert yaml_io.load_config(text, max_values=budget) == {"a": ["x", "y", 3], "b": 1}
    else:
        with pytest.raises(yaml_io.ConfigYAMLError, match=f"more than {budget} values"):
            yaml_io.load_config(text, max_values=budget)


def test_depth_over_counts_brackets_outside_strings_as_a_token_scan_does() -> None:
    tokens = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)

    def scanned(text: str, limit: int) -> bool:
        depth = 0
        for match in tokens.finditer(text):
            token = match.group()
            if token in "[{":
                depth += 1
                if depth > limit:
                    return True
            elif token in "]}":
                depth -= 1
        return False

    rng = random.Random(4)
    alphabet = ["[", "]", "{", "}", '"', "\\", "a", ",", '\\"']
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        for limit in (0, 1, 2, 4):
            assert json_reader.depth_over(text, limit) == scanned(text, limit), (text, limit)
    assert json_reader.depth_over('["[[[[", [[]]]', 3) is False
    assert json_reader.depth_over('["[[[[", [[[]]]]', 3) is True
