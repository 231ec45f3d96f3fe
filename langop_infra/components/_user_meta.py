"""Labels and annotations as the user wrote them, read from a workload's spec (tool or agent)
with :func:`langop_infra.components._inputs.part`, so that Output values stay theirs."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any


def workload_annotations(workload: Any) -> dict[str, str]:
    return dict(workload.annotations)


def service_labels(workload: Any) -> dict[str, str]:
    return dict(workload.service.labels) if workload.service else {}


def service_annotations(workload: Any) -> dict[str, str] | None:
    return dict(workload.service.annotations) if workload.service else None


def account_annotations(workload: Any, spec_part: Callable[[Callable[[Any], Any]], Any]) -> Any:
    """The ServiceAccount's annotations through ``spec_part``; None without an account."""
    if workload.service_account is None:
        return None
    return spec_part(lambda w: dict(w.service_account.annotations) if w.service_account else {})


# A camelCase field name in a message (`schemaSyncFrom`, `schemaSync.access`); words of
# other kinds (URLs, env var names, prose) have no lower-to-upper step inside a word, and
# quoted names ('getWeather', a server's tool) are the user's own, kept as they are.
_CAMEL = re.compile(
    r"(?<![\w/.:'\"-])((?:[a-z][a-z0-9]*\.)*[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+)(?![\w/-])"
)


def pythonic(message: str) -> str:
    """A component's advice in the names a Python program uses: its keyword arguments are
    snake_case (``defaults.schema_sync_from``, not ``defaults.schemaSyncFrom``)."""
    return _CAMEL.sub(lambda m: _snake(m.group(1)), message)


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "_" + m.group(1).lower(), name)
