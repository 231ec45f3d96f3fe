"""Helpers for users' own tests: Pulumi mocks, a NetworkPolicy reachability evaluator and
secret canaries.

- ``langop_infra.testing.Mocks`` (``langop_infra.testing._mocks``): ``pulumi.runtime.Mocks``
  that answer as the kubernetes provider and schema sync would (docs/testing.md).
- ``Network``, ``Pod``, ``IPAddress``, ``Verdict`` and ``may_reach``, re-exported from
  ``langop_infra.netpol`` (product code: the policy pack and ``graph`` use it too): may pod A
  reach pod B on port P, given the NetworkPolicies a render produced.
- ``langop_infra.testing.secrets``: the values a program registered as secrets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langop_infra.netpol import IPAddress, Network, Pod, Verdict, may_reach

__all__ = ["IPAddress", "Mocks", "Network", "Pod", "Verdict", "may_reach"]

if TYPE_CHECKING:
    from langop_infra.testing._mocks import Mocks


def __getattr__(name: str) -> Any:
    # Imported on use: the evaluator alone needs neither pulumi nor the components.
    if name == "Mocks":
        from langop_infra.testing._mocks import Mocks

        return Mocks
    raise AttributeError(f"module 'langop_infra.testing' has no attribute {name!r}")
