"""The offline engine catches up between workloads and skips the stack walk; `pulumi up`
never waits and keeps its stack traces."""

from __future__ import annotations

import pytest

from langop_infra import LanguageAgent, LanguageTool
from langop_infra.core import _pacing as pacing
from langop_infra.offline import _mock_engine as mock_engine
from langop_infra.offline._mock_engine import ProgramRun, run_program


def test_hook_runs_only_inside_paced_and_the_outer_one_comes_back() -> None:
    calls: list[str] = []
    pacing.workload_built()
    with pacing.paced(lambda: calls.append("outer")):
        pacing.workload_built()
        with pacing.paced(lambda: calls.append("inner")):
            pacing.workload_built()
        pacing.workload_built()
    pacing.workload_built()
    assert calls == ["outer", "inner", "outer"]


def test_hook_is_gone_after_a_program_that_raised() -> None:
    def program() -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        run_program(program)
    assert pacing._hook is None


def _registered_while_building(
    count: int, every: int, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, int]:
    """Registrations the engine had answered right after ``count`` tools, and at the end."""
    monkeypatch.setattr(mock_engine, "CATCH_UP_EVERY", every)
    run = ProgramRun()
    seen: list[int] = []

    def program() -> None:
        for n in range(count):
            LanguageTool(f"t{n}", image=f"ghcr.io/acme/t{n}:1", namespace="ai")
        seen.append(len(run.registrations))

    run_program(program, into=run)
    return seen[0], len(run.registrations)


def test_render_engine_answers_every_registration_at_each_catch_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    during, total = _registered_while_building(3, 3, monkeypatch)
    # Three tools, each a component, a Deployment, a Service, a NetworkPolicy, a schema sync.
    assert total == 15
    assert during == total


def test_between_catch_ups_the_program_runs_on_without_waiting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    during, total = _registered_while_building(2, 3, monkeypatch)
    assert (during, total) == (0, 10)


def test_agents_count_as_workloads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mock_engine, "CATCH_UP_EVERY", 2)
    run = ProgramRun()
    seen: list[int] = []

    def program() -> None:
        LanguageTool("search", image="ghcr.io/acme/search:1", namespace="ai")
        seen.append(len(run.registrations))
        LanguageAgent(
            "helper", image="ghcr.io/acme/agent:1", namespace="ai", tools=[{"name": "search"}]
        )
        seen.append(len(run.registrations))

    run_program(program, into=run)
    assert seen[0] == 0
    assert seen[1] == len(run.registrations) > 4


def test_registrations_carry_no_stack_trace_during_a_run_and_the_sdk_gets_its_walk_back() -> None:
    from pulumi.runtime import resource as sdk_resource

    original = sdk_resource._get_stack_trace
    during: list = []

    def program() -> None:
        during.append(sdk_resource._get_stack_trace)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        run_program(program)
    assert during[0] is not original
    assert during[0]().frames == []
    assert sdk_resource._get_stack_trace is original


def test_the_program_runs_with_the_loop_stopped_so_a_catch_up_runs_it_rather_than_reenter_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Re-entered at each catch-up, the loop's ready queue was padded with a dummy handle per
    handle already run, and the padding of every earlier catch-up counted again."""
    import asyncio

    monkeypatch.setattr(mock_engine, "CATCH_UP_EVERY", 1)
    seen: list[tuple[bool, int]] = []

    def program() -> None:
        loop = asyncio.get_event_loop()
        for n in range(3):
            LanguageTool(f"t{n}", image=f"ghcr.io/acme/t{n}:1", namespace="ai")
            seen.append((loop.is_running(), len(loop._ready)))

    run = run_program(program)
    assert seen == [(False, 0)] * 3
    assert len(run.registrations) == 15


def test_an_async_program_is_awaited_and_its_resources_registered() -> None:
    async def program() -> None:
        LanguageTool("search", image="ghcr.io/acme/search:1", namespace="ai")

    run = run_program(program)
    names = sorted(r.name for r in run.kubernetes())
    assert names == ["ai/search", "ai/search", "ai/search-ingress"]
