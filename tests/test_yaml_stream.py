"""Config files are built straight from YAML events (``core.yaml_stream``): the same values as
PyYAML's safe loader, the same refusals as the node-graph checks, and the rare forms read
through the node graph still. Memory per input byte is measured by
``benchmarks/parse_cost.py`` (issue 36, section 4), not here."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
import yaml

from langop_infra.core import _yaml_io as yaml_io, _yaml_stream as yaml_stream

DOCUMENTS = [
    "a: 1\nb: [1, 2.5, true, null, ~, 'x', \"y\"]\nc: {d: e}\n",
    "when: 2024-01-02\nat: 2024-01-02T03:04:05Z\noct: 0o17\nhex: 0x1f\ninf: .inf\n",
    "blob: !!binary aGVsbG8=\nforced: !!str 123\nnum: !!int '7'\nempty:\n",
    "base: &b {x: 1, y: [1, 2]}\nuse: *b\nlist: &l [a, b]\nagain: *l\ns: &s text\nt: *s\n",
    "- 1\n- - 2\n  - {3: 4, 5.5: x, true: y, null: z}\n",
    "text: |\n  line one\n  line two\nfolded: >\n  a\n  b\n",
    "",
    "---\n...\n",
    "just a scalar\n",
    "{a: 1, b: 2}",
    '{"json": [1, 2, {"k": "v"}], "n": null, "t": true}',
]


def node_graph(text: str, all_documents: bool = False) -> Any:
    """What the node-graph path builds (PyYAML's safe loader through libyaml)."""
    if all_documents:
        return list(yaml.load_all(text, Loader=yaml_io.LOADER))
    return yaml.load(text, Loader=yaml_io.LOADER)


def built(text: str, single: bool = True) -> list[Any]:
    builder = yaml_stream.Builder(yaml_io.LOADER, 64, 200_000, yaml_io.ConfigYAMLError)
    return builder.documents(yaml.parse(text, Loader=yaml_io.LOADER), single)


@pytest.mark.parametrize("text", DOCUMENTS)
def test_values_are_those_of_the_safe_loader(text: str) -> None:
    try:
        got = built(text)
    except yaml_stream.Unsupported:  # complex keys: read through the node graph
        got = None
    expected = node_graph(text)
    if got is not None:
        assert (got[0] if got else None) == expected
    assert yaml_io.load_config(text.encode()) == expected


def test_every_document_of_a_stream_is_built() -> None:
    text = "---\na: 1\n---\n- x\n---\n"
    assert built(text, single=False) == [{"a": 1}, ["x"], None]
    assert yaml_io.load_config_all(text.encode()) == node_graph(text, all_documents=True)


def test_aliases_share_one_value_as_pyyaml_does() -> None:
    [document] = built("a: &x [1]\nb: *x\n")
    assert document["a"] is document["b"]
    assert isinstance(yaml_io.load_config(b"d: 2024-01-02\n")["d"], datetime.date)


def test_equal_short_strings_share_one_object() -> None:
    [document] = built("- {type: string}\n- {type: string}\n")
    first, second = document
    assert next(iter(first)) is next(iter(second))
    assert first["type"] is second["type"]


@pytest.mark.parametrize(
    ("text", "message", "line", "column"),
    [
        ("a: 1\nb: 2\na: 3\n", "key 'a' given twice, at line 1 and line 3; keep one", 3, 1),
        ("x:\n  - {k: 1, k: 2}\n", "key 'k' given twice, at line 2 and line 2; keep one", 2, 12),
        ("a: &a [*a]\n", "an alias refers to itself at line 1", 1, 1),
        ("[[[[1]]]]\n", "nested more than 3 levels deep at line 1", 1, 1),
        (
            "tools:\n- port: " + "9" * 5000 + "\n",
            "tools[0].port: a number of 5000 digits at line 2; at most 4300 can be read: "
            "write a real value (quote it if it is text)",
            2,
            1,
        ),
    ],
)
def test_refusals_name_the_line(text: str, message: str, line: int, column: int) -> None:
    depth = 3 if "[[[[" in text else 64
    with pytest.raises(yaml_io.ConfigYAMLError) as caught:
        yaml_io.load_config(text.encode(), max_depth=depth)
    assert (str(caught.value), caught.value.line, caught.value.column) == (message, line, column)
    # The node graph's checks said the same.
    with pytest.raises(yaml_io.ConfigYAMLError) as before:
        yaml_io._check_depth(text, depth)  # pyright: ignore[reportPrivateUsage]
        node = yaml.compose(text, Loader=yaml_io.LOADER)
        yaml_io._check_nodes(node, yaml_io.MAX_VALUES)  # pyright: ignore[reportPrivateUsage]
    assert (str(before.value), before.value.line, before.value.column) == (message, line, column)


def test_an_alias_bomb_is_refused_before_it_expands() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for n in range(1, 8):
        lines.append(f"{chr(97 + n)}: &{chr(97 + n)} [{', '.join(['*' + chr(96 + n)] * 10)}]")
    text = "\n".join(lines) + "\n"
    with pytest.raises(yaml_io.ConfigYAMLError) as caught:
        yaml_io.load_config(text.encode())
    assert str(caught.value).startswith("expands to more than 200000 values (aliases) at line")


def test_the_budget_is_shared_by_the_documents_of_a_stream() -> None:
    text = "---\n[1, 2, 3]\n---\n[4, 5, 6]\n"
    assert yaml_io.load_config_all(text.encode(), max_values=8) == [[1, 2, 3], [4, 5, 6]]
    refused = r"expands to more than 3 values \(aliases\) at line 4"
    with pytest.raises(yaml_io.ConfigYAMLError, match=refused):
        yaml_io.load_config_all(text.encode(), max_values=7)


@pytest.mark.parametrize(
    "text",
    [
        "base: &b {x: 1}\nuse:\n  <<: *b\n  y: 2\n",  # a merge key
        "s: !!set {a, b}\n",  # a tagged collection
        "a: &x 1\nb: &x 2\n",  # a duplicate anchor: PyYAML's error
        "a: *missing\n",  # an undefined alias: PyYAML's error
        "? [a]\n: 1\n",  # an unhashable key: PyYAML's error
    ],
)
def test_rare_forms_go_through_the_node_graph(text: str) -> None:
    with pytest.raises(yaml_stream.Unsupported):
        built(text)
    try:
        expected: Any = node_graph(text)
    except yaml.YAMLError as exc:
        with pytest.raises(type(exc)) as caught:
            yaml_io.load_config(text.encode())
        assert str(caught.value) == str(exc)
    else:
        assert yaml_io.load_config(text.encode()) == expected


def test_two_documents_are_refused_where_one_is_expected() -> None:
    with pytest.raises(yaml.composer.ComposerError, match="expected a single document"):
        yaml_io.load_config(b"a: 1\n---\nb: 2\n")
