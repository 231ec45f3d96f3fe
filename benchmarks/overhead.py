"""Overhead: our components against the same Kubernetes objects declared directly.

The baseline is the least any program could do under the same engine: a plain loop that
registers each manifest our components produced (its kind, with ``metadata``/``spec``/
``data``/``stringData`` as given) with ``pulumi_kubernetes``. Both sides run in this process
under the same SDK mock engine, alternating, after a warm-up; the first run of ours supplies
the manifests, and the baseline's are checked to be identical.

Per side: wall and CPU time, CPU time in the program body (our constructors, or the plain
loop; the engine's asynchronous registration work comes after) and in garbage collection.
The ratio is the median of the per-repetition ratios ours/baseline; the CPU-time one is
the headline, being less disturbed by other processes on a shared machine.

    python benchmarks/overhead.py              # T=100/A=500, 5 repetitions
    python benchmarks/overhead.py --quick      # T=5/A=20, 3 repetitions
    python benchmarks/overhead.py --profile    # also: top 10 hot spots in langop_infra/
    python benchmarks/overhead.py --breakdown  # also: ours without schema sync, and the
                                               # baseline inside our component tree
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _common

TARGET_RATIO = 1.3
FULL = (100, 500, 5)  # tools, agents, repetitions
QUICK = (5, 20, 3)
FIELDS = ("metadata", "spec", "data", "stringData")
PACKAGE_DIR = str(_common.REPO / "langop_infra")
METRICS = ("wall", "cpu", "program", "gc")

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


def _objects(run: Any) -> list[tuple[str, str, type, dict[str, Any]]]:
    """(logical name, parent URN, class, fields) of every Kubernetes object of ``run``."""
    classes = kubernetes_classes()
    return [
        (
            registration.name,
            registration.parent,
            classes[registration.type],
            {field: manifest[field] for field in FIELDS if field in manifest},
        )
        for registration, manifest in zip(run.kubernetes(), run.manifests(), strict=True)
    ]


def baseline_program(run: Any) -> Program:
    """A plain loop registering every Kubernetes object of ``run`` as its manifest says."""
    objects = _objects(run)

    def program() -> None:
        for name, _, cls, fields in objects:
            cls(name, **fields)

    return program


def baseline_with_components(run: Any) -> Program:
    """The baseline inside the same tree of empty ComponentResources as ours: what the engine
    charges for being components at all."""
    import pulumi

    components = [r for r in run.registrations if not r.custom]
    objects = _objects(run)

    def program() -> None:
        made: dict[str, pulumi.ComponentResource] = {}
        for r in components:
            opts = pulumi.ResourceOptions(parent=made.get(r.parent))
            made[r.urn] = pulumi.ComponentResource(r.type, r.name, None, opts)
        for name, parent, cls, fields in objects:
            cls(name, **fields, opts=pulumi.ResourceOptions(parent=made.get(parent)))
        for component in made.values():
            component.register_outputs({})

    return program


def ours_program(document: dict[str, Any]) -> Program:
    from langop_infra.cluster import LanguageCluster

    return lambda: LanguageCluster(document["namespace"], document)


def without_schema_sync(document: dict[str, Any]) -> dict[str, Any]:
    tools = [{**t, "schemaSync": {"enabled": False}} for t in document["tools"]]
    return {**document, "tools": tools}


class GcClock:
    """CPU time spent in garbage collection while active."""

    def __init__(self) -> None:
        self.total = 0.0
        self._started = 0.0

    def __call__(self, phase: str, _info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.process_time()
        else:
            self.total += time.process_time() - self._started

    def __enter__(self) -> GcClock:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self)


def timed(program: Program) -> tuple[dict[str, float], Any]:
    """One run under the mock engine: its times (see ``METRICS``) and the ProgramRun."""
    from langop_infra.offline.mock_engine import run_program

    body = {"cpu": 0.0}

    def measured() -> None:
        started = time.process_time()
        program()
        body["cpu"] = time.process_time() - started

    _common.release_previous_runs()
    gc.collect()
    with GcClock() as clock:
        wall, cpu = time.perf_counter(), time.process_time()
        run = run_program(measured)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"wall": wall, "cpu": cpu, "program": body["cpu"], "gc": clock.total}, run


def compare(
    document: dict[str, Any], repetitions: int, breakdown: bool
) -> tuple[dict[str, dict[str, list[float]]], dict[str, Any]]:
    """Time every side ``repetitions`` times, alternating the order; return the timings and
    facts about the runs (registrations, whether the objects matched)."""
    first, run = timed(ours_program(document))
    reference = run.manifests()
    sides: dict[str, Program] = {
        "ours": ours_program(document),
        "baseline": baseline_program(run),
    }
    if breakdown:
        sides["ours, schema sync off"] = ours_program(without_schema_sync(document))
        sides["baseline + component tree"] = baseline_with_components(run)
    facts: dict[str, Any] = {
        "registrations": {"ours": len(run.registrations)},
        "kubernetes_objects": len(reference),
    }
    times = {name: {metric: [] for metric in METRICS} for name in sides}
    for metric in METRICS:
        times["ours"][metric].append(first[metric])
    del run
    for rep in range(repetitions):
        order = list(reversed(sides)) if rep % 2 else list(sides)
        for name in order:
            if rep == 0 and name == "ours":
                continue
            measured, run = timed(sides[name])
            for metric in METRICS:
                times[name][metric].append(measured[metric])
            facts["registrations"].setdefault(name, len(run.registrations))
            if name == "baseline" and "same_objects" not in facts:
                facts["same_objects"] = by_identity(run.manifests()) == by_identity(reference)
            del run
    return times, facts


def by_identity(manifests: list[dict[str, Any]]) -> dict[tuple[str, str, str], Any]:
    """Manifests keyed by kind, namespace and name: registration order depends on how the
    engine schedules dependencies, and the baseline declares none."""
    return {
        (m["kind"], m["metadata"].get("namespace", ""), m["metadata"]["name"]): m for m in manifests
    }


def median_ratio(times: dict[str, dict[str, list[float]]], side: str, metric: str) -> float:
    pairs = zip(times[side][metric], times["baseline"][metric], strict=True)
    return _common.median([a / b for a, b in pairs])


def profile(document: dict[str, Any], top: int = 10) -> list[dict[str, Any]]:
    """One run of ours under cProfile; the ``top`` functions of langop_infra/ by cumulative
    time (the harness, ``run_program``, excluded: it contains the whole engine)."""
    from langop_infra.offline.mock_engine import run_program

    program = ours_program(document)
    _common.release_previous_runs()
    gc.collect()
    profiler = cProfile.Profile()
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
    ours.sort(key=lambda row: row[-1], reverse=True)
    rows = [
        {
            "function": f"{Path(path).relative_to(_common.REPO)}:{line}({func})",
            "calls": calls,
            "cumulative_s": cumulative,
            "share": cumulative / total,
        }
        for path, line, func, calls, _, cumulative in ours[:top]
    ]
    print(
        f"\nprofile of one run of ours: {total:.1f} s under cProfile (which inflates pure-Python "
        f"code), {own_total:.2f} s of it in langop_infra's own frames (callees excluded)"
    )
    _common.print_table(
        ["function (langop_infra), by cumulative time", "calls", "cumulative s", "of run"],
        [[r["function"], r["calls"], r["cumulative_s"], f"{r['share']:.1%}"] for r in rows],
    )
    return rows


def _timers(
    targets: list[tuple[str, Any, str]], spent: dict[str, float]
) -> list[Callable[[], None]]:
    """Wrap each ``owner.attribute`` so its calls add their CPU time to ``spent[label]``
    (a call nested in one of the same label counts once); return the undo steps."""
    undo: list[Callable[[], None]] = []
    active: set[str] = set()
    for label, owner, attribute in targets:
        original = getattr(owner, attribute, None)
        if original is None:  # the package's internals moved: skip, do not fail
            continue

        def timer(*args: Any, _f: Any = original, _label: str = label, **kwargs: Any) -> Any:
            if _label in active:
                return _f(*args, **kwargs)
            active.add(_label)
            started = time.process_time()
            try:
                return _f(*args, **kwargs)
            finally:
                spent[_label] += time.process_time() - started
                active.discard(_label)

        own = attribute in vars(owner)
        setattr(owner, attribute, timer)
        undo.append(
            (lambda o=owner, a=attribute, f=original: setattr(o, a, f))
            if own
            else (lambda o=owner, a=attribute: delattr(o, a))
        )
        spent.setdefault(label, 0.0)
    return undo


def attribute(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Where ours' program-body CPU time goes, by timers around a few functions: no
    profiler, so pure-Python code is not inflated. Garbage collection is off for this run
    so that its pauses do not land in whichever part happens to be running."""
    import importlib

    import pulumi

    from langop_infra.offline.mock_engine import run_program

    cluster = importlib.import_module("langop_infra.cluster")
    contract = importlib.import_module("langop_infra.contract")
    schema_sync = importlib.import_module("langop_infra.schema_sync")
    engine = "Pulumi engine, synchronous part"
    targets = [
        *((f"{engine}: pulumi_kubernetes constructors", c, "__init__")
          for c in kubernetes_classes().values()),
        (f"{engine}: ComponentResource registration", pulumi.ComponentResource, "__init__"),
        (f"{engine}: register_outputs", pulumi.ComponentResource, "register_outputs"),
        ("ToolSchemaSync construction (dynamic provider)", schema_sync.ToolSchemaSync, "__init__"),
        ("validation: parse_cluster", cluster, "parse_cluster"),
        ("config.yaml: contract.config_yaml (PyYAML)", contract, "config_yaml"),
    ]  # fmt: skip
    spent: dict[str, float] = {}
    undo = _timers(targets, spent)
    program = ours_program(document)
    body = {"cpu": 0.0}

    def measured() -> None:
        started = time.process_time()
        program()
        body["cpu"] = time.process_time() - started

    _common.release_previous_runs()
    gc.collect()
    gc.disable()
    try:
        started = time.process_time()
        run_program(measured)
        total = time.process_time() - started
    finally:
        gc.enable()
        for step in reversed(undo):
            step()
    rest = body["cpu"] - sum(spent.values())
    rows = [{"part": label, "cpu_s": cpu} for label, cpu in spent.items()]
    rows.append({"part": "the rest of langop_infra (specs, contract, pods, wiring)", "cpu_s": rest})
    rows.append({"part": "program body, total", "cpu_s": body["cpu"]})
    rows.append(
        {"part": "engine, asynchronous part (serialize, register)", "cpu_s": total - body["cpu"]}
    )
    print(f"\nwhere one run of ours spends its CPU time (timers, GC off): {total:.2f} s")
    _common.print_table(
        ["part", "CPU s", "of run"],
        [[r["part"], r["cpu_s"], f"{r['cpu_s'] / total:.1%}"] for r in rows],
    )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T=5/A=20, 3 repetitions")
    parser.add_argument("--repetitions", type=int, help="override the number of repetitions")
    parser.add_argument("--profile", action="store_true", help="profile ours with cProfile")
    parser.add_argument("--breakdown", action="store_true", help="time two more variants")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    args = parser.parse_args(argv)

    tools, agents, repetitions = QUICK if args.quick else FULL
    repetitions = args.repetitions or repetitions
    _common.warm_up()
    document = _common.cluster_document(tools, agents)
    times, facts = compare(document, repetitions, args.breakdown)
    if not facts["same_objects"]:
        print("the baseline registered different objects than ours", file=sys.stderr)
        return 1

    _common.print_machine()
    print(
        f"T={tools}/A={agents}, k={_common.REFS_PER_AGENT}: {facts['kubernetes_objects']} "
        f"Kubernetes objects on both sides (identical manifests), {repetitions} repetitions, "
        "alternating; medians"
    )
    rows = []
    results: dict[str, Any] = {}
    for side in times:
        result: dict[str, Any] = {"registrations": facts["registrations"][side]}
        for metric in METRICS:
            result[f"median_{metric}_s"] = _common.median(times[side][metric])
        result["ratio_wall"] = median_ratio(times, side, "wall")
        result["ratio_cpu"] = median_ratio(times, side, "cpu")
        results[side] = result
        rows.append(
            [
                side,
                result["registrations"],
                result["median_wall_s"],
                result["median_cpu_s"],
                result["median_program_s"],
                result["median_gc_s"],
                f"{result['ratio_wall']:.2f}",
                f"{result['ratio_cpu']:.2f}",
            ]
        )
    _common.print_table(
        ["side", "registrations", "wall s", "CPU s", "program CPU s", "GC CPU s",
         "ratio wall", "ratio CPU"],
        rows,
    )  # fmt: skip
    ratio = results["ours"]["ratio_cpu"]
    print(
        f"ours/baseline (median of per-repetition CPU-time ratios): {ratio:.2f} "
        f"(target <= {TARGET_RATIO}: {_common.met(ratio, TARGET_RATIO)})"
    )
    hot_spots = profile(document) if args.profile else []
    parts = attribute(document) if args.profile else []
    _common.write_json(
        args.json,
        {
            "benchmark": "overhead",
            "tools": tools,
            "agents": agents,
            "repetitions": repetitions,
            "kubernetes_objects": facts["kubernetes_objects"],
            "sides": results,
            "ratio": ratio,
            "hot_spots": hot_spots,
            "parts": parts,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
