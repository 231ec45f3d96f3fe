"""``core/_program_index.py``: each program run owns the index of the components it built."""

from __future__ import annotations

import asyncio
import contextvars

from langop_infra.core._program_index import built_components, in_own_program, index_for_building


def test_each_run_starts_empty_and_the_callers_index_is_untouched() -> None:
    def run(name: str) -> list[tuple[str, str, str]]:
        index_for_building()[("LanguageTool", "apps", name)] = object()
        return sorted(built_components())

    outer = in_own_program(lambda: built_components())
    assert in_own_program(lambda: run("a")) == [("LanguageTool", "apps", "a")]
    assert in_own_program(lambda: run("b")) == [("LanguageTool", "apps", "b")]
    assert in_own_program(lambda: built_components()) == {} and outer == {}


def test_callbacks_of_a_run_share_its_index() -> None:
    """An Output's callback is a task made during the run: it copies the run's context."""

    def run() -> tuple[bool, object]:
        index = index_for_building()
        index[("LanguageTool", "apps", "first")] = "tool"

        async def callback() -> tuple[bool, object]:
            seen = index_for_building()
            seen[("LanguageAgent", "apps", "later")] = "agent"
            return seen is index, seen.get(("LanguageTool", "apps", "first"))

        loop = asyncio.new_event_loop()
        try:
            result = loop.run_until_complete(loop.create_task(callback()))
        finally:
            loop.close()
        assert ("LanguageAgent", "apps", "later") in index
        return result

    assert in_own_program(run) == (True, "tool")


def test_a_task_of_its_own_is_a_run_of_its_own() -> None:
    """As Pulumi runs each program, and each ``@pulumi.runtime.test`` function, in a task."""

    async def program(name: str) -> list[str]:
        index_for_building()[("LanguageTool", "apps", name)] = name
        return [key[2] for key in built_components()]

    async def both() -> list[list[str]]:
        first = await asyncio.get_running_loop().create_task(program("a"))
        second = await asyncio.get_running_loop().create_task(program("b"))
        return [first, second]

    assert contextvars.Context().run(asyncio.run, both()) == [["a"], ["b"]]


def test_looking_makes_no_index_a_later_run_would_share() -> None:
    def look_then_run() -> list[list[str]]:
        assert built_components() == {}  # e.g. a lookup outside any program

        async def program(name: str) -> list[str]:
            index_for_building()[("LanguageTool", "apps", name)] = name
            return [key[2] for key in built_components()]

        return [asyncio.run(program("a")), asyncio.run(program("b"))]

    assert contextvars.Context().run(look_then_run) == [["a"], ["b"]]


def test_new_mocks_are_a_new_program_even_outside_a_task() -> None:
    """A test that builds at its top level under mocks of its own (``langop_mocks``, or
    ``set_mocks`` in a setup) does not see the components of the test before it."""
    import pulumi

    from langop_infra.components._k8s import register_component
    from langop_infra.testing import Mocks

    def two_tests() -> list[list[tuple[str, str, str]]]:
        seen = []
        for _ in range(2):
            mocks = Mocks()
            pulumi.runtime.set_mocks(mocks, monitor=mocks.monitor())
            register_component(object(), "LanguageTool", "apps", "memory")  # no clash
            seen.append(sorted(built_components()))
        return seen

    assert contextvars.Context().run(two_tests) == [[("LanguageTool", "apps", "memory")]] * 2
