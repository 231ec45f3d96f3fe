"""A tool reference's ``overrides``: how the agent's LLM is shown one of the tool's tools
(ToolHive's ``toolsOverride``), and the clashes that make a set of them unusable."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from pydantic import Field

from langop_infra.config._fields import Spec


class ToolOverride(Spec):
    """How the agent is shown one tool of a reference (ToolHive's ``toolsOverride``)."""

    name: Annotated[str, Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$")] | None = Field(
        default=None,
        description="The name the agent's LLM sees (letters, digits, _ and -, at most 64: "
        "what OpenAI and Anthropic accept); calls map back to the tool's own name.",
    )
    description: Annotated[str, Field(min_length=1, max_length=4096)] | None = Field(
        default=None, description="The description the LLM sees instead of the tool's."
    )


def override_clashes(allowed: list[str] | None, overrides: Mapping[str, ToolOverride]) -> str:
    """Why ``overrides`` cannot stand (two tools under one name, a renamed tool outside
    ``allowed``), or ``""``."""
    shown: dict[str, str] = {}
    for tool, override in overrides.items():
        new = override.name or tool
        if new in shown:
            return f"{tool!r} and {shown[new]!r} would both be offered as {new!r}; rename one"
        shown[new] = tool
    if allowed is not None:
        outside = sorted(set(overrides) - set(allowed))
        if outside:
            return f"{outside} are overridden but not in allowedTools; add them or drop them"
        for name in allowed:
            if name not in overrides and shown.get(name, name) != name:
                return f"{shown[name]!r} would be offered as {name!r}, which another tool is"
    return ""
