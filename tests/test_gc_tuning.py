"""Garbage-collector tuning around a run: on during it, the caller's settings back after it."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pulumi
import pytest

from langop_infra.core import _gc_tuning as gc_tuning
from langop_infra.core._gc_tuning import RUN_THRESHOLDS, tuned_for_run
from langop_infra.offline import _mock_engine as mock_engine
from langop_infra.offline._mock_engine import ProgramRun, close_event_loop, run_program
from langop_infra.offline._render import dump_stream, render_stack

REPO = Path(__file__).resolve().parents[1]
CALLERS = (1234, 5, 6)


@pytest.fixture
def caller_settings() -> Iterator[None]:
    """Thresholds no default would have, and nothing frozen; the originals put back after."""
    original = gc.get_threshold()
    gc.unfreeze()
    gc.set_threshold(*CALLERS)
    yield
    gc.set_threshold(*original)
    gc.unfreeze()


@pytest.mark.usefixtures("caller_settings")
def test_thresholds_are_raised_during_the_run_and_restored_after() -> None:
    with tuned_for_run():
        assert gc.get_threshold() == RUN_THRESHOLDS
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == CALLERS
    assert gc.get_freeze_count() == 0


@pytest.mark.usefixtures("caller_settings")
def test_settings_are_restored_when_the_run_raises() -> None:
    with pytest.raises(ValueError, match="boom"), tuned_for_run():
        raise ValueError("boom")
    assert gc.get_threshold() == CALLERS
    assert gc.get_freeze_count() == 0


@pytest.mark.usefixtures("caller_settings")
def test_nested_runs_restore_once_at_the_outermost_exit() -> None:
    with tuned_for_run():
        with tuned_for_run():
            imported_later = [object() for _ in range(10)]
        # the inner exit changed nothing: still tuned, still frozen
        assert gc.get_threshold() == RUN_THRESHOLDS
        assert gc.get_freeze_count() > 0
        del imported_later
    assert gc.get_threshold() == CALLERS
    assert gc.get_freeze_count() == 0


@pytest.mark.usefixtures("caller_settings")
def test_a_heap_the_caller_froze_stays_frozen_and_nothing_more_is_frozen() -> None:
    gc.freeze()
    frozen_by_caller = gc.get_freeze_count()
    made_since = [[] for _ in range(1000)]  # a freeze now would take these too
    with tuned_for_run():
        assert gc.get_freeze_count() <= frozen_by_caller
        assert gc.get_threshold() == RUN_THRESHOLDS
    # A frozen object still dies when its last reference goes (other threads of a test
    # process free some meanwhile), so: not unfrozen (that drops the count to 0), and
    # nothing more frozen (the 1000 lists made since would show).
    assert frozen_by_caller // 2 < gc.get_freeze_count() <= frozen_by_caller
    assert gc.get_threshold() == CALLERS
    assert len(made_since) == 1000


@pytest.mark.usefixtures("caller_settings")
def test_the_stack_program_gives_the_caller_its_settings_back() -> None:
    """``main()`` as ``pulumi up`` runs it (no render around it), then the caller goes on."""
    from langop_infra.program.stack import main

    config = {
        "langop-infra:namespace": "research",
        "langop-infra:tools": '[{"name": "search", "image": "ghcr.io/acme/search:1"}]',
    }
    seen: list[tuple[int, int, int]] = []
    registered_by_then: list[int] = []
    run = ProgramRun()

    def program() -> None:
        main()
        seen.append(gc.get_threshold())
        registered_by_then.append(len(run.registrations))

    run_program(program, config=config, into=run)
    # main() let the SDK finish registering while still tuned, not after it returned
    assert registered_by_then == [len(run.registrations)] and len(run.registrations) == 7
    assert ("kubernetes:apps/v1:Deployment", "research/search") in {
        (r.type, r.name) for r in run.kubernetes()
    }
    assert seen == [CALLERS]
    assert gc.get_threshold() == CALLERS
    assert gc.get_freeze_count() == 0


@pytest.mark.usefixtures("caller_settings")
@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_render_is_byte_identical_with_and_without_tuning(
    stack: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tuned = dump_stream(render_stack(REPO, stack=stack).manifests())
    assert gc.get_threshold() == CALLERS and gc.get_freeze_count() == 0
    # The same render with the tuning reduced to nothing.
    idle = SimpleNamespace(
        get_threshold=gc.get_threshold,
        get_freeze_count=gc.get_freeze_count,
        set_threshold=lambda *_: None,
        freeze=lambda: None,
        unfreeze=lambda: None,
    )
    monkeypatch.setattr(gc_tuning, "gc", idle)
    plain = dump_stream(render_stack(REPO, stack=stack).manifests())
    assert plain == tuned
    assert tuned.count("\n---\n") >= 10


def test_render_does_not_resolve_the_stack_outputs(monkeypatch: pytest.MonkeyPatch) -> None:
    resolved: list[object] = []
    real = mock_engine._resolve
    monkeypatch.setattr(mock_engine, "_resolve", lambda v: resolved.append(v) or real(v))
    run = render_stack(REPO, stack="dev")
    dump_stream(run.manifests())
    assert resolved == []
    assert set(run.exports) == {"namespace", "tools", "agents", "models", "gateway", "toolTargets"}
    # ...and they are all there for whoever reads them.
    assert run.outputs["namespace"] == "research-dev"
    assert resolved


def test_outputs_resolve_after_the_command_closed_its_event_loop() -> None:
    def program() -> None:
        pulumi.export("plain", pulumi.Output.from_input("a").apply(str.upper))
        pulumi.export("hidden", pulumi.Output.secret("s"))

    run = run_program(program)
    close_event_loop()
    assert run.outputs == {"plain": "A", "hidden": mock_engine.Secret("s")}
