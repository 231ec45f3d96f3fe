"""Find the secret values in what a program registered, for canary tests in users' suites.

``secret_leaves(registration.inputs)`` lists ``(path, value)`` for every value the engine
holds as a secret; anything else is plain text in state and previews. With
``langop_infra.offline._mock_engine.run_program`` a test can assert that a canary appears
only there.
"""

from __future__ import annotations

from typing import Any

from langop_infra.offline._engine_values import visit


def secret_leaves(value: object, path: str = "") -> list[tuple[str, Any]]:
    """``(path, plain value)`` of every secret scalar in engine inputs (for tests and audits)."""
    found: list[tuple[str, object]] = []

    def secret(inner: object, where: str) -> Any:
        visit(inner, leaf=lambda scalar, at: found.append((at, scalar)), path=where)
        return inner

    visit(value, secret=secret, path=path)
    return found
