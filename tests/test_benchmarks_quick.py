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

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.bench]

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


OBJECTS = 1 + 3 * 5 + 3 * 20  # T=5/A=20: namespace, 3 per tool, 3 per agent


def test_render_overhead_quick(tmp_path: Path) -> None:
    stdout, data = run_quick("render_overhead", tmp_path)
    assert "ratio CPU" in stdout and "langop-infra --help" in stdout and "targets:" in stdout
    [size] = data["comparison"]
    assert (size["tools"], size["agents"], size["objects"]) == (5, 20, OBJECTS)
    for side in ("render", "baseline", "baseline, GC tuned"):
        assert size[side]["cpu_s"] > 0 and size[side]["wall_s"] > 0, side
        assert size[side]["peak_rss_mib"] > 0, side
    assert size["render"]["ratio_cpu"] > 0 and size["baseline, GC tuned"]["ratio_cpu"] > 0
    [point] = data["growth"]["sizes"]
    assert point["agents"] == 20 and point["growth"] == 1.0
    assert data["growth"]["fixed_cpu_s"] > 0 and point["render_cpu_s"] > 0
    assert data["startup"]["help_median_s"] > 0
    assert [name for name, *_ in data["verdicts"]][1:] == [
        "per-agent growth, first to last size",
        "peak RSS MiB at 5x20",
        "--help s",
    ]
    machine = data["machine"]
    assert machine["nproc"] >= 1 and machine["cpu_model"] and machine["date_utc"]


@pytest.mark.slow
def test_overhead_quick(tmp_path: Path) -> None:
    stdout, data = run_quick("overhead", tmp_path)
    assert "ms/registration above baseline" in stdout
    sides = data["sides"]
    assert sides["baseline"]["registrations"] == data["kubernetes_objects"] == OBJECTS
    # the component tree: cluster + 5 tools, cluster + 20 agents, all 26
    assert sides["+ tool components"]["registrations"] == OBJECTS + 6
    assert sides["+ agent components"]["registrations"] == OBJECTS + 21
    assert sides["+ all components"]["registrations"] == OBJECTS + 26
    # ours adds one ToolSchemaSync per tool on top of the tree
    assert sides["ours"]["registrations"] == OBJECTS + 26 + 5
    assert sides["ours, schema sync off"]["registrations"] == OBJECTS + 26
    assert all(side["median_cpu_s"] > 0 for side in sides.values())
    assert data["gc_tuned"] is True


def test_registry_connect_quick(tmp_path: Path) -> None:
    stdout, data = run_quick("registry_connect", tmp_path)
    assert "first tool answered" in stdout
    assert data["runs"] == 3 and data["fast_alone_ms"] > 0 and data["first_tool_ms"] > 0
    assert data["target_ms"] == pytest.approx(data["fast_alone_ms"] + 100, abs=0.02)
    assert data["machine"]["date_utc"]


def test_fixed_cost_quick(tmp_path: Path) -> None:
    stdout, data = run_quick("fixed_cost", tmp_path)
    assert "python + pydantic + YAML" in stdout and "targets:" in stdout
    validate = data["validate"]
    assert validate["validate"]["cpu_s"] > 0 and validate["python + pydantic + YAML"]["cpu_s"] > 0
    assert validate["ratio_cpu"] > 0 and validate["ratio_wall"] > 0
    render = data["render"]
    assert (render["tools"], render["agents"], render["objects"]) == (5, 20, OBJECTS)
    assert render["ratio_cpu"] > 0 and data["help"]["help_median_s"] > 0
    commands = [c["command"] for c in data["commands"]]
    assert commands == [
        "langop-infra --help",
        "validate --stack dev",
        "validate --stack dev (program run)",
        "render --stack dev",
        "diff dev.yaml dev.yaml",
    ]
    assert all(c["cpu_s"] > 0 and c["peak_rss_mib"] > 0 for c in data["commands"])
    assert [name for name, *_ in data["verdicts"]][-1] == "--help s (wall)"


def test_parse_cost_quick(tmp_path: Path) -> None:
    stdout, data = run_quick("parse_cost", tmp_path)
    assert "B per byte" in stdout and "targets:" in stdout
    kinds = [(p["kind"], p["format"]) for p in data["parsing"]]
    assert kinds == [("lock", "yaml"), ("render", "yaml"), ("stack", "yaml"), ("lock", "json")]
    assert all(p["mib"] > 0.5 and p["bytes_per_byte"] >= 0 for p in data["parsing"])
    [validate] = data["linearity"]
    assert (validate["command"], validate["small"], validate["large"]) == ("validate", 20, 200)
    assert validate["small_cpu_s"] > 0 and validate["growth"] > 0
    assert validate["small_wall_s"] > 0 and validate["wall_growth"] > 0 and validate["runs"] == 1
    judged = [name for name, *_ in data["verdicts"] if "(judged)" in name]
    assert len(judged) == 2 and judged[0].startswith("largest lock ("), judged
    assert judged[0].endswith("CPU s (judged)"), judged
    assert judged[1] == "validate 200 / 20 tools, CPU (judged)", judged
    # Linear is the target: the time ratio at most the tool-count ratio (200 / 20).
    targets = {name: target for name, _, target in data["verdicts"]}
    assert targets["validate 200 / 20 tools, CPU (judged)"] == 10.0, targets
    assert "times are judged on CPU seconds" in stdout


def test_agent_turn_quick(tmp_path: Path) -> None:
    stdout, data = run_quick("agent_turn", tmp_path)
    assert "ratio CPU ours/baseline" in stdout and "target <= 1.0" in stdout
    assert (data["rounds"], data["turns_per_round"]) == (1, 10)
    for side in ("ours", "baseline"):
        assert data["sides"][side]["cpu_ms_per_turn"] > 0, side
        assert data["sides"][side]["wall_ms_per_turn"] > 0, side
    assert data["ratio_cpu"] > 0 and data["machine"]["date_utc"]


def test_agent_turn_against_another_source_tree_quick(tmp_path: Path) -> None:
    out = tmp_path / "against.json"
    tree = BENCHMARKS.parent
    done = subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "agent_turn.py"),
            *("--quick", "--against", str(tree), "--json", str(out)),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f"baseline: the runtime of {tree}" in done.stdout
    assert "baseline answers with" not in done.stdout  # no baseline child ran
    data = json.loads(out.read_text())
    assert data["against"] == str(tree) and data["sides"]["baseline"]["cpu_ms_per_turn"] > 0


def test_mcp_call_cpu_quick(tmp_path: Path) -> None:
    stdout, data = run_quick("mcp_call_cpu", tmp_path)
    assert "ratio CPU ours/sdk" in stdout
    assert (data["rounds"], data["calls_per_round"], len(data["ratios"])) == (2, 10, 2)
    assert data["us_per_call"]["ours"] > 0 and data["us_per_call"]["sdk"] > 0
    assert data["ratio_cpu"] > 0 and data["machine"]["date_utc"]


def test_fixed_cost_profile_quick(tmp_path: Path) -> None:
    out = tmp_path / "profile.json"
    done = subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "fixed_cost.py"),
            "--profile",
            "--quick",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    steps = {s["step"]: s["cpu_s"] for s in json.loads(out.read_text())["steps"]}
    assert "where render's fixed cost goes" in done.stdout
    assert (
        steps["the config models"] > 0
        and steps["pulumi-kubernetes (core, apps, networking v1)"] > 0
    )
    assert steps["render --stack dev, once imported"] > 0
