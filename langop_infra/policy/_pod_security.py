"""The Kubernetes *restricted* Pod Security Standard, checked on pod templates.

Each control of https://kubernetes.io/docs/concepts/security/pod-security-standards/ is one
function, named after it, returning the violations it finds in one pod template; the
restricted profile is the baseline controls plus its own. Every container counts: init,
native sidecar, regular and ephemeral containers. The policy pack and the tests use these.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

POD_KINDS = {
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
}
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")

PodTemplate = Mapping[str, Any]
Rule = Callable[[PodTemplate], list[str]]


def pod_templates(manifests: Iterable[PodTemplate]) -> dict[str, PodTemplate]:
    """``{"<Kind>/<namespace>/<name>": pod template}`` of every object among ``manifests``
    that carries one, found by shape, not by kind: a mapping whose ``spec.containers`` is a
    list (``spec.template``, ``spec.jobTemplate.spec.template``, a PodTemplate's
    ``template``, a ``*Patch``, a ReplicationController, any custom resource). A second
    template in one object is keyed with its path."""
    found: dict[str, PodTemplate] = {}
    for manifest in manifests:
        kind = manifest.get("kind")
        meta = manifest.get("metadata") or {}
        key = f"{kind}/{meta.get('namespace', '')}/{meta.get('name')}"
        for path, template in _templates_by_shape(manifest):
            found[key if key not in found else f"{key}{path}"] = template
    return found


def _templates_by_shape(manifest: PodTemplate, max_depth: int = 12) -> Iterator[tuple[str, Any]]:
    """``(path, mapping)`` of each mapping in ``manifest`` whose ``spec.containers`` is a
    list, outermost first; an explicit stack, at most ``max_depth`` levels down."""
    stack: list[tuple[str, object, int]] = [("", manifest, 0)]
    while stack:
        path, node, depth = stack.pop(0)
        if isinstance(node, Mapping):
            spec: object = node.get("spec")
            if isinstance(spec, Mapping) and isinstance(spec.get("containers"), list):
                yield path, node
                continue  # a pod's own fields hold no further pod
            children: list[tuple[str, object]] = [(f"{path}.{k}", v) for k, v in node.items()]
        elif isinstance(node, list):
            children = [(f"{path}[{i}]", v) for i, v in enumerate(node)]
        else:
            continue
        if depth < max_depth:
            stack += [(p, v, depth + 1) for p, v in children if isinstance(v, (Mapping, list))]


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
    found: list[str] = []
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
    found: list[str] = []
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
    found: list[str] = []
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


def restricted_violations(pod: PodTemplate) -> list[str]:
    """Every violation of the restricted standard in one pod template, as ``control: what``."""
    return [f"{control}: {finding}" for control, rule in RULES.items() for finding in rule(pod)]
