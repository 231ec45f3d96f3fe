"""Helpers for users' own tests: Pulumi mocks, a NetworkPolicy reachability evaluator and
secret canaries.

- ``langop_infra.testing.Mocks`` (``langop_infra.testing.mocks``): ``pulumi.runtime.Mocks``
  that answer as the kubernetes provider and schema sync would (docs/testing.md).
- ``langop_infra.testing.reachability``: may pod A reach pod B on port P, given the
  NetworkPolicies a render produced.
- ``langop_infra.testing.secrets``: the values a program registered as secrets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["Mocks"]

if TYPE_CHECKING:
    from langop_infra.testing.mocks import Mocks


def __getattr__(name: str) -> Any:
    # Imported on use: reachability alone needs neither pulumi nor the components.
    if name == "Mocks":
        from langop_infra.testing.mocks import Mocks

        return Mocks
    raise AttributeError(f"module 'langop_infra.testing' has no attribute {name!r}")
