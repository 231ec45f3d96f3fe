"""The stack program: structured stack config → validated ClusterSpec → LanguageCluster.

``pulumi up -s <env>`` runs it through the project's ``__main__.py``; ``langop-infra render``
runs the same file under the mock engine. Config keys live under the project namespace:
``langop-infra:namespace``, ``:createNamespace``, ``:partOf``, ``:defaults``, ``:tools``,
``:agents`` and ``:secrets``.
"""

from __future__ import annotations

import difflib
from typing import Any

import pulumi
from pulumi.runtime.config import CONFIG, get_config_env, is_config_secret
from pulumi.runtime.stack import wait_for_rpcs
from pulumi.runtime.sync_await import _sync_await

from langop_infra.cluster import LanguageCluster
from langop_infra.errors import Problem, SpecError
from langop_infra.gc_tuning import tuned_for_run
from langop_infra.specs import ClusterSpec
from langop_infra.validation import external_reference_problems, parse_cluster

PROJECT = "langop-infra"
KEYS = ("namespace", "createNamespace", "partOf", "defaults", "tools", "agents", "secrets")
EXPECTED = {
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


def read_cluster_config(config: pulumi.Config | None = None) -> ClusterSpec:
    """Read and validate the stack's config; every problem at once, named by config key."""
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
        found = external_reference_problems(spec, ())
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


@tuned_for_run()
def main() -> LanguageCluster:
    """Build the stack's LanguageCluster and export what operators look at."""
    spec = read_cluster_config()
    cluster = LanguageCluster(spec.namespace, spec)
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
    _finish_registrations()
    return cluster


def _finish_registrations() -> None:
    """Let the SDK finish registering before ``main()`` returns, while the collector is still
    tuned: serializing every resource's inputs, much of a run's work, comes after the body."""
    _sync_await(wait_for_rpcs(await_all_outstanding_tasks=False))
