"""Pulumi ESC environments a stack imports (``environment:`` in ``Pulumi.<stack>.yaml``).

Offline commands cannot open an environment (that needs Pulumi Cloud and its credentials),
so a stack that imports one gets one warning saying so. The user can hand the values over:
``pulumi env open <org>/<env> --format json > env.json``, then
``--environment-values env.json``. Its ``pulumiConfig`` is merged as ``pulumi up`` merges
it: keys without a ``<namespace>:`` prefix belong to the project, and a key the stack file
sets itself wins over the environment's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import langop_infra._json as _json
from langop_infra.core.problems import Problem, SpecError


def imported_environments(data: Mapping[str, object]) -> list[str]:
    """The environments a stack file imports: ``environment: [a, b]`` or
    ``environment: {imports: [a, b]}``."""
    given: object = data.get("environment")
    if isinstance(given, Mapping):
        given = cast("Mapping[str, Any]", given).get("imports")
    if isinstance(given, str):
        return [given]
    if isinstance(given, list):
        return [str(item) for item in cast("list[Any]", given)]
    return []


def unread_warning(stack: str, environments: Sequence[str]) -> str:
    """The one warning for a stack whose environments were not given."""
    names = ", ".join(environments)
    first = environments[0] if environments else "<env>"
    return (
        f"stack {stack!r} imports the ESC environment(s) {names}: offline commands cannot "
        "read ESC, so config they supply is missing here (a 'required' error below may be "
        f"one of them); pass their values with --environment-values FILE, FILE being the "
        f"output of `pulumi env open {first} --format json` (it holds secrets in clear: keep "
        "it out of the repository)"
    )


def environment_config(files: Sequence[Path], project: str) -> dict[str, str]:
    """The ``pulumiConfig`` of ``pulumi env open --format json`` outputs, as the CLI hands
    config to a program (full keys; structured values as JSON); a later file wins."""
    config: dict[str, str] = {}
    for path in files:
        values = _pulumi_config(path)
        for key, value in values.items():
            full_key = key if ":" in key else f"{project}:{key}"
            text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
            config[full_key] = text
    return config


def _pulumi_config(path: Path) -> dict[str, object]:
    where = f"--environment-values {path}"
    try:
        document: object = _json.read(Path(path).read_bytes())
    except OSError as exc:
        raise SpecError([Problem(where, f"cannot read it: {exc.strerror}")]) from None
    except json.JSONDecodeError as exc:
        problem = Problem(
            where,
            f"not JSON ({exc.msg}, line {exc.lineno}); write it with "
            "`pulumi env open <env> --format json`",
        )
        raise SpecError([problem]) from None
    except ValueError as exc:  # over the reader's limits, or not UTF-8
        raise SpecError([Problem(where, f"cannot be read as JSON: {exc}")]) from None
    if not isinstance(document, Mapping):
        raise SpecError([Problem(where, "expected the JSON object `pulumi env open` prints")])
    values: object = cast("Mapping[str, Any]", document).get("pulumiConfig") or {}
    if not isinstance(values, Mapping):
        raise SpecError([Problem(f"{where}: pulumiConfig", "expected a mapping of config keys")])
    return {str(k): v for k, v in cast("Mapping[Any, Any]", values).items()}
