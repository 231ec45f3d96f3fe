"""Every shipped stack against a real API server: `pulumi up`, a second `up`, `refresh`,
`preview --diff` of one edit, and `destroy`, on a local cluster of processes built from Go
modules (tools/engine/cluster; kwok stands in for the kubelets, so pods become Ready and fill
their Services' endpoints while no container runs).

Schema sync goes through the real API server's service proxy to official-SDK MCP servers
that the test serves "in" the pods: a network namespace of its own that owns the pod range
(tests/support/netns.py). The API server's audit log shows every request that reached it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.faultservers import memory_server
from tests.support.apiserver import IN_CLUSTER_BIND
from tests.support.engine import (
    REPO,
    Engine,
    offline_render,
    python_project,
    reseal_secrets,
    stack_state,
)
from tests.support.kube import Kube, static_volumes, written_but_not_kept
from tests.support.netns import PodNetwork, pod_network, serve_in_pods
from tests.test_proxy_confinement import HOSTILE

pytestmark = pytest.mark.engine

CANARY = "canary-cluster-41d2"
STACKS = ("dev", "staging", "prod")
# The one edit of the drift check: a variable added to the first tool's environment.
EDIT = ("langop-infra:tools[0].env.EDITED_BY_TEST", "yes")


@pytest.fixture(scope="module")
def pods() -> Iterator[PodNetwork]:
    """The pod network, an official-SDK memory server on each container port of the shipped
    stacks (8080, 9090)."""
    with (
        pod_network() as network,
        serve_in_pods(network, memory_server().streamable_http_app(host=IN_CLUSTER_BIND), 8080),
        serve_in_pods(network, memory_server().streamable_http_app(host=IN_CLUSTER_BIND), 9090),
    ):
        yield network


def deployed(
    engine: Engine, kube: Kube, tmp_path: Path, stack: str
) -> tuple[Path, dict[tuple[str, str, str], dict[str, Any]]]:
    """The stack's project, `pulumi up` onto the cluster; its offline render, object by object."""
    project = python_project(tmp_path / "project", stacks=(stack,))
    engine.run(project, "stack", "init", stack)
    reseal_secrets(engine, project, stack, CANARY)
    kube.point_stack(engine, project, stack)
    offline = offline_render(project, stack, tmp_path / "offline", engine.env)
    claims = [obj for key, obj in offline.items() if key[0] == "PersistentVolumeClaim"]
    if claims:
        kube.apply(*static_volumes(claims, tmp_path / "volumes"))
    engine.run(project, "up", "--stack", stack, "--yes", "--skip-preview")
    return project, offline


def not_as_written(kube: Kube, offline: dict[tuple[str, str, str], dict[str, Any]]) -> list[str]:
    """Every rendered object missing from the cluster, or kept other than written."""
    found = []
    for (kind, namespace, name), written in sorted(offline.items()):
        kept = kube.get(kind, name, namespace)
        if kept is None:
            found.append(f"{kind}/{namespace}/{name}: missing")
            continue
        if kind == "Secret":  # render redacts values; the keys must all be there
            keys = set(written.get("stringData") or {}) | set(written.get("data") or {})
            if keys - set(kept.get("data") or {}):
                found.append(f"{kind}/{namespace}/{name}: keys missing")
            written = {k: v for k, v in written.items() if k not in ("stringData", "data")}
        found += [
            f"{kind}/{namespace}/{name}: {d}" for d in written_but_not_kept((), written, kept)
        ]
    return found


def namespace_of(offline: dict[tuple[str, str, str], dict[str, Any]]) -> str:
    return next(name for kind, _, name in offline if kind == "Namespace")


def steps_of(engine: Engine, project: Path, stack: str) -> list[dict[str, Any]]:
    """`pulumi preview --diff --json`: its steps other than `same`."""
    done = engine.run(project, "preview", "--stack", stack, "--diff", "--json")
    return [s for s in json.loads(done.stdout).get("steps", []) if s["op"] != "same"]


def ready_as_written(
    engine: Engine, kube: Kube, project: Path, stack: str, offline: dict[Any, dict[str, Any]]
) -> None:
    """Every object as written; workloads Available, Services with Ready endpoints, every pod
    admitted under *restricted*; the synced schema in state."""
    namespace = namespace_of(offline)
    assert not_as_written(kube, offline) == []
    for (kind, ns, name), _ in offline.items():
        if kind == "Deployment":
            status = kube.get(kind, name, ns)["status"]  # type: ignore[index]
            available = {c["type"]: c["status"] for c in status["conditions"]}["Available"]
            assert (available, status.get("readyReplicas")) == ("True", status["replicas"]), name
        if kind == "Service":
            slices = kube.items("endpointslices", ns)
            ready = [
                e for s in slices
                if s["metadata"]["labels"].get("kubernetes.io/service-name") == name
                for e in s.get("endpoints") or [] if e["conditions"].get("ready")
            ]  # fmt: skip
            assert ready, f"Service {name} has no ready endpoint"
    labels = kube.get("namespace", namespace)["metadata"]["labels"]  # type: ignore[index]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
    workloads = [key for key in offline if key[0] == "Deployment"]
    pods_running = kube.items("pods", namespace)
    assert len(pods_running) == sum(offline[key]["spec"].get("replicas", 1) for key in workloads)
    state = json.dumps(stack_state(engine, project, stack))
    assert '"remember"' in state, "the memory tool's schema, synced through the proxy, is in state"


def stays_put(engine: Engine, project: Path, stack: str, namespace: str) -> None:
    """A second `up` and a `refresh` change nothing; one edit previews as that edit only."""
    engine.run(project, "up", "--stack", stack, "--yes", "--skip-preview", "--expect-no-changes")
    engine.run(project, "refresh", "--stack", stack, "--yes", "--skip-preview",
               "--expect-no-changes")  # fmt: skip
    assert steps_of(engine, project, stack) == []
    engine.run(project, "config", "set", "--stack", stack, "--path", *EDIT)
    steps = steps_of(engine, project, stack)
    assert [(s["op"], s["urn"].rsplit("::", 1)[-1]) for s in steps] == [
        ("update", f"{namespace}/{first_tool(stack)}")
    ]
    changed = steps[0]["detailedDiff"]
    assert changed and all(
        key.startswith("spec.template.spec.containers[0].env[") for key in changed
    ), changed  # the list is sorted by name: the new variable shifts those after it


def comes_down_clean(
    engine: Engine, kube: Kube, project: Path, stack: str, offline: dict[Any, dict[str, Any]]
) -> None:
    """`destroy` removes every object it made, the namespace with them."""
    namespace = namespace_of(offline)
    engine.run(project, "destroy", "--stack", stack, "--yes", "--skip-preview")
    assert kube.wait_gone("namespace", namespace), f"namespace {namespace} is still there"
    left = [key for key in offline if kube.get(key[0], key[2], key[1]) is not None]
    assert left == []


@pytest.mark.parametrize("stack", STACKS)
def test_a_stack_goes_up_as_written_stays_put_and_comes_down_clean(
    engine: Engine, kube: Kube, pods: PodNetwork, tmp_path: Path, stack: str
) -> None:
    project, offline = deployed(engine, kube, tmp_path, stack)
    try:
        ready_as_written(engine, kube, project, stack, offline)
        stays_put(engine, project, stack, namespace_of(offline))
    finally:
        comes_down_clean(engine, kube, project, stack, offline)


def first_tool(stack: str) -> str:
    stack_file = Path(__file__).resolve().parents[2] / "stacks" / f"Pulumi.{stack}.yaml"
    return yaml.safe_load(stack_file.read_text())["config"]["langop-infra:tools"][0]["name"]


# -- schema sync through the real service proxy, and the confinement cases against it --------

PROXIED_PORT = 7070  # the "apps/memory" Service's targetPort: where each case's server listens
PROXY_STACK = """
config:
  kubernetes:kubeconfig: {kubeconfig}
  kubernetes:context: {context}
  langop-infra:namespace: apps
  langop-infra:tools:
    - name: memory
      image: ghcr.io/acme/memory-mcp:1.0.0
      schemaSync: {{access: apiserver-proxy, timeout: 10s}}
"""


@pytest.fixture(scope="module")
def apps_memory(kube: Kube, pods: PodNetwork) -> str:
    """Service ``apps/memory`` (port 8080 → PROXIED_PORT) with one Ready pod; the prefix the
    proxy serves it under."""
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "memory-0", "namespace": "apps", "labels": {"app": "memory"}},
           "spec": {"containers": [{"name": "memory", "image": "ghcr.io/acme/memory-mcp:1.0.0",
                                    "ports": [{"containerPort": PROXIED_PORT}]}]}}  # fmt: skip
    service = {"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": "memory", "namespace": "apps"},
               "spec": {"selector": {"app": "memory"},
                        "ports": [{"port": 8080, "targetPort": PROXIED_PORT}]}}  # fmt: skip
    kube.kubectl("create", "namespace", "apps")
    kube.apply(pod, service)
    kube.kubectl("wait", "--for=condition=Ready", "pod/memory-0", "-n", "apps", "--timeout=120s")
    return "/api/v1/namespaces/apps/services/memory:8080/proxy"


def run_schemas(
    kube: Kube, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    from langop_infra.cli.main import main

    stack = tmp_path / "Pulumi.ci.yaml"
    stack.write_text(PROXY_STACK.format(kubeconfig=kube.kubeconfig, context=kube.context))
    capsys.readouterr()
    code = main(["schemas", "--config", str(stack), "--project-dir", str(REPO),
                 "--lock", str(tmp_path / "schemas.lock.yaml"), "--update"])  # fmt: skip
    out, err = capsys.readouterr()
    return code, out, err


def audit_length(kube: Kube) -> int:
    return len(kube.cluster.audit_log.read_text().splitlines())


def client_requests(kube: Kube, since: int) -> list[str]:
    """The request URIs the sync's HTTP client sent the API server (audit log lines after
    ``since``), by its user agent."""
    lines = kube.cluster.audit_log.read_text().splitlines()[since:]
    events = [json.loads(line) for line in lines]
    return [e["requestURI"] for e in events if e.get("userAgent", "").startswith("python-httpx")]


def test_schemas_update_syncs_through_the_real_service_proxy(
    kube: Kube, pods: PodNetwork, apps_memory: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    since = audit_length(kube)
    app = memory_server().streamable_http_app(host=IN_CLUSTER_BIND)
    with serve_in_pods(pods, app, PROXIED_PORT):
        code, _out, err = run_schemas(kube, tmp_path, capsys)
    assert (code, err) == (0, "")
    assert "remember" in (tmp_path / "schemas.lock.yaml").read_text()
    sent = client_requests(kube, since)
    assert f"{apps_memory}/mcp" in sent
    assert [uri for uri in sent if not uri.startswith(apps_memory + "/")] == []


@pytest.mark.parametrize("variant", sorted(HOSTILE))
def test_a_hostile_tool_gets_nothing_outside_the_real_proxy_prefix(
    kube: Kube, pods: PodNetwork, apps_memory: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str], variant: str,
) -> None:  # fmt: skip
    make, reason = HOSTILE[variant]
    since = audit_length(kube)
    with serve_in_pods(pods, make(), PROXIED_PORT):
        code, _out, err = run_schemas(kube, tmp_path, capsys)
    sent = client_requests(kube, since)
    assert any(uri.startswith(apps_memory + "/mcp") for uri in sent), "it reached the tool"
    assert [uri for uri in sent if not uri.startswith(apps_memory + "/")] == []
    assert (code, reason in err) == (1, True), err


# -- Pod Security admission: what `validate` refuses, the API server refuses too -------------

OVERRIDES = {
    "runAsNonRoot": {"runAsNonRoot": False},
    "allowPrivilegeEscalation": {"allowPrivilegeEscalation": True},
    "seccompProfile": {"seccompProfile": "Unconfined"},
    "dropCapabilities": {"dropCapabilities": []},
    "addCapabilities": {"addCapabilities": ["SYS_ADMIN"]},
}


def pod_with(security: dict[str, Any], namespace: str) -> dict[str, Any]:
    """The pod the package's builders make for a container with these security settings."""
    from langop_infra.config._pod import Security
    from langop_infra.manifests._pods import container_security_context, pod_security_context

    settings = Security.model_validate(security)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "probe", "namespace": namespace},
        "spec": {
            "securityContext": pod_security_context(settings),
            "containers": [
                {
                    "name": "tool",
                    "image": "ghcr.io/acme/memory-mcp:1.0.0",
                    "securityContext": container_security_context(settings),
                }
            ],
        },
    }


@pytest.fixture(scope="module")
def restricted_namespace(kube: Kube) -> str:
    """A namespace labelled as the package labels its own."""
    from langop_infra.manifests._pods import namespace_labels

    labels = namespace_labels({})
    namespace = {"apiVersion": "v1", "kind": "Namespace",
                 "metadata": {"name": "psa-probe", "labels": labels}}  # fmt: skip
    kube.apply(namespace)
    # A pod needs its service account, which the controller manager adds to a new namespace.
    assert kube.wait_present("serviceaccount", "default", "psa-probe")
    return "psa-probe"


def admitted(kube: Kube, pod: dict[str, Any]) -> tuple[bool, str]:
    done = kube.kubectl("create", "--dry-run=server", "-o", "name", "-f", "-",
                        stdin=json.dumps(pod), check=False)  # fmt: skip
    return done.returncode == 0, done.stderr


def test_the_api_server_admits_the_pod_the_package_makes(
    kube: Kube, restricted_namespace: str
) -> None:
    assert admitted(kube, pod_with({}, restricted_namespace)) == (True, "")


@pytest.mark.parametrize("field", sorted(OVERRIDES))
def test_what_validate_refuses_the_api_server_refuses(
    kube: Kube, restricted_namespace: str, field: str
) -> None:
    from langop_infra.config.checks._validation import parse_cluster
    from langop_infra.core.problems import SpecError

    security = OVERRIDES[field]
    tool = {"name": "memory", "image": "ghcr.io/acme/memory-mcp:1.0.0", "security": security}
    with pytest.raises(SpecError) as refused:
        parse_cluster({"namespace": "apps", "tools": [tool]})
    assert [p.path for p in refused.value.problems] == [f"tools[0].security.{field}"]

    ok, said = admitted(kube, pod_with(security, restricted_namespace))
    assert not ok
    assert 'violates PodSecurity "restricted:latest"' in said, said
