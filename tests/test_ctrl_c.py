"""Ctrl-C at any moment of render, validate, diff and schemas: exit 130 on that one signal (the
work it cut short would have gone on), one line on stderr, no traceback, no asyncio warnings,
nothing half-written on stdout. How long the exit took is never asserted: a process that does
not end on the signal is caught by a generous guard (60 s)."""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from _common import cluster_document  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "0"}
pytestmark = pytest.mark.slow


def big_project(folder: Path, tools: int = 60, agents: int = 120) -> Path:
    """The repository's program with a generated stack ``big`` (about 3 s to render)."""
    (folder / "stacks").mkdir(parents=True)
    shutil.copy(ROOT / "Pulumi.yaml", folder / "Pulumi.yaml")
    shutil.copy(ROOT / "__main__.py", folder / "__main__.py")
    document = cluster_document(tools, agents)
    config = {f"langop-infra:{k}": document[k] for k in ("namespace", "tools", "agents")}
    (folder / "stacks" / "Pulumi.big.yaml").write_text(yaml.safe_dump({"config": config}))
    return folder


def interrupted_after(
    argv: list[str], cwd: Path, delay: float, env: dict[str, str] = ENV
) -> tuple[int, str, str]:
    """Start ``langop-infra <argv>``, send SIGINT after ``delay`` s; exit code, stdout and
    stderr once it has exited (no second signal is ever sent)."""
    with subprocess.Popen(
        [sys.executable, "-m", "langop_infra", *argv],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        time.sleep(delay)
        assert process.poll() is None, f"finished before the signal at {delay:.2f} s"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
        return process.returncode, out, err


def check(argv: list[str], cwd: Path, delay: float, env: dict[str, str] = ENV) -> None:
    code, out, err = interrupted_after(argv, cwd, delay, env)
    where = f"{argv[0]} interrupted at {delay:.2f} s"
    # Warnings the run gave before the signal (the generated images have no digest) stay:
    # whole lines, each of its own. The interruption itself is one line, the last.
    prefix = f"langop-infra {argv[0]}: "
    lines = err.splitlines(keepends=True)
    warnings = [line for line in lines if line.startswith(prefix + "warning: ")]
    assert all(line.endswith("\n") for line in warnings), where
    rest = [line for line in lines if line not in warnings]
    assert (code, rest) == (130, [prefix + "error: interrupted\n"]), where
    assert lines[-1] == prefix + "error: interrupted\n", where
    assert out == "", where


def test_ctrl_c_at_ten_random_points_of_a_large_render(tmp_path: Path) -> None:
    project = big_project(tmp_path)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "langop_infra", "render", "--stack", "big"],
        cwd=project,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    duration = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    seed = random.randrange(1 << 30)
    # From 0.25 s: before that the interpreter is still starting, before any code of ours.
    rng = random.Random(seed)
    points = sorted(rng.uniform(0.25, 0.8 * duration) for _ in range(10))
    assert len(set(points)) == 10, points
    print(f"random points from seed {seed}: {points}")  # shown on failure, to repeat them
    for delay in points:
        check(["render", "--stack", "big"], project, delay)


def run_time(argv: list[str], cwd: Path, env: dict[str, str] = ENV) -> float:
    """How long ``langop-infra <argv>`` takes uninterrupted, in seconds."""
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "langop_infra", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        timeout=300,
        check=False,
    )
    return time.monotonic() - started


def within(duration: float) -> float:
    """A moment inside a run of ``duration`` seconds, after the interpreter has started (0.25
    s); a run too short for one ends before the signal, which ``interrupted_after`` reports."""
    return random.uniform(0.25, max(0.25, 0.7 * duration))


def test_ctrl_c_during_validate_and_diff(tmp_path: Path) -> None:
    # validate of a stack file reads it alone and ends within 0.3 s even at 240 x 480: the
    # signal goes to the run of the program it makes on request (LANGOP_INFRA_VALIDATE_RUN).
    # The diff inputs are large enough that diff is still running at the signal.
    project = big_project(tmp_path, tools=240, agents=480)
    run = {**ENV, "LANGOP_INFRA_VALIDATE_RUN": "1"}
    duration = run_time(["validate", "--stack", "big"], project, run)
    check(["validate", "--stack", "big"], project, within(duration), run)
    head = subprocess.run(
        [sys.executable, "-m", "langop_infra", "render", "--stack", "big"],
        cwd=project,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    (tmp_path / "new.yaml").write_text(head)
    (tmp_path / "old.yaml").write_text(head.replace(":1.0.0", ":0.9.0").replace("MODEL", "M"))
    duration = run_time(["diff", "old.yaml", "new.yaml"], tmp_path)
    for _ in range(3):  # within the time a diff of these two large renders takes
        check(["diff", "old.yaml", "new.yaml"], tmp_path, within(duration))


def test_ctrl_c_while_schemas_waits_for_a_server_that_never_answers(tmp_path: Path) -> None:
    """A listening socket that accepts connections and never replies (the worst server)."""
    project = big_project(tmp_path, tools=5, agents=1)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/mcp"
        argv = ["schemas", "--stack", "big", "--lock", str(tmp_path / "lock.yaml"), "--update"]
        argv += ["--url", f"tool-0={url}", "--url", f"tool-1={url}"]
        check(argv, project, 1.5)
