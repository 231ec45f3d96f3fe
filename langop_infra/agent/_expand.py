"""``${VAR}`` and ``${VAR:-default}`` expansion, as the agent runtime does it: in headers,
``args`` and ``env`` from the agent's environment, and in a URL only from its entry's own
``env`` (a URL names no variable its config does not declare)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, cast
from urllib.parse import parse_qsl, urlsplit

from langop_infra._errors import LangopError
from langop_infra.config.checks._endpoint_advice import is_credential_param

VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_env(value: str, env: Mapping[str, str]) -> str:
    """``value`` with ``${VAR}`` and ``${VAR:-default}`` replaced from ``env``.

    As in a shell, the default stands in for a variable that is unset or empty;
    ``KeyError(VAR)`` for a variable without default that is unset.
    """

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if default is not None:
            return env.get(name) or default
        return env[name]

    return VARIABLE.sub(substitute, value)


def query_secrets(template: str, declared: Mapping[str, str]) -> list[str]:
    """The values ``template``'s credential-named query parameters take from ``declared``
    (a routed query credential): what a scrubber must know of the URL once expanded."""
    try:
        pairs = parse_qsl(urlsplit(template).query, keep_blank_values=True)
    except ValueError:
        return []
    found: list[str] = []
    for name, value in pairs:
        if is_credential_param(name):
            found += [
                declared[m.group(1)] for m in VARIABLE.finditer(value) if m.group(1) in declared
            ]
    return [value for value in found if value]


class ExpansionProblem(LangopError, ValueError):
    """An entry's ``env`` or URL names a variable that is not there; the message says where."""


def declared_env(
    where: str, fields: Mapping[str, object], env: Mapping[str, str]
) -> dict[str, str]:
    """The entry's own ``env``, expanded from the agent's: what a stdio child gets, and the
    only variables its URL may name."""
    given: object = fields.get("env") or {}
    if not isinstance(given, Mapping):
        raise ExpansionProblem(f"{where}.env: must be a mapping of names to values")
    declared: dict[str, str] = {}
    for key, value in cast("Mapping[object, object]", given).items():
        try:
            declared[str(key)] = expand_env(str(value), env)
        except KeyError as exc:
            raise ExpansionProblem(
                f"{where}.env.{key}: ${{{exc.args[0]}}} is not set in the environment"
            ) from None
    return declared


def entry_url(
    where: str, fields: Mapping[str, Any], env: Mapping[str, str], owner: str = "server"
) -> tuple[str, tuple[str, ...]]:
    """The entry's ``url`` with ``${VAR}`` taken from its own ``env`` only (that ``env``
    expanded from the agent's environment: a routed query credential reads its Secret so),
    and the query credentials that came from there. An entry without ``env`` keeps its URL
    as written (ark's contract)."""
    declared = declared_env(where, fields, env)
    template = str(fields.get("url") or "")
    if not declared:
        return template, ()
    try:
        url = expand_env(template, declared)
    except KeyError as exc:
        raise ExpansionProblem(
            f"{where}.url: ${{{exc.args[0]}}} is not declared in this {owner}'s env; a URL "
            f"expands only the variables its entry declares (env: {{{exc.args[0]}: ...}})"
        ) from None
    return url, tuple(query_secrets(template, declared))
