"""Labels and annotations as the user wrote them, read from a workload's spec (tool or agent)
with :func:`langop_infra.components.inputs.part`, so that Output values stay theirs."""

from __future__ import annotations

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
