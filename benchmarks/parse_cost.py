"""What reading a schema lock, a ``diff`` input and a stack file costs per input byte, and
whether validate and render stay linear in the number of tools.

**Parsing** (issue 36, section 4: at most about 10 bytes of memory per input byte, linear; a
64 MiB lock under 1 GB and 30 s). For each kind and size, a generated file is read in a child
process by the function the command uses (``sync.lock.load_lock``,
``offline.manifest_diff.load_render``, ``offline.project.load_stack_file``). The child reports
its resident memory before reading (imports done) and its peak after (``VmHWM``); the
difference over the file's size is the cost per byte. CPU time is the child's own around the
read. Files: a lock of tools with realistic input schemas (YAML, and JSON for the largest
size), a render stream of Deployments and ConfigMaps, a stack file of tools.

**Linearity** (10,000 tools at most 10x the time of 1,000). ``langop-infra validate`` of
generated stacks of 1,000 and 10,000 tools (no agents: the stacks have none to scale),
as child processes in alternating order (small first, then large first), medians of N runs;
``--render`` adds ``langop-infra render`` at both sizes (minutes at 10,000). Times are
judged on CPU seconds (user + system), printed beside wall seconds: on a shared machine the
wall time measures the other tenants.

    python benchmarks/parse_cost.py                 # ~3 minutes on a quiet machine
    python benchmarks/parse_cost.py --render        # + render at 1,000 and 10,000 tools
    python benchmarks/parse_cost.py --only linearity --render --runs 3
    python benchmarks/parse_cost.py --only linearity --render --tools 1000 4000
    python benchmarks/parse_cost.py --quick         # seconds; the test suite's smoke test
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common
import render_overhead as ro

MIB = 1024 * 1024
FULL = {"sizes_mib": (8, 64), "tools": (1000, 10000), "runs": 3}
QUICK = {"sizes_mib": (1,), "tools": (20, 200), "runs": 1}
# growth: the time ratio may be at most the tool-count ratio (10,000 / 1,000 tools: 10x).
TARGETS = {"bytes_per_byte": 10.0, "lock_64_rss_mib": 1024, "lock_64_s": 30.0}
# Stack files are refused over 4 MiB or 200,000 values (yaml_io's limits): 1 MiB of tools
# is about 80,000 values.
STACK_MIB = 1
PYTHON = [sys.executable]  # the children's interpreter (--python)


def lock_text(size: int, fmt: str) -> str:
    """A lock of about ``size`` bytes: servers of 10 tools with typical input schemas."""
    from langop_infra.sync._lock import LockEntry, dump_lock

    def tool(server: int, i: int) -> dict[str, Any]:
        props = {
            f"arg{k}": {"type": "string", "description": f"argument {k} of tool {i}"}
            for k in range(6)
        }
        props["limit"] = {"type": "integer", "minimum": 1, "maximum": 100, "default": 10}
        return {
            "name": f"tool-{server}-{i}",
            "description": f"Tool {i} of server {server}: does one thing well.",
            "inputSchema": {"type": "object", "properties": props, "required": ["arg0"]},
        }

    one = len(dump_lock({"s": LockEntry.from_tools([tool(0, i) for i in range(10)])}, fmt))
    servers = max(1, int(size * 0.97) // one)  # longer names later: stay under the limit
    entries = {
        f"server-{s}": LockEntry.from_tools([tool(s, i) for i in range(10)]) for s in range(servers)
    }
    return dump_lock(entries, fmt)  # type: ignore[arg-type]


def render_text(size: int) -> str:
    """A render stream of about ``size`` bytes: Deployments and their ConfigMaps."""
    from langop_infra.offline._render import dump_yaml

    def objects(n: int) -> list[dict[str, Any]]:
        meta = {"name": f"agent-{n}", "namespace": "bench", "labels": {"app": f"agent-{n}"}}
        container = {
            "name": "agent",
            "image": "ghcr.io/acme/agent:1.0.0",
            "env": [{"name": f"VAR_{k}", "value": f"value-{k}-{n}"} for k in range(8)],
            "ports": [{"containerPort": 8080, "name": "http"}],
            "resources": {"limits": {"cpu": "1", "memory": "512Mi"}},
        }
        deployment = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": meta,
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": f"agent-{n}"}},
                "template": {
                    "metadata": {"labels": {"app": f"agent-{n}"}},
                    "spec": {"containers": [container]},
                },
            },
        }
        config = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {**meta, "name": f"c-{n}"},
            "data": {"config.yaml": "tools:\n" + "".join(f"- t{k}\n" for k in range(20))},
        }
        return [deployment, config]

    one = len("".join(f"---\n{dump_yaml(o)}" for o in objects(0)))
    return "".join(f"---\n{dump_yaml(o)}" for n in range(max(1, size // one)) for o in objects(n))


def stack_text(size: int) -> str:
    from langop_infra.core import _yaml_io as yaml_io

    document = ro._tools_only(10)  # pyright: ignore[reportPrivateUsage]
    one = len(yaml_io.dump({"t": document["tools"][0]}))
    tools = ro._tools_only(max(1, size // one))["tools"]  # pyright: ignore[reportPrivateUsage]
    return yaml_io.dump(
        {"config": {"langop-infra:namespace": "bench", "langop-infra:tools": tools}}
    )


def child(kind: str, path: Path) -> int:
    """Read ``path`` as ``kind``; print resident MiB before, peak after, and CPU seconds."""
    from langop_infra.offline._manifest_diff import load_render
    from langop_infra.sync._lock import load_lock

    try:
        from langop_infra.offline._project import load_stack_file
    except ImportError:  # --python of a version from before offline.project
        from langop_infra.offline._render import load_stack_file  # type: ignore[attr-defined,no-redef]  # pyright: ignore[reportAttributeAccessIssue]

    readers = {"lock": load_lock, "render": load_render, "stack": load_stack_file}
    before = _status_kib("VmRSS")
    started = time.process_time()
    read = readers[kind](path)
    cpu = time.process_time() - started
    # VmHWM, not ru_maxrss: that one keeps the parent's size from before the exec.
    peak = _status_kib("VmHWM")
    print(json.dumps({"before_kib": before, "peak_kib": peak, "cpu_s": cpu, "items": len(read)}))
    return 0


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    return 0


def measure(kind: str, fmt: str, size_mib: int, tmp: Path) -> dict[str, Any]:
    size = size_mib * MIB
    text = {
        "lock": lambda: lock_text(size, fmt),
        "render": lambda: render_text(size),
        "stack": lambda: stack_text(size),
    }[kind]()
    path = tmp / f"{kind}-{size_mib}.{fmt}"
    path.write_text(text)
    import subprocess

    started = time.perf_counter()
    done = subprocess.run(
        [PYTHON[0], __file__, "--child", kind, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"reading {path} failed:\n{done.stderr}")
    found = json.loads(done.stdout)
    grown = max(0, found["peak_kib"] - found["before_kib"]) * 1024
    path.unlink()
    return {
        "kind": kind,
        "format": fmt,
        "mib": round(len(text.encode()) / MIB, 2),
        "cpu_s": found["cpu_s"],
        "wall_s": wall,
        "peak_rss_mib": found["peak_kib"] / 1024,
        "grown_mib": grown / MIB,
        "bytes_per_byte": grown / len(text.encode()),
    }


def linearity(counts: tuple[int, int], runs: int, commands: list[str]) -> list[dict[str, Any]]:
    """``commands`` (validate, render) of stacks of ``counts`` tools, as child processes, in
    alternating order (small first, then large first, ...): medians of CPU time (user +
    system, the judged figure: the machine may be shared) and of wall time, and large / small."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="langop-bench-") as tmp:
        projects = {}
        for count in counts:
            project = Path(tmp) / str(count)
            project.mkdir()
            ro.write_project(project, count, 0)
            projects[count] = project
        for command in commands:
            cpu: dict[int, list[float]] = {count: [] for count in counts}
            wall: dict[int, list[float]] = {count: [] for count in counts}
            for round_ in range(runs):
                for count in counts if round_ % 2 == 0 else tuple(reversed(counts)):
                    argv = [
                        ro.cli_path(),
                        command,
                        "--stack",
                        ro.STACK,
                        "--project-dir",
                        str(projects[count]),
                    ]
                    found = ro.run_child(argv, None)
                    cpu[count].append(found["cpu_s"])
                    wall[count].append(found["wall_s"])
                    print(
                        f"{command} {count} tools: {found['cpu_s']:.2f} s CPU, "
                        f"{found['wall_s']:.2f} s wall",
                        file=sys.stderr,
                    )
            small, large = (_common.median(cpu[c]) for c in counts)
            small_wall, large_wall = (_common.median(wall[c]) for c in counts)
            rows.append(
                {
                    "command": command,
                    "small": counts[0],
                    "large": counts[1],
                    "runs": runs,
                    "small_cpu_s": small,
                    "large_cpu_s": large,
                    "growth": large / small,
                    "small_wall_s": small_wall,
                    "large_wall_s": large_wall,
                    "wall_growth": large_wall / small_wall,
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 MiB files, 20 and 200 tools")
    parser.add_argument("--render", action="store_true", help="also render at both sizes")
    parser.add_argument(
        "--only",
        choices=("parsing", "linearity"),
        help="run one half of the benchmark (e.g. --only linearity --render)",
    )
    parser.add_argument("--runs", type=int, help="rounds of the linearity comparison")
    parser.add_argument(
        "--tools",
        type=int,
        nargs=2,
        metavar=("SMALL", "LARGE"),
        help="the two stack sizes of the linearity comparison (default 1000 10000)",
    )
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument(
        "--python",
        help="read the files with this interpreter's langop-infra (e.g. another checkout's "
        "venv/bin/python), to compare versions; linearity is left out",
    )
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child[0], Path(args.child[1]))
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: with bytecode
    if args.python:
        PYTHON[0] = args.python
    plan = QUICK if args.quick else FULL
    parsing = [] if args.only == "linearity" else run_parsing(plan["sizes_mib"])
    commands = ["validate", "render"] if args.render else ["validate"]
    skip_linearity = args.python or args.only == "parsing"
    data: dict[str, Any] = {
        "benchmark": "parse_cost",
        "python": PYTHON[0],
        "parsing": parsing,
        "linearity": []
        if skip_linearity
        else linearity(
            tuple(args.tools) if args.tools else plan["tools"], args.runs or plan["runs"], commands
        ),
    }
    data["verdicts"] = verdicts(parsing, data["linearity"])
    report(data)
    _common.write_json(args.json, data)
    return 0


def run_parsing(sizes_mib: tuple[int, ...]) -> list[dict[str, Any]]:
    parsing = []
    with tempfile.TemporaryDirectory(prefix="langop-bench-") as tmp:
        for size in sizes_mib:
            parsing.append(measure("lock", "yaml", size, Path(tmp)))
            parsing.append(measure("render", "yaml", size, Path(tmp)))
            parsing.append(measure("stack", "yaml", STACK_MIB, Path(tmp)))
        parsing.append(measure("lock", "json", sizes_mib[-1], Path(tmp)))
    for p in parsing:  # as measured, should a later step fail
        print(json.dumps(p), file=sys.stderr)
    return parsing


def verdicts(
    parsing: list[dict[str, Any]], rows: list[dict[str, Any]]
) -> list[tuple[str, float, float]]:
    """(what, measured, target): times are judged on CPU time (user + system), which a
    shared machine does not inflate; wall time is printed beside them."""
    found: list[tuple[str, float, float]] = []
    if parsing:
        top = max(p["mib"] for p in parsing if p["kind"] == "lock")
        largest = [p for p in parsing if p["kind"] == "lock" and p["mib"] >= top * 0.9]
        mib = largest[0]["mib"]
        found += [
            (
                "worst bytes of memory per input byte",
                max(p["bytes_per_byte"] for p in parsing),
                TARGETS["bytes_per_byte"],
            ),
            (
                f"largest lock ({mib} MiB): peak RSS MiB",
                max(p["peak_rss_mib"] for p in largest),
                TARGETS["lock_64_rss_mib"],
            ),
            (
                f"largest lock ({mib} MiB): CPU s (judged)",
                max(p["cpu_s"] for p in largest),
                TARGETS["lock_64_s"],
            ),
            (
                f"largest lock ({mib} MiB): wall s (not judged: load-dependent)",
                max(p["wall_s"] for p in largest),
                TARGETS["lock_64_s"],
            ),
        ]
    for r in rows:
        what = f"{r['command']} {r['large']} / {r['small']} tools"
        linear = r["large"] / r["small"]
        found.append((f"{what}, CPU (judged)", r["growth"], linear))
        found.append((f"{what}, wall (not judged: load-dependent)", r["wall_growth"], linear))
    return found


def report(data: dict[str, Any]) -> None:
    _common.print_machine()
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if data["parsing"]:
        print(
            f"\nreading a file in a child process ({PYTHON[0]}); memory: peak minus resident "
            "before the read; CPU s is the child's user + system time around the read"
        )
        _common.print_table(
            ["file", "format", "MiB", "CPU s", "wall s", "peak RSS MiB", "grown MiB", "B per byte"],
            [
                [
                    p["kind"],
                    p["format"],
                    p["mib"],
                    p["cpu_s"],
                    p["wall_s"],
                    round(p["peak_rss_mib"]),
                    round(p["grown_mib"]),
                    p["bytes_per_byte"],
                ]
                for p in data["parsing"]
            ],
        )
    if data["linearity"]:
        runs = data["linearity"][0]["runs"]
        print(
            f"\nvalidate / render of T tools, child processes, alternating order, medians of "
            f"{runs} runs; CPU = user + system seconds"
        )
        _common.print_table(
            [
                "command",
                "T small",
                "CPU s",
                "wall s",
                "T large",
                "CPU s",
                "wall s",
                "CPU ratio",
                "wall ratio",
            ],
            [
                [
                    r["command"],
                    r["small"],
                    r["small_cpu_s"],
                    r["small_wall_s"],
                    r["large"],
                    r["large_cpu_s"],
                    r["large_wall_s"],
                    r["growth"],
                    r["wall_growth"],
                ]
                for r in data["linearity"]
            ],
        )
    print("\ntargets: times are judged on CPU seconds (wall seconds depend on the load)")
    for name, value, target in data["verdicts"]:
        print(f"  {name}: {value:.3f} (target {target}: {_common.met(value, target)})")


if __name__ == "__main__":
    sys.exit(main())
