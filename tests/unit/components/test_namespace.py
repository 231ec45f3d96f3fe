"""``components/_namespace.py``: where a component's objects go when its namespace is a
string or an Output, the check of a component's name in its namespace, and the checks of a
namespace Output as it resolves (under ``langop_mocks``)."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from langop_infra.components._k8s import find_component
from langop_infra.components._namespace import (
    LATE,
    Placement,
    checked_name,
    placement,
    registered,
)
from langop_infra.core.problems import SpecError
from langop_infra.offline._mock_engine import run_program
from tests.support.mock_runs import failing


def test_late_fields_are_the_namespace() -> None:
    assert frozenset({"namespace"}) == LATE


def test_a_plain_namespace_is_its_own_prefix_and_known() -> None:
    where = placement("tool", "apps")
    assert (where.value, where.prefix, where.known) == ("apps", "apps", True)
    assert placement("tool", 7) == Placement("7", "7")


@pulumi.runtime.test
def test_an_output_namespace_prefixes_with_the_resource_name(langop_mocks: Any) -> Any:
    value = pulumi.Output.from_input("apps")
    where = placement("memory-tool", value)
    assert (where.value, where.prefix, where.known) == (value, "[memory-tool]", False)
    return where.value.apply(lambda v: None if v == "apps" else pytest.fail(v))


def test_a_known_namespace_registers_at_once(langop_mocks: Any) -> None:
    component = object()
    where = Placement("apps", "apps")
    assert registered(component, "LanguageTool", where, "search", "main.py:3") is where
    assert find_component("LanguageTool", "apps", "search") is component
    with pytest.raises(SpecError) as info:
        registered(object(), "LanguageTool", where, "search", "main.py:9")
    header, problem = str(info.value).split("\n")
    assert header.startswith("invalid LanguageTool 'search': 1 problem")
    assert problem == (
        "  - name: a LanguageTool named 'search' already exists in namespace 'apps'; give this "
        "one another name or namespace"
    )


def test_an_output_namespace_registers_as_it_resolves() -> None:
    seen: dict[str, Any] = {}

    def program() -> None:
        first = object()
        late = Placement(pulumi.Output.from_input("apps"), "[a]")
        where = registered(first, "LanguageTool", late, "search", "main.py:3")
        other = registered(object(), "LanguageTool", late, "fetch", "main.py:10")
        seen["placement"] = (where.prefix, where.known)

        def record(namespaces: list[Any]) -> None:
            seen["namespaces"] = namespaces
            seen["found"] = find_component("LanguageTool", "apps", "search") is first

        pulumi.Output.all(where.value, other.value).apply(record)

    run_program(program)
    assert seen == {"placement": ("[a]", False), "namespaces": ["apps", "apps"], "found": True}

    def twice() -> None:
        late = Placement(pulumi.Output.from_input("apps"), "[a]")
        registered(object(), "LanguageTool", late, "search", "main.py:3")
        registered(object(), "LanguageTool", late, "search", "main.py:9")

    assert failing(twice) == (
        "invalid LanguageTool 'search': 1 problem (built at main.py:9)\n"
        "  - name: a LanguageTool named 'search' already exists in namespace 'apps'; give "
        "this one another name or namespace"
    )


def test_a_namespace_output_is_checked_as_it_resolves() -> None:
    seen: list[str] = []

    def good() -> None:
        name = checked_name(pulumi.Output.from_input("apps"), "LanguageModel 'm'", "main.py:3")
        name.apply(seen.append)

    run_program(good)
    assert seen == ["apps"]

    def bad() -> None:
        checked_name(pulumi.Output.from_input("Bad_NS"), "LanguageModel 'm'", "main.py:4")

    assert failing(bad) == (
        "invalid LanguageModel 'm': 1 problem (built at main.py:4)\n"
        "  - namespace: 'Bad_NS' is not a valid name: use at most 63 lower-case letters, "
        "digits and '-', starting and ending with a letter or digit (a DNS-1123 label)"
    )

    def secret() -> None:
        checked_name(pulumi.Output.secret("apps"), "LanguageModel 'm'", "main.py:5")

    assert failing(secret).startswith(
        "invalid LanguageModel 'm': 1 problem (built at main.py:5)\n"
        "  - namespace: is a secret Output, but this field is plain text"
    )
