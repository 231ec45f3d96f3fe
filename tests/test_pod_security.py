"""Every pod of the shipped stacks meets the *restricted* Pod Security Standard.

Each control of https://kubernetes.io/docs/concepts/security/pod-security-standards/ is one
function of :mod:`langop_infra.policy._pod_security`, named after it, returning the violations
it finds in one pod template (the policy pack enforces the same functions); the restricted
profile is the baseline controls plus its own. Every container counts: agents,
tools, sidecar tools joined into agent pods, init and ephemeral containers. A self-test feeds
a pod that breaks every control to every rule, so no rule can pass by looking at nothing.
The last section holds what the audit found beyond the standard: resource bounds and the
network exposure of the pods.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from langop_infra.components.tool import LanguageTool
from langop_infra.netpol import Network, Pod
from langop_infra.offline._mock_engine import run_program
from langop_infra.offline._render import render_stack
from langop_infra.policy import _pod_security as security
from langop_infra.policy._pod_security import (
    APPARMOR_ANNOTATION,
    RULES,
    PodTemplate,
    Rule,
    containers,
    ctx,
)

REPO = Path(__file__).resolve().parents[1]
STACKS = ("dev", "staging", "prod")


@cache
def manifests(stack: str) -> list[dict[str, Any]]:
    return render_stack(REPO, stack=stack).manifests()


def pod_templates(stack: str) -> dict[str, PodTemplate]:
    """``{"<Kind>/<name>": pod template}`` of every workload in the stack."""
    return {
        f"{key.split('/')[0]}/{key.split('/')[2]}": pod
        for key, pod in security.pod_templates(manifests(stack)).items()
    }


def resources_bounded(pod: PodTemplate) -> list[str]:
    """Not part of the standard: cpu and memory requests and limits on every container."""
    return [
        f"{c['name']}: no {part}.{amount}"
        for c in containers(pod)
        for part in ("requests", "limits")
        for amount in ("cpu", "memory")
        if not ((c.get("resources") or {}).get(part) or {}).get(amount)
    ]


# --- a pod that breaks every control: each rule must notice ------------------------------------

BAD_CONTEXT = {
    "windowsOptions": {"hostProcess": True},
    "privileged": True,
    "capabilities": {"add": ["SYS_ADMIN", "NET_RAW"], "drop": []},
    "appArmorProfile": {"type": "Unconfined"},
    "seLinuxOptions": {"type": "spc_t", "user": "root"},
    "procMount": "Unmasked",
    "allowPrivilegeEscalation": True,
    "runAsNonRoot": False,
    "runAsUser": 0,
    "seccompProfile": {"type": "Unconfined"},
}
BAD_POD: PodTemplate = {
    "metadata": {"annotations": {APPARMOR_ANNOTATION + "main": "unconfined"}},
    "spec": {
        "hostNetwork": True,
        "hostPID": True,
        "hostIPC": True,
        "securityContext": {
            **{k: v for k, v in BAD_CONTEXT.items() if k in ("windowsOptions", "seLinuxOptions")},
            "runAsNonRoot": False,
            "runAsUser": 0,
            "seccompProfile": {"type": "Unconfined"},
            "sysctls": [{"name": "kernel.msgmax", "value": "1"}],
        },
        "initContainers": [{"name": "init", "securityContext": BAD_CONTEXT}],
        "containers": [
            {
                "name": "main",
                "ports": [{"containerPort": 80, "hostPort": 80}],
                "securityContext": BAD_CONTEXT,
            },
            {"name": "bare"},  # no securityContext at all, no resources
        ],
        "volumes": [{"name": "host", "hostPath": {"path": "/"}}, {"name": "nfs", "nfs": {}}],
    },
}


@pytest.mark.parametrize("rule", [*RULES.values(), resources_bounded], ids=[*RULES, "Resources"])
def test_each_rule_catches_a_violating_pod(rule: Rule) -> None:
    assert rule(BAD_POD), f"{rule.__name__} found nothing wrong with a pod that breaks it"


def test_the_rules_cover_the_restricted_standard() -> None:
    assert set(RULES) == {
        "HostProcess",
        "Host Namespaces",
        "Privileged Containers",
        "Capabilities (baseline)",
        "HostPath Volumes",
        "Host Ports",
        "AppArmor",
        "SELinux",
        "/proc Mount Type",
        "Seccomp",
        "Sysctls",
        "Volume Types",
        "Privilege Escalation",
        "Running as Non-root",
        "Running as Non-root user",
        "Capabilities (restricted)",
    }


# --- the shipped stacks ------------------------------------------------------------------------


@pytest.mark.parametrize("stack", STACKS)
def test_stack_has_the_pods_it_should(stack: str) -> None:
    """Four Deployments (five with the model gateway), and the researcher's pod carries the
    workspace-files sidecar; dev adds a scheduled agent's CronJob and a managed memory."""
    pods = pod_templates(stack)
    gateway = [] if stack == "staging" else ["Deployment/gateway"]
    dev = ["Deployment/team-notes"] if stack == "dev" else []
    assert sorted(pods) == [
        *(["CronJob/morning-digest"] if stack == "dev" else []),
        "Deployment/docs-search",
        *gateway,
        "Deployment/memory",
        "Deployment/researcher",
        *dev,
        "Deployment/triage",
    ]
    names = [c["name"] for c in containers(pods["Deployment/researcher"])]
    assert sorted(names) == ["researcher", "workspace-files"]


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("control", RULES)
def test_restricted_control(stack: str, control: str) -> None:
    violations = {
        name: found for name, pod in pod_templates(stack).items() if (found := RULES[control](pod))
    }
    assert violations == {}


@pytest.mark.parametrize("stack", STACKS)
def test_every_container_has_requests_and_limits(stack: str) -> None:
    violations = {
        name: found
        for name, pod in pod_templates(stack).items()
        if (found := resources_bounded(pod))
    }
    assert violations == {}


@pytest.mark.parametrize("stack", STACKS)
def test_namespace_enforces_restricted(stack: str) -> None:
    """The namespace makes the API server refuse any pod that is not restricted-compliant."""
    (namespace,) = [m for m in manifests(stack) if m["kind"] == "Namespace"]
    labels = namespace["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"


@pytest.mark.parametrize("stack", STACKS)
def test_no_service_account_token_and_read_only_root(stack: str) -> None:
    """Beyond the standard, as the README promises: no API token, read-only root, writable /tmp."""
    for name, pod in pod_templates(stack).items():
        assert pod["spec"]["automountServiceAccountToken"] is False, name
        volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
        tmp_volumes = []
        for c in containers(pod):
            assert ctx(c)["readOnlyRootFilesystem"] is True, (name, c["name"])
            [tmp] = [m["name"] for m in c["volumeMounts"] if m["mountPath"] == "/tmp"]
            assert volumes[tmp] == {"name": tmp, "emptyDir": {}}, (name, c["name"])
            tmp_volumes.append(tmp)
        # Each container of the pod (agent, sidecars) has a /tmp of its own.
        assert len(set(tmp_volumes)) == len(tmp_volumes), name


@pytest.mark.parametrize("stack", STACKS)
def test_tool_containers_keep_their_probes(stack: str) -> None:
    """tools/checkov.sh skips the probe checks for agents (the contract gives agents no health
    endpoint); this keeps tools, service and sidecar, from losing theirs unnoticed."""
    for name, pod in pod_templates(stack).items():
        for c in containers(pod):
            if c["name"] == "gateway":  # LiteLLM's own health endpoints
                assert c["readinessProbe"]["httpGet"]["path"] == "/health/readiness", name
                assert c["livenessProbe"]["httpGet"]["path"] == "/health/liveliness", name
            elif any(p.get("name") == "a2a" for p in c.get("ports", [])):
                continue  # an agent serving A2A: an agent, with no health endpoint
            elif c.get("ports"):  # a tool's container: it serves MCP on its port
                assert c["readinessProbe"]["httpGet"]["path"] == "/health", (name, c["name"])
                assert c["livenessProbe"]["httpGet"]["path"] == "/health", (name, c["name"])


# --- defects this audit found (the first two fixed in c6d9903) --------------------------------


def test_a_partial_resources_override_keeps_every_bound() -> None:
    """Was: `resources: {limits: {cpu: "1"}}` replaced the whole block and lost the memory
    limit."""

    def program() -> None:
        LanguageTool(
            "partial",
            image="ghcr.io/acme/p:1",
            namespace="apps",
            resources={"limits": {"cpu": "1"}},
        )

    run = run_program(program)
    (deployment,) = [m for m in run.manifests() if m["kind"] == "Deployment"]
    assert resources_bounded(deployment["spec"]["template"]) == []


def test_sidecar_tool_port_is_not_open_to_the_cluster() -> None:
    """Was: no policy selected agent pods, so without defaultDeny a sidecar tool's port on the
    agent pod's IP was open to every pod of the cluster."""
    policies = [m for m in manifests("dev") if m["kind"] == "NetworkPolicy"]
    pods = pod_templates("dev")
    researcher = Pod("research-dev", pods["Deployment/researcher"]["metadata"]["labels"])
    stranger = Pod("elsewhere", {"app": "anything"})
    assert not Network(policies).allows(stranger, researcher, 8181)


def test_a_required_schema_sync_has_a_way_in() -> None:
    stack = yaml.safe_load((REPO / "stacks" / "Pulumi.prod.yaml").read_text())
    tools = stack["config"]["langop-infra:tools"]
    required = [t["name"] for t in tools if (t.get("schemaSync") or {}).get("required")]
    assert required == ["memory"]
    policies = {m["metadata"]["name"]: m for m in manifests("prod") if m["kind"] == "NetworkPolicy"}
    for tool in required:
        peers = policies[f"{tool}-ingress"]["spec"]["ingress"][0]["from"]
        assert len(peers) > 1, f"{tool}-ingress admits only agents: {peers}"
