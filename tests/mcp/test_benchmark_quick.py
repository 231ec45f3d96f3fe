"""The latency benchmark runs end to end (no timing thresholds: CI machines vary)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "mcp_latency.py"


@pytest.mark.slow
@pytest.mark.bench
def test_quick_benchmark_prints_a_ratio(tmp_path: Path) -> None:
    figures_path = tmp_path / "latency.json"
    done = subprocess.run(
        [sys.executable, str(BENCHMARK), "--quick", "--json", str(figures_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(figures_path.read_text())
    for revision in ("2025-11-25", "2026-07-28"):
        for client in ("ours", "official", "official, TLS cached"):
            row = rf"^{revision}\s+{re.escape(client)}\s+5\s+\d+\.\d+"
            assert re.search(row, done.stdout, re.MULTILINE), done.stdout
            assert figures["revisions"][revision]["clients"][client]["runs"] == 5
        printed = re.search(
            rf"^{revision} ratio ours/official: (\d+\.\d+)", done.stdout, re.MULTILINE
        )
        assert printed is not None, done.stdout
        ratio = figures["revisions"][revision]["ratio"]
        assert ratio == pytest.approx(float(printed.group(1)), abs=0.01)
        assert ratio > 0
    assert re.search(r"^date: .* UTC; nproc \d+, ", done.stdout, re.MULTILINE)
