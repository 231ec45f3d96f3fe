"""The stack program: structured stack config → validated ClusterSpec → LanguageCluster.

``pulumi up -s <env>`` runs it through the project's ``__main__.py``; ``langop-infra render``
runs the same file under the mock engine. Config keys live under the project namespace:
``langop-infra:namespace``, ``:createNamespace``, ``:partOf``, ``:defaults``, ``:tools``,
``:agents``, ``:secrets``, ``:externalSecrets``, ``:models``, ``:personas`` and
``:toolsFrom``. Warnings (valid but unwise config) go to the engine with ``pulumi.log.warn``:
``pulumi up`` shows them, and the mock engine keeps them for ``render`` and ``validate`` to print.

Outputs, a contract other stacks read through ``toolsFrom`` (a Pulumi ``StackReference``):
``namespace``; ``tools`` (by name: endpoint, deploymentMode, phase, toolNames); ``agents``;
and ``toolTargets``, a list of ``{name, namespace, port, mcpPath, deploymentMode}``, one per
service tool, sorted by namespace and name. Fields are only ever added to it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pulumi
from pulumi.runtime.config import CONFIG, get_config, get_config_env, is_config_secret
from pulumi.runtime.mocks import MockMonitor
from pulumi.runtime.stack import wait_for_rpcs
from pydantic import ValidationError

from langop_infra.components.cluster import LanguageCluster
from langop_infra.config._pydantic_errors import problems_from, stack_wording
from langop_infra.config.checks._checked import CheckedCluster
from langop_infra.config.cluster import ClusterSpec, ExportedToolTarget, ToolsFrom
from langop_infra.core import _pulumi_sdk as pulumi_sdk
from langop_infra.core._gc_tuning import tuned_for_run
from langop_infra.core.problems import Problem, SpecError
from langop_infra.manifests._contract import ToolTarget
from langop_infra.program._config_reader import (
    EXPECTED,
    KEYS,
    PROJECT,
    config_warnings,
    read_cluster_document,
)

__all__ = ["EXPECTED", "KEYS", "PROJECT", "config_warnings", "main", "read_cluster_config"]

TOOL_TARGETS_OUTPUT = "toolTargets"


class _EngineConfig:
    """The config the engine handed the program, as :mod:`config_reader` reads it."""

    def get(self, full_key: str) -> str | None:
        return get_config(full_key)

    def is_secret(self, full_key: str) -> bool:
        return is_config_secret(full_key)

    def full_keys(self) -> list[str]:
        return sorted({*CONFIG.get().keys(), *get_config_env().keys()})


def read_cluster_config(
    config: pulumi.Config | None = None, external: list[tuple[str, str]] | None = None
) -> ClusterSpec:
    """Read and validate the stack's config; every problem at once, named by config key.
    ``external`` lists the (namespace, name) of tools other stacks export (``toolsFrom``)."""
    return _read_checked(config, external).spec


def _read_checked(
    config: pulumi.Config | None = None, external: list[tuple[str, str]] | None = None
) -> CheckedCluster:
    name = config.name if config is not None else PROJECT
    return read_cluster_document(_EngineConfig(), external, name)


@stack_wording()
def read_tools_from(config: pulumi.Config | None = None) -> list[ToolsFrom]:
    """The stacks named under ``toolsFrom``."""
    config = config or pulumi.Config(PROJECT)
    full_key = f"{config.name}:toolsFrom"
    try:
        value = config.get_object("toolsFrom")
    except Exception:  # the SDK raises its own types for malformed values
        raise SpecError([Problem(full_key, f"expected {EXPECTED['toolsFrom']}")]) from None
    if value is None:
        return []
    if not isinstance(value, list):
        raise SpecError([Problem(full_key, f"expected {EXPECTED['toolsFrom']}")])
    found, problems = [], []
    for i, item in enumerate(value):
        try:
            found.append(ToolsFrom.model_validate(item))
        except ValidationError as exc:
            problems += problems_from(exc, f"{full_key}[{i}]", item, ["stack"])
    if problems:
        raise SpecError(problems)
    return found


def stack_tool_targets(source: ToolsFrom) -> list[ToolTarget]:
    """The ``toolTargets`` another stack exports, read through a StackReference.

    The values must be known to build this stack's agents, so the program waits for them
    (a StackReference is read during preview too)."""
    reference = pulumi.StackReference(f"toolsFrom:{source.stack}", source.stack)
    details = pulumi_sdk.sync_await(reference.get_output_details(TOOL_TARGETS_OUTPUT))
    where = f"{PROJECT}:toolsFrom[{source.stack}]"
    value = details.value if details.value is not None else details.secret_value
    if not isinstance(value, list):
        raise SpecError(
            [
                Problem(
                    where,
                    f"stack {source.stack!r} exports no {TOOL_TARGETS_OUTPUT} list; deploy it "
                    "with a langop-infra version that exports it",
                )
            ]
        )
    targets, problems = [], []
    for i, item in enumerate(value):
        try:
            exported = ExportedToolTarget.model_validate(item)
        except ValidationError as exc:
            problems += problems_from(exc, f"{where}.{TOOL_TARGETS_OUTPUT}[{i}]", item, [])
            continue
        targets.append(ToolTarget.from_exported(exported))
    if problems:
        raise SpecError(problems)
    return targets


def tool_targets_output(cluster: LanguageCluster) -> list[dict[str, Any]]:
    """The ``toolTargets`` output: every service tool of the cluster, as plain data."""
    targets = sorted(
        (t.target for t in cluster.tools.values() if t.target.deployment_mode == "service"),
        key=lambda t: (t.namespace, t.name),
    )
    return [t.exported() for t in targets]


def reported_to_the_engine(build: Callable[[], LanguageCluster]) -> Callable[[], LanguageCluster]:
    """Invalid configuration under the real engine as one clean error (``pulumi.RunError``,
    which the language host prints without a traceback), as `langop-infra validate` prints
    it; under mocks (render, users' tests) the SpecError itself, which they report."""

    @functools.wraps(build)
    def run() -> LanguageCluster:
        try:
            return build()
        except SpecError as exc:
            if isinstance(pulumi_sdk.current_monitor(), MockMonitor):
                raise
            raise pulumi.RunError(str(exc)) from None

    return run


@reported_to_the_engine
@tuned_for_run()
def main() -> LanguageCluster:
    """Build the stack's LanguageCluster and export what operators look at."""
    external = [t for source in read_tools_from() for t in stack_tool_targets(source)]
    checked = _read_checked(external=[(t.namespace, t.name) for t in external])
    for warning in config_warnings(checked.spec):
        pulumi.log.warn(str(warning))
    # Warned of under their config keys just now: the cluster is not to warn again.
    cluster = LanguageCluster(checked.spec.namespace, checked.warned(), external_targets=external)
    pulumi.export("namespace", cluster.namespace)
    pulumi.export(
        "tools",
        {
            name: {
                "endpoint": tool.endpoint,
                "deploymentMode": tool.deployment_mode,
                "phase": tool.phase,
                "toolNames": tool.tool_names,
            }
            for name, tool in cluster.tools.items()
        },
    )
    pulumi.export(
        "agents",
        {
            name: {"configYaml": agent.config_yaml, "mcpServers": agent.mcp_servers}
            for name, agent in cluster.agents.items()
        },
    )
    if cluster.http_tools:  # stacks without httpTools keep their outputs unchanged
        pulumi.export(
            "httpTools",
            {
                name: {
                    "phase": t.phase,
                    "lastError": t.last_error,
                    "registeredAt": t.registered_at,
                    "lastSyncedAt": t.last_synced_at,
                    "conditions": t.conditions,
                }
                for name, t in cluster.http_tools.items()
            },
        )
    pulumi.export("models", {name: {"endpoint": m.endpoint} for name, m in cluster.models.items()})
    pulumi.export("gateway", cluster.gateway_endpoint)
    pulumi.export(TOOL_TARGETS_OUTPUT, tool_targets_output(cluster))
    _finish_registrations()
    return cluster


def _finish_registrations() -> None:
    """Let the SDK finish registering before ``main()`` returns, while the collector is still
    tuned: serializing every resource's inputs, much of a run's work, comes after the body."""
    pulumi_sdk.sync_await(wait_for_rpcs(await_all_outstanding_tasks=False))
