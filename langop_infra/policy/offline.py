"""The policy pack against an offline render, with no Pulumi CLI and no cluster.

:func:`analyze` turns the registrations of a program run under the mock engine into the
engine's ``AnalyzeStackRequest`` and hands it to the pack's own Analyzer servicer
(``pulumi_policy``'s, the object ``pulumi preview --policy-pack`` talks to over gRPC).
:func:`check`, which ``langop-infra check`` uses, gives the same policies the same resources
as pulumi-policy's own ``StackValidationArgs``, skipping the protobuf round trip that costs
the servicer most of its time on a large stack.

``pulumi_policy`` exposes the servicer only as ``_PolicyAnalyzerServicer``;
``tests/test_policy_pack.py`` names it, so a rename fails loudly.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format, struct_pb2
from pulumi.runtime import proto
from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    StackValidationArgs,
)
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.policy import _PolicyAnalyzerServicer

from langop_infra.offline._engine_values import is_unknown, visit
from langop_infra.offline._mock_engine import UNKNOWN, ProgramRun
from langop_infra.policy.pack import PACK_NAME, ViewedArgs, policies, resources

LEVELS = {proto.ADVISORY: "advisory", proto.MANDATORY: "mandatory", proto.DISABLED: "disabled"}
_LEVEL_ENUMS = {
    proto.ADVISORY: EnforcementLevel.ADVISORY,
    proto.MANDATORY: EnforcementLevel.MANDATORY,
    proto.DISABLED: EnforcementLevel.DISABLED,
}
_CONFIG_LEVELS = {
    "advisory": proto.ADVISORY,
    "mandatory": proto.MANDATORY,
    "disabled": proto.DISABLED,
}


@dataclass(frozen=True)
class Violation:
    """One policy violation as ``pulumi preview`` reports it."""

    policy: str
    level: str
    urn: str
    message: str

    @property
    def resource(self) -> str:
        """``<type>: <name>`` from the URN, as preview shows the resource."""
        if "::" not in self.urn:
            return "(the stack)"
        *_, type_path, name = self.urn.split("::")
        return f"{type_path.rsplit('$', 1)[-1]}: {name}"


def servicer(config: Mapping[str, object] | None = None) -> _PolicyAnalyzerServicer:
    """The pack's Analyzer servicer, configured as the engine would from a policy config file
    (``{policy name: {"enforcementLevel": ..., other settings}}``)."""
    pack: list[Policy] = [*policies()]
    analyzer = _PolicyAnalyzerServicer(PACK_NAME, "0.1.0", pack, EnforcementLevel.ADVISORY)
    if config:
        analyzer.Configure(_configure_request(config), None)
    return analyzer


def _configure_request(config: Mapping[str, Any]) -> Any:
    """Raises ``ValueError`` naming an unknown policy or enforcement level."""
    known = [p.name for p in policies()]
    entries = {}
    for name, given in config.items():
        if name not in known:
            raise ValueError(f"no policy named {name!r}; the pack has {', '.join(known)}")
        settings = {"enforcementLevel": given} if isinstance(given, str) else dict(given or {})
        level_name = str(settings.pop("enforcementLevel", "advisory"))
        if level_name not in _CONFIG_LEVELS:
            raise ValueError(
                f"{name}: enforcementLevel {level_name!r} is not one of {', '.join(_CONFIG_LEVELS)}"
            )
        level = _CONFIG_LEVELS[level_name]
        properties = json_format.ParseDict(settings, struct_pb2.Struct())
        entries[name] = proto.PolicyConfig(enforcementLevel=level, properties=properties)
    return proto.ConfigureAnalyzerRequest(policyConfig=entries)


def stack_request(run: ProgramRun) -> Any:
    """What the engine sends after a preview: every custom resource with its properties,
    parent and dependencies."""
    return proto.AnalyzeStackRequest(
        resources=[
            proto.AnalyzerResource(
                type=r.type,
                urn=r.urn,
                name=r.name,
                properties=json_format.ParseDict(_on_the_wire(r.inputs), struct_pb2.Struct()),
                parent=r.parent,
                dependencies=r.dependencies,
            )
            for r in run.registrations
            if r.custom
        ]
    )


def _on_the_wire(inputs: Mapping[str, Any]) -> Any:
    """``inputs`` with each value unknown at preview as the engine sends it: the unknown
    sentinel string (a pod's secret digest is one in a render without a key)."""
    return visit(dict(inputs), leaf=lambda value, _: UNKNOWN if is_unknown(value) else value)


@contextmanager
def _stack_env(stack: str) -> Iterator[None]:
    previous = os.environ.get("PULUMI_STACK")
    os.environ["PULUMI_STACK"] = stack
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("PULUMI_STACK", None)
        else:
            os.environ["PULUMI_STACK"] = previous


def analyze(
    run: ProgramRun, stack: str, config: Mapping[str, object] | None = None
) -> list[Violation]:
    """The pack's verdict through its Analyzer servicer and the engine's protobuf messages:
    exactly what ``pulumi preview --policy-pack`` does (slow for large stacks: the servicer
    converts every resource from protobuf once per policy)."""
    with _stack_env(stack):
        response = servicer(config).AnalyzeStack(stack_request(run), None)
    return [
        Violation(
            d.policyName,
            LEVELS.get(d.enforcementLevel, "advisory"),
            d.urn,
            d.message.split("\n", 1)[-1],
        )
        for d in response.diagnostics
    ]


def check(
    run: ProgramRun, stack: str, config: Mapping[str, object] | None = None
) -> list[Violation]:
    """The pack's verdict on a run: the same policies, levels and configuration as
    :func:`analyze`, handed the run's resources directly rather than through protobuf
    (tests/test_policy_pack.py holds the two equal)."""
    levels, settings = _levels_and_settings(config or {})
    found = _policy_resources(run)
    views = resources(StackValidationArgs(found, None))  # made once, for every policy
    violations: list[Violation] = []
    with _stack_env(stack):
        for policy in policies():
            level = levels.get(policy.name, policy.enforcement_level or EnforcementLevel.ADVISORY)
            if level == EnforcementLevel.DISABLED:
                continue
            name = "mandatory" if level == EnforcementLevel.MANDATORY else "advisory"
            args = ViewedArgs(views, found, settings.get(policy.name))

            def report(
                message: str,
                urn: str | None = None,
                policy_name: str = policy.name,
                level_name: str = name,
            ) -> None:
                violations.append(Violation(policy_name, level_name, urn or "", message))

            policy.validate(args, report)
    return violations


def _policy_resources(run: ProgramRun) -> list[PolicyResource]:
    """The run's custom resources as pulumi-policy's servicer builds them from a request:
    properties deserialized (secrets unwrapped), parents and dependencies linked."""
    custom = [r for r in run.registrations if r.custom]
    found = [
        PolicyResource(
            r.type,
            deserialize_properties(r.inputs),
            r.urn,
            r.name,
            PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], r.parent),
            None,
            None,
            [],
            {},
        )
        for r in custom
    ]
    by_urn = {resource.urn: resource for resource in found}
    for resource, registration in zip(found, custom, strict=True):
        resource.parent = by_urn.get(registration.parent)
        resource.dependencies = [by_urn[d] for d in registration.dependencies if d in by_urn]
    return found


def _levels_and_settings(
    config: Mapping[str, Any],
) -> tuple[dict[str, EnforcementLevel], dict[str, dict[str, Any]]]:
    """Enforcement levels and settings per policy from a policy config, checked as
    :func:`_configure_request` checks it."""
    request = _configure_request(config)
    levels, settings = {}, {}
    for name, entry in request.policyConfig.items():
        levels[name] = _LEVEL_ENUMS[entry.enforcementLevel]
        settings[name] = json_format.MessageToDict(entry.properties)
    return levels, settings
