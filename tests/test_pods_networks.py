"""Production pods and networks: native sidecars, persistent workspaces, pod settings,
disruption budgets and autoscalers, agent ports, and NetworkPolicies that select every pod and
never share a name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from langop_infra.agent.runtime import join_mcp_path, load_agent_servers
from langop_infra.components.cluster import LanguageCluster
from langop_infra.config._pod import PodSettings
from langop_infra.core.problems import SpecError
from langop_infra.manifests import _contract as contract
from langop_infra.manifests._pod_settings import apply_pod_settings
from langop_infra.manifests._workspace import INIT_SCRIPT
from langop_infra.netpol import IPAddress, Network, Pod
from langop_infra.offline._mock_engine import run_program
from langop_infra.offline._render import render_stack

REPO = Path(__file__).resolve().parents[1]
VERSIONS = ("1.29.0", "1.31.0")
NEW_KINDS = {
    "PodDisruptionBudget",
    "HorizontalPodAutoscaler",
    "Service",
    "PersistentVolumeClaim",
    "ConfigMap",
    "Deployment",
    "NetworkPolicy",
}


def unpinned_aside(warnings: list[str]) -> list[str]:
    """The warnings without those of images given by tag (not what these tests are about)."""
    return [w for w in warnings if "no digest" not in w]


def validate_at_every_version(manifests: list[dict[str, Any]]) -> None:
    for version in VERSIONS:
        for manifest in manifests:
            try:
                kubernetes_validate.validate(manifest, version, strict=True)
            except kubernetes_validate.ValidationError as exc:
                name = manifest["metadata"]["name"]
                raise AssertionError(f"{version}: {manifest['kind']} {name}: {exc}") from exc


def cluster_run(document: dict[str, Any], **kwargs: Any) -> Any:
    return run_program(lambda: LanguageCluster("c", document), **kwargs)


def find(manifests: list[dict[str, Any]], kind: str, name: str, ns: str = "apps") -> dict:
    found = [
        m
        for m in manifests
        if m["kind"] == kind
        and m["metadata"]["name"] == name
        and m["metadata"].get("namespace") == ns
    ]
    assert len(found) == 1, f"{kind} {ns}/{name}: {len(found)}"
    return found[0]


FILES = {"name": "files", "image": "ghcr.io/acme/files:1", "deploymentMode": "sidecar"}


def rich_document() -> dict[str, Any]:
    """One of everything new, validated at 1.29 and 1.31 below."""
    return {
        "namespace": "apps",
        "defaults": {"schemaSyncFrom": [{"cidr": "10.0.0.0/28"}]},
        "tools": [
            {
                "name": "search",
                "image": "ghcr.io/acme/search:1",
                "replicas": 3,
                "disruptionBudget": {"minAvailable": "50%"},
                "egress": "restricted",
                "egressTo": [
                    {"namespace": "index", "podLabels": {"app": "es"}, "ports": [{"port": 9200}]}
                ],
                "imagePullSecrets": ["regcred"],
                "envFrom": [{"configMapRef": {"name": "search-settings"}, "prefix": "S_"}],
                "probes": {"liveness": {"periodSeconds": 30}},
                "nodeSelector": {"kubernetes.io/os": "linux"},
                "tolerations": [{"key": "tools", "operator": "Exists", "effect": "NoSchedule"}],
                "topologySpreadConstraints": [
                    {
                        "maxSkew": 1,
                        "topologyKey": "topology.kubernetes.io/zone",
                        "whenUnsatisfiable": "ScheduleAnyway",
                    }
                ],
                "priorityClassName": "tools-high",
                "podLabels": {"team": "search"},
                "podAnnotations": {"prometheus.io/scrape": "true"},
                "terminationGracePeriodSeconds": 45,
            },
            {**FILES, "port": 8181, "probes": {"startup": {"failureThreshold": 10}}},
            {
                "name": "scaled",
                "image": "ghcr.io/acme/scaled:1",
                "autoscaling": {"minReplicas": 2, "maxReplicas": 6},
            },
        ],
        "agents": [
            {
                "name": "helper",
                "image": "ghcr.io/acme/helper:1",
                "tools": [{"name": "search"}, {"name": "files"}],
                "ports": [{"name": "http", "port": 8000}],
                "allowFrom": [{"namespaceSelector": {"matchLabels": {"team": "web"}}}],
                # Several pods share the workspace, so it must be ReadWriteMany.
                "workspace": {
                    "size": "2Gi",
                    "accessModes": ["ReadWriteMany"],
                    "initialFiles": {"README.md": "hello\n"},
                },
                "probes": {"readiness": {"httpGet": {"path": "/ready", "port": 8000}}},
                "affinity": {
                    "podAntiAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 50,
                                "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname"},
                            }
                        ]
                    }
                },
                "autoscaling": {"maxReplicas": 3, "targetCPUUtilizationPercentage": 70},
                "egress": "restricted",
                "egressTo": [{"namespace": "web", "ports": [{"port": 443}]}],
            }
        ],
    }


@pytest.fixture(scope="module")
def rich() -> list[dict[str, Any]]:
    return cluster_run(rich_document()).manifests()


def test_every_new_object_is_valid_at_1_29_and_1_31(rich: list[dict[str, Any]]) -> None:
    kinds = {m["kind"] for m in rich}
    assert kinds >= NEW_KINDS
    validate_at_every_version(rich)


# --- native sidecars --------------------------------------------------------------------------


def test_native_sidecars_start_before_the_agent_with_a_startup_probe(rich) -> None:
    pod = find(rich, "Deployment", "helper")["spec"]["template"]["spec"]
    # init-workspace first, then each sidecar; the agent container starts after them all.
    assert [c["name"] for c in pod["initContainers"]] == ["init-workspace", "files"]
    assert [c["name"] for c in pod["containers"]] == ["helper"]
    files = pod["initContainers"][1]
    assert files["restartPolicy"] == "Always"
    # The tool's startup override keeps the health-path handler.
    assert files["startupProbe"] == {
        "httpGet": {"path": "/health", "port": 8181},
        "periodSeconds": 2,
        "failureThreshold": 10,
    }
    assert "restartPolicy" not in pod["initContainers"][0]


def test_a_native_sidecar_without_override_probes_its_health_path() -> None:
    document = {
        "namespace": "apps",
        "tools": [{**FILES, "healthPath": "/livez"}],
        "agents": [{"name": "a", "image": "ghcr.io/acme/a:1", "tools": [{"name": "files"}]}],
    }
    pod = find(cluster_run(document).manifests(), "Deployment", "a")["spec"]["template"]["spec"]
    assert pod["initContainers"][0]["startupProbe"] == {
        "httpGet": {"path": "/livez", "port": 8080},
        "periodSeconds": 2,
        "failureThreshold": 60,
    }


def test_sidecar_style_container_keeps_plain_containers() -> None:
    document = {
        "namespace": "apps",
        "defaults": {"sidecarStyle": "container"},
        "tools": [FILES],
        "agents": [{"name": "a", "image": "ghcr.io/acme/a:1", "tools": [{"name": "files"}]}],
    }
    pod = find(cluster_run(document).manifests(), "Deployment", "a")["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["containers"]] == ["a", "files"]
    assert "initContainers" not in pod
    assert "restartPolicy" not in pod["containers"][1]


# --- persistent workspace ---------------------------------------------------------------------


def test_workspace_claim_initial_files_config_map_and_restricted_init_container(rich) -> None:
    claim = find(rich, "PersistentVolumeClaim", "helper-workspace")
    assert claim["spec"] == {
        "accessModes": ["ReadWriteMany"],
        "resources": {"requests": {"storage": "2Gi"}},
    }
    assert find(rich, "ConfigMap", "helper-initial-files")["data"] == {"README.md": "hello\n"}
    pod = find(rich, "Deployment", "helper")["spec"]["template"]["spec"]
    files = pod["initContainers"][0]
    assert files["image"] == (
        "docker.io/library/busybox:1.36.1"
        "@sha256:73aaf090f3d85aa34ee199857f03fa3a95c8ede2ffd4cc2cdb5b94e566b11662"
    )
    assert files["securityContext"]["runAsNonRoot"] is True
    assert files["securityContext"]["allowPrivilegeEscalation"] is False
    assert files["securityContext"]["readOnlyRootFilesystem"] is True
    assert files["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert {"name": "workspace", "persistentVolumeClaim": {"claimName": "helper-workspace"}} in pod[
        "volumes"
    ]
    assert {"name": "initial-files", "configMap": {"name": "helper-initial-files"}} in pod[
        "volumes"
    ]


def test_init_image_and_existing_config_map_are_configurable() -> None:
    document = {
        "namespace": "apps",
        "agents": [
            {
                "name": "a",
                "image": "ghcr.io/acme/a:1",
                "workspace": {"initialFilesConfigMap": "starter", "initImage": "ghcr.io/acme/sh:1"},
            }
        ],
    }
    manifests = cluster_run(document).manifests()
    pod = find(manifests, "Deployment", "a")["spec"]
    assert pod["strategy"] == {"type": "Recreate"}
    files = pod["template"]["spec"]["initContainers"][0]
    assert files["image"] == "ghcr.io/acme/sh:1"
    assert {"name": "initial-files", "configMap": {"name": "starter"}} in pod["template"]["spec"][
        "volumes"
    ]
    assert not [m for m in manifests if m["metadata"]["name"] == "a-initial-files"]


def test_without_workspace_the_empty_dir_stays() -> None:
    document = {
        "namespace": "apps",
        "tools": [FILES],
        "agents": [{"name": "a", "image": "ghcr.io/acme/a:1", "tools": [{"name": "files"}]}],
    }
    manifests = cluster_run(document).manifests()
    pod = find(manifests, "Deployment", "a")["spec"]["template"]["spec"]
    assert {"name": "workspace", "emptyDir": {}} in pod["volumes"]
    assert not [m for m in manifests if m["kind"] == "PersistentVolumeClaim"]


def run_init_script(files: Path, workspace: Path) -> str:
    done = subprocess.run(
        ["sh", "-c", INIT_SCRIPT],
        env={
            "INITIAL_FILES_DIR": str(files),
            "WORKSPACE_DIR": str(workspace),
            "PATH": "/usr/bin:/bin",
        },
        capture_output=True,
        text=True,
        timeout=10,
        check=True,
    )
    return done.stdout


def configmap_volume(root: Path, files: dict[str, str]) -> Path:
    """A folder laid out as the kubelet mounts a ConfigMap: keys are symlinks into ..data."""
    data = root / "..2026_11_23_13_00_00.000000001"
    data.mkdir(parents=True)
    for name, text in files.items():
        (data / name).write_text(text)
    (root / "..data").symlink_to(data.name)
    for name in files:
        (root / name).symlink_to(f"..data/{name}")
    return root


def test_init_script_copies_missing_files_and_never_overwrites(tmp_path: Path) -> None:
    files = configmap_volume(
        tmp_path / "initial-files", {"README.md": "initial\n", ".env": "A=1\n"}
    )
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("mine\n")

    first = run_init_script(files, workspace)
    assert sorted(p.name for p in workspace.iterdir()) == [".env", "README.md", "notes.txt"]
    assert (workspace / "README.md").read_text() == "initial\n"
    assert not (workspace / "README.md").is_symlink()
    assert f"copied {workspace}/README.md" in first

    # The agent edits a copied file and deletes another; a restart restores only the missing.
    (workspace / "README.md").write_text("edited by the agent\n")
    (workspace / ".env").unlink()
    second = run_init_script(files, workspace)
    assert (workspace / "README.md").read_text() == "edited by the agent\n"
    assert (workspace / ".env").read_text() == "A=1\n"
    assert (workspace / "notes.txt").read_text() == "mine\n"
    assert f"keep {workspace}/README.md" in second
    assert not list(workspace.glob("*.copying"))
    assert not (workspace / "..data").exists()


# --- pod settings -----------------------------------------------------------------------------


def test_pod_settings_reach_the_tool_pod(rich) -> None:
    template = find(rich, "Deployment", "search")["spec"]["template"]
    pod = template["spec"]
    assert pod["imagePullSecrets"] == [{"name": "regcred"}]
    assert pod["nodeSelector"] == {"kubernetes.io/os": "linux"}
    assert pod["tolerations"] == [{"key": "tools", "operator": "Exists", "effect": "NoSchedule"}]
    assert pod["topologySpreadConstraints"] == [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"langop.io/tool": "search"}},
        }
    ]
    assert pod["priorityClassName"] == "tools-high"
    assert pod["terminationGracePeriodSeconds"] == 45
    assert template["metadata"]["labels"]["team"] == "search"
    assert template["metadata"]["labels"]["langop.io/tool"] == "search"
    assert template["metadata"]["annotations"]["prometheus.io/scrape"] == "true"
    main = pod["containers"][0]
    assert main["envFrom"] == [{"configMapRef": {"name": "search-settings"}, "prefix": "S_"}]
    # A probe override changes what it names and keeps the health check.
    assert main["livenessProbe"]["periodSeconds"] == 30
    assert main["livenessProbe"]["httpGet"] == {"path": "/health", "port": 8080}
    assert main["readinessProbe"]["httpGet"] == {"path": "/health", "port": 8080}


def test_agent_probes_are_only_those_it_declares(rich) -> None:
    helper = find(rich, "Deployment", "helper")["spec"]["template"]["spec"]["containers"][0]
    assert helper["readinessProbe"] == {"httpGet": {"path": "/ready", "port": 8000}}
    assert "livenessProbe" not in helper and "startupProbe" not in helper
    assert helper["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]


def test_apply_pod_settings_works_on_any_pod_template() -> None:
    """The builder a model gateway's Deployment uses: any template, any container name."""
    template = {
        "metadata": {"labels": {"app": "gateway"}},
        "spec": {"containers": [{"name": "litellm", "image": "x"}, {"name": "other"}]},
    }
    settings = PodSettings.model_validate(
        {
            "podLabels": {"app": "hijack", "team": "ml"},
            "imagePullSecrets": [{"name": "regcred"}],
            "envFrom": [{"secretRef": {"name": "keys"}}],
            "probes": {"readiness": {"tcpSocket": {"port": 4000}}},
        }
    )
    out = apply_pod_settings(settings, template, container="litellm", selector={"app": "gateway"})
    assert out["metadata"]["labels"] == {"app": "gateway", "team": "ml"}
    assert out["spec"]["imagePullSecrets"] == [{"name": "regcred"}]
    assert out["spec"]["containers"][0]["envFrom"] == [{"secretRef": {"name": "keys"}}]
    assert out["spec"]["containers"][0]["readinessProbe"] == {"tcpSocket": {"port": 4000}}
    assert out["spec"]["containers"][1] == {"name": "other"}
    assert "imagePullSecrets" not in template["spec"]  # the input is left alone


# --- availability -----------------------------------------------------------------------------


def test_disruption_budgets_and_autoscalers(rich) -> None:
    assert find(rich, "PodDisruptionBudget", "search")["spec"] == {
        "minAvailable": "50%",
        "selector": {"matchLabels": {"langop.io/tool": "search"}},
    }
    assert find(rich, "PodDisruptionBudget", "scaled")["spec"]["maxUnavailable"] == 1
    hpa = find(rich, "HorizontalPodAutoscaler", "scaled")["spec"]
    assert hpa == {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "scaled"},
        "minReplicas": 2,
        "maxReplicas": 6,
        "metrics": [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 80},
                },
            }
        ],
    }
    assert "replicas" not in find(rich, "Deployment", "scaled")["spec"]
    assert find(rich, "Deployment", "search")["spec"]["replicas"] == 3
    agent_hpa = find(rich, "HorizontalPodAutoscaler", "helper")["spec"]
    assert agent_hpa["metrics"][0]["resource"]["target"]["averageUtilization"] == 70
    assert "replicas" not in find(rich, "Deployment", "helper")["spec"]
    # One pod, no autoscaler: no budget.
    assert not [
        m for m in rich if m["kind"] == "PodDisruptionBudget" and m["metadata"]["name"] == "helper"
    ]


# --- agent ports and policies -----------------------------------------------------------------


def test_agent_ports_give_a_service_and_an_ingress_policy_for_allow_from(rich) -> None:
    assert find(rich, "Service", "helper")["spec"] == {
        "type": "ClusterIP",
        "selector": {"langop.io/agent": "helper"},
        "ports": [{"name": "http", "port": 8000, "targetPort": "http", "protocol": "TCP"}],
    }
    policies = [m for m in rich if m["kind"] == "NetworkPolicy"]
    network = Network(policies, {"web": {"team": "web"}})
    helper = Pod("apps", {"langop.io/agent": "helper"}, "helper")
    assert network.allows(Pod("web", {}, "frontend"), helper, 8000)
    assert not network.allows(Pod("web", {}, "frontend"), helper, 8181)  # the sidecar's port
    assert not network.allows(Pod("other", {}, "stranger"), helper, 8000)


def test_tool_egress_restricted_with_namespace_peers(rich) -> None:
    egress = find(rich, "NetworkPolicy", "search-egress")["spec"]
    assert egress["egress"][1] == {
        "to": [
            {
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "index"}},
                "podSelector": {"matchLabels": {"app": "es"}},
            }
        ],
        "ports": [{"protocol": "TCP", "port": 9200}],
    }
    network = Network([m for m in rich if m["kind"] == "NetworkPolicy"])
    search = Pod("apps", {"langop.io/tool": "search"}, "search")
    assert network.allows(search, Pod("index", {"app": "es"}, "es"), 9200)
    assert not network.allows(search, Pod("index", {"app": "kibana"}, "k"), 9200)
    assert not network.allows(search, IPAddress("203.0.113.9"), 443)


# --- every pod selected; names never shared ---------------------------------------------------


def pod_templates(manifests: list[dict[str, Any]]) -> list[Pod]:
    """The pods of every Deployment, and of every CronJob's Jobs (scheduled agents)."""
    return [
        Pod(
            m["metadata"]["namespace"],
            (
                m["spec"]["template"]
                if m["kind"] == "Deployment"
                else m["spec"]["jobTemplate"]["spec"]["template"]
            )["metadata"]["labels"],
            m["metadata"]["name"],
        )
        for m in manifests
        if m["kind"] in ("Deployment", "CronJob")
    ]


def selected(policy: dict[str, Any], pod: Pod) -> bool:
    wanted = policy["spec"]["podSelector"].get("matchLabels", {})
    return policy["metadata"]["namespace"] == pod.namespace and all(
        pod.labels.get(k) == v for k, v in wanted.items()
    )


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_every_pod_of_every_shipped_stack_is_selected_for_ingress(stack: str) -> None:
    manifests = render_stack(REPO, stack=stack).manifests()
    policies = [m for m in manifests if m["kind"] == "NetworkPolicy"]
    for pod in pod_templates(manifests):
        selecting = [
            p for p in policies if selected(p, pod) and "Ingress" in p["spec"]["policyTypes"]
        ]
        # Not the namespace's default deny: a policy of its own, with or without defaultDeny.
        assert [p for p in selecting if p["spec"]["podSelector"]], (stack, pod.name)


def two_namespace_document(agent_a: tuple[str, str], agent_b: tuple[str, str]) -> dict:
    """Tool ``shared`` in namespace ``tools``; two agents elsewhere referencing it."""
    return {
        "namespace": "tools",
        "tools": [{"name": "shared", "image": "ghcr.io/acme/t:1"}],
        "agents": [
            {
                "name": name,
                "namespace": ns,
                "image": "ghcr.io/acme/a:1",
                "tools": [{"name": "shared", "namespace": "tools"}],
            }
            for name, ns in (agent_a, agent_b)
        ],
    }


def policy_keys(manifests: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [
        (m["metadata"]["namespace"], m["metadata"]["name"])
        for m in manifests
        if m["kind"] == "NetworkPolicy"
    ]


def test_agents_x_y_in_n_and_y_in_n_x_get_distinct_cross_namespace_policies() -> None:
    manifests = cluster_run(two_namespace_document(("x-y", "n"), ("y", "n-x"))).manifests()
    keys = policy_keys(manifests)
    assert ("tools", "shared.from.n.x-y") in keys
    assert ("tools", "shared.from.n-x.y") in keys
    assert len(keys) == len(set(keys))
    validate_at_every_version([m for m in manifests if m["kind"] == "NetworkPolicy"])


def test_tool_shared_from_n_and_agent_ingress_in_n_do_not_collide() -> None:
    document = two_namespace_document(("ingress", "n"), ("other", "m"))
    document["tools"].append({"name": "shared-from-n", "image": "ghcr.io/acme/t:1"})
    keys = policy_keys(cluster_run(document).manifests())
    assert ("tools", "shared-from-n-ingress") in keys
    assert ("tools", "shared.from.n.ingress") in keys
    assert len(keys) == len(set(keys))


def test_a_clash_of_generated_objects_names_both_sources() -> None:
    document = {
        "namespace": "apps",
        "defaults": {"defaultDeny": True},
        "agents": [{"name": "default-deny", "image": "ghcr.io/acme/a:1"}],
        "secrets": {"default-deny-env": {"k": "v"}},
    }
    document["agents"][0]["secretEnv"] = {"TOKEN": "literal"}
    with pytest.raises(SpecError) as caught:
        cluster_run(document)
    messages = {p.path: p.message for p in caught.value.problems}
    assert messages["agents[0].name"] == (
        "NetworkPolicy 'default-deny-ingress' in namespace 'apps' would be generated twice: by "
        "defaults.defaultDeny and by agents[0]; rename one"
    )
    assert messages["secrets.default-deny-env"] == (
        "Secret 'default-deny-env' in namespace 'apps' would be generated twice: by agents[0] "
        "and by secrets.default-deny-env; rename one"
    )


# --- schema sync reachability -----------------------------------------------------------------


def sync_sources(peers: list[dict[str, Any]]) -> list[Any]:
    """One endpoint inside each schemaSyncFrom peer."""
    out: list[Any] = []
    for peer in peers:
        if "cidr" in peer:
            out.append(IPAddress(peer["cidr"].split("/")[0]))
        else:
            out.append(Pod(peer.get("namespace", ""), peer.get("podLabels", {}), "sync"))
    return out


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_each_sync_source_reaches_each_synced_tool_and_nothing_else(stack: str) -> None:
    config = yaml.safe_load((REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]
    peers = config["langop-infra:defaults"]["schemaSyncFrom"]
    assert peers, "every shipped stack sets schemaSyncFrom"
    manifests = render_stack(REPO, stack=stack).manifests()
    network = Network([m for m in manifests if m["kind"] == "NetworkPolicy"])
    tools = {t["name"]: t.get("port", 8080) for t in config["langop-infra:tools"]}
    # a managed memory is a synced tool; an A2A agent's card is synced on its A2A port (#38)
    tools |= {m["name"]: m.get("port", 8080) for m in config.get("langop-infra:memories", [])}
    tools |= {
        a["name"]: a["a2a"].get("port", 8080) for a in config["langop-infra:agents"] if "a2a" in a
    }
    services = {m["metadata"]["name"] for m in manifests if m["kind"] == "Service"}
    pods = pod_templates(manifests)
    # A synced sidecar is reached through its agent's pod (the API server's pod proxy).
    sidecars = {
        m["metadata"]["name"]: {
            c["name"] for c in m["spec"]["template"]["spec"].get("initContainers", [])
        }
        for m in manifests
        if m["kind"] == "Deployment"
    }
    for source in sync_sources(peers):
        for pod in pods:
            for port in {8080, 9090, 8181, 443}:
                verdict = network.explain(source, pod, port)
                expected = (pod.name in services and tools.get(pod.name) == port) or any(
                    tools.get(s) == port for s in sidecars.get(pod.name, ())
                )
                assert verdict.allowed == expected, (stack, source, pod.name, port, verdict)
    # An address outside the peers reaches no tool.
    for pod in pods:
        assert not network.allows(IPAddress("192.0.2.10"), pod, tools.get(pod.name, 8080))


# --- egress check at render -------------------------------------------------------------------


def restricted_agent(servers: list[str], egress_to: list[dict], strict: bool = False) -> dict:
    return {
        "namespace": "apps",
        "defaults": {"egress": "restricted", "strictEgress": strict},
        "agents": [
            {
                "name": "a",
                "image": "ghcr.io/acme/a:1",
                "mcpServers": [{"name": f"s{i}", "url": u} for i, u in enumerate(servers)],
                "egressTo": egress_to,
            }
        ],
    }


def test_render_warns_when_restricted_egress_does_not_admit_a_server() -> None:
    document = restricted_agent(
        ["http://10.1.2.3:8080/mcp", "https://10.9.9.9/mcp", "https://api.example.com/mcp"],
        [{"cidr": "10.1.0.0/16", "ports": [{"port": 8080}]}],
    )
    run = cluster_run(document)
    assert [w for w in run.warnings if "no digest" not in w] == [
        "agents[0].mcpServers[1].url: restricted egress does not admit 10.9.9.9 port 443; "
        "add egressTo {cidr: 10.9.9.9/32, ports: [{port: 443}]}",
        "agents[0].mcpServers[2].url: cannot verify that restricted egress admits "
        "api.example.com port 443: a NetworkPolicy matches addresses, not names; add host: "
        "api.example.com to the egressTo entry whose cidr covers it",
    ]


def test_a_host_named_in_egress_to_is_verified() -> None:
    document = restricted_agent(
        ["https://api.example.com/mcp"],
        [{"cidr": "203.0.113.0/24", "host": "api.example.com", "ports": [{"port": 443}]}],
    )
    assert unpinned_aside(cluster_run(document).warnings) == []


def test_strict_egress_turns_the_warning_into_an_error() -> None:
    document = restricted_agent(["https://10.9.9.9/mcp"], [], strict=True)
    with pytest.raises(SpecError) as caught:
        cluster_run(document)
    assert [p.path for p in caught.value.problems] == ["agents[0].mcpServers[0].url"]


def test_render_prints_warnings_on_stderr(tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.warn.yaml"
    config = {
        f"langop-infra:{k}": v for k, v in restricted_agent(["https://10.9.9.9/m"], []).items()
    }
    stack.write_text(yaml.safe_dump({"config": config}))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "langop_infra.cli",
            "render",
            "--config",
            str(stack),
            "--project-dir",
            str(REPO),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (
        "warning: agents[0].mcpServers[0].url: restricted egress does not admit 10.9.9.9"
        in done.stderr
    )
    assert "warning:" not in done.stdout  # (the banner names the file, whose path may)


# --- namespaces and toolsFrom -----------------------------------------------------------------


def test_one_stack_deploys_a_shared_tools_namespace_and_team_namespaces() -> None:
    document = {
        "namespace": "platform",
        "defaults": {"defaultDeny": True},
        "secrets": {"api": {"token": "t"}},
        "tools": [{"name": "search", "namespace": "shared-tools", "image": "ghcr.io/acme/s:1"}],
        "agents": [
            {
                "name": "bot",
                "namespace": team,
                "image": "ghcr.io/acme/a:1",
                "tools": [{"name": "search", "namespace": "shared-tools"}],
                "secretEnv": {"API": {"secretKeyRef": {"name": "api", "key": "token"}}},
            }
            for team in ("team-a", "team-b")
        ],
    }
    manifests = cluster_run(document).manifests()
    validate_at_every_version(manifests)
    namespaces = sorted(m["metadata"]["name"] for m in manifests if m["kind"] == "Namespace")
    assert namespaces == ["platform", "shared-tools", "team-a", "team-b"]
    secrets = sorted(m["metadata"]["namespace"] for m in manifests if m["kind"] == "Secret")
    assert secrets == ["platform", "team-a", "team-b"]
    network = Network([m for m in manifests if m["kind"] == "NetworkPolicy"])
    search = Pod("shared-tools", {"langop.io/tool": "search"}, "search")
    for team in ("team-a", "team-b"):
        assert network.allows(Pod(team, {"langop.io/agent": "bot"}, "bot"), search, 8080)
    assert not network.allows(Pod("team-c", {"langop.io/agent": "bot"}, "bot"), search, 8080)


TOOL_TARGETS = [
    {
        "name": "search",
        "namespace": "shared-tools",
        "port": 9090,
        "mcpPath": "/mcp",
        "deploymentMode": "service",
    }
]


def tools_from_config(agent_tools: list[dict[str, Any]]) -> dict[str, str]:
    return {
        "langop-infra:namespace": "team-a",
        "langop-infra:toolsFrom": json.dumps([{"stack": "acme/platform/prod"}]),
        "langop-infra:agents": json.dumps(
            [{"name": "bot", "image": "ghcr.io/acme/a:1", "tools": agent_tools}]
        ),
    }


def test_tools_from_another_stack_through_a_stack_reference() -> None:
    from langop_infra.program import stack as stack_program

    run = run_program(
        stack_program.main,
        config=tools_from_config([{"name": "search", "namespace": "shared-tools"}]),
        stack_outputs={"acme/platform/prod": {"toolTargets": TOOL_TARGETS}},
    )
    assert run.outputs["agents"]["bot"]["mcpServers"] == (
        "http://search.shared-tools.svc.cluster.local:9090"
    )
    keys = policy_keys(run.manifests())
    assert ("shared-tools", "search.from.team-a.bot") in keys
    assert run.outputs["toolTargets"] == []  # team-a declares no tool of its own


def test_tool_targets_output_is_what_tools_from_reads() -> None:
    from langop_infra.program import stack as stack_program

    config = {
        "langop-infra:namespace": "shared-tools",
        "langop-infra:tools": json.dumps(
            [
                {"name": "search", "image": "ghcr.io/acme/s:1", "port": 9090},
                {**FILES},
            ]
        ),
    }
    run = run_program(stack_program.main, config=config)
    assert run.outputs["toolTargets"] == TOOL_TARGETS


def test_tools_from_names_the_missing_tool_and_a_stack_without_the_export() -> None:
    from langop_infra.program import stack as stack_program

    with pytest.raises(SpecError) as caught:
        run_program(
            stack_program.main,
            config=tools_from_config([{"name": "searhc", "namespace": "shared-tools"}]),
            stack_outputs={"acme/platform/prod": {"toolTargets": TOOL_TARGETS}},
        )
    assert "tool 'searhc' in namespace 'shared-tools' is not known here" in str(caught.value)
    with pytest.raises(SpecError) as caught:
        run_program(stack_program.main, config=tools_from_config([]), stack_outputs={})
    assert "exports no toolTargets list" in str(caught.value)


# --- the endpoint contract --------------------------------------------------------------------


def test_endpoint_style_path_carries_the_mcp_path_and_the_runtime_does_not_double_it() -> None:
    document = {
        "namespace": "apps",
        "defaults": {"endpointStyle": "path"},
        "tools": [{"name": "m", "image": "ghcr.io/acme/m:1", "mcpPath": "/rpc"}],
        "agents": [{"name": "a", "image": "ghcr.io/acme/a:1", "tools": [{"name": "m"}]}],
    }
    manifests = cluster_run(document).manifests()
    config = yaml.safe_load(find(manifests, "ConfigMap", "a-config")["data"]["config.yaml"])
    assert config["tools"] == {
        "m": {
            "endpoint": "http://m.apps.svc.cluster.local:8080/rpc",
            "protocol": "mcp",
            "mcpPath": "/rpc",
        }
    }
    env = {
        e["name"]: e.get("value")
        for e in find(manifests, "Deployment", "a")["spec"]["template"]["spec"]["containers"][0][
            "env"
        ]
    }
    assert env["MCP_SERVERS"] == "http://m.apps.svc.cluster.local:8080/rpc"
    servers = load_agent_servers(config, env={"MCP_SERVERS": "http://x:8080/mcp"})
    assert [s.url for s in servers.servers] == [
        "http://m.apps.svc.cluster.local:8080/rpc",
        "http://x:8080/mcp",
    ]


@pytest.mark.parametrize(
    ("endpoint", "path", "joined"),
    [
        ("http://m:8080", "/mcp", "http://m:8080/mcp"),
        ("http://m:8080/", "/mcp", "http://m:8080/mcp"),
        ("http://m:8080/mcp", "/mcp", "http://m:8080/mcp"),
        ("http://m:8080/mcp/", "/mcp", "http://m:8080/mcp"),
        ("http://m:8080/api/mcp", "/mcp", "http://m:8080/api/mcp"),
        ("http://m:8080/xmcp", "/mcp", "http://m:8080/xmcp/mcp"),
        ("http://m:8080", "rpc", "http://m:8080/rpc"),
    ],
)
def test_join_mcp_path_never_appends_a_path_the_endpoint_carries(
    endpoint: str, path: str, joined: str
) -> None:
    assert join_mcp_path(endpoint, path) == joined


def test_agent_without_tools_gets_no_mcp_servers_and_no_tools_key() -> None:
    document = {"namespace": "apps", "agents": [{"name": "a", "image": "ghcr.io/acme/a:1"}]}
    manifests = cluster_run(document).manifests()
    config = yaml.safe_load(find(manifests, "ConfigMap", "a-config")["data"]["config.yaml"])
    assert "tools" not in (config or {})
    container = find(manifests, "Deployment", "a")["spec"]["template"]["spec"]["containers"][0]
    assert "MCP_SERVERS" not in [e["name"] for e in container["env"]]
    assert contract.mcp_servers_env([]) == ""


def test_standalone_components_take_the_new_fields() -> None:
    from langop_infra import LanguageAgent, LanguageTool

    def program() -> None:
        LanguageTool(
            "t",
            image="ghcr.io/acme/t:1",
            namespace="apps",
            autoscaling={"maxReplicas": 4},
            egress="restricted",
        )
        LanguageAgent(
            "a",
            image="ghcr.io/acme/a:1",
            namespace="apps",
            ports=[{"name": "http", "port": 8000}],
            workspace={"initialFiles": {"a.md": "x"}},
            replicas=2,
            disruption_budget={"minAvailable": 1},
        )

    with pytest.raises(SpecError, match=r"accessModes to \[ReadWriteMany\]"):
        run_program(program)

    def fixed() -> None:
        LanguageTool(
            "t", image="ghcr.io/acme/t:1", namespace="apps", autoscaling={"maxReplicas": 4}
        )
        LanguageAgent(
            "a",
            image="ghcr.io/acme/a:1",
            namespace="apps",
            ports=[{"name": "http", "port": 8000}],
            workspace={"initialFiles": {"a.md": "x"}, "accessModes": ["ReadWriteMany"]},
            replicas=2,
            disruption_budget={"minAvailable": 1},
        )

    manifests = run_program(fixed).manifests()
    validate_at_every_version(manifests)
    keys = sorted((m["kind"], m["metadata"]["name"]) for m in manifests)
    assert keys == [
        ("ConfigMap", "a-config"),
        ("ConfigMap", "a-initial-files"),
        ("Deployment", "a"),
        ("Deployment", "t"),
        ("HorizontalPodAutoscaler", "t"),
        ("NetworkPolicy", "a-ingress"),
        ("NetworkPolicy", "t-ingress"),
        ("PersistentVolumeClaim", "a-workspace"),
        ("PodDisruptionBudget", "a"),
        ("Service", "a"),
        ("Service", "t"),
    ]


def test_render_checks_the_endpoint_of_a_model_the_agent_calls_directly() -> None:
    document = {
        "namespace": "apps",
        "defaults": {"egress": "restricted"},
        "models": [
            {
                "name": "local",
                "provider": "openai",
                "modelName": "llama",
                "endpoint": "http://10.20.0.5:8000/v1",
                "gateway": False,
            },
            {
                "name": "hosted",
                "provider": "openai",
                "modelName": "gpt-4o-mini",
                "endpoint": "https://llm.example.com/v1",
                "gateway": False,
                "egressTo": [
                    {"cidr": "198.18.0.0/24", "host": "llm.example.com", "ports": [{"port": 443}]}
                ],
            },
        ],
        "agents": [
            {
                "name": "a",
                "image": "ghcr.io/acme/a:1",
                "models": [{"name": "local"}, {"name": "hosted"}],
            }
        ],
    }
    assert unpinned_aside(cluster_run(document).warnings) == [
        "agents[0].models[0]: restricted egress does not admit 10.20.0.5 port 8000; add egressTo "
        "{cidr: 10.20.0.5/32, ports: [{port: 8000}]}"
    ]
