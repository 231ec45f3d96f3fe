"""Scale: a generated LanguageCluster of T tools and A agents under the SDK mock engine.

Each size runs in a fresh child process, so its peak RSS is its own. The child imports,
warms up with a tiny cluster, then times one build: wall and CPU time, resources
registered, time per agent, peak RSS. Flat time per agent as A grows means linear total.

    python benchmarks/scale.py            # T=20/A=100 and T=100/A=500, k=5
    python benchmarks/scale.py --quick    # T=5/A=20
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import _common

FULL_SIZES = ((20, 100), (100, 500))
QUICK_SIZES = ((5, 20),)
RSS_TARGET_MIB = 1024.0
# Time per agent may grow this much from the smallest to the largest size and still count as
# flat: shared-machine noise, and a bigger heap makes each garbage collection slower.
FLAT_TOLERANCE = 1.5


def measure(tools: int, agents: int, refs: int) -> dict[str, Any]:
    """Child-process mode: one build of the given size, measured."""
    started = time.perf_counter()
    _common.warm_up()
    startup = time.perf_counter() - started
    document = _common.cluster_document(tools, agents, refs)
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    run = _common.build_cluster(document)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    kubernetes = len(run.kubernetes())
    expected = _common.expected_kubernetes_objects(tools, agents)
    if kubernetes != expected:
        raise SystemExit(f"expected {expected} Kubernetes objects, got {kubernetes}")
    return {
        "tools": tools,
        "agents": agents,
        "refs": refs,
        "resources": len(run.registrations),
        "kubernetes_objects": kubernetes,
        "wall_s": wall,
        "cpu_s": cpu,
        "ms_per_agent": 1000 * wall / agents,
        "cpu_ms_per_agent": 1000 * cpu / agents,
        "startup_s": startup,
        "peak_rss_mib": _common.peak_rss_mib(),
    }


def run_child(tools: int, agents: int, refs: int) -> dict[str, Any]:
    argv = [sys.executable, __file__, "--child", str(tools), str(agents), "--refs", str(refs)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"scale child T={tools}/A={agents} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T=5/A=20 only, for CI")
    parser.add_argument("--refs", type=int, default=_common.REFS_PER_AGENT, help="k: tools/agent")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument("--child", nargs=2, type=int, metavar=("T", "A"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(*args.child, args.refs)))
        return 0

    sizes = QUICK_SIZES if args.quick else FULL_SIZES
    results = [run_child(tools, agents, args.refs) for tools, agents in sizes]
    _common.print_machine()
    print(f"LanguageCluster under the SDK mock engine, k={args.refs} tool references per agent")
    _common.print_table(
        ["tools", "agents", "resources", "k8s objects", "wall s", "CPU s", "ms/agent",
         "CPU ms/agent", "peak RSS MiB"],
        [
            [r["tools"], r["agents"], r["resources"], r["kubernetes_objects"], r["wall_s"],
             r["cpu_s"], r["ms_per_agent"], r["cpu_ms_per_agent"], r["peak_rss_mib"]]
            for r in results
        ],
    )  # fmt: skip
    summary: dict[str, Any] = {}
    if len(results) > 1:
        first, last = results[0], results[-1]
        growth = last["cpu_ms_per_agent"] / first["cpu_ms_per_agent"]
        summary["per_agent_growth"] = growth
        summary["flat"] = growth <= FLAT_TOLERANCE
        print(
            f"CPU time per agent, A={last['agents']} against A={first['agents']}: "
            f"x{growth:.2f} ({'flat: linear total' if summary['flat'] else 'NOT flat'}; "
            f"tolerance x{FLAT_TOLERANCE})"
        )
    largest = results[-1]
    summary["peak_rss_mib"] = largest["peak_rss_mib"]
    print(
        f"peak RSS at T={largest['tools']}/A={largest['agents']}: "
        f"{largest['peak_rss_mib']:.0f} MiB (target < {RSS_TARGET_MIB:.0f} MiB: "
        f"{_common.met(largest['peak_rss_mib'], RSS_TARGET_MIB)})"
    )
    _common.write_json(args.json, {"benchmark": "scale", "results": results, **summary})
    return 0


if __name__ == "__main__":
    sys.exit(main())
