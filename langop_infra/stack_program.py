"""The stack program: structured stack config → validated ClusterSpec → LanguageCluster.

``pulumi up -s <env>`` runs it through the project's ``__main__.py``; ``langop-infra render``
runs the same file under the mock engine. Config keys live under the project namespace:
``langop-infra:namespace``, ``:createNamespace``, ``:partOf``, ``:defaults``, ``:tools``,
``:agents``, ``:secrets`` and ``:toolsFrom``.

Outputs, a contract other stacks read through ``toolsFrom`` (a Pulumi ``StackReference``):
``namespace``; ``tools`` (by name: endpoint, deploymentMode, phase, toolNames); ``agents``;
and ``toolTargets``, a list of ``{name, namespace, port, mcpPath, deploymentMode}``, one per
service tool, sorted by namespace and name. Fields are only ever added to it.
"""

from __future__ import annotations

import difflib
from typing import Any

import pulumi
from pulumi.runtime.config import CONFIG, get_config_env, is_config_secret
from pulumi.runtime.sync_await import _sync_await
from pydantic import ValidationError

from langop_infra.cluster import LanguageCluster
from langop_infra.contract import ToolTarget
from langop_infra.errors import Problem, SpecError, problems_from
from langop_infra.specs import ClusterSpec, ExportedToolTarget, ToolsFrom
from langop_infra.validation import external_reference_problems, parse_cluster

PROJECT = "langop-infra"
KEYS = (
    "namespace",
    "createNamespace",
    "partOf",
    "defaults",
    "tools",
    "agents",
    "secrets",
    "toolsFrom",
)
# Read by the program itself, not part of the cluster document.
PROGRAM_KEYS = ("toolsFrom",)
TOOL_TARGETS_OUTPUT = "toolTargets"
EXPECTED = {
    "toolsFrom": "a list of {stack: <organization>/<project>/<stack>}",
    "namespace": "a namespace name",
    "partOf": "a name for app.kubernetes.io/part-of",
    "createNamespace": "true or false",
    "defaults": "a mapping of defaults",
    "tools": "a list of tools",
    "agents": "a list of agents",
    "secrets": "a mapping of secret names to {key: value} mappings",
}
# Keys whose values may hold `secure:` entries; everywhere else a secret would be copied into
# plain objects, so it is refused with a pointer to `secrets`.
SECRET_KEYS = ("secrets",)


def _all_config_keys() -> list[str]:
    return sorted({*CONFIG.get().keys(), *get_config_env().keys()})


def read_cluster_config(
    config: pulumi.Config | None = None, external: list[tuple[str, str]] | None = None
) -> ClusterSpec:
    """Read and validate the stack's config; every problem at once, named by config key.
    ``external`` lists the (namespace, name) of tools other stacks export (``toolsFrom``)."""
    config = config or pulumi.Config(PROJECT)
    prefix = f"{config.name}:"
    problems: list[Problem] = []
    for full_key in _all_config_keys():
        key = full_key.removeprefix(prefix)
        if full_key.startswith(prefix) and key not in KEYS:
            close = difflib.get_close_matches(key, KEYS, n=1)
            hint = f"did you mean {prefix}{close[0]}?" if close else f"known: {', '.join(KEYS)}"
            problems.append(Problem(full_key, f"unknown config key; {hint}"))
    document: dict[str, Any] = {}
    for key in KEYS:
        full_key = prefix + key
        if key in PROGRAM_KEYS:
            continue
        if is_config_secret(full_key) and key not in SECRET_KEYS:
            problems.append(
                Problem(
                    full_key,
                    "holds a secure value; keep secrets under "
                    f"{prefix}secrets and reference them with secretKeyRef",
                )
            )
            continue
        try:
            if key in ("namespace", "partOf"):
                value = config.get(key)
            elif key == "createNamespace":
                value = config.get_bool(key)
            else:
                value = config.get_object(key)
        except Exception:  # the SDK raises its own types for malformed values
            # Never quote the SDK's message: it repeats the value, which may be a secret.
            problems.append(Problem(full_key, f"expected {EXPECTED[key]}"))
            continue
        if value is not None:
            document[key] = value
    if "namespace" not in document and not any(p.path == prefix + "namespace" for p in problems):
        problems.append(
            Problem(prefix + "namespace", "required; set it with `pulumi config set namespace`")
        )
    try:
        spec = parse_cluster(document)
        # One stack is one namespace: a tool of another namespace is never known here.
        found = external_reference_problems(spec, external or ())
    except SpecError as exc:
        found = [
            p
            for p in exc.problems
            # a missing namespace is already reported above, as a config key
            if not (p.path == "namespace" and "namespace" not in document)
        ]
    problems += [Problem(_config_path(prefix, p.path), p.message) for p in found]
    if problems:
        raise SpecError(problems)
    return spec


def _config_path(prefix: str, path: str) -> str:
    return prefix + path if path else prefix.rstrip(":")


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
    details = _sync_await(reference.get_output_details(TOOL_TARGETS_OUTPUT))
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
        targets.append(
            ToolTarget(exported.name, exported.namespace, exported.port, exported.mcp_path)
        )
    if problems:
        raise SpecError(problems)
    return targets


def tool_targets_output(cluster: LanguageCluster) -> list[dict[str, Any]]:
    """The ``toolTargets`` output: every service tool of the cluster, as plain data."""
    targets = sorted(
        (t.target for t in cluster.tools.values() if t.target.deployment_mode == "service"),
        key=lambda t: (t.namespace, t.name),
    )
    return [
        {
            "name": t.name,
            "namespace": t.namespace,
            "port": t.port,
            "mcpPath": t.mcp_path,
            "deploymentMode": t.deployment_mode,
        }
        for t in targets
    ]


def main() -> LanguageCluster:
    """Build the stack's LanguageCluster and export what operators look at."""
    external = [t for source in read_tools_from() for t in stack_tool_targets(source)]
    spec = read_cluster_config(external=[(t.namespace, t.name) for t in external])
    cluster = LanguageCluster(spec.namespace, spec, external_targets=external)
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
    pulumi.export(TOOL_TARGETS_OUTPUT, tool_targets_output(cluster))
    return cluster
