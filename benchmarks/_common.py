"""Shared by the benchmarks: the generated cluster document, measurements and output.

Heavy imports (Pulumi, the package) happen inside functions, so a parent process that only
starts children and prints tables stays light.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
NAMESPACE = "bench"
REFS_PER_AGENT = 5


def cluster_document(
    tools: int, agents: int, refs: int = REFS_PER_AGENT, namespace: str = NAMESPACE
) -> dict[str, Any]:
    """A cluster spec with ``tools`` service tools and ``agents`` agents; agent ``j``
    references ``refs`` consecutive tools starting at ``j * refs`` (round-robin)."""
    if not 0 < refs <= tools:
        raise ValueError(f"refs must be between 1 and the number of tools ({tools}), got {refs}")
    return {
        "namespace": namespace,
        "tools": [
            {
                "name": f"tool-{i}",
                "image": f"ghcr.io/acme/tool-{i}:1.0.0",
                "env": {"LOG_LEVEL": "info"},
            }
            for i in range(tools)
        ],
        "agents": [
            {
                "name": f"agent-{j}",
                "image": "ghcr.io/acme/agent:1.0.0",
                "env": {"MODEL": "small"},
                "tools": [{"name": f"tool-{(j * refs + m) % tools}"} for m in range(refs)],
            }
            for j in range(agents)
        ],
    }


def expected_kubernetes_objects(tools: int, agents: int) -> int:
    """Namespace, then Deployment + Service + NetworkPolicy per tool, Deployment + ConfigMap +
    ingress NetworkPolicy per agent (the generated document has no secrets, sidecars or
    restricted egress)."""
    return 1 + 3 * tools + 3 * agents


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    mem_kib = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    except OSError:
        pass
    return {
        "cpus": os.cpu_count(),
        "nproc": len(os.sched_getaffinity(0)),
        "cpu_model": cpu_model(),
        "date_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "memory_gib": round(mem_kib / 1024**2, 1),
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "load_average_1m": round(os.getloadavg()[0], 2),
    }


def cpu_model() -> str:
    """``lscpu``'s model name (``/proc/cpuinfo``'s when lscpu is missing)."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    except OSError:
        out = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    for line in out.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() == "model name":
            return value.strip()
    return "unknown"


def print_machine() -> None:
    m = machine()
    print(
        f"machine ({m['date_utc']}): nproc {m['nproc']} ({m['cpu_model']}), {m['memory_gib']} GiB, "
        f"Python {m['python']}, {m['platform']}, load average {m['load_average_1m']}"
    )


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """A plain text table: numbers right-aligned, everything else left-aligned."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    numeric = [all(isinstance(row[i], (int, float)) for row in rows) for i in range(len(headers))]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ).rstrip()

    print(line(headers))
    print(line(["-" * w for w in widths]))
    for row in cells:
        print(line(row))


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
    return str(value)


def met(value: float, target: float) -> str:
    return "met" if value <= target else "NOT met"


def write_json(path: Path | None, data: dict[str, Any]) -> None:
    """Results for machines (the quick test, README updates); ``None`` writes nothing."""
    if path is not None:
        path.write_text(json.dumps({"machine": machine(), **data}, indent=2) + "\n")
