"""Where a run's cost above the baseline goes, registration kind by registration kind.

One process, the SDK mock engine, every side under the same ``gc_tuning.tuned_for_run()``
as ``render``, alternating, medians of CPU time (``time.process_time``). The first run of
ours supplies the Kubernetes objects; every other side re-registers them directly with
``pulumi_kubernetes`` (``metadata``/``spec``/``data``/``stringData`` as ours produced them),
calling ``pacing.workload_built()`` after each Deployment as the components do after each
workload, so every side lets the engine catch up as often:

- ``baseline``: the objects alone, no components;
- ``+ tool components``, ``+ agent components``, ``+ all components``: the same objects
  inside empty ``ComponentResource``s of those kinds (what the engine charges for the
  component tree itself, each child ``parent=`` its component, ``register_outputs({})``);
- ``ours, schema sync off``: ours without the ``ToolSchemaSync`` dynamic resources;
- ``ours``: ``LanguageCluster`` as the stack program builds it.

``ms/registration`` is a side's CPU time above the baseline divided by its registrations
above the baseline: the marginal cost of one registration of that kind.

    python benchmarks/overhead.py              # T=100/A=500, 3 repetitions
    python benchmarks/overhead.py --quick      # T=5/A=20, 1 repetition
    python benchmarks/overhead.py --profile    # also: top 10 functions of langop_infra/
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import sys
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import _common

FULL = (100, 500, 3)  # tools, agents, repetitions
QUICK = (5, 20, 1)
FIELDS = ("metadata", "spec", "data", "stringData")
PACKAGE_DIR = str(_common.REPO / "langop_infra")
TOOL, AGENT, CLUSTER = (f"langop-infra:index:Language{k}" for k in ("Tool", "Agent", "Cluster"))

Program = Callable[[], Any]


def kubernetes_classes() -> dict[str, type]:
    """Engine type token (``kubernetes:apps/v1:Deployment``) -> pulumi_kubernetes class."""
    import pulumi_kubernetes as k8s

    return {
        "kubernetes:core/v1:Namespace": k8s.core.v1.Namespace,
        "kubernetes:core/v1:Secret": k8s.core.v1.Secret,
        "kubernetes:core/v1:ConfigMap": k8s.core.v1.ConfigMap,
        "kubernetes:core/v1:Service": k8s.core.v1.Service,
        "kubernetes:core/v1:PersistentVolumeClaim": k8s.core.v1.PersistentVolumeClaim,
        "kubernetes:apps/v1:Deployment": k8s.apps.v1.Deployment,
        "kubernetes:networking.k8s.io/v1:NetworkPolicy": k8s.networking.v1.NetworkPolicy,
    }


def objects_in_tree(run: Any, kinds: Collection[str]) -> Program:
    """Ours' Kubernetes objects, each under its nearest ancestor component of ``kinds``
    (an empty ComponentResource; no component at all for an empty ``kinds``)."""
    import pulumi

    from langop_infra.core import _pacing as pacing

    classes = kubernetes_classes()
    deployment = classes["kubernetes:apps/v1:Deployment"]
    components = [r for r in run.registrations if not r.custom and r.type in kinds]
    kept = {r.urn for r in components}
    parent_of = {r.urn: r.parent for r in run.registrations}

    def nearest(urn: str) -> str:
        while urn and urn not in kept:
            urn = parent_of.get(urn, "")
        return urn

    tree = [(r.urn, r.type, r.name, nearest(r.parent)) for r in components]
    objects = [
        (r.name, nearest(r.parent), classes[r.type], {f: m[f] for f in FIELDS if f in m})
        for r, m in zip(run.kubernetes(), run.manifests(), strict=True)
    ]

    def program() -> None:
        made: dict[str, pulumi.ComponentResource] = {}
        for urn, type_, name, parent in tree:
            opts = pulumi.ResourceOptions(parent=made.get(parent))
            made[urn] = pulumi.ComponentResource(type_, name, None, opts)
        for name, parent, cls, fields in objects:
            opts = pulumi.ResourceOptions(parent=made[parent]) if parent else None
            cls(name, **fields, opts=opts)
            if cls is deployment:  # a workload built: the engine may catch up, as for ours
                pacing.workload_built()
        for component in made.values():
            component.register_outputs({})

    return program


def ours_program(document: dict[str, Any]) -> Program:
    from langop_infra.components.cluster import LanguageCluster

    return lambda: LanguageCluster(document["namespace"], document)


def without_schema_sync(document: dict[str, Any]) -> dict[str, Any]:
    tools = [{**t, "schemaSync": {"enabled": False}} for t in document["tools"]]
    return {**document, "tools": tools}


def timed(program: Program, tuned: bool) -> tuple[float, Any]:
    """CPU time of one run under the mock engine (GC-tuned as render is), and the run."""
    import contextlib

    from langop_infra.core._gc_tuning import tuned_for_run
    from langop_infra.offline._mock_engine import run_program

    gc.collect()
    with tuned_for_run() if tuned else contextlib.nullcontext():
        started = time.process_time()
        run = run_program(program)
        return time.process_time() - started, run


def compare(
    document: dict[str, Any], repetitions: int, tuned: bool
) -> tuple[dict[str, list[float]], dict[str, int], bool]:
    """CPU times of every side, ``repetitions`` rounds in alternating order; registrations
    per side; whether the baseline registered the same objects as ours."""
    _, run = timed(ours_program(document), tuned)
    reference = by_identity(run.manifests())
    sides: dict[str, Program] = {
        "ours": ours_program(document),
        "ours, schema sync off": ours_program(without_schema_sync(document)),
        "baseline": objects_in_tree(run, ()),
        "+ tool components": objects_in_tree(run, (CLUSTER, TOOL)),
        "+ agent components": objects_in_tree(run, (CLUSTER, AGENT)),
        "+ all components": objects_in_tree(run, (CLUSTER, TOOL, AGENT)),
    }
    del run
    times: dict[str, list[float]] = {name: [] for name in sides}
    registrations: dict[str, int] = {}
    same = True
    for rep in range(repetitions):
        for name in list(reversed(sides)) if rep % 2 else list(sides):
            cpu, run = timed(sides[name], tuned)
            times[name].append(cpu)
            registrations[name] = len(run.registrations)
            if name == "baseline":
                same = same and by_identity(run.manifests()) == reference
            del run
    return times, registrations, same


def by_identity(manifests: list[dict[str, Any]]) -> dict[tuple[str, str, str], Any]:
    return {
        (m["kind"], m["metadata"].get("namespace", ""), m["metadata"]["name"]): m for m in manifests
    }


def profile(document: dict[str, Any], top: int = 10) -> list[dict[str, Any]]:
    """One GC-tuned run of ours under cProfile: the ``top`` functions of langop_infra/ by
    their own time (callees excluded: a component's cumulative time holds the engine's
    catch-ups, see ``pacing.py``), and the share of the run in langop_infra's own frames."""
    from langop_infra.core._gc_tuning import tuned_for_run
    from langop_infra.offline._mock_engine import run_program

    program = ours_program(document)
    gc.collect()
    profiler = cProfile.Profile()
    with tuned_for_run():
        started = time.perf_counter()
        profiler.enable()
        run_program(program)
        profiler.disable()
        total = time.perf_counter() - started
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    ours = [
        (path, line, func, calls, own, cumulative)
        for (path, line, func), (_, calls, own, cumulative, _) in stats.items()
        if path.startswith(PACKAGE_DIR) and not path.endswith("mock_engine.py")
    ]
    own_total = sum(own for *_, own, _ in ours)
    ours.sort(key=lambda row: row[-2], reverse=True)
    rows = [
        {
            "function": f"{Path(path).relative_to(_common.REPO)}:{line}({func})",
            "calls": calls,
            "own_s": own,
            "cumulative_s": cumulative,
            "share": own / total,
        }
        for path, line, func, calls, own, cumulative in ours[:top]
    ]
    print(
        f"\nprofile of one run of ours: {total:.1f} s under cProfile, {own_total:.2f} s "
        f"({own_total / total:.1%}) in langop_infra's own frames (callees excluded)"
    )
    _common.print_table(
        ["function (langop_infra), by own time", "calls", "own s", "cumulative s", "own of run"],
        [
            [r["function"], r["calls"], r["own_s"], r["cumulative_s"], f"{r['share']:.1%}"]
            for r in rows
        ],
    )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T=5/A=20, 1 repetition")
    parser.add_argument("--repetitions", type=int, help="override the number of repetitions")
    parser.add_argument("--gc-default", action="store_true", help="no GC tuning on any side")
    parser.add_argument("--profile", action="store_true", help="profile ours with cProfile")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    args = parser.parse_args(argv)

    tools, agents, repetitions = QUICK if args.quick else FULL
    repetitions = args.repetitions or repetitions
    tuned = not args.gc_default
    timed(ours_program(_common.cluster_document(2, 2, refs=1)), tuned)  # warm-up
    document = _common.cluster_document(tools, agents)
    times, registrations, same = compare(document, repetitions, tuned)
    if not same:
        print("the baseline registered different objects than ours", file=sys.stderr)
        return 1

    _common.print_machine()
    print(
        f"T={tools}/A={agents}, k={_common.REFS_PER_AGENT}, in one process, "
        f"{'GC tuned as render' if tuned else 'default GC'}, {repetitions} repetitions "
        "alternating; median CPU s"
    )
    base_cpu = _common.median(times["baseline"])
    base_regs = registrations["baseline"]
    sides: dict[str, Any] = {}
    for name, cpu_runs in times.items():
        cpu = _common.median(cpu_runs)
        extra = registrations[name] - base_regs
        sides[name] = {
            "registrations": registrations[name],
            "median_cpu_s": cpu,
            "ratio": cpu / base_cpu,
            "ms_per_extra_registration": 1000 * (cpu - base_cpu) / extra if extra else None,
            "cpu_runs": cpu_runs,
        }
    _common.print_table(
        ["side", "registrations", "CPU s", "vs baseline", "ms/registration above baseline"],
        [
            [name, s["registrations"], s["median_cpu_s"], f"{s['ratio']:.2f}",
             "-" if s["ms_per_extra_registration"] is None
             else f"{s['ms_per_extra_registration']:.2f}"]
            for name, s in sides.items()
        ],
    )  # fmt: skip
    hot_spots = profile(document) if args.profile else []
    _common.write_json(
        args.json,
        {
            "benchmark": "overhead",
            "tools": tools,
            "agents": agents,
            "repetitions": repetitions,
            "gc_tuned": tuned,
            "kubernetes_objects": _common.expected_kubernetes_objects(tools, agents),
            "sides": sides,
            "ratio": sides["ours"]["ratio"],
            "hot_spots": hot_spots,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
