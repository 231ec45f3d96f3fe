"""The fixed cost a user feels on every run: ``validate``, a small render and ``--help``,
each side by side with the least possible, and what each command costs on the dev stack.

**The three comparisons**, child processes, alternating which side goes first, N pairs each;
the ratio is the median of the per-pair ratios (CPU time: user + system of the child, from
``wait4``; wall time is printed too):

- ``langop-infra validate --stack dev`` against **Python reading the same YAML with pydantic
  imported** (``import pydantic; from pydantic import BaseModel``, the stack file read with
  libyaml): target 3x;
- ``langop-infra render`` of a generated 30 tools x 150 agents stack against the least
  possible program (``render_overhead.py --baseline-child``: the same objects registered
  directly with pulumi_kubernetes under the same mock engine, same output): target 1.2x;
- ``langop-infra --help`` (median wall time): target 0.1 s; ``python -c pass`` beside it.

**Per command on the dev stack** (``stacks/Pulumi.dev.yaml``), medians of N runs each,
interleaved: ``--help``, ``validate`` (from the stack file), ``validate`` running the program
under the mock engine (``LANGOP_INFRA_VALIDATE_RUN=1``, what validate did before), ``render``,
and ``diff`` of the dev render against itself.

    python benchmarks/fixed_cost.py            # ~3 minutes
    python benchmarks/fixed_cost.py --profile  # where the fixed cost goes, step by step
    python benchmarks/fixed_cost.py --quick    # seconds; the test suite's smoke test
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import _common
import render_overhead as ro

FULL = {"pairs": 7, "render_pairs": 3, "render_size": (30, 150), "command_runs": 5, "help": 10}
QUICK = {"pairs": 1, "render_pairs": 1, "render_size": (5, 20), "command_runs": 1, "help": 2}
TARGETS = {"validate": 3.0, "render": 1.2, "help_s": 0.1}
STACK_FILE = _common.REPO / "stacks" / "Pulumi.dev.yaml"
# The least possible validate: Python reading the same YAML with pydantic imported.
BASELINE_VALIDATE = (
    "import sys, pydantic, yaml\n"
    "from pydantic import BaseModel\n"
    "with open(sys.argv[1], 'rb') as f:\n"
    "    yaml.load(f, Loader=yaml.CSafeLoader)\n"
)


def pairs_of(sides: dict[str, list[str]], pairs: int, env: dict[str, str]) -> dict[str, Any]:
    """``pairs`` rounds of both sides, alternating; medians and per-pair ratios."""
    names = list(sides)
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    for name in names:  # warm-up: file caches, bytecode
        _run(sides[name], env)
    for pair in range(pairs):
        for name in names if pair % 2 == 0 else list(reversed(names)):
            runs[name].append(_run(sides[name], env))
    ours, least = names
    result: dict[str, Any] = {}
    for name in names:
        result[name] = {k: _common.median([r[k] for r in runs[name]]) for k in runs[name][0]}
    for metric in ("cpu", "wall"):
        ratios = [
            a[f"{metric}_s"] / b[f"{metric}_s"]
            for a, b in zip(runs[ours], runs[least], strict=True)
        ]
        result[f"ratio_{metric}"] = _common.median(ratios)
        result[f"ratios_{metric}"] = ratios
    return result


def _run(argv: list[str], env: dict[str, str]) -> dict[str, float]:
    old = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        return ro.run_child(argv, None)
    finally:
        os.environ.clear()
        os.environ.update(old)


def validate_pair(pairs: int) -> dict[str, Any]:
    sides = {
        "validate": [
            ro.cli_path(),
            "validate",
            "--stack",
            "dev",
            "--project-dir",
            str(_common.REPO),
        ],
        "python + pydantic + YAML": [sys.executable, "-c", BASELINE_VALIDATE, str(STACK_FILE)],
    }
    return pairs_of(sides, pairs, _clean_env())


def render_pair(tools: int, agents: int, pairs: int) -> dict[str, Any]:
    result = ro.compare(tools, agents, pairs, [ro.RENDER, ro.BASELINE])
    return {
        "tools": tools,
        "agents": agents,
        "objects": result["objects"],
        "render": {k: v for k, v in result[ro.RENDER].items() if k.endswith("_s")},
        "baseline": {k: v for k, v in result[ro.BASELINE].items() if k.endswith("_s")},
        "ratio_cpu": result[ro.RENDER]["ratio_cpu"],
        "ratio_wall": result[ro.RENDER]["ratio_wall"],
        "ratios_cpu": result[ro.RENDER]["ratios_cpu"],
    }


def help_pair(runs: int) -> dict[str, Any]:
    sides = {
        "langop-infra --help": [ro.cli_path(), "--help"],
        "python -c pass": [sys.executable, "-c", "pass"],
    }
    result = pairs_of(sides, runs, _clean_env())
    result["help_median_s"] = result["langop-infra --help"]["wall_s"]
    return result


def per_command(runs: int) -> list[dict[str, Any]]:
    """Each command on the dev stack, interleaved rounds, medians."""
    cli, repo = ro.cli_path(), str(_common.REPO)
    with tempfile.TemporaryDirectory(prefix="langop-bench-") as tmp:
        render_out = Path(tmp) / "dev.yaml"
        ro.run_child([cli, "render", "--stack", "dev", "--project-dir", repo], render_out)
        commands: dict[str, tuple[list[str], dict[str, str]]] = {
            "langop-infra --help": ([cli, "--help"], {}),
            "validate --stack dev": (
                [cli, "validate", "--stack", "dev", "--project-dir", repo],
                {},
            ),
            "validate --stack dev (program run)": (
                [cli, "validate", "--stack", "dev", "--project-dir", repo],
                {"LANGOP_INFRA_VALIDATE_RUN": "1"},
            ),
            "render --stack dev": ([cli, "render", "--stack", "dev", "--project-dir", repo], {}),
            "diff dev.yaml dev.yaml": ([cli, "diff", str(render_out), str(render_out)], {}),
        }
        found: dict[str, list[dict[str, float]]] = {name: [] for name in commands}
        for round_ in range(runs):
            names = list(commands) if round_ % 2 == 0 else list(reversed(commands))
            for name in names:
                argv, extra = commands[name]
                found[name].append(_run(argv, {**_clean_env(), **extra}))
    return [
        {
            "command": name,
            **{k: _common.median([r[k] for r in runs_]) for k in runs_[0]},
        }
        for name, runs_ in found.items()
    ]


# Where a command's fixed cost goes: what each step imports or does, in the order render
# takes them, as CPU time in one child process (--profile).
PROFILE_STEPS = (
    ("the CLI and its parser", "import langop_infra.cli.main"),
    ("pydantic (BaseModel)", "from pydantic import BaseModel"),
    ("PyYAML with libyaml", "import yaml"),
    ("the config models", "import langop_infra.config.cluster, langop_infra.config._http_tool"),
    ("document checks", "import langop_infra.config.checks._validation"),
    ("validate's own modules", "import langop_infra.offline._validate"),
    ("jsonschema (agents' output schemas)", "import jsonschema"),
    ("validate --stack dev, once imported", "VALIDATE"),
    ("pulumi SDK (grpc, protobuf)", "import pulumi, pulumi.runtime"),
    ("pulumi-kubernetes (core, apps, networking v1)", "K8S"),
    ("the mock engine", "import langop_infra.offline._mock_engine"),
    ("components and schema sync", "import langop_infra.components.cluster"),
    ("the stack program", "import langop_infra.program.stack"),
    ("render --stack dev, once imported", "RENDER"),
)
PROFILE_CHILD = """
import contextlib, io, sys, time
steps = {steps!r}
repo = {repo!r}
out = []
for name, code in steps:
    started = time.process_time()
    if code == "VALIDATE":
        from langop_infra.cli.main import main
        main(["validate", "--stack", "dev", "--project-dir", repo])
    elif code == "RENDER":
        with contextlib.redirect_stdout(io.StringIO()):
            main(["render", "--stack", "dev", "--project-dir", repo])
    elif code == "K8S":
        import pulumi_kubernetes as k8s
        k8s.core.v1.Namespace, k8s.apps.v1.Deployment, k8s.networking.v1.NetworkPolicy
    else:
        exec(code)
    out.append(time.process_time() - started)
print(out)
"""


def import_profile(runs: int) -> list[dict[str, Any]]:
    """CPU seconds of each step of :data:`PROFILE_STEPS`, medians of ``runs`` children."""
    import ast
    import subprocess

    code = PROFILE_CHILD.format(steps=PROFILE_STEPS, repo=str(_common.REPO))
    found: list[list[float]] = []
    for _ in range(runs + 1):  # the first writes bytecode
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        found.append(ast.literal_eval(done.stdout.strip().splitlines()[-1]))
    return [
        {"step": name, "cpu_s": _common.median([run[i] for run in found[1:]])}
        for i, (name, _) in enumerate(PROFILE_STEPS)
    ]


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("LANGOP_INFRA_VALIDATE")}


def print_report(data: dict[str, Any]) -> None:
    _common.print_machine()
    v, r, h = data["validate"], data["render"], data["help"]
    print(f"\nside by side, child processes, alternating; medians ({data['pairs']} pairs)")
    rows = [
        ["validate --stack dev", v["validate"]["cpu_s"], v["validate"]["wall_s"]],
        [
            "python + pydantic + YAML (same file)",
            v["python + pydantic + YAML"]["cpu_s"],
            v["python + pydantic + YAML"]["wall_s"],
        ],
        [
            f"render {r['tools']}x{r['agents']} ({r['objects']} objects)",
            r["render"]["cpu_s"],
            r["render"]["wall_s"],
        ],
        ["least possible program, same objects", r["baseline"]["cpu_s"], r["baseline"]["wall_s"]],
        ["langop-infra --help", h["langop-infra --help"]["cpu_s"], h["help_median_s"]],
        ["python -c pass", h["python -c pass"]["cpu_s"], h["python -c pass"]["wall_s"]],
    ]
    _common.print_table(["side", "CPU s", "wall s"], rows)
    print("\neach command on the dev stack, medians of interleaved runs")
    _common.print_table(
        ["command", "CPU s", "wall s", "peak RSS MiB"],
        [
            [c["command"], c["cpu_s"], c["wall_s"], round(c["peak_rss_mib"])]
            for c in data["commands"]
        ],
    )
    print("\ntargets:")
    for name, value, target in data["verdicts"]:
        print(f"  {name}: {value:.3f} (target {target}: {_common.met(value, target)})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one pair each, a 5x20 render")
    parser.add_argument("--pairs", type=int, help="override the number of validate pairs")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument(
        "--profile", action="store_true", help="only where the fixed cost goes, step by step"
    )
    args = parser.parse_args(argv)
    # As installed, a package has its bytecode: children write and reuse it (this machine's
    # PYTHONDONTWRITEBYTECODE=1 would make every run compile langop_infra from source).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    plan = QUICK if args.quick else FULL
    if args.profile:
        steps = import_profile(plan["command_runs"])
        _common.print_machine()
        print("\nwhere render's fixed cost goes, in one child process (CPU s, medians)")
        rows = [[s["step"], s["cpu_s"]] for s in steps]
        _common.print_table(["step", "CPU s"], [*rows, ["total", sum(s["cpu_s"] for s in steps)]])
        _common.write_json(args.json, {"benchmark": "fixed_cost --profile", "steps": steps})
        return 0
    pairs = args.pairs or plan["pairs"]
    data: dict[str, Any] = {
        "benchmark": "fixed_cost",
        "pairs": pairs,
        "validate": validate_pair(pairs),
        "render": render_pair(*plan["render_size"], plan["render_pairs"]),
        "help": help_pair(plan["help"]),
        "commands": per_command(plan["command_runs"]),
    }
    r = data["render"]
    data["verdicts"] = [
        (
            "validate / python + pydantic + YAML, CPU",
            data["validate"]["ratio_cpu"],
            TARGETS["validate"],
        ),
        (
            "validate / python + pydantic + YAML, wall",
            data["validate"]["ratio_wall"],
            TARGETS["validate"],
        ),
        (
            f"render / least possible at {r['tools']}x{r['agents']}, CPU",
            r["ratio_cpu"],
            TARGETS["render"],
        ),
        ("--help s (wall)", data["help"]["help_median_s"], TARGETS["help_s"]),
    ]
    print_report(data)
    _common.write_json(args.json, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
