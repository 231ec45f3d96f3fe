"""Property (issue 51 §2): a value unknown at preview makes unknown exactly the fields made
from it, and nothing else.

For every field of every component (the base documents of
tests/test_output_fields_property.py), previews under the mock engine: the field a known
Output of its value (A), of each other value the component takes (B: one character changed
per word, an int plus one or 1, a boolean flipped), and an Output unknown at preview (U:
another provider's computed output, reached as hypothesis draws it). In every object U
registers, a leaf is unknown exactly where some B differs from A, and everywhere else U shows
A's value; an object U lacks is one some B lacks (its existence is made from the value). A
component may instead refuse the Output with a field error naming that field.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

import pulumi
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from langop_infra.offline._engine_values import UNKNOWN_MARKER
from langop_infra.offline._mock_engine import ProgramRun, run_program
from tests.support.field_paths import Path, at, replaced, with_value
from tests.support.mock_runs import spec_error
from tests.test_output_fields_property import (
    CASES,
    SPECS,
    assert_field_error,
    build,
    header_value,
    secret_capable,
)

Objects = dict[tuple[str, str], Any]


class RandomPet(pulumi.CustomResource):
    """As pulumi_random declares it: ``result`` is computed by the provider, so unknown at a
    preview."""

    result: pulumi.Output[str]

    def __init__(self, name: str) -> None:
        super().__init__("random:index/randomPet:RandomPet", name, {"result": None})


# Ways a program makes a value unknown at preview: from another resource's computed output.
UNKNOWNS: list[Callable[[pulumi.Output[str], Any], pulumi.Output[Any]]] = [
    lambda pet, value: pet.result.apply(lambda _: value),
    lambda pet, value: pulumi.Output.all(pet.result, value).apply(lambda xs: xs[1]),
    lambda pet, value: pulumi.Output.concat(pet.result).apply(lambda _: value),
]


def preview(component: str, doc: dict[str, Any], path: Path = (), how: Any = None) -> Any:
    """The objects a preview registers by (kind, name), or the SpecError the component
    raises; with ``how``, the value at ``path`` unknown, made that way."""

    def program() -> None:
        if how is None:
            build(component, doc)
            return
        pet = RandomPet("pet")
        build(component, with_value(doc, path, lambda value: how(pet.result, value)))

    run = ProgramRun()
    try:
        run_program(program, preview=True, into=run)
    except Exception as exc:  # the SpecError, perhaps behind the engine's errors
        found = spec_error(exc)
        if found is None:
            raise
        return found
    return {
        (m["kind"], m["metadata"]["name"]): m for m in run.manifests() if m["kind"] != "Namespace"
    }


def others(value: Any) -> list[Any]:
    """Values to try in place of ``value``, each of its type, that a field might accept: a
    string with one character changed in each of its words (an image's name, tag, ...)."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, 1]
    if isinstance(value, str):
        starts = [m.start() for m in re.finditer(r"[A-Za-z0-9]+", value)][:MAX_OTHERS]
        return [value + "x", *(value[:i] + _bumped(value[i]) + value[i + 1 :] for i in starts)]
    if isinstance(value, dict) and value:
        key = next(iter(value))
        return [{**value, key: other} for other in others(value[key])]
    if isinstance(value, list) and value:
        return [[other, *value[1:]] for other in others(value[0])]
    return []


MAX_OTHERS = 7


def _bumped(char: str) -> str:
    if char.isdigit():
        return str((int(char) + 1) % 10)
    return "a" if char in "zZ" else chr(ord(char) + 1)


def previews_as_known(component: str, path: Path) -> tuple[Objects, list[Objects]]:
    """The preview with the field a known Output of its value, and one for each other value
    the component accepts."""
    doc = SPECS[component][1]
    known = preview(component, with_value(doc, path, pulumi.Output.from_input))
    assert isinstance(known, dict), known
    found: list[Objects] = []
    for other in others(at(doc, path)):
        run = preview(
            component, with_value(doc, path, lambda _, o=other: pulumi.Output.from_input(o))
        )
        if isinstance(run, dict):
            found.append(run)
    return known, found


def compare(unknown: Any, known: Any, seconds: list[Any], where: str, misses: list[str]) -> None:
    """Append to ``misses`` each place where ``unknown`` is unknown though every second
    preview agrees with ``known``, or shows a value some second preview does not, or differs
    from ``known``."""
    if unknown == UNKNOWN_MARKER and known != UNKNOWN_MARKER:
        if all(_same(known, other) for other in seconds):
            misses.append(f"{where}: unknown, though no other value of the field changes it")
        return
    if isinstance(unknown, dict) and isinstance(known, dict):
        if unknown.keys() != known.keys():
            misses.append(f"{where}: keys {sorted(unknown)} != {sorted(known)}")
            return
        for key in unknown:
            theirs = [o.get(key, _ABSENT) if isinstance(o, dict) else _ABSENT for o in seconds]
            compare(unknown[key], known[key], theirs, f"{where}.{key}", misses)
        return
    if isinstance(unknown, list) and isinstance(known, list):
        if len(unknown) != len(known):
            misses.append(f"{where}: {len(unknown)} items != {len(known)}")
            return
        for i, item in enumerate(unknown):
            theirs = [o[i] if isinstance(o, list) and i < len(o) else _ABSENT for o in seconds]
            compare(item, known[i], theirs, f"{where}[{i}]", misses)
        return
    if unknown != known:
        misses.append(f"{where}: {unknown!r} != {known!r}")
    elif known != UNKNOWN_MARKER and not all(_same(known, o) for o in seconds):
        misses.append(f"{where}: shows {known!r}, though another value of the field changes it")


_ABSENT = object()


def _same(known: Any, other: Any) -> bool:
    return other is not _ABSENT and known == other


# Fields given as one Output whose parts no second stand-in can tell apart (a whole mapping
# the schema bounds): every part that could depend on one waits for it, an object whose
# existence could (a disruption budget) included. Checked only for showing no wrong value.
WHOLE: dict[tuple[str, Path], str] = {
    ("LanguageTool", ("resources",)): "requests and limits checked against each other",
    ("LanguageAgent", ("resources",)): "as LanguageTool's",
    ("LanguageTool", ("service",)): "the Service's labels and annotations as one mapping",
}


def secret_data_as_one(unknown: Objects, known: Objects, path: Path) -> None:
    """pulumi_kubernetes makes a Secret's ``stringData`` one secret Output: unknown as a
    whole while a value in it is. For a field that goes into a Secret, that is the field."""
    if not secret_capable(path) and not header_value(path):
        return
    for key, manifest in unknown.items():
        if key[0] == "Secret" and manifest.get("stringData") == "[secret]":
            manifest["stringData"] = known[key]["stringData"]


KNOWN: dict[tuple[str, Path], tuple[Objects, list[Objects]]] = {}


@pytest.mark.slow
@pytest.mark.parametrize(("component", "path"), CASES, ids=lambda v: str(v))
@settings(
    max_examples=2,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(how=st.sampled_from(UNKNOWNS))
def test_an_unknown_field_is_unknown_exactly_where_it_counts(
    component: str, path: Path, how: Any
) -> None:
    unknown = preview(component, copy.deepcopy(SPECS[component][1]), path, how)
    if not isinstance(unknown, dict):
        assert_field_error(unknown, path, secret=False)
        return
    known, seconds = KNOWN.setdefault((component, path), previews_as_known(component, path))
    secret_data_as_one(unknown, known, path)
    # A whole mapping, or a field no other value of which the component takes: every leaf
    # unknown counts as made from it.
    loose = (component, path) in WHOLE or not seconds
    assert unknown.keys() <= known.keys()
    # An object whose existence the value decides is registered once the value is known,
    # as Pulumi registers whatever a program makes in an apply.
    waiting = [k for k in known.keys() - unknown.keys() if all(k in s for s in seconds)]
    assert loose or waiting == [], waiting
    misses: list[str] = []
    for key, manifest in unknown.items():
        theirs = (
            [_unknown_everywhere(manifest)] if loose else [s.get(key, _ABSENT) for s in seconds]
        )
        compare(manifest, known[key], theirs, f"{key[0]} {key[1]}", misses)
    assert misses == [], misses


def _unknown_everywhere(manifest: Any) -> Any:
    """A stand-in for a second preview where every unknown leaf of ``manifest`` differs."""
    return replaced(manifest, lambda leaf: object() if leaf == UNKNOWN_MARKER else leaf)
