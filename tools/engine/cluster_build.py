"""The local cluster's binaries, for `tools/engine/build --cluster`.

- kube-apiserver, kube-controller-manager, kube-scheduler and kubectl from `k8s.io/kubernetes`,
  used as a dependency of a module of our own (tools/engine/go-cluster): every staging module
  its go.mod replaces with `./staging/src/…` is replaced by its published `v0.<minor>.<patch>`,
  and the version is set through ldflags, since the Kubernetes provider refuses a cluster
  whose version it cannot parse;
- etcd, from `go.etcd.io/etcd/server/v3` (a three-line main in the same module, at the
  version that Kubernetes release pins);
- kwok and kwokctl from `sigs.k8s.io/kwok`, in a module of their own (their Kubernetes
  libraries are newer than the cluster's).
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLUSTER_SOURCES = HERE / "go-cluster"
KWOK_SOURCES = HERE / "go-kwok"
CLUSTER_BINARIES = (
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kubectl",
    "etcd",
    "kwok",
    "kwokctl",
)


def _build_module() -> object:
    """tools/engine/build, loaded as a module (it has no .py ending)."""
    from importlib.machinery import SourceFileLoader

    return SourceFileLoader("engine_build", str(HERE / "build")).load_module()


def kube_ldflags(version: str) -> str:
    major, minor = version.lstrip("v").split(".")[:2]
    base = "k8s.io/component-base/version"
    return " ".join(
        [
            f"-X {base}.gitVersion={version}",
            f"-X {base}.gitMajor={major}",
            f"-X {base}.gitMinor={minor}",
            f"-X {base}.gitTreeState=clean",
            f"-X {base}.buildDate=1970-01-01T00:00:00Z",
        ]
    )


def build_cluster(bin_dir: Path, work: Path, pins: dict[str, str]) -> None:
    build = _build_module()
    say, go = build.say, build.go  # type: ignore[attr-defined]
    kube = pins["kubernetes"]
    for sources, folder in ((CLUSTER_SOURCES, work / "cluster"), (KWOK_SOURCES, work / "kwok")):
        if folder.exists():
            shutil.rmtree(folder)
        shutil.copytree(sources, folder)
        say(f"downloading modules for {folder.name}")
        go(["mod", "download"], folder)
    kwok_flags = f"-X sigs.k8s.io/kwok/pkg/consts.Version={pins['kwok']}"
    builds = [
        ("kube-apiserver", work / "cluster", "k8s.io/kubernetes/cmd/kube-apiserver", kube_ldflags(kube)),
        ("kube-controller-manager", work / "cluster", "k8s.io/kubernetes/cmd/kube-controller-manager", kube_ldflags(kube)),
        ("kube-scheduler", work / "cluster", "k8s.io/kubernetes/cmd/kube-scheduler", kube_ldflags(kube)),
        ("kubectl", work / "cluster", "k8s.io/kubernetes/cmd/kubectl", kube_ldflags(kube)),
        ("etcd", work / "cluster", "./etcd", ""),
        ("kwok", work / "kwok", "sigs.k8s.io/kwok/cmd/kwok", kwok_flags),
        ("kwokctl", work / "kwok", "sigs.k8s.io/kwok/cmd/kwokctl", kwok_flags),
    ]  # fmt: skip
    for name, cwd, package, ldflags in builds:
        started = time.monotonic()
        say(f"building {name} (minutes on a first run)")
        go(["build", "-ldflags", ldflags, "-o", str(bin_dir / name), package], cwd)
        say(f"built {name} in {time.monotonic() - started:.0f} s")


def ensure_cluster() -> Path:
    """The folder of the cluster's binaries, built when missing."""
    build = _build_module()
    pins = json.loads((HERE / "pins.json").read_text())["cluster"]
    key = build.source_key(pins, CLUSTER_SOURCES, KWOK_SOURCES)  # type: ignore[attr-defined]
    bin_dir = build.cache_root() / f"cluster-{key}" / "bin"  # type: ignore[attr-defined]
    marker = bin_dir / ".complete"
    if marker.is_file() and all((bin_dir / name).is_file() for name in CLUSTER_BINARIES):
        build.say("cluster binaries up to date")  # type: ignore[attr-defined]
        return bin_dir
    bin_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    build_cluster(bin_dir, bin_dir.parent / "src", pins)
    marker.write_text(json.dumps(pins, indent=2) + "\n")
    build.say(f"cluster binaries built in {time.monotonic() - started:.0f} s")  # type: ignore[attr-defined]
    return bin_dir


if __name__ == "__main__":
    sys.exit("run tools/engine/build --cluster")
