"""langop-infra: Pulumi components for MCP tool servers and the agents that use them.

``__all__`` is the public API (docs/python-api.md lists it, and a test keeps both equal);
other modules are the package's own, importable but without a promise.
"""

from __future__ import annotations

# First, before the imports a command makes: Ctrl-C in them is one line, exit 130.
from langop_infra import _interrupt

_interrupt.install_for_commands()

import importlib  # noqa: E402
from typing import TYPE_CHECKING, Any  # noqa: E402

__version__ = "0.1.0"

# Public name -> module. Imported on first use so that `langop-infra --help` and the MCP
# client do not pay for importing Pulumi.
_EXPORTS = {
    "LanguageTool": "langop_infra.components.tool",
    "HttpTool": "langop_infra.components._http_tool",
    "HttpToolSpec": "langop_infra.config._http_tool",
    "LanguageAgent": "langop_infra.components.agent",
    "LanguageCluster": "langop_infra.components.cluster",
    "LanguageModel": "langop_infra.components.model",
    "LanguageMemory": "langop_infra.components._memory",
    "LanguageMemoryArgs": "langop_infra.components.args",
    "MemorySpec": "langop_infra.config._memory",
    "LanguagePersona": "langop_infra.components.model",
    "LanguageToolArgs": "langop_infra.components.args",
    "LanguageAgentArgs": "langop_infra.components.agent_args",
    "LanguageModelArgs": "langop_infra.components.args",
    "LanguageClusterArgs": "langop_infra.components.args",
    "LangopError": "langop_infra._errors",
    "SpecError": "langop_infra.core.problems",
    "Problem": "langop_infra.core.problems",
    "ToolSpec": "langop_infra.config.tool",
    "AgentSpec": "langop_infra.config.agent",
    "ModelSpec": "langop_infra.config._model",
    "PersonaSpec": "langop_infra.config._model",
    "ClusterSpec": "langop_infra.config.cluster",
    "ToolTarget": "langop_infra.manifests._contract",
    "Network": "langop_infra.netpol",
    "may_reach": "langop_infra.netpol",
    "external_service": "langop_infra.components._in_cluster",
    "secret_leaves": "langop_infra.testing.secrets",
}

__all__ = [
    "AgentSpec",
    "ClusterSpec",
    "HttpTool",
    "HttpToolSpec",
    "LangopError",
    "LanguageAgent",
    "LanguageAgentArgs",
    "LanguageCluster",
    "LanguageClusterArgs",
    "LanguageMemory",
    "LanguageMemoryArgs",
    "LanguageModel",
    "LanguageModelArgs",
    "LanguagePersona",
    "LanguageTool",
    "LanguageToolArgs",
    "MemorySpec",
    "ModelSpec",
    "Network",
    "PersonaSpec",
    "Problem",
    "SpecError",
    "ToolSpec",
    "ToolTarget",
    "__version__",
    "external_service",
    "may_reach",
    "secret_leaves",
]

if TYPE_CHECKING:
    from langop_infra._errors import LangopError
    from langop_infra.components._http_tool import HttpTool
    from langop_infra.components._in_cluster import external_service
    from langop_infra.components._memory import LanguageMemory
    from langop_infra.components.agent import LanguageAgent
    from langop_infra.components.agent_args import LanguageAgentArgs
    from langop_infra.components.args import (
        LanguageClusterArgs,
        LanguageMemoryArgs,
        LanguageModelArgs,
        LanguageToolArgs,
    )
    from langop_infra.components.cluster import LanguageCluster
    from langop_infra.components.model import LanguageModel, LanguagePersona
    from langop_infra.components.tool import LanguageTool
    from langop_infra.config._http_tool import HttpToolSpec
    from langop_infra.config._memory import MemorySpec
    from langop_infra.config._model import ModelSpec, PersonaSpec
    from langop_infra.config.agent import AgentSpec
    from langop_infra.config.cluster import ClusterSpec
    from langop_infra.config.tool import ToolSpec
    from langop_infra.core.problems import Problem, SpecError
    from langop_infra.manifests._contract import ToolTarget
    from langop_infra.netpol import Network, may_reach
    from langop_infra.testing.secrets import secret_leaves


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'langop_infra' has no attribute {name!r}")
