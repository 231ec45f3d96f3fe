"""The policy pack's rules as pure functions over a stack's resources.

A :class:`Resource` is what Pulumi's engine hands a policy: a type token, a URN, a name and
the properties (for a Kubernetes object, its manifest in camelCase). Each rule returns the
:class:`Finding` s it makes; ``pack.py`` wraps them as CrossGuard policies, so ``pulumi
preview --policy-pack`` and ``langop-infra check`` judge with the same code. The rules look
only at Kubernetes objects and schema-sync resources, so a program written with plain
``pulumi_kubernetes`` objects is judged as well as one made of langop-infra components.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from urllib.parse import urlsplit

import langop_infra._json as _json
from langop_infra.config.checks._advice import is_credential_env
from langop_infra.netpol import Network, Pod
from langop_infra.policy import _credentials as credentials
from langop_infra.policy._pod_security import containers, pod_templates, restricted_violations

DIGEST = re.compile(r"@sha256:[0-9a-f]{64}\Z")  # \Z: `$` would let a trailing newline by
SYNC_TYPE = "pulumi-python:dynamic:Resource"
AGENT_LABELS = {"app.kubernetes.io/component": "agent"}
TOOL_LABELS = {"app.kubernetes.io/component": "tool"}
# Env vars through which an agent names what it uses (the agent contract, docs/agent-contract.md).
ENDPOINT_ENV = ("MCP_SERVERS", "MODEL_ENDPOINT", "MODEL_ENDPOINTS", "AGENT_MEMORY_ENDPOINT")
# JSON lists of {"name", "url"}: external MCP servers (ark) and A2A peers.
JSON_SERVERS_ENV = ("AGENT_MCP_SERVERS", "A2A_PEERS")


@dataclass(frozen=True)
class Resource:
    """One resource of the stack, as the engine describes it to a policy."""

    type: str
    urn: str
    name: str
    props: Mapping[str, Any]
    dependencies: tuple[str, ...] = ()

    @property
    def kind(self) -> str | None:
        """The Kubernetes kind (``Deployment``), or None for other resources."""
        return self.type.rsplit(":", 1)[-1] if self.type.startswith("kubernetes:") else None

    @cached_property
    def manifest(self) -> dict[str, Any]:
        """The properties as a manifest (numbers come through the engine as floats); made
        once, as every rule reads it."""
        return {**_integral(dict(self.props)), "kind": self.kind}


@dataclass(frozen=True)
class Finding:
    urn: str
    message: str


@dataclass(frozen=True)
class Workload:
    resource: Resource
    namespace: str
    name: str
    pod: Mapping[str, Any]

    @property
    def labels(self) -> Mapping[str, str]:
        return (self.pod.get("metadata") or {}).get("labels") or {}

    def endpoint(self) -> Pod:
        return Pod(self.namespace, dict(self.labels), name=self.name)

    def ports(self) -> list[int]:
        return sorted(
            {p["containerPort"] for c in containers(self.pod) for p in c.get("ports") or []}
        )


def _integral(value: object) -> Any:
    if isinstance(value, Mapping):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_integral(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def workloads(resources: Iterable[Resource]) -> list[Workload]:
    """Every pod template of the stack with the resource that carries it, by namespace and
    name (registration order varies from run to run)."""
    found = []
    for resource in resources:
        if resource.kind is None:
            continue
        for key, pod in pod_templates([resource.manifest]).items():
            _, namespace, name = key.split("/", 2)
            found.append(Workload(resource, namespace or "default", name, pod))
    return sorted(found, key=lambda w: (w.namespace, w.name, w.resource.type))


def _selected(labels: Mapping[str, str], wanted: Mapping[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in wanted.items())


def _objects(resources: Iterable[Resource], kind: str) -> list[dict[str, Any]]:
    return [r.manifest for r in resources if r.kind == kind]


def _network(resources: Sequence[Resource]) -> Network:
    labels = {
        (ns["metadata"] or {}).get("name", ""): (ns["metadata"] or {}).get("labels") or {}
        for ns in _objects(resources, "Namespace")
    }
    return Network(_objects(resources, "NetworkPolicy"), labels)


# --- complete policies --------------------------------------------------------------------------


def unselected_pods(resources: Sequence[Resource]) -> list[Finding]:
    """Every pod is selected by some NetworkPolicy of its namespace."""
    network = _network(resources)
    return [
        Finding(w.resource.urn, f"pod of {w.namespace}/{w.name} is selected by no NetworkPolicy")
        for w in workloads(resources)
        if not network.selecting(w.endpoint())
    ]


# --- restricted Pod Security Standard -----------------------------------------------------------


def unrestricted_pods(resources: Sequence[Resource]) -> list[Finding]:
    """Every pod template meets the restricted standard: init containers, native sidecars and
    the gateway included."""
    return [
        Finding(w.resource.urn, f"pod of {w.namespace}/{w.name}: {violation}")
        for w in workloads(resources)
        for violation in restricted_violations(w.pod)
    ]


# --- images ---------------------------------------------------------------------------------


def unpinned_images(resources: Sequence[Resource]) -> list[Finding]:
    """Every container image is pinned by digest (``…@sha256:<64 hex>``)."""
    return [
        Finding(
            w.resource.urn,
            f"{w.namespace}/{w.name}: container {c.get('name')} runs {c.get('image')!r}, which "
            "is not pinned by digest; use <image>@sha256:<digest>",
        )
        for w in workloads(resources)
        for c in containers(w.pod)
        if not DIGEST.search(str(c.get("image") or ""))
    ]


# --- credentials ----------------------------------------------------------------------------


def literal_credentials(resources: Sequence[Resource]) -> list[Finding]:
    """No credential literal, by name or by shape (:mod:`langop_infra.policy._credentials`),
    in a pod template's env (JSON env values too), a ConfigMap (keys, values, the entries of
    JSON, YAML and ``.env`` text, ``binaryData``) or the headers any of those carry."""
    findings: list[Finding] = []
    for w in workloads(resources):
        for c in containers(w.pod):
            for env in c.get("env") or []:
                findings += _env_credentials(w, c, env)
    for resource in sorted(resources, key=lambda r: r.urn):
        if resource.kind == "ConfigMap":
            findings += _config_map_credentials(resource)
    return findings


def _env_credentials(w: Workload, container: Mapping[str, Any], env: Any) -> list[Finding]:
    name, value = str(env.get("name") or ""), env.get("value")
    where = f"{w.namespace}/{w.name}: container {container.get('name')} env {name}"
    if (is_credential_env(name) and value) or credentials.judge(name, value):
        return [
            Finding(w.resource.urn, f"{where} is a literal credential; use valueFrom.secretKeyRef")
        ]
    if isinstance(value, str) and value.lstrip().startswith(("{", "[")):
        return [
            Finding(
                w.resource.urn,
                f"{where}: {path} holds a literal credential ({reason}); "
                "send it from a Secret (valueFrom.secretKeyRef)",
            )
            for path, reason in credentials.in_text("", value)
        ]
    return []


def _config_map_credentials(resource: Resource) -> list[Finding]:
    meta = resource.props.get("metadata") or {}
    where = f"ConfigMap {meta.get('namespace', '')}/{meta.get('name')}"
    findings: list[Finding] = []
    for key, value in (resource.props.get("data") or {}).items():
        if is_credential_env(key) and value:
            findings.append(Finding(resource.urn, f"{where}: key {key} holds a literal credential"))
            continue
        for path, reason in credentials.in_text(key, str(value or "")):
            findings.append(Finding(resource.urn, _config_map_message(where, key, path, reason)))
    for key, value in (resource.props.get("binaryData") or {}).items():
        for path, reason in credentials.in_binary(key, value):
            findings.append(Finding(resource.urn, _config_map_message(where, key, path, reason)))
    return findings


def _config_map_message(where: str, key: str, path: str, reason: str) -> str:
    pair = re.search(r" \(([^)]+)\)$", path)
    if pair and path.startswith(f"{key}.") and credentials.credential_header(pair.group(1)):
        return (
            f"{where}: {key} {path[len(key) :]} is a credential header with a literal value; "
            "send it from a Secret (valueFrom.secretKeyRef)"
        )
    return (
        f"{where}: {path} holds a literal credential ({reason}); send it from a Secret "
        "(valueFrom.secretKeyRef)"
    )


# --- egress -------------------------------------------------------------------------------------


def agent_egress(
    resources: Sequence[Resource],
    *,
    require_restricted: bool,
    agent_labels: Mapping[str, str] = AGENT_LABELS,
) -> list[Finding]:
    """An agent reaches only the tools and models it declares (``MCP_SERVERS``,
    ``MODEL_ENDPOINT``, ``AGENT_MCP_SERVERS``); with ``require_restricted``, a NetworkPolicy
    also limits its egress."""
    network = _network(resources)
    all_workloads = workloads(resources)
    services = _service_backends(resources, all_workloads)
    # Each workload's endpoint and ports once, and only workloads that listen: the pairs
    # below are agents x workloads.
    targets = [(w, w.endpoint(), ports) for w in all_workloads if (ports := w.ports())]
    # An agent whose egress is open is admitted at a target by its namespace and the labels
    # ingress peers look at; agents alike in those share each target's verdict.
    peer_keys = network.peer_label_keys("ingress")
    verdicts: dict[tuple[object, int], int | None] = {}
    findings: list[Finding] = []
    for agent in all_workloads:
        if not _selected(agent.labels, agent_labels):
            continue
        source = agent.endpoint()
        if require_restricted and not network.isolated(source, "egress"):
            findings.append(
                Finding(
                    agent.resource.urn,
                    f"agent {agent.namespace}/{agent.name} is selected by no NetworkPolicy that "
                    "limits its egress; set egress: restricted",
                )
            )
        declared = {
            backend
            for host in _declared_hosts(agent)
            for backend in services.get(_service_key(host, agent.namespace), ())
        }
        alike = None
        if not network.isolated(source, "egress"):
            labels = frozenset((k, v) for k, v in agent.labels.items() if k in peer_keys)
            alike = (agent.namespace, labels)
        for index, (other, endpoint, ports) in enumerate(targets):
            if other is agent or (other.namespace, other.name) in declared:
                continue
            if alike is not None and (alike, index) in verdicts:
                reachable = verdicts[(alike, index)]
            else:
                reachable = next((p for p in ports if network.allows(source, endpoint, p)), None)
                if alike is not None:
                    verdicts[(alike, index)] = reachable
            if reachable is not None:
                findings.append(
                    Finding(
                        agent.resource.urn,
                        f"agent {agent.namespace}/{agent.name} may reach {other.namespace}/"
                        f"{other.name} on port {reachable}, which it does not declare",
                    )
                )
    return findings


def _declared_hosts(agent: Workload) -> set[str]:
    hosts = set()
    for c in containers(agent.pod):
        env = {e["name"]: e.get("value") for e in c.get("env") or [] if "name" in e}
        for name in ENDPOINT_ENV:
            hosts |= {_host(url) for url in str(env.get(name) or "").split(",") if url.strip()}
        for name in JSON_SERVERS_ENV:
            try:
                servers = _json.read(env.get(name) or "[]")
            except json.JSONDecodeError:
                servers = []
            hosts |= {_host(s.get("url", "")) for s in servers if isinstance(s, Mapping)}
    return hosts - {""}


def _host(url: str) -> str:
    try:
        return (urlsplit(url.strip()).hostname or "").lower()
    except ValueError:
        return ""


def _service_key(host: str, namespace: str) -> tuple[str, str]:
    """``svc``, ``svc.ns``, ``svc.ns.svc`` and ``svc.ns.svc.cluster.local`` name one Service."""
    parts = host.split(".")
    if len(parts) == 1:
        return (namespace, parts[0])
    return (parts[1], parts[0])


def _service_backends(
    resources: Sequence[Resource], all_workloads: Sequence[Workload]
) -> dict[tuple[str, str], set[tuple[str, str]]]:
    """(namespace, Service name) → the workloads its selector picks."""
    backends: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for service in _objects(resources, "Service"):
        meta = service.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        selector = (service.get("spec") or {}).get("selector") or {}
        backends[(namespace, meta.get("name", ""))] = {
            (w.namespace, w.name)
            for w in all_workloads
            if selector and w.namespace == namespace and _selected(w.labels, selector)
        }
    return backends


# --- schema sync --------------------------------------------------------------------------------


def schema_sync(
    resources: Sequence[Resource], tool_labels: Mapping[str, str] = TOOL_LABELS
) -> list[Finding]:
    """Every tool has schema sync, and a tool that an agent waits for syncs with
    ``required``."""
    syncs = {
        (str(r.props.get("namespace")), str(r.props.get("service"))): r
        for r in resources
        if r.type == SYNC_TYPE
        and "endpoint" in r.props
        and "service" in r.props
        and "card_path" not in r.props  # an A2A peer's card sync, not a tool's
    }
    every = workloads(resources)
    waited_for = {
        urn for w in every if _selected(w.labels, AGENT_LABELS) for urn in w.resource.dependencies
    }
    findings: list[Finding] = []
    for tool in every:
        if not _selected(tool.labels, tool_labels):
            continue
        sync = syncs.get((tool.namespace, tool.name))
        if sync is None:
            findings.append(
                Finding(tool.resource.urn, f"tool {tool.namespace}/{tool.name} has no schema sync")
            )
        elif tool.resource.urn in waited_for and not _truthy(sync.props.get("required")):
            findings.append(
                Finding(
                    sync.urn,
                    f"an agent waits for tool {tool.namespace}/{tool.name}, but its schema sync "
                    "is not required; set schemaSync.required: true",
                )
            )
    return findings


def _truthy(value: object) -> bool:
    return value is True or str(value).lower() == "true"
