"""``langop_infra.config.checks._items``: an item with a bad field is still read for the
checks across items, and what it was read without is said beside it, never stored on it."""

from __future__ import annotations

from langop_infra.config.agent import AgentSpec
from langop_infra.config.checks import _items as reading
from langop_infra.config.tool import ToolSpec


def test_a_partial_item_says_what_it_lacks_beside_it() -> None:
    data = {"name": "helper", "image": "ghcr.io/acme/helper:1", "tools": 5, "colour": "x"}
    spec, problems, lacking = reading.validate_partial(AgentSpec, data, "agents[0]")
    assert isinstance(spec, AgentSpec) and spec.name == "helper"
    assert lacking == {"tools"}  # an unknown key is a problem, not a field it lacks
    assert [p.path for p in problems] == ["agents[0].tools", "agents[0].colour"]
    # no hidden attribute on the spec object: only what its model declares
    assert set(vars(spec)) <= set(AgentSpec.model_fields)


def test_a_list_gives_each_partial_items_lacking_fields_by_index() -> None:
    items = [
        {"name": "ok", "image": "ghcr.io/acme/ok:1"},
        {"name": "bad-port", "image": "ghcr.io/acme/bad:1", "port": 70000},
    ]
    read, problems, lacking = reading.validate_list(ToolSpec, items, "tools", True)
    assert [(i, s.name) for i, s in read] == [(0, "ok"), (1, "bad-port")]
    assert lacking == {1: frozenset({"port"})}
    assert [p.path for p in problems] == ["tools[1].port"]
    assert repr(read[1][1].port) == "<invalid>"  # equal to no other port
    assert reading.validate_list(ToolSpec, items, "tools")[2] == {}


def test_an_item_without_its_name_is_not_read_at_all() -> None:
    spec, problems, lacking = reading.validate_partial(ToolSpec, {"name": 5}, "tools[0]")
    assert (spec, lacking) == (None, frozenset())
    assert problems
