"""Ctrl-C at any moment of render, validate, diff and schemas: exit 130 on that one signal (the
work it cut short would have gone on), one line on stderr, no traceback, no asyncio warnings,
nothing half-written on stdout. How long the exit took is never asserted: a process that does
not end on the signal is caught by a generous guard (60 s).

Moments are counted from the command's own signal that Ctrl-C is its to handle (its SIGINT
handler installed, reported by a start-up hook), not from its start: on a loaded machine the
interpreter may take longer to get there than any fixed delay. Ctrl-C before that moment is
tests/test_ctrl_c_first_instant.py's."""

from __future__ import annotations

import contextlib
import os
import random
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from _common import cluster_document  # noqa: E402

from tests.support.startup import HUNG_AFTER  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "0"}
pytestmark = pytest.mark.slow

# Loaded by `site` at start-up: writes one byte to the file descriptor READY_FD once the
# command has installed its SIGINT handler (langop_infra/_interrupt.py).
READY_HOOK = """
import os, signal

_install = signal.signal

def _signal(signum, handler):
    previous = _install(signum, handler)
    if signum == signal.SIGINT:
        signal.signal = _install
        os.write(int(os.environ["READY_FD"]), b"r")
    return previous

signal.signal = _signal
"""


def big_project(folder: Path, tools: int = 60, agents: int = 120) -> Path:
    """The repository's program with a generated stack ``big`` (about 3 s to render)."""
    (folder / "stacks").mkdir(parents=True)
    shutil.copy(ROOT / "Pulumi.yaml", folder / "Pulumi.yaml")
    shutil.copy(ROOT / "__main__.py", folder / "__main__.py")
    document = cluster_document(tools, agents)
    config = {f"langop-infra:{k}": document[k] for k in ("namespace", "tools", "agents")}
    (folder / "stacks" / "Pulumi.big.yaml").write_text(yaml.safe_dump({"config": config}))
    return folder


@contextlib.contextmanager
def handling_ctrl_c(
    argv: list[str], cwd: Path, env: dict[str, str] = ENV
) -> Iterator[subprocess.Popen[str]]:
    """``langop-infra <argv>``, running, from the moment it handles SIGINT itself; bounded by
    :data:`HUNG_AFTER`, which only ends a hung start."""
    read, write = os.pipe()
    with tempfile.TemporaryDirectory() as hook:
        Path(hook, "sitecustomize.py").write_text(READY_HOOK)
        path = f"{hook}{os.pathsep}{env['PYTHONPATH']}"
        with subprocess.Popen(
            [sys.executable, "-m", "langop_infra", *argv],
            cwd=cwd,
            env={**env, "PYTHONPATH": path, "READY_FD": str(write)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            pass_fds=(write,),
        ) as process:
            os.close(write)
            try:
                ready = select.select([read], [], [], HUNG_AFTER)[0] and os.read(read, 1)
            finally:
                os.close(read)
            if ready != b"r":  # exited (end of the pipe) or hung before its handler
                process.kill()
                pytest.fail(f"{argv[0]} never handled SIGINT: {process.communicate()[1]}")
            yield process


def interrupted_after(
    argv: list[str], cwd: Path, delay: float, env: dict[str, str] = ENV
) -> tuple[int, str, str]:
    """Start ``langop-infra <argv>``, send SIGINT ``delay`` s after it handles SIGINT; exit
    code, stdout and stderr once it has exited (no second signal is ever sent)."""
    with handling_ctrl_c(argv, cwd, env) as process:
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
    duration, code, err = run_time(["render", "--stack", "big"], project)
    assert code == 0, err
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    points = sorted(rng.uniform(0, 0.8 * duration) for _ in range(10))
    assert len(set(points)) == 10, points
    print(f"random points from seed {seed}: {points}")  # shown on failure, to repeat them
    for delay in points:
        check(["render", "--stack", "big"], project, delay)


def run_time(argv: list[str], cwd: Path, env: dict[str, str] = ENV) -> tuple[float, int, str]:
    """How long ``langop-infra <argv>``, uninterrupted, runs once it handles SIGINT, in
    seconds; its exit code and stderr."""
    with handling_ctrl_c(argv, cwd, env) as process:
        started = time.monotonic()
        _, err = process.communicate(timeout=HUNG_AFTER)
        return time.monotonic() - started, process.returncode, err


def within(duration: float) -> float:
    """A moment inside the first half of a run of ``duration`` seconds (from its handling
    SIGINT); a run ended before it is reported by ``interrupted_after``. Half: on a loaded
    machine one run of diff took 30 % less than the run measured, and was then blocked
    writing its output into the pipe this test reads only after the signal."""
    return random.uniform(0, 0.5 * duration)


def test_ctrl_c_during_validate_and_diff(tmp_path: Path) -> None:
    # validate of a stack file reads it alone and ends within 0.3 s even at 240 x 480: the
    # signal goes to the run of the program it makes on request (LANGOP_INFRA_VALIDATE_RUN).
    # The diff inputs are large enough that diff is still running at the signal.
    project = big_project(tmp_path, tools=240, agents=480)
    run = {**ENV, "LANGOP_INFRA_VALIDATE_RUN": "1"}
    duration = run_time(["validate", "--stack", "big"], project, run)[0]
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
    # The faster of two runs: the signal must come while diff still computes.
    duration = min(run_time(["diff", "old.yaml", "new.yaml"], tmp_path)[0] for _ in range(2))
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
