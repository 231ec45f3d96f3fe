"""Every pod of the shipped stacks meets the *restricted* Pod Security Standard.

Each control of https://kubernetes.io/docs/concepts/security/pod-security-standards/ is one
function below, named after it, returning the violations it finds in one pod template; the
restricted profile is the baseline controls plus its own. Every container counts: agents,
tools, sidecar tools joined into agent pods, init and ephemeral containers. A self-test feeds
a pod that breaks every control to every rule, so no rule can pass by looking at nothing.
The last section holds what the audit found beyond the standard: resource bounds and the
network exposure of the pods.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from langop_infra.components.tool import LanguageTool
from langop_infra.offline.mock_engine import run_program
from langop_infra.offline.render import render_stack
from langop_infra.testing.reachability import Network, Pod

REPO = Path(__file__).resolve().parents[1]
STACKS = ("dev", "staging", "prod")
POD_KINDS = {
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
}
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")

PodTemplate = dict[str, Any]
Rule = Callable[[PodTemplate], list[str]]


@cache
def manifests(stack: str) -> list[dict[str, Any]]:
    return render_stack(REPO, stack=stack).manifests()


def pod_templates(stack: str) -> dict[str, PodTemplate]:
    """``{"<Kind>/<name>": pod template}`` of every workload in the stack."""
    found = {}
    for manifest in manifests(stack):
        if manifest["kind"] == "Pod":
            found[f"Pod/{manifest['metadata']['name']}"] = manifest
        elif manifest["kind"] in POD_KINDS:
            template = manifest
            for step in POD_KINDS[manifest["kind"]]:
                template = template[step]
            found[f"{manifest['kind']}/{manifest['metadata']['name']}"] = template
    return found


def containers(pod: PodTemplate) -> Iterator[dict[str, Any]]:
    for field in CONTAINER_LISTS:
        yield from pod["spec"].get(field) or []


def pod_ctx(pod: PodTemplate) -> dict[str, Any]:
    return pod["spec"].get("securityContext") or {}


def ctx(container: dict[str, Any]) -> dict[str, Any]:
    return container.get("securityContext") or {}


# --- baseline controls -------------------------------------------------------------------------


def host_process(pod: PodTemplate) -> list[str]:
    """HostProcess: windowsOptions.hostProcess undefined or false, pod and containers."""
    contexts = [("pod", pod_ctx(pod))] + [(c["name"], ctx(c)) for c in containers(pod)]
    return [
        f"{who}: windowsOptions.hostProcess is true"
        for who, context in contexts
        if (context.get("windowsOptions") or {}).get("hostProcess") not in (None, False)
    ]


def host_namespaces(pod: PodTemplate) -> list[str]:
    """Host Namespaces: hostNetwork, hostPID and hostIPC undefined or false."""
    return [
        f"spec.{field} is {pod['spec'][field]!r}"
        for field in ("hostNetwork", "hostPID", "hostIPC")
        if pod["spec"].get(field) not in (None, False)
    ]


def privileged_containers(pod: PodTemplate) -> list[str]:
    """Privileged Containers: securityContext.privileged undefined or false."""
    return [
        f"{c['name']}: privileged"
        for c in containers(pod)
        if ctx(c).get("privileged") not in (None, False)
    ]


BASELINE_CAPABILITIES = {
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
}


def capabilities_baseline(pod: PodTemplate) -> list[str]:
    """Capabilities (baseline): capabilities.add only from the baseline list."""
    return [
        f"{c['name']}: adds {cap}"
        for c in containers(pod)
        for cap in (ctx(c).get("capabilities") or {}).get("add") or []
        if cap not in BASELINE_CAPABILITIES
    ]


def host_path_volumes(pod: PodTemplate) -> list[str]:
    """HostPath Volumes: no volume is a hostPath."""
    return [
        f"volume {v['name']}: hostPath" for v in pod["spec"].get("volumes") or [] if "hostPath" in v
    ]


def host_ports(pod: PodTemplate) -> list[str]:
    """Host Ports: ports[*].hostPort undefined or 0."""
    return [
        f"{c['name']}: hostPort {p['hostPort']}"
        for c in containers(pod)
        for p in c.get("ports") or []
        if p.get("hostPort") not in (None, 0)
    ]


APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"


def apparmor(pod: PodTemplate) -> list[str]:
    """AppArmor: profile type undefined, RuntimeDefault or Localhost (fields and the legacy
    annotation)."""
    found = []
    contexts = [("pod", pod_ctx(pod))] + [(c["name"], ctx(c)) for c in containers(pod)]
    for who, context in contexts:
        kind = (context.get("appArmorProfile") or {}).get("type")
        if kind not in (None, "RuntimeDefault", "Localhost"):
            found.append(f"{who}: appArmorProfile {kind}")
    for key, value in ((pod.get("metadata") or {}).get("annotations") or {}).items():
        if key.startswith(APPARMOR_ANNOTATION) and not (
            value == "runtime/default" or value.startswith("localhost/")
        ):
            found.append(f"annotation {key}: {value}")
    return found


SELINUX_TYPES = {
    None,
    "",
    "container_t",
    "container_init_t",
    "container_kvm_t",
    "container_engine_t",
}


def selinux(pod: PodTemplate) -> list[str]:
    """SELinux: seLinuxOptions.type from the allowed list; user and role unset."""
    found = []
    contexts = [("pod", pod_ctx(pod))] + [(c["name"], ctx(c)) for c in containers(pod)]
    for who, context in contexts:
        options = context.get("seLinuxOptions") or {}
        if options.get("type") not in SELINUX_TYPES:
            found.append(f"{who}: seLinuxOptions.type {options['type']}")
        found += [f"{who}: seLinuxOptions.{k} set" for k in ("user", "role") if options.get(k)]
    return found


def proc_mount(pod: PodTemplate) -> list[str]:
    """/proc Mount Type: procMount undefined or Default."""
    return [
        f"{c['name']}: procMount {ctx(c)['procMount']}"
        for c in containers(pod)
        if ctx(c).get("procMount") not in (None, "Default")
    ]


SAFE_SYSCTLS = {
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}


def sysctls(pod: PodTemplate) -> list[str]:
    """Sysctls: only the safe subset."""
    return [
        f"sysctl {s['name']}"
        for s in pod_ctx(pod).get("sysctls") or []
        if s["name"] not in SAFE_SYSCTLS
    ]


# --- restricted controls -----------------------------------------------------------------------

ALLOWED_VOLUME_SOURCES = {
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
}


def volume_types(pod: PodTemplate) -> list[str]:
    """Volume Types: every volume is one of the allowed sources."""
    return [
        f"volume {v['name']}: {source}"
        for v in pod["spec"].get("volumes") or []
        for source in set(v) - {"name"}
        if source not in ALLOWED_VOLUME_SOURCES
    ]


def privilege_escalation(pod: PodTemplate) -> list[str]:
    """Privilege Escalation: allowPrivilegeEscalation set to false on every container."""
    return [
        f"{c['name']}: allowPrivilegeEscalation is {ctx(c).get('allowPrivilegeEscalation')!r}"
        for c in containers(pod)
        if ctx(c).get("allowPrivilegeEscalation") is not False
    ]


def running_as_non_root(pod: PodTemplate) -> list[str]:
    """Running as Non-root: runAsNonRoot true on the pod (containers then unset or true), or
    true on every container."""
    pod_level = pod_ctx(pod).get("runAsNonRoot")
    found = [] if pod_level in (None, True) else [f"pod: runAsNonRoot is {pod_level!r}"]
    for c in containers(pod):
        value = ctx(c).get("runAsNonRoot")
        if value is False or (value is None and pod_level is not True):
            found.append(f"{c['name']}: runAsNonRoot is {value!r}")
    return found


def running_as_non_root_user(pod: PodTemplate) -> list[str]:
    """Running as Non-root user: runAsUser undefined or non-zero, pod and containers."""
    contexts = [("pod", pod_ctx(pod))] + [(c["name"], ctx(c)) for c in containers(pod)]
    return [f"{who}: runAsUser 0" for who, context in contexts if context.get("runAsUser") == 0]


SECCOMP_ALLOWED = ("RuntimeDefault", "Localhost")


def seccomp(pod: PodTemplate) -> list[str]:
    """Seccomp: RuntimeDefault or Localhost on the pod (containers then unset or allowed), or on
    every container; Unconfined nowhere."""
    pod_level = (pod_ctx(pod).get("seccompProfile") or {}).get("type")
    found = [] if pod_level in (None, *SECCOMP_ALLOWED) else [f"pod: seccomp {pod_level}"]
    for c in containers(pod):
        value = (ctx(c).get("seccompProfile") or {}).get("type")
        if value is not None and value not in SECCOMP_ALLOWED:
            found.append(f"{c['name']}: seccomp {value}")
        elif value is None and pod_level not in SECCOMP_ALLOWED:
            found.append(f"{c['name']}: no seccomp profile here or on the pod")
    return found


def capabilities_restricted(pod: PodTemplate) -> list[str]:
    """Capabilities (restricted): drop ALL, add nothing but NET_BIND_SERVICE."""
    found = []
    for c in containers(pod):
        caps = ctx(c).get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []):
            found.append(f"{c['name']}: does not drop ALL")
        found += [
            f"{c['name']}: adds {a}" for a in caps.get("add") or [] if a != "NET_BIND_SERVICE"
        ]
    return found


RULES: dict[str, Rule] = {
    "HostProcess": host_process,
    "Host Namespaces": host_namespaces,
    "Privileged Containers": privileged_containers,
    "Capabilities (baseline)": capabilities_baseline,
    "HostPath Volumes": host_path_volumes,
    "Host Ports": host_ports,
    "AppArmor": apparmor,
    "SELinux": selinux,
    "/proc Mount Type": proc_mount,
    "Sysctls": sysctls,
    "Volume Types": volume_types,
    "Privilege Escalation": privilege_escalation,
    "Running as Non-root": running_as_non_root,
    "Running as Non-root user": running_as_non_root_user,
    "Seccomp": seccomp,
    "Capabilities (restricted)": capabilities_restricted,
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
    workspace-files sidecar."""
    pods = pod_templates(stack)
    gateway = [] if stack == "staging" else ["Deployment/gateway"]
    assert sorted(pods) == [
        "Deployment/docs-search",
        *gateway,
        "Deployment/memory",
        "Deployment/researcher",
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
