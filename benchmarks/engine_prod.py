"""`pulumi preview` and `pulumi up` (renderYamlToDirectory) of the prod stack under the real
engine, against the least possible program: plain `pulumi_kubernetes` registering the same
objects (those the provider wrote for the prod stack), one resource each, no components, no
validation, no schema sync.

Both run as child processes of the engine built by tools/engine/build, in alternating order,
each round on a fresh stack; the figures are medians of wall time and of the children's CPU
time (user + system), and their ratio.

    python benchmarks/engine_prod.py [--rounds N] [--quick] [--json PATH]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import REPO, median, print_machine, print_table, write_json
from tests.engine.test_render_fidelity import NO_CLUSTER
from tests.support.engine import (
    Engine,
    local,
    python_project,
    read_manifests,
    render_to,
    reseal_secrets,
)

PLAIN_PROGRAM = '''\
"""The prod stack's objects, registered one by one with pulumi_kubernetes."""
import pathlib
import pulumi_kubernetes as k8s
import yaml

MODULES = {"v1": "core", "apps/v1": "apps", "batch/v1": "batch", "policy/v1": "policy",
           "networking.k8s.io/v1": "networking", "autoscaling/v2": "autoscaling"}
TOP = {"stringData": "string_data", "binaryData": "binary_data"}
for path in sorted(pathlib.Path("objects").glob("*.yaml")):
    for obj in yaml.safe_load_all(path.read_text()):
        module = getattr(getattr(k8s, MODULES[obj["apiVersion"]]), obj["apiVersion"].split("/")[-1])
        kind = getattr(module, obj["kind"])
        args = {TOP.get(k, k): v for k, v in obj.items() if k not in ("apiVersion", "kind")}
        meta = obj["metadata"]
        kind(f"{meta.get('namespace', '')}/{meta['name']}", **args)
'''


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measured(engine: Engine, project: Path, stack: str, *args: str) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), child_cpu()
    engine.run(project, *args, "--stack", stack)
    return time.perf_counter() - wall, child_cpu() - cpu


def langop_project(engine: Engine, root: Path) -> tuple[Path, Path]:
    project = python_project(root / "langop", stacks=("prod",))
    # No cluster to sync through with renderYamlToDirectory: the required sync is made not
    # required, which changes no object (tests/engine/test_render_fidelity.py says why).
    stack_file = project / "stacks" / "Pulumi.prod.yaml"
    stack_file.write_text(stack_file.read_text().replace(*NO_CLUSTER))
    engine.run(project, "stack", "init", "prod")
    reseal_secrets(engine, project, "prod", "bench-secret")
    out = root / "langop-out"
    render_to(engine, project, "prod", out)
    engine.run(project, "up", "--stack", "prod", "--yes", "--skip-preview")
    return project, out


def plain_project(engine: Engine, root: Path, objects: Path) -> Path:
    project = root / "plain"
    (project / "objects").mkdir(parents=True)
    for index, obj in enumerate(read_manifests(objects).values()):
        (project / "objects" / f"{index:04}.yaml").write_text(yaml.safe_dump(obj))
    (project / "Pulumi.yaml").write_text(
        f"name: plain\nruntime:\n  name: python\n  options:\n    virtualenv: {REPO / 'venv'}\n"
    )
    (project / "__main__.py").write_text(PLAIN_PROGRAM)
    return project


def fresh_stack(engine: Engine, project: Path, stack: str, out: Path) -> None:
    engine.run(project, "stack", "rm", stack, "--yes", "--force", check=False)
    engine.run(project, "stack", "init", stack)
    render_to(engine, project, stack, out)


def run(rounds: int) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="engine-bench-"))
    engine = Engine(local.build_engine(), root / "home")
    langop, objects = langop_project(engine, root)
    plain = plain_project(engine, root, objects)
    assert len(read_manifests(objects)) > 0
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for index in range(rounds):
        order = [("langop", langop), ("plain", plain)]
        for name, project in order if index % 2 == 0 else order[::-1]:
            stack = f"bench{index}"
            if name == "langop":
                (project / "stacks" / f"Pulumi.{stack}.yaml").write_text(
                    (project / "stacks" / "Pulumi.prod.yaml").read_text()
                )
            fresh_stack(engine, project, stack, root / f"{name}-{index}")
            times.setdefault((name, "preview"), []).append(
                measured(engine, project, stack, "preview")
            )
            times.setdefault((name, "up"), []).append(
                measured(engine, project, stack, "up", "--yes", "--skip-preview")
            )
    figures: dict[str, Any] = {"objects": len(read_manifests(objects)), "rounds": rounds}
    for step in ("preview", "up"):
        for name in ("langop", "plain"):
            figures[f"{name}_{step}_wall"] = median([w for w, _ in times[(name, step)]])
            figures[f"{name}_{step}_cpu"] = median([c for _, c in times[(name, step)]])
        figures[f"{step}_cpu_ratio"] = figures[f"langop_{step}_cpu"] / figures[f"plain_{step}_cpu"]
        figures[f"{step}_wall_ratio"] = (
            figures[f"langop_{step}_wall"] / figures[f"plain_{step}_wall"]
        )
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="one round")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    figures = run(1 if args.quick else args.rounds)
    print_machine()
    print(
        f"prod stack: {figures['objects']} Kubernetes objects, "
        f"{figures['rounds']} alternating rounds, medians"
    )
    print_table(
        [
            "step",
            "langop-infra wall s",
            "plain wall s",
            "wall ratio",
            "langop-infra CPU s",
            "plain CPU s",
            "CPU ratio",
        ],
        [
            [
                step,
                f"{figures[f'langop_{step}_wall']:.2f}",
                f"{figures[f'plain_{step}_wall']:.2f}",
                f"{figures[f'{step}_wall_ratio']:.2f}x",
                f"{figures[f'langop_{step}_cpu']:.2f}",
                f"{figures[f'plain_{step}_cpu']:.2f}",
                f"{figures[f'{step}_cpu_ratio']:.2f}x",
            ]
            for step in ("preview", "up")
        ],
    )
    write_json(args.json, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
