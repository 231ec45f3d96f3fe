"""How long the policy pack takes to judge a large stack offline, against the render itself.

Target (issue #26): checking 100 tools x 500 agents takes at most a fifth of the render's
time. Both run in this process on the same generated cluster (benchmarks/_common.py): each
round renders (the program under the mock engine, then the YAML stream), then checks that
render through the pack's Analyzer servicer, exactly what ``langop-infra check`` adds to a
render. Rounds alternate the two; the figures are medians of CPU time.

    python benchmarks/check_speed.py [--tools 100] [--agents 500] [--rounds 3] [--json FILE]
                                     [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common

TARGET = 0.2


def measure(tools: int, agents: int, rounds: int) -> dict[str, Any]:
    from langop_infra.components.cluster import LanguageCluster
    from langop_infra.core._gc_tuning import tuned_for_run
    from langop_infra.offline._mock_engine import run_program
    from langop_infra.offline._render import dump_stream
    from langop_infra.policy.offline import check

    document = _common.cluster_document(tools, agents)
    renders, checks, violations = [], [], 0
    for _ in range(rounds):
        started = time.process_time()
        with tuned_for_run():
            run = run_program(lambda: LanguageCluster("bench", document))
            dump_stream(run.manifests())
        renders.append(time.process_time() - started)
        started = time.process_time()
        violations = len(check(run, "bench"))
        checks.append(time.process_time() - started)
    render, checked = _common.median(renders), _common.median(checks)
    return {
        "tools": tools,
        "agents": agents,
        "render_cpu_s": render,
        "check_cpu_s": checked,
        "ratio": checked / render,
        "violations": violations,
        "rounds": {"render": renders, "check": checks},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=100)
    parser.add_argument("--agents", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--quick", action="store_true", help="10 x 20, one round: a smoke run")
    args = parser.parse_args(argv)
    if args.quick:
        args.tools, args.agents, args.rounds = 10, 20, 1
    data = measure(args.tools, args.agents, args.rounds)
    _common.print_machine()
    print(f"policy check of {args.tools} tools x {args.agents} agents (median of {args.rounds})")
    _common.print_table(
        ["render CPU s", "check CPU s", "check / render", "target", "verdict", "violations"],
        [
            [
                data["render_cpu_s"],
                data["check_cpu_s"],
                data["ratio"],
                TARGET,
                _common.met(data["ratio"], TARGET),
                data["violations"],
            ]
        ],
    )
    _common.write_json(args.json, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
