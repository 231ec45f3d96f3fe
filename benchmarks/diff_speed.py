"""``langop-infra diff`` on two large renders: the old way against the current one.

Renders the generated T=100/A=500 cluster (about 2 MB of YAML), then a copy with a typical
review's worth of changes (images of 10% of the Deployments, every agent's config.yaml, two
reordered env lists). Each repetition diffs the pair both ways, alternating:

- baseline: the diff as it was before this round, reading with PyYAML's pure-Python
  ``yaml.safe_load_all`` and walking every field (kept below, verbatim in substance);
- current: :func:`manifest_diff.load_render` (libyaml) + ``diff_renders`` + the text report.

Reports the medians of CPU and wall time and of the per-repetition CPU ratio.

    python benchmarks/diff_speed.py           # T=100/A=500, 3 repetitions
    python benchmarks/diff_speed.py --quick   # T=5/A=20, 1 repetition
"""

from __future__ import annotations

import argparse
import copy
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import _common
import yaml

FULL = (100, 500, 3)
QUICK = (5, 20, 1)
TARGET = 5.0


# --- the baseline: the diff as it was (pure-Python YAML, a flow dump per change) -------------

_MISSING = object()


def baseline_load(path: Path) -> dict[tuple[str, ...], Any]:
    objects = {}
    for doc in yaml.safe_load_all(path.read_text()):
        if doc:
            meta = doc.get("metadata") or {}
            key = (doc["apiVersion"], doc["kind"], meta.get("namespace", ""), meta["name"])
            objects[key] = doc
    return objects


def baseline_changes(old: Any, new: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for k in sorted(set(old) | set(new), key=str):
            sub = f"{path}.{k}" if path else str(k)
            yield from baseline_changes(old.get(k, _MISSING), new.get(k, _MISSING), sub)
    elif isinstance(old, list) and isinstance(new, list):
        names = [i.get("name") for i in old + new if isinstance(i, Mapping)]
        if len(names) == len(old) + len(new) and all(isinstance(n, str) for n in names):
            before = {item["name"]: item for item in old}
            after = {item["name"]: item for item in new}
            for name in [*before, *(n for n in after if n not in before)]:
                sub = f"{path}[name={name}]"
                yield from baseline_changes(
                    before.get(name, _MISSING), after.get(name, _MISSING), sub
                )
        else:
            for i in range(max(len(old), len(new))):
                yield from baseline_changes(
                    old[i] if i < len(old) else _MISSING,
                    new[i] if i < len(new) else _MISSING,
                    f"{path}[{i}]",
                )
    elif old != new or type(old) is not type(new):
        yield (path, old, new)


def baseline_show(value: Any) -> str:
    if value is _MISSING:
        return "(absent)"
    text = yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...").strip()
    return text if len(text) <= 200 else text[:197] + "..."


def baseline_diff(old_path: Path, new_path: Path) -> str:
    old, new = baseline_load(old_path), baseline_load(new_path)
    lines = [f"+ {k}" for k in sorted(set(new) - set(old))]
    lines += [f"- {k}" for k in sorted(set(old) - set(new))]
    for key in sorted(set(old) & set(new)):
        changes = list(baseline_changes(old[key], new[key]))
        if changes:
            lines.append(f"~ {key}")
            lines += [f"    {p}: {baseline_show(a)} -> {baseline_show(b)}" for p, a, b in changes]
    return "\n".join(lines)


# --- the current diff ---------------------------------------------------------------------------


def current_diff(old_path: Path, new_path: Path) -> str:
    from langop_infra.offline._diff_report import report
    from langop_infra.offline._manifest_diff import diff_renders, load_render

    return report(diff_renders(load_render(old_path), load_render(new_path)))


# --- inputs and timing --------------------------------------------------------------------------


def write_renders(directory: Path, tools: int, agents: int) -> tuple[Path, Path, int]:
    from langop_infra.components.cluster import LanguageCluster
    from langop_infra.offline._mock_engine import run_program
    from langop_infra.offline._render import dump_stream

    document = _common.cluster_document(tools, agents)
    manifests = run_program(lambda: LanguageCluster(document["namespace"], document)).manifests()
    changed = copy.deepcopy(manifests)
    deployments = [m for m in changed if m["kind"] == "Deployment"]
    for m in deployments[:: max(1, len(deployments) // 10)]:
        container = m["spec"]["template"]["spec"]["containers"][0]
        container["image"] = container["image"].replace("1.0.0", "1.1.0")
    for m in changed:
        if m["kind"] == "ConfigMap" and "config.yaml" in m.get("data", {}):
            m["data"]["config.yaml"] = m["data"]["config.yaml"].replace(
                "protocol: mcp", "protocol: MCP", 1
            )
    for m in deployments[:2]:
        env = m["spec"]["template"]["spec"]["containers"][0].get("env", [])
        env.reverse()
    old, new = directory / "old.yaml", directory / "new.yaml"
    old.write_text(dump_stream(manifests))
    new.write_text(dump_stream(changed))
    return old, new, old.stat().st_size


def timed(run: Callable[[], Any]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    run()
    return time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", type=Path, dest="json_path")
    args = parser.parse_args()
    tools, agents, repetitions = QUICK if args.quick else FULL
    _common.print_machine()
    with tempfile.TemporaryDirectory() as tmp:
        old, new, size = write_renders(Path(tmp), tools, agents)
        samples: dict[str, list[tuple[float, float]]] = {"baseline": [], "current": []}
        for _ in range(repetitions):
            samples["baseline"].append(timed(lambda: baseline_diff(old, new)))
            samples["current"].append(timed(lambda: current_diff(old, new)))
    ratios = [b[0] / c[0] for b, c in zip(samples["baseline"], samples["current"], strict=True)]
    median = {
        k: (_common.median([s[0] for s in v]), _common.median([s[1] for s in v]))
        for k, v in samples.items()
    }
    ratio = _common.median(ratios)
    rows = [[name, round(cpu, 3), round(wall, 3)] for name, (cpu, wall) in median.items()]
    print(f"T={tools}/A={agents}: two renders of {size / 2**20:.2f} MiB, {repetitions} repetitions")
    _common.print_table(["diff", "CPU s (median)", "wall s (median)"], rows)
    print(
        f"speed-up (median CPU ratio): {ratio:.1f}x (target >= {TARGET:g}x: "
        f"{'met' if ratio >= TARGET else 'NOT met'}); "
        f"{datetime.now(timezone.utc):%Y-%m-%d}"
    )
    _common.write_json(
        args.json_path,
        {
            "tools": tools,
            "agents": agents,
            "render_bytes": size,
            "baseline_cpu_s": median["baseline"][0],
            "current_cpu_s": median["current"][0],
            "speedup": ratio,
        },
    )


if __name__ == "__main__":
    main()
