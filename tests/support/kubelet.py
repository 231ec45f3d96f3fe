"""A kubelet-like harness: start a rendered Deployment's or CronJob's container as a process,
as Kubernetes would start it, on this machine's loopback.

What it does, as the kubelet does:

- env: ``value``; ``valueFrom.secretKeyRef`` and ``configMapKeyRef`` from the rendered
  Secrets and ConfigMaps; ``fieldRef`` ``metadata.name``, ``metadata.namespace``,
  ``status.podIP``; ``envFrom``; ``$(VAR)`` expansion in env, command and args;
- volumes: ConfigMap and Secret volumes (``items`` or every key) written at their mount paths
  under a temporary root, ``emptyDir`` and PVC volumes as directories there;
- the command: ``command`` (else the image's entrypoint, given by the test) plus ``args``.

What stands in for the rest of a cluster (each a stated difference):

- the pod network: each pod gets its own loopback address (127.x.y.z); a container listening
  on ``0.0.0.0`` is told that address (``bind_env``, or ``--host`` for an entrypoint that
  takes it), so its ports stay as rendered;
- DNS: ``<svc>.<ns>.svc.cluster.local`` (and ``localhost`` inside the pod) resolve to the pod
  addresses the test registered, and an external origin to a loopback server the test
  names: names are rewritten in env values and mounted files (there is no resolver to ask);
- container paths: the built-in runtime reads ``LANGOP_PATH_ROOT`` (every absolute path it
  reads is under that root); for another image, env values and args under a mount path are
  rewritten to the root.
"""

from __future__ import annotations

import base64
import os
import random
import re
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from langop_infra.offline._engine_values import visit
from langop_infra.offline._mock_engine import ProgramRun
from tests.support.processes import stop_process

SERVICE = re.compile(r"\b([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.([a-z0-9-]+)\.svc\.cluster\.local\b")
_VAR = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def revealed_manifests(run: ProgramRun) -> list[dict[str, Any]]:
    """The run's Kubernetes objects with secrets in the clear (the API server's view, which
    a kubelet reads; a render redacts them)."""

    def integral(value: Any, _: str) -> Any:
        return int(value) if isinstance(value, float) and value.is_integer() else value

    return [
        visit(
            r.inputs,
            secret=lambda inner, _: visit(inner, leaf=integral),
            leaf=integral,
            skip_none=True,
        )
        for r in run.kubernetes()
    ]


def loopback_ip() -> str:
    """A loopback address of its own for a pod (127.0.0.0/8 is all loopback on Linux)."""
    return f"127.{random.randint(16, 250)}.{random.randint(1, 250)}.{random.randint(2, 250)}"


@dataclass
class Cluster:
    """The rendered objects, the names they resolve, and a root for the pods' files."""

    manifests: list[dict[str, Any]]
    root: Path
    services: dict[tuple[str, str], str] = field(default_factory=dict[tuple[str, str], str])
    external: dict[str, str] = field(default_factory=dict[str, str])

    def find(self, kind: str, name: str) -> dict[str, Any]:
        found = [m for m in self.manifests if m["kind"] == kind and m["metadata"]["name"] == name]
        if len(found) != 1:
            raise LookupError(f"{len(found)} {kind} objects named {name!r} in the render")
        return found[0]

    def add_service(self, name: str, namespace: str, ip: str | None = None) -> str:
        """Resolve ``<name>.<namespace>.svc.cluster.local`` to ``ip`` (a new one if None)."""
        self.services[(name, namespace)] = ip or loopback_ip()
        return self.services[(name, namespace)]

    def resolve(self, text: str, pod_ip: str | None = None) -> str:
        """``text`` with the cluster's names replaced by the addresses serving them."""
        for origin, local in self.external.items():
            text = text.replace(origin, local)

        def service(match: re.Match[str]) -> str:
            ip = self.services.get((match.group(1), match.group(3)))
            return ip if ip is not None else match.group(0)

        text = SERVICE.sub(service, text)
        if pod_ip is not None:
            text = re.sub(r"\blocalhost\b", pod_ip, text)
        return text

    def transport(self) -> httpx.AsyncBaseTransport:
        """An httpx transport resolving as the pods do (for the test's own clients)."""
        return _Resolving(self)

    def pod(self, kind: str, name: str, ip: str | None = None) -> Pod:
        workload = self.find(kind, name)
        template = (
            workload["spec"]["jobTemplate"]["spec"]["template"]
            if kind == "CronJob"
            else workload["spec"]["template"]
        )
        namespace = workload["metadata"].get("namespace", "default")
        suffix = "".join(random.choices("bcdfghjklmnpqrstvwxz2456789", k=5))
        return Pod(self, f"{name}-{suffix}", namespace, template["spec"], ip or loopback_ip())


class _Resolving(httpx.AsyncBaseTransport):
    def __init__(self, cluster: Cluster) -> None:
        self.cluster, self.inner = cluster, httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        # As DNS does: the address changes, the Host header stays the name that was asked for
        # (a server that builds URLs from it, as a minimal agent card does, names the Service).
        request.headers["host"] = request.url.netloc.decode()
        request.url = httpx.URL(self.cluster.resolve(str(request.url)))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass
class Pod:
    """One pod of a workload: its name, namespace, spec and loopback address."""

    cluster: Cluster
    name: str
    namespace: str
    spec: dict[str, Any]
    ip: str
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list[subprocess.Popen[bytes]])

    @property
    def root(self) -> Path:
        return self.cluster.root / self.name

    def container(self, name: str | None = None) -> dict[str, Any]:
        containers: list[dict[str, Any]] = self.spec["containers"]
        return containers[0] if name is None else next(c for c in containers if c["name"] == name)

    def _object_data(self, kind: str, name: str) -> dict[str, str]:
        found = [
            m
            for m in self.cluster.manifests
            if m["kind"] == kind
            and m["metadata"]["name"] == name
            and m["metadata"].get("namespace", self.namespace) == self.namespace
        ]
        if not found:
            raise LookupError(f"the pod needs {kind} {self.namespace}/{name}; none is rendered")
        data = dict(found[0].get("stringData") or {})
        for key, value in (found[0].get("data") or {}).items():
            data[key] = base64.b64decode(value).decode() if kind == "Secret" else value
        return data

    def env(self, container: dict[str, Any]) -> dict[str, str]:
        env: dict[str, str] = {}
        for source in container.get("envFrom") or []:
            kind, ref = (
                ("Secret", source["secretRef"])
                if "secretRef" in source
                else ("ConfigMap", source["configMapRef"])
            )
            for key, value in self._object_data(kind, ref["name"]).items():
                env[source.get("prefix", "") + key] = value
        for var in container.get("env") or []:
            env[var["name"]] = self._value(var, env)
        return {k: self.cluster.resolve(v, self.ip) for k, v in env.items()}

    def _value(self, var: Mapping[str, Any], env: Mapping[str, str]) -> str:
        if "valueFrom" not in var:
            return _expand(str(var.get("value", "")), env)
        source = var["valueFrom"]
        if "secretKeyRef" in source:
            ref = source["secretKeyRef"]
            return self._object_data("Secret", ref["name"])[ref["key"]]
        if "configMapKeyRef" in source:
            ref = source["configMapKeyRef"]
            return self._object_data("ConfigMap", ref["name"])[ref["key"]]
        path = source["fieldRef"]["fieldPath"]
        fields = {
            "metadata.name": self.name,
            "metadata.namespace": self.namespace,
            "status.podIP": self.ip,
        }
        if path not in fields:
            raise LookupError(f"fieldRef {path} is not one this harness knows")
        return fields[path]

    def write_volumes(self, container: dict[str, Any]) -> None:
        volumes = {v["name"]: v for v in self.spec.get("volumes") or []}
        for mount in container.get("volumeMounts") or []:
            target = self.root / mount["mountPath"].lstrip("/")
            volume = volumes[mount["name"]]
            sources = volume["projected"]["sources"] if "projected" in volume else [volume]
            target.mkdir(parents=True, exist_ok=True)  # emptyDir, a claim: an empty directory
            for source in sources:
                if "configMap" in source or "secret" in source:
                    self._write_source(source, mount, target)

    def _write_source(
        self, volume: Mapping[str, Any], mount: Mapping[str, Any], target: Path
    ) -> None:
        """One ConfigMap or Secret (a volume, or a projected volume's source) at ``target``."""
        kind = "ConfigMap" if "configMap" in volume else "Secret"
        source = volume["configMap"] if kind == "ConfigMap" else volume["secret"]
        data = self._object_data(kind, source.get("name") or source.get("secretName"))
        items = source.get("items") or [{"key": k, "path": k} for k in data]
        if mount.get("subPath"):  # one file of the volume at the mount path itself
            items = [{**i, "path": ""} for i in items if i["path"] == mount["subPath"]]
            if target.is_dir():
                target.rmdir()
        for item in items:
            path = target / item["path"] if item["path"] else target
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(self.cluster.resolve(data[item["key"]], self.ip))

    def start(
        self,
        container_name: str | None = None,
        *,
        entrypoint: Sequence[str] = (),
        path: str = "",
        bind_env: str | None = None,
        host_flag: str | None = None,
        path_root_env: str | None = None,
        extra_env: Mapping[str, str] | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start one container; its stdout goes to ``<root>/<container>.out``, its stderr to
        ``<root>/<container>.log``."""
        container = self.container(container_name)
        self.write_volumes(container)
        env = self.env(container) | dict(extra_env or {})
        mounts = [m["mountPath"] for m in container.get("volumeMounts") or []]
        # The test's entrypoint is a path on this machine (which may lie under a mount path
        # such as /tmp), never moved; the container's own command and args are.
        given = [] if container.get("command") else list(entrypoint)
        argv = [*(container.get("command") or []), *(container.get("args") or [])]
        argv = [_expand(a, env) for a in argv]
        if path_root_env is not None:
            env[path_root_env] = str(self.root)
        else:  # an image that cannot be told: its paths under a mount move to the root
            argv = [self._moved(a, mounts) for a in argv]
            env = {k: self._moved(v, mounts) for k, v in env.items()}
        argv = [*given, *argv]
        if bind_env is not None:
            env[bind_env] = self.ip
        if host_flag is not None:
            argv += [host_flag, self.ip]
        (self.root / "tmp").mkdir(parents=True, exist_ok=True)
        env |= {
            "PATH": path or os.environ.get("PATH", ""),
            "HOME": str(self.root),
            "TMPDIR": str(self.root / "tmp"),
        }
        out = (self.root / f"{container['name']}.out").open("wb")
        log = (self.root / f"{container['name']}.log").open("wb")
        process = subprocess.Popen(argv, env=env, cwd=self.root, stdout=out, stderr=log)
        self.processes.append(process)
        return process

    def _moved(self, value: str, mounts: Sequence[str]) -> str:
        for mount in mounts:
            if value == mount or value.startswith(mount.rstrip("/") + "/"):
                return str(self.root) + value
        return value

    def log(self, container_name: str | None = None) -> str:
        """The container's stderr, then its stdout."""
        name = self.container(container_name)["name"]
        return "".join(
            (self.root / f"{name}.{kind}").read_text(errors="replace") for kind in ("log", "out")
        )

    def output(self, container_name: str | None = None) -> str:
        name = self.container(container_name)["name"]
        return (self.root / f"{name}.out").read_text(errors="replace")

    def stop(self) -> None:
        for process in self.processes:
            stop_process(process)


def wait_http(url: str, process: subprocess.Popen[bytes], pod: Pod, deadline: float = 120) -> None:
    """Until ``url`` answers 200, failing with the container's log if it exits first."""
    give_up = time.monotonic() + deadline
    while time.monotonic() < give_up:
        if process.poll() is not None:
            raise AssertionError(
                f"the container exited with {process.returncode}:\n{pod.log()[-3000:]}"
            )
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{url} did not answer 200 within {deadline:g}s:\n{pod.log()[-3000:]}")


def _expand(value: str, env: Mapping[str, str]) -> str:
    """The kubelet's ``$(VAR)`` expansion: a variable not set stays as written."""
    return _VAR.sub(lambda m: env.get(m.group(1), m.group(0)), value)
