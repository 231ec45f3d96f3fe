"""Kubernetes admission rules: what the API server, or the restricted Pod Security Standard a
created namespace enforces, would refuse at deploy time, caught before anything is registered.
"""

from __future__ import annotations

import ipaddress
import re

from langop_infra.config._fields import overlay
from langop_infra.config._pod import Resources, Security, WorkloadSpec
from langop_infra.config._volumes import PodExtensionsSpec
from langop_infra.config.agent import AgentSpec
from langop_infra.config.checks._mounts import mount_problems
from langop_infra.config.cluster import Defaults
from langop_infra.config.tool import ToolSpec
from langop_infra.core.problems import Problem, join_path


def parse_quantity(text: str) -> float:
    """A Kubernetes quantity (``250m``, ``1.5Gi``, ``2``) as a number, for comparisons."""
    units = {
        "m": 1e-3,
        "k": 1e3,
        "M": 1e6,
        "G": 1e9,
        "T": 1e12,
        "P": 1e15,
        "E": 1e18,
        "Ki": 2**10,
        "Mi": 2**20,
        "Gi": 2**30,
        "Ti": 2**40,
        "Pi": 2**50,
        "Ei": 2**60,
    }
    match = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", str(text))
    if match is None:
        return 0.0
    number, unit = match.groups()
    return float(number) * units.get(unit, 1.0)


def resource_problems(
    defaults: Resources,
    own: Resources | None,
    path: str,
    defaults_path: str,
    *,
    check_defaults: bool = True,
) -> list[Problem]:
    """A request above its limit, named where the request is set.

    ``check_defaults=False``: leave out what comes from the defaults alone, for a caller that
    checks them once rather than once for every workload that inherits them.
    """
    effective = overlay(defaults, own)
    problems: list[Problem] = []
    for amount in ("cpu", "memory"):
        request = getattr(effective.requests, amount)
        limit = getattr(effective.limits, amount)
        if request is None or limit is None or parse_quantity(request) <= parse_quantity(limit):
            continue
        set_here = own is not None and (
            amount in own.requests.model_fields_set or amount in own.limits.model_fields_set
        )
        if not (set_here or check_defaults):
            continue
        where = join_path(path if set_here else defaults_path, f"resources.requests.{amount}")
        problems.append(
            Problem(
                where, f"request {request} is above the limit {limit}; lower it or raise the limit"
            )
        )
    return problems


RESTRICTED_CAPABILITIES = {"NET_BIND_SERVICE"}


def security_problems(
    security: Security, path: str, *, fields: set[str] | None, restricted: bool
) -> list[Problem]:
    """Settings Kubernetes refuses, or that the namespace's *restricted* standard refuses.

    ``fields`` limits the report to the fields set at ``path`` (``None``: all of them).
    """
    checks: list[tuple[str, bool, str]] = [
        (
            "run_as_user",
            security.run_as_user == 0 and security.run_as_non_root,
            "runAsUser 0 is root, which runAsNonRoot forbids: pick a non-root UID such as 10001",
        )
    ]
    if restricted:
        why = (
            "breaks the restricted Pod Security Standard that the namespace enforces "
            "(langop-infra creates it with pod-security.kubernetes.io/enforce: restricted), so "
            "Kubernetes would refuse the pods; remove the override, or adopt a namespace you "
            "manage with createNamespace: false"
        )
        checks += [
            ("run_as_non_root", not security.run_as_non_root, f"runAsNonRoot: false {why}"),
            (
                "allow_privilege_escalation",
                security.allow_privilege_escalation,
                f"allowPrivilegeEscalation: true {why}",
            ),
            (
                "seccomp_profile",
                security.seccomp_profile != "RuntimeDefault",
                f"seccompProfile {security.seccomp_profile} {why}",
            ),
            (
                "drop_capabilities",
                "ALL" not in security.drop_capabilities,
                f"not dropping ALL capabilities {why}",
            ),
            (
                "add_capabilities",
                bool(set(security.add_capabilities) - RESTRICTED_CAPABILITIES),
                f"adding capabilities other than NET_BIND_SERVICE {why}",
            ),
        ]
    problems: list[Problem] = []
    for field, failed, message in checks:
        if failed and (fields is None or field in fields):
            alias = Security.model_fields[field].alias or field
            problems.append(Problem(join_path(path, f"security.{alias}"), message))
    return problems


def ip_block_problems(cidr: str, excepts: list[str], path: str) -> list[Problem]:
    """Each ``except`` must lie strictly inside its ``cidr``, or Kubernetes refuses the
    policy (its validation wants a strict subset: an except equal to the cidr is refused)."""
    network = ipaddress.ip_network(cidr, strict=False)
    problems: list[Problem] = []
    for k, text in enumerate(excepts):
        inner = ipaddress.ip_network(text, strict=False)
        where = join_path(path, f"except[{k}]")
        if inner.version != network.version or not inner.subnet_of(network):  # type: ignore[arg-type]
            problems.append(
                Problem(
                    where,
                    f"{text} is not inside {cidr}; an except range must be a subset of the cidr",
                )
            )
        elif inner.prefixlen == network.prefixlen:
            problems.append(
                Problem(
                    where,
                    f"{text} is all of {cidr}, which would leave nothing; an except range must "
                    "be smaller than the cidr (drop the peer instead)",
                )
            )
    return problems


def deploy_problems(
    workload: WorkloadSpec,
    defaults: Defaults,
    path: str = "",
    defaults_path: str = "defaults",
    *,
    restricted: bool = False,
    check_defaults: bool = True,
) -> list[Problem]:
    """What Kubernetes would refuse of one workload on top of the defaults: requests above
    limits, root with runAsNonRoot (or anything the restricted standard refuses, when the
    namespace enforces it), ``except`` ranges outside their cidr. ``check_defaults``: see
    :func:`resource_problems`."""
    problems = resource_problems(
        defaults.resources,
        workload.resources,
        path,
        defaults_path,
        check_defaults=check_defaults,
    )
    if workload.security is not None:
        problems += security_problems(
            overlay(defaults.security, workload.security),
            path,
            fields=set(workload.security.model_fields_set),
            restricted=restricted,
        )
    if isinstance(workload, (ToolSpec, AgentSpec)):
        for k, peer in enumerate(workload.allow_from):
            if peer.ip_block is not None:
                problems += ip_block_problems(
                    peer.ip_block.cidr,
                    peer.ip_block.except_,
                    join_path(path, f"allowFrom[{k}].ipBlock"),
                )
    for k, rule in enumerate(workload.egress_to):
        if rule.cidr is not None:
            problems += ip_block_problems(
                rule.cidr, rule.except_, join_path(path, f"egressTo[{k}]")
            )
    if isinstance(workload, PodExtensionsSpec):
        problems += mount_problems(workload, path)
        for k, init in enumerate(workload.init_containers):
            if init.resources is not None:
                problems += resource_problems(
                    defaults.resources,
                    init.resources,
                    join_path(path, f"initContainers[{k}]"),
                    defaults_path,
                    check_defaults=False,
                )
    return problems
