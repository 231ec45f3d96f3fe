"""langop-infra: Pulumi components for MCP tool servers and the agents that use them."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Public name -> module. Imported on first use so that `langop-infra --help` and the MCP
# client do not pay for importing Pulumi.
_EXPORTS = {
    "LanguageTool": "langop_infra.tool",
    "LanguageAgent": "langop_infra.agent",
    "LanguageCluster": "langop_infra.cluster",
    "LanguageModel": "langop_infra.model",
    "LanguagePersona": "langop_infra.model",
    "SpecError": "langop_infra.errors",
    "Problem": "langop_infra.errors",
    "ToolSpec": "langop_infra.specs",
    "AgentSpec": "langop_infra.specs",
    "ClusterSpec": "langop_infra.specs",
    "ToolTarget": "langop_infra.contract",
}

__all__ = [
    "AgentSpec",
    "ClusterSpec",
    "LanguageAgent",
    "LanguageCluster",
    "LanguageModel",
    "LanguagePersona",
    "LanguageTool",
    "Problem",
    "SpecError",
    "ToolSpec",
    "ToolTarget",
    "__version__",
]

if TYPE_CHECKING:
    from langop_infra.agent import LanguageAgent
    from langop_infra.cluster import LanguageCluster
    from langop_infra.contract import ToolTarget
    from langop_infra.errors import Problem, SpecError
    from langop_infra.model import LanguageModel, LanguagePersona
    from langop_infra.specs import AgentSpec, ClusterSpec, ToolSpec
    from langop_infra.tool import LanguageTool


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'langop_infra' has no attribute {name!r}")
