"""Field lists derived from the specs' ``model_fields`` and their camelCase aliases, so that
no list of names is written twice."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel

from langop_infra.config.agent import AgentSpec
from langop_infra.config.tool import ToolSpec

# Fields that decide which objects a component registers or what they are called: they must
# be known when the program runs (never a pulumi.Output).
STRUCTURAL_FIELDS = (
    *("name", "namespace", "deployment_mode", "tools", "persistence"),
    # A2A, peers, memory and schedule decide the card, the policies and Deployment vs CronJob.
    *("a2a", "agents", "memory", "schedule"),
)
# Structural fields a component nevertheless takes as an Output: it builds its objects from
# the value as it resolves (components/_namespace.py).
LATE_FIELDS = ("namespace",)


def camel_names(model: type[BaseModel], names: Iterable[str]) -> dict[str, str]:
    """``{snake_name: camelName}`` for ``names``, as a stack file spells them."""
    return {name: model.model_fields[name].alias or name for name in names}


def structural_keys() -> frozenset[str]:
    """The structural fields of tools and agents, in both spellings."""
    keys: set[str] = set()
    for model in (ToolSpec, AgentSpec):
        present = [n for n in STRUCTURAL_FIELDS if n in model.model_fields]
        keys.update(n for pair in camel_names(model, present).items() for n in pair)
    return frozenset(keys)
