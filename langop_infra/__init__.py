"""langop-infra: Pulumi components for MCP tool servers and the agents that use them."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Public name -> module. Imported on first use so that `langop-infra --help` and the MCP
# client do not pay for importing Pulumi.
_EXPORTS = {
    "LanguageTool": "langop_infra.components.tool",
    "HttpTool": "langop_infra.components.http_tool",
    "HttpToolSpec": "langop_infra.spec.http_tool",
    "LanguageAgent": "langop_infra.components.agent",
    "LanguageCluster": "langop_infra.components.cluster",
    "LanguageModel": "langop_infra.components.model",
    "LanguagePersona": "langop_infra.components.model",
    "SpecError": "langop_infra.core.errors",
    "Problem": "langop_infra.core.errors",
    "ToolSpec": "langop_infra.spec.tool",
    "AgentSpec": "langop_infra.spec.agent",
    "ClusterSpec": "langop_infra.spec.cluster",
    "ToolTarget": "langop_infra.build.contract",
}

__all__ = [
    "AgentSpec",
    "ClusterSpec",
    "HttpTool",
    "HttpToolSpec",
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
    from langop_infra.build.contract import ToolTarget
    from langop_infra.components.agent import LanguageAgent
    from langop_infra.components.cluster import LanguageCluster
    from langop_infra.components.http_tool import HttpTool
    from langop_infra.components.model import LanguageModel, LanguagePersona
    from langop_infra.components.tool import LanguageTool
    from langop_infra.core.errors import Problem, SpecError
    from langop_infra.spec.agent import AgentSpec
    from langop_infra.spec.cluster import ClusterSpec
    from langop_infra.spec.http_tool import HttpToolSpec
    from langop_infra.spec.tool import ToolSpec


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'langop_infra' has no attribute {name!r}")
