"""render writes multi-line strings as YAML literal blocks (``|``), the form ``kubectl get -o
yaml`` and ``helm template`` print; that is the only way its output differs from the plain
dump of the same objects, and it reads back to the same objects."""

from __future__ import annotations

import contextlib
import io

import pytest
import yaml

from langop_infra.cli.main import main
from langop_infra.core import _yaml_io as yaml_io


def rendered(stack: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["render", "--stack", stack]) == 0
    return out.getvalue()


def plain_dump(documents: list) -> str:
    """The same objects as render wrote them before block scalars."""
    return "".join(f"---\n{yaml_io.dump(doc)}" for doc in documents)


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_multiline_strings_are_blocks_and_nothing_else_changes(stack: str) -> None:
    text = rendered(stack)
    body = text[text.index("---\n") :]  # anything render prints before the first object
    documents = list(yaml.safe_load_all(body))
    before = plain_dump(documents)
    old_events, new_events = list(yaml.parse(before)), list(yaml.parse(body))
    assert [type(e) for e in old_events] == [type(e) for e in new_events]
    blocks = 0
    for old, new in zip(old_events, new_events, strict=True):
        if not isinstance(old, yaml.ScalarEvent):
            continue
        assert new.value == old.value
        if "\n" in old.value and new.style == "|":
            assert old.style in ('"', "'")
            blocks += 1
        else:
            assert new.style == old.style, old.value
    configs = [d for d in documents if d["kind"] == "ConfigMap" and "config.yaml" in d["data"]]
    assert configs and blocks >= len(configs)
    assert body.count("  config.yaml: |") == len(configs)


def test_a_string_that_cannot_be_a_block_stays_quoted() -> None:
    """Trailing spaces on a line cannot survive a literal block; the dumper quotes instead."""
    text = yaml_io.dump({"a": "x  \ny\n", "b": "one\ntwo\n"}, literal_blocks=True)
    assert yaml.safe_load(text) == {"a": "x  \ny\n", "b": "one\ntwo\n"}
    assert "b: |\n  one\n  two\n" in text
    assert 'a: "x  \\ny\\n"' in text
