"""The stack program's config, read and validated without the Pulumi SDK.

The stack program (``program.stack``) reads its config through the engine; ``validate``
reads a stack file's config through :class:`StackFileConfig`. Both go through
:func:`read_cluster_document`, so both report the same problems with the same words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, cast

import langop_infra._json as _json
from langop_infra._errors import REDACTED, LangopError
from langop_infra.config._http_tool import HttpToolSpec
from langop_infra.config._model import ModelSpec, PersonaSpec
from langop_infra.config._pydantic_errors import stack_wording
from langop_infra.config.agent import AgentSpec
from langop_infra.config.checks._advice import cluster_warnings
from langop_infra.config.checks._checked import CheckedCluster
from langop_infra.config.checks._references import external_reference_problems
from langop_infra.config.checks._validation import check_cluster
from langop_infra.config.cluster import ClusterSpec
from langop_infra.config.tool import ToolSpec
from langop_infra.core._text import closest
from langop_infra.core.problems import Problem, SpecError, join_path, loc_path

PROJECT = "langop-infra"
# Read by the program itself, not part of the cluster document.
PROGRAM_KEYS = ("toolsFrom",)
# Every key of the stack config, as the cluster document's fields spell them.
KEYS = (*(f.alias or n for n, f in ClusterSpec.model_fields.items()), *PROGRAM_KEYS)
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
    "memories": "a list of memories",
    "externalSecrets": "a list of names of Secrets made outside this program",
    "externalServices": "a list of {name, namespace} of Services made outside this program",
}
assert set(EXPECTED) == set(KEYS), "each config key needs its EXPECTED phrase"
# Keys whose values may hold `secure:` entries; everywhere else a secret would be copied into
# plain objects, so it is refused with a pointer to `secrets`.
SECRET_KEYS = ("secrets",)
SECURE_MESSAGE = (
    "holds a secure value; keep secrets under {prefix}secrets and reference them with secretKeyRef"
)
SECURE = "langop_secure_value"  # the kinds of this module's own problems
UNKNOWN_KEY = "langop_unknown_config_key"


class ConfigSource(Protocol):
    """The stack's config as the engine hands it to the program: full keys
    (``langop-infra:tools``) to strings."""

    def get(self, full_key: str) -> str | None: ...

    def is_secret(self, full_key: str) -> bool: ...

    def full_keys(self) -> list[str]:
        """Every full key set, sorted."""
        ...


@dataclass(frozen=True)
class StackFileConfig:
    """A :class:`ConfigSource` of a stack file's config (``offline.project.stack_config``)."""

    values: Mapping[str, str]
    secret_keys: frozenset[str] = frozenset()

    def get(self, full_key: str) -> str | None:
        return self.values.get(full_key)

    def is_secret(self, full_key: str) -> bool:
        return full_key in self.secret_keys

    def full_keys(self) -> list[str]:
        return sorted(self.values)


class ConfigTypeError(LangopError, ValueError):
    """A value that is not of the type asked for (the SDK's ConfigTypeError, without the
    value, which may be a secret)."""


def get_bool(source: ConfigSource, full_key: str) -> bool | None:
    """``pulumi.Config.get_bool``: ``true``/``True``, ``false``/``False`` or unset."""
    value = source.get(full_key)
    if value is None:
        return None
    if value in ("true", "True"):
        return True
    if value in ("false", "False"):
        return False
    raise ConfigTypeError(full_key)


def get_object(source: ConfigSource, full_key: str) -> Any:
    """``pulumi.Config.get_object``: the value as JSON (within ``_json``'s limits, above any a
    stack file can reach), or None when unset."""
    value = source.get(full_key)
    if value is None:
        return None
    try:
        return _json.read(value)
    except Exception:
        raise ConfigTypeError(full_key) from None


@stack_wording()
def read_cluster_document(
    source: ConfigSource, external: list[tuple[str, str]] | None = None, name: str = PROJECT
) -> CheckedCluster:
    """Read and validate the stack's config; every problem at once, named by config key.
    ``external`` lists the (namespace, name) of tools other stacks export (``toolsFrom``);
    ``name`` is the config namespace (``pulumi.Config(name)``)."""
    prefix = f"{name}:"
    problems = _unknown_key_problems(source, name)
    refused: list[str] = []  # keys holding a secure value where none belongs
    marked: list[str] = []  # paths of secure values found by their markers
    document: dict[str, object] = {}
    for key in KEYS:
        full_key = prefix + key
        if key in PROGRAM_KEYS:
            continue
        if source.is_secret(full_key) and key not in SECRET_KEYS:
            raw = _raw_values(source, prefix, [key]).get(key)
            spots = _secure_spots(raw)
            if spots:  # a stack file's render: its markers show where the secure values are
                problems += [
                    Problem(join_path(full_key, spot), SECURE_MESSAGE.format(prefix=prefix), SECURE)
                    for spot in spots
                ]
                marked += [join_path(key, spot) for spot in spots]
                document[key] = raw
                continue
            problems.append(Problem(full_key, SECURE_MESSAGE.format(prefix=prefix), SECURE))
            refused.append(key)
            continue
        try:
            if key in ("namespace", "partOf"):
                value = source.get(full_key)
            elif key == "createNamespace":
                value = get_bool(source, full_key)
            else:
                value = get_object(source, full_key)
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
            {**document, **_raw_values(source, prefix, refused)}, external or []
        )
        kept = set(with_values)
        found = [p for p in found if p in kept]
    found = [p for p in found if not _under_marker(p, marked)]
    problems += [Problem(_config_path(prefix, p.path), p.message, p.kind) for p in found]
    if problems or spec is None:
        raise SpecError(problems)
    return spec


def _secure_spots(value: object, loc: tuple[int | str, ...] = ()) -> list[str]:
    """Paths of the redaction markers an offline render puts where a stack file has
    ``secure:`` values (``pulumi up`` passes the plaintext: then there are none)."""
    if isinstance(value, str):
        return [loc_path(loc)] if value == REDACTED else []
    if isinstance(value, dict):
        items = cast("dict[Any, Any]", value).items()
        return [s for k, v in items for s in _secure_spots(v, (*loc, str(k)))]
    if isinstance(value, list):
        listed = cast("list[Any]", value)
        return [s for i, v in enumerate(listed) for s in _secure_spots(v, (*loc, i))]
    return []


def _under_marker(problem: Problem, marked: list[str]) -> bool:
    """A problem of a secure value's own place, or that quotes its marker: a consequence of
    the value refused there, which is reported already."""
    return REDACTED in problem.message or any(
        problem.path == m or problem.path.startswith((f"{m}.", f"{m}[")) for m in marked
    )


def _unknown_key_problems(source: ConfigSource, project: str) -> list[Problem]:
    """Unknown keys under the project's namespace, and keys under a misspelling of it."""
    problems: list[Problem] = []
    prefix = f"{project}:"
    for full_key in source.full_keys():
        namespace, _, key = full_key.rpartition(":")
        if full_key.startswith(prefix) and key not in KEYS:
            close = closest(key, KEYS)
            hint = f"did you mean {prefix}{close}?" if close else f"known: {', '.join(KEYS)}"
            problems.append(Problem(full_key, f"unknown config key; {hint}", UNKNOWN_KEY))
        elif namespace != project and closest(namespace, [project]):
            problems.append(
                Problem(
                    full_key,
                    f"unknown config namespace {namespace!r}; did you mean {prefix}{key}? "
                    f"(this project's keys are under {prefix})",
                    UNKNOWN_KEY,
                )
            )
    return problems


def _build_items_first() -> None:
    """Build the item models' schemas before the cluster's, which then reuses them: each is
    built once (the models build on first use, ``defer_build``)."""
    for model in (ToolSpec, AgentSpec, ModelSpec, PersonaSpec, HttpToolSpec, ClusterSpec):
        model.model_rebuild()


def _document_problems(
    document: dict[str, object], external: list[tuple[str, str]]
) -> tuple[CheckedCluster | None, list[Problem]]:
    _build_items_first()
    try:
        checked = check_cluster(document)
    except SpecError as exc:
        # a missing namespace is already reported as a config key
        missing = "namespace" not in document
        return None, [p for p in exc.problems if not (missing and p.path == "namespace")]
    # A tool outside the stack's namespaces is known only from another stack (toolsFrom).
    return checked, external_reference_problems(checked.spec, external)


def _raw_values(source: ConfigSource, prefix: str, keys: list[str]) -> dict[str, object]:
    """The values of ``keys`` as the engine passed them, without the SDK's secret warning."""
    values: dict[str, object] = {}
    for key in keys:
        text = source.get(prefix + key)
        if key in ("namespace", "partOf"):
            values[key] = text
            continue
        if text is None:
            continue
        try:
            values[key] = _json.read(text)
        except ValueError:
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
