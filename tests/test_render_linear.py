"""Render is linear in tools and agents (issue 36, section 4), checked by structure, not by
time: every function of langop-infra, the Pulumi SDK and pulumi_kubernetes is called a number
of times that grows by the same amount for each step of the stack's size. A loop over all
tools (or all earlier resources) for each tool calls its helpers ``n * n`` times, and the
second difference of those counts is then no longer zero.

Coroutine functions are left out: the profiler sees each resumption as a call, and how often
a coroutine is resumed depends on the event loop's scheduling. So are the standard library
(asyncio's loop, typing's caches) and first calls that fill a cache. The times are measured by
``benchmarks/parse_cost.py --only linearity --render``, never asserted here.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import shutil
import sys
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
import yaml

from langop_infra.offline._render import render_stack

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from _common import cluster_document  # noqa: E402  # pyright: ignore[reportMissingImports]

pytestmark = pytest.mark.slow

# Where the per-object work happens: our package, the SDK, the Kubernetes provider's classes.
WATCHED = ("/langop_infra/", "/pulumi/", "/pulumi_kubernetes/")
Key = tuple[str, int, str]


def project(folder: Path, tools: int, agents: int) -> Path:
    """The repository's program with a generated stack ``big``."""
    (folder / "stacks").mkdir(parents=True)
    shutil.copy(ROOT / "Pulumi.yaml", folder / "Pulumi.yaml")
    shutil.copy(ROOT / "__main__.py", folder / "__main__.py")
    document = cluster_document(tools, agents, refs=1)
    config = {f"langop-infra:{k}": document[k] for k in ("namespace", "tools", "agents")}
    (folder / "stacks" / "Pulumi.big.yaml").write_text(yaml.safe_dump({"config": config}))
    return folder


def call_counts(folder: Path, watched: tuple[str, ...] = WATCHED) -> Counter[Key]:
    """How often each watched plain function ran during one render (all threads)."""
    counts: Counter[Key] = Counter()
    coroutine = inspect.CO_COROUTINE | inspect.CO_ITERABLE_COROUTINE | inspect.CO_ASYNC_GENERATOR

    def profile(frame: FrameType, event: str, _: object) -> None:
        code = frame.f_code
        if event == "call" and not code.co_flags & coroutine:
            counts[(code.co_filename, code.co_firstlineno, code.co_name)] += 1

    threading.setprofile(profile)  # the engine answers registrations on worker threads
    sys.setprofile(profile)
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            render_stack(folder, stack="big")
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # pyright: ignore[reportArgumentType]
    return Counter({k: v for k, v in counts.items() if any(w in k[0] for w in watched)})


def nonlinear(counts: list[Counter[Key]]) -> list[str]:
    """Functions whose count grew by different amounts over equal steps of size."""
    found = []
    for key in set().union(*counts):
        a, b, c = (n[key] for n in counts)
        if (b - a) != (c - b):
            found.append(f"{key[2]} ({key[0]}:{key[1]}): {a}, {b}, {c} calls")
    return sorted(found)


def sizes(
    tmp_path: Path, shape: Callable[[int], tuple[int, int]], watched: tuple[str, ...] = WATCHED
) -> list[Counter[Key]]:
    folders = [project(tmp_path / str(step), *shape(step)) for step in (1, 2, 3, 4)]
    call_counts(folders[0])  # first calls: imports and caches
    return [call_counts(folder, watched) for folder in folders[1:]]


def test_render_calls_grow_linearly_with_tools(tmp_path: Path) -> None:
    counts = sizes(tmp_path, lambda step: (6 * step, 1))
    assert sum(counts[1].values()) > sum(counts[0].values())  # the watch sees the work
    assert nonlinear(counts) == []


def test_render_calls_grow_linearly_with_agents(tmp_path: Path) -> None:
    counts = sizes(tmp_path, lambda step: (12, 6 * step))
    assert sum(counts[1].values()) > sum(counts[0].values())
    assert nonlinear(counts) == []


def test_the_guard_sees_a_loop_over_all_tools_per_tool(tmp_path: Path) -> None:
    """The guard can fail: a helper called for each pair of tools is reported."""
    from langop_infra.manifests import _pods as pods

    def pairwise() -> None:
        pass

    original = pods.tool_objects
    seen: list[object] = []  # every tool built so far

    def quadratic(*args: Any, **kwargs: Any) -> Any:
        seen.append(args)
        for _ in seen:  # every earlier tool, once per tool
            pairwise()
        return original(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pods, "tool_objects", quadratic)
        counts = sizes(tmp_path, lambda step: (6 * step, 1), (*WATCHED, __file__))
    assert any(line.startswith("pairwise (") for line in nonlinear(counts)), nonlinear(counts)
