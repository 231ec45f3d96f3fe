"""The benchmarks' ``--quick`` modes run and report sane figures, so the scripts cannot rot.

No timing thresholds: absolute times on a shared machine are noise. Each check is that the
script exits 0, prints its table, and reports positive, consistent figures.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def run_quick(script: str, tmp_path: Path) -> tuple[str, dict[str, Any]]:
    out = tmp_path / f"{script}.json"
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / f"{script}.py"), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, json.loads(out.read_text())


def test_scale_quick(tmp_path: Path) -> None:
    stdout, data = run_quick("scale", tmp_path)
    assert "peak RSS MiB" in stdout and "ms/agent" in stdout
    [result] = data["results"]
    assert (result["tools"], result["agents"]) == (5, 20)
    assert result["kubernetes_objects"] == 1 + 3 * 5 + 3 * 20
    assert result["resources"] > result["kubernetes_objects"]
    for key in ("wall_s", "cpu_s", "ms_per_agent", "peak_rss_mib"):
        assert result[key] > 0, key


def test_overhead_quick(tmp_path: Path) -> None:
    stdout, data = run_quick("overhead", tmp_path)
    assert "ratio CPU" in stdout and "ours/baseline" in stdout
    assert data["kubernetes_objects"] == 1 + 3 * 5 + 3 * 20
    ours, baseline = data["sides"]["ours"], data["sides"]["baseline"]
    assert baseline["registrations"] == data["kubernetes_objects"]
    assert ours["registrations"] > baseline["registrations"]
    for side in (ours, baseline):
        assert side["median_wall_s"] > 0 and side["median_cpu_s"] > 0
    assert data["ratio"] > 0


def test_render_e2e_quick(tmp_path: Path) -> None:
    stdout, data = run_quick("render_e2e", tmp_path)
    assert "langop-infra --help" in stdout and "peak RSS MiB" in stdout
    render = data["render"]
    assert render["objects"] == 1 + 3 * 5 + 3 * 20
    for key in ("wall_s", "peak_rss_mib", "output_mib"):
        assert render[key] > 0, key
    assert data["help_median_s"] > 0
