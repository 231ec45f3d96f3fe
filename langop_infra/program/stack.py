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

import difflib
from typing import Any

import pulumi
from pulumi.runtime.config import CONFIG, get_config, get_config_env, is_config_secret
from pulumi.runtime.stack import wait_for_rpcs
from pulumi.runtime.sync_await import _sync_await
from pydantic import ValidationError

from langop_infra import _json
from langop_infra.components.cluster import LanguageCluster
from langop_infra.config.checks.advice import cluster_warnings
from langop_infra.config.checks.references import external_reference_problems
from langop_infra.config.checks.validation import parse_cluster
from langop_infra.config.cluster import ClusterSpec, ExportedToolTarget, ToolsFrom
from langop_infra.core.errors import (
    Problem,
    SpecError,
    join_path,
    loc_path,
    problems_from,
    stack_wording,
)
from langop_infra.core.gc_tuning import tuned_for_run
from langop_infra.manifests.contract import ToolTarget
from langop_infra.mcp.errors import REDACTED

PROJECT = "langop-infra"
# Read by the program itself, not part of the cluster document.
PROGRAM_KEYS = ("toolsFrom",)
# Every key of the stack config, as the cluster document's fields spell them.
KEYS = (*(f.alias or n for n, f in ClusterSpec.model_fields.items()), *PROGRAM_KEYS)
TOOL_TARGETS_OUTPUT = "toolTargets"
EXPECTED = {
    "toolsFrom": "a list of {stack: <organization>/<project>/<stack>}",
    "namespace": "a namespace name",
    "partOf": "a name for app.kubernetes.io/part-of",
    "createNamespace": "true or false",
    "defaults": "a mapping of defaults",
    "tools": "a list of tools",
    "agents": "a list of agents",
    "httpTools": "a list of HTTP tools",
    "secrets": "a mapping of secret names to {key: value} mappings",
    "models": "a list of models",
    "personas": "a list of personas",
    "externalSecrets": "a list of names of Secrets made outside this program",
}
assert set(EXPECTED) == set(KEYS), "each config key needs its EXPECTED phrase"
# Keys whose values may hold `secure:` entries; everywhere else a secret would be copied into
# plain objects, so it is refused with a pointer to `secrets`.
SECRET_KEYS = ("secrets",)
SECURE_MESSAGE = (
    "holds a secure value; keep secrets under {prefix}secrets and reference them with "
    "secretKeyRef"
)
SECURE = "langop_secure_value"  # the kinds of this module's own problems
UNKNOWN_KEY = "langop_unknown_config_key"


def _all_config_keys() -> list[str]:
    return sorted({*CONFIG.get().keys(), *get_config_env().keys()})


@stack_wording()
def read_cluster_config(
    config: pulumi.Config | None = None, external: list[tuple[str, str]] | None = None
) -> ClusterSpec:
    """Read and validate the stack's config; every problem at once, named by config key.
    ``external`` lists the (namespace, name) of tools other stacks export (``toolsFrom``)."""
    config = config or pulumi.Config(PROJECT)
    prefix = f"{config.name}:"
    problems = _unknown_key_problems(config.name)
    refused: list[str] = []  # keys holding a secure value where none belongs
    marked: list[str] = []  # paths of secure values found by their markers
    document: dict[str, Any] = {}
    for key in KEYS:
        full_key = prefix + key
        if key in PROGRAM_KEYS:
            continue
        if is_config_secret(full_key) and key not in SECRET_KEYS:
            raw = _raw_values(prefix, [key]).get(key)
            spots = _secure_spots(raw)
            if spots:  # a stack file's render: its markers show where the secure values are
                problems += [
                    Problem(join_path(full_key, spot), SECURE_MESSAGE.format(prefix=prefix), SECURE)
                    for spot in spots
                ]
                marked += [join_path(key, spot) for spot in spots]
                document[key] = raw
                continue
            problems.append(
                Problem(full_key, SECURE_MESSAGE.format(prefix=prefix), SECURE)
            )
            refused.append(key)
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
            problems.append(Problem(full_key, f"expected {EXPECTED[key]}", "langop_config_type"))
            continue
        if value is not None:
            document[key] = value
    # A misspelt `langop-infa:namespace` is reported as such, not also as a missing key.
    if "namespace" not in document and not any(
        p.path == prefix + "namespace" or p.path.endswith(":namespace") for p in problems
    ):
        problems.append(
            Problem(
                prefix + "namespace",
                "required; set it with `pulumi config set namespace`",
                "missing",
            )
        )
    spec, found = _document_problems(document, external or [])
    if refused:
        # Without the refused keys, other problems may only say they are missing (an agent's
        # tool "is not declared"): keep those found with the values too. Those values are
        # read but never shown: every problem kept comes from the run without them.
        _, with_values = _document_problems(
            {**document, **_raw_values(prefix, refused)}, external or []
        )
        kept = set(with_values)
        found = [p for p in found if p in kept]
    found = [p for p in found if not _under_marker(p, marked)]
    problems += [Problem(_config_path(prefix, p.path), p.message, p.kind) for p in found]
    if problems or spec is None:
        raise SpecError(problems)
    return spec


def _secure_spots(value: Any, loc: tuple[int | str, ...] = ()) -> list[str]:
    """Paths of the redaction markers an offline render puts where a stack file has
    ``secure:`` values (``pulumi up`` passes the plaintext: then there are none)."""
    if isinstance(value, str):
        return [loc_path(loc)] if value == REDACTED else []
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _secure_spots(v, (*loc, str(k)))]
    if isinstance(value, list):
        return [s for i, v in enumerate(value) for s in _secure_spots(v, (*loc, i))]
    return []


def _under_marker(problem: Problem, marked: list[str]) -> bool:
    """A problem of a secure value's own place, or that quotes its marker: a consequence of
    the value refused there, which is reported already."""
    return REDACTED in problem.message or any(
        problem.path == m or problem.path.startswith((f"{m}.", f"{m}[")) for m in marked
    )


def _unknown_key_problems(project: str) -> list[Problem]:
    """Unknown keys under the project's namespace, and keys under a misspelling of it."""
    problems: list[Problem] = []
    prefix = f"{project}:"
    for full_key in _all_config_keys():
        namespace, _, key = full_key.rpartition(":")
        if full_key.startswith(prefix) and key not in KEYS:
            close = difflib.get_close_matches(key, KEYS, n=1)
            hint = f"did you mean {prefix}{close[0]}?" if close else f"known: {', '.join(KEYS)}"
            problems.append(Problem(full_key, f"unknown config key; {hint}", UNKNOWN_KEY))
        elif namespace != project and difflib.get_close_matches(namespace, [project], cutoff=0.8):
            problems.append(
                Problem(
                    full_key,
                    f"unknown config namespace {namespace!r}; did you mean {prefix}{key}? "
                    f"(this project's keys are under {prefix})",
                    UNKNOWN_KEY,
                )
            )
    return problems


def _document_problems(
    document: dict[str, Any], external: list[tuple[str, str]]
) -> tuple[ClusterSpec | None, list[Problem]]:
    try:
        spec = parse_cluster(document)
    except SpecError as exc:
        # a missing namespace is already reported as a config key
        missing = "namespace" not in document
        return None, [p for p in exc.problems if not (missing and p.path == "namespace")]
    # A tool outside the stack's namespaces is known only from another stack (toolsFrom).
    return spec, external_reference_problems(spec, external)


def _raw_values(prefix: str, keys: list[str]) -> dict[str, Any]:
    """The values of ``keys`` as the engine passed them, without the SDK's secret warning."""
    values = {}
    for key in keys:
        text = get_config(prefix + key)
        try:
            values[key] = _json.read(text) if key not in ("namespace", "partOf") else text
        except (TypeError, ValueError):
            continue
    return values


def config_warnings(spec: ClusterSpec, project: str = PROJECT) -> list[Problem]:
    """What is valid but unwise in the stack's config, named by config key."""
    return [
        Problem(_config_path(f"{project}:", w.path), w.message, w.kind)
        for w in cluster_warnings(spec)
    ]


def _config_path(prefix: str, path: str) -> str:
    return prefix + path if path else prefix.rstrip(":")


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


@tuned_for_run()
def main() -> LanguageCluster:
    """Build the stack's LanguageCluster and export what operators look at."""
    external = [t for source in read_tools_from() for t in stack_tool_targets(source)]
    spec = read_cluster_config(external=[(t.namespace, t.name) for t in external])
    for warning in config_warnings(spec):
        pulumi.log.warn(str(warning))
    spec._images_warned = True  # under their config keys, just now
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
    _sync_await(wait_for_rpcs(await_all_outstanding_tasks=False))
