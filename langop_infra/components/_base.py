"""The base of the components: one way to build a component from a plan that
LanguageCluster has validated already (no second validation pass)."""

from __future__ import annotations

from typing import Any

import pulumi
from typing_extensions import Self


class PlannedComponent(pulumi.ComponentResource):
    """A component whose ``__init__`` validates its input into a plan and calls ``_build``;
    :meth:`_from_plan` skips the validation for a plan made elsewhere."""

    @classmethod
    def _from_plan(cls, name: str, plan: object, opts: pulumi.ResourceOptions | None) -> Self:
        """A component of a plan LanguageCluster has validated: ``__init__`` is skipped."""
        self = cls.__new__(cls)
        self._build(name, plan, opts)
        return self

    def _build(
        self, name: str, plan: Any, opts: pulumi.ResourceOptions | None, resolved: Any = None
    ) -> None:
        """Register the component and its children; ``resolved`` is what ``__init__`` made of
        Outputs in its input (None: the plan holds everything)."""
        raise NotImplementedError
