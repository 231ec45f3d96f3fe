"""Find the secret values in what a program registered, for canary tests in users' suites.

``secret_leaves(registration.inputs)`` lists ``(path, value)`` for every value the engine
holds as a secret; anything else is plain text in state and previews. With
``langop_infra.offline.mock_engine.run_program`` a test can assert that a canary appears
only there.
"""

from __future__ import annotations

from typing import Any

from langop_infra.offline.mock_engine import is_wrapped_secret


def secret_leaves(value: Any, path: str = "") -> list[tuple[str, Any]]:
    """``(path, plain value)`` of every secret scalar in engine inputs (for tests and audits)."""
    if is_wrapped_secret(value):
        return [(p, v) for p, v in _leaves(value["value"], path)]
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in secret_leaves(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [x for i, v in enumerate(value) for x in secret_leaves(v, f"{path}[{i}]")]
    return []


def _leaves(value: Any, path: str) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in _leaves(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [x for i, v in enumerate(value) for x in _leaves(v, f"{path}[{i}]")]
    return [(path, value)]
