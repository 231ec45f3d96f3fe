"""The CrossGuard policy pack: each rule of :mod:`langop_infra.policy._rules` as a Pulumi
``StackValidationPolicy`` with a name, a description, a default enforcement level and, where
it makes sense, configuration (``pulumi preview --policy-pack policy-pack`` and the pack's
config file set them).

``serve()`` is the pack's entry point (``policy-pack/__main__.py``): Pulumi's engine starts it
and talks to it over gRPC as an Analyzer. ``langop-infra check`` hands the same policies the
same messages offline (:mod:`langop_infra.policy.offline`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    PolicyPack,
    PolicyResource,
    ReportViolation,
    StackValidationArgs,
    StackValidationPolicy,
    proxy as policy_proxy,
)

from langop_infra.policy import _rules as rules
from langop_infra.policy._endpoints import risky_endpoints
from langop_infra.policy._openness import open_network_policies
from langop_infra.policy._rules import Finding, Resource

PACK_NAME = "langop-infra"
DEFAULT_STRICT_STACKS = ["prod"]

_STACKS = {
    "type": "array",
    "items": {"type": "string"},
    "description": "Stack names this applies to.",
}
_LABELS = {
    "type": "object",
    "additionalProperties": {"type": "string"},
    "description": "Pod labels that mark a workload.",
}


class ViewedArgs(StackValidationArgs):
    """A policy's arguments with the rules' view of the resources already made:
    ``langop-infra check`` hands every policy the same resources, and makes their view once."""

    def __init__(
        self, views: list[Resource], found: list[PolicyResource], config: Any = None
    ) -> None:
        super().__init__(found, config)
        self.views = views


def resources(args: StackValidationArgs) -> list[Resource]:
    """The engine's resources as the rules take them."""
    if isinstance(args, ViewedArgs):
        return args.views
    return [_view(r) for r in args.resources]


def _view(resource: PolicyResource) -> Resource:
    return Resource(
        type=resource.resource_type,
        urn=resource.urn,
        name=resource.name,
        props=plain(resource.props),
        dependencies=tuple(d.urn for d in resource.dependencies),
    )


def plain(value: Any) -> Any:
    """Props as plain dicts and lists. At preview pulumi-policy hands them behind a proxy that
    raises on reading any unknown value, which turns a whole stack policy into "can't run
    during preview" (advisory): one unknown pod annotation (the secret digest of a first
    deploy) would switch the pack off. The rules read the raw values, where an unknown is the
    engine's sentinel string, as ``langop-infra check`` hands them."""
    if isinstance(value, (policy_proxy._DictProxy, policy_proxy._ListProxy)):  # pyright: ignore[reportPrivateUsage]
        value = value["__target"]
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in cast("Mapping[str, Any]", value).items()}
    if isinstance(value, list):
        return [plain(item) for item in cast("list[Any]", value)]
    return value


def stack_name() -> str:
    """The stack being previewed: the engine sets ``PULUMI_STACK`` for its analyzers."""
    return os.environ.get("PULUMI_STACK", "")


def _policy(
    name: str,
    description: str,
    level: EnforcementLevel,
    judge: Callable[[Sequence[Resource], Mapping[str, Any]], list[Finding]],
    config: dict[str, Any] | None = None,
) -> StackValidationPolicy:
    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        for finding in judge(resources(args), args.get_config()):
            report_violation(finding.message, finding.urn)

    schema = PolicyConfigSchema(properties=config) if config else None
    return StackValidationPolicy(
        name=name,
        description=description,
        validate=validate,
        enforcement_level=level,
        config_schema=schema,
    )


def _in_strict_stack(config: Mapping[str, Any], key: str = "stacks") -> bool:
    return stack_name() in list(config.get(key) or DEFAULT_STRICT_STACKS)


def _egress(found: Sequence[Resource], config: Mapping[str, Any]) -> list[Finding]:
    return rules.agent_egress(
        found,
        require_restricted=_in_strict_stack(config, "restrictedStacks"),
        agent_labels=config.get("agentLabels") or rules.AGENT_LABELS,
    )


def _open_policies(found: Sequence[Resource], config: Mapping[str, object]) -> list[Finding]:
    return open_network_policies(found) if _in_strict_stack(config) else []


def _images(found: Sequence[Resource], config: Mapping[str, object]) -> list[Finding]:
    return rules.unpinned_images(found) if _in_strict_stack(config) else []


def policies() -> list[StackValidationPolicy]:
    """The pack's policies, in the order ``pulumi preview`` lists them."""
    return [
        _policy(
            "langop-agent-egress",
            "An agent reaches only the tools and models it declares; in restricted stacks a "
            "NetworkPolicy limits its egress.",
            EnforcementLevel.MANDATORY,
            _egress,
            {"restrictedStacks": _STACKS, "agentLabels": _LABELS},
        ),
        _policy(
            "langop-no-literal-credentials",
            "No credential-like header or env value appears as a literal in a pod template, a "
            "ConfigMap or an agent's config.yaml.",
            EnforcementLevel.MANDATORY,
            lambda found, _: rules.literal_credentials(found),
        ),
        _policy(
            "langop-images-pinned",
            "In the stacks named by configuration (prod by default), every image is pinned by "
            "digest.",
            EnforcementLevel.MANDATORY,
            _images,
            {"stacks": _STACKS},
        ),
        _policy(
            "langop-restricted-pods",
            "Every pod template meets the restricted Pod Security Standard, init containers and "
            "native sidecars included.",
            EnforcementLevel.MANDATORY,
            lambda found, _: rules.unrestricted_pods(found),
        ),
        _policy(
            "langop-network-policies-closed",
            "In the stacks named by configuration (prod by default), no NetworkPolicy admits "
            "every peer: no rule without from/to, no empty peer, no 0.0.0.0/0 or ::/0, no "
            "namespaceSelector {} alone.",
            EnforcementLevel.MANDATORY,
            _open_policies,
            {"stacks": _STACKS},
        ),
        _policy(
            "langop-pods-selected",
            "Every pod is selected by some NetworkPolicy of its namespace.",
            EnforcementLevel.MANDATORY,
            lambda found, _: rules.unselected_pods(found),
        ),
        _policy(
            "langop-endpoints",
            "No agent or gateway URL points at a cloud metadata service, a link-local address "
            "or the Kubernetes API server, or carries a credential in its query; advisory "
            "unless configured mandatory.",
            EnforcementLevel.ADVISORY,
            lambda found, _: risky_endpoints(found),
        ),
        _policy(
            "langop-schema-sync",
            "Every tool has schema sync, and a tool an agent waits for syncs with required.",
            EnforcementLevel.ADVISORY,
            lambda found, _: rules.schema_sync(found),
        ),
    ]


def serve() -> None:
    """Serve the pack to Pulumi's engine (blocks; the engine stops it)."""
    pack: list[Policy] = [*policies()]
    PolicyPack(
        PACK_NAME,
        pack,
        description="langop-infra's rules for AI agents and MCP tools on Kubernetes.",
    )
