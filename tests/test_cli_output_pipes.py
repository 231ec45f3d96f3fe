"""A reader that goes away after a few lines (``| head``): quiet exit 141, nothing on stderr,
also when the output is small enough to sit in Python's buffer until the end."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("argv", [("completion", "fish"), ("graph", "--stack", "dev")])
def test_small_buffered_output_into_a_closed_pipe(argv: tuple[str, ...]) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    with subprocess.Popen(
        [sys.executable, "-m", "langop_infra", *argv],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=write_end,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        os.close(write_end)
        _, err = process.communicate(timeout=120)
    assert (process.returncode, err) == (141, "")


@pytest.mark.slow
def test_a_large_render_into_a_reader_that_stops_after_one_line(tmp_path: Path) -> None:
    """``render | head -1`` with far more than a pipe holds: 141, not 0 with the rest lost
    (CPython's buffered stdout takes the partial write for done)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from test_ctrl_c import big_project

    project = big_project(tmp_path, tools=30, agents=60)  # about 370 kB of YAML
    with subprocess.Popen(
        [sys.executable, "-m", "langop_infra", "render", "--stack", "big"],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        first = process.stdout.readline()
        process.stdout.close()  # the reader goes away, as `head -1` does
        err = process.stderr.read().decode()
        process.wait(timeout=120)
    assert first.startswith(b"# Rendered offline by langop-infra from stack 'big'")
    assert process.returncode == 141, err[-2000:]
    assert "Traceback" not in err and "Error" not in err


def test_the_diff_benchmark_quick_mode_reports_a_speed_up(tmp_path: Path) -> None:
    """``benchmarks/diff_speed.py --quick`` runs and reports sane figures (no thresholds)."""
    import json

    out = tmp_path / "diff.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "diff_speed.py"), "--quick", "--json", str(out)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    assert (figures["tools"], figures["agents"]) == (5, 20)
    assert figures["render_bytes"] > 10_000
    assert figures["baseline_cpu_s"] > 0 and figures["current_cpu_s"] > 0
    assert "speed-up (median CPU ratio)" in done.stdout


def test_readme_first_screen_renders_a_named_stack() -> None:
    readme = (ROOT / "README.md").read_text()
    first_block = readme.split("```bash", 1)[1].split("```", 1)[0]
    assert "langop-infra render --stack dev" in first_block
