"""The latency benchmark runs end to end (no timing thresholds: CI machines vary)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "mcp_latency.py"


def test_quick_benchmark_prints_a_ratio(tmp_path: Path) -> None:
    figures_path = tmp_path / "latency.json"
    done = subprocess.run(
        [sys.executable, str(BENCHMARK), "--quick", "--json", str(figures_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"^langop-infra\s+5\s+\d+\.\d+", done.stdout, re.MULTILINE)
    assert re.search(r"^official mcp SDK\s+5\s+\d+\.\d+", done.stdout, re.MULTILINE)
    ratio = re.search(r"^ratio ours/official: (\d+\.\d+)", done.stdout, re.MULTILINE)
    assert ratio is not None, done.stdout
    assert float(ratio.group(1)) > 0
    figures = json.loads(figures_path.read_text())
    assert figures["ratio"] == pytest.approx(float(ratio.group(1)), abs=0.01)
    assert figures["clients"]["langop-infra"]["runs"] == 5
    assert figures["clients"]["official mcp SDK"]["median_ms"] > 0
