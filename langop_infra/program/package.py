"""The components as a Pulumi package, for TypeScript, Go, C#, Java and YAML programs.

``provider/`` holds the plugin (``PulumiPlugin.yaml`` and its ``__main__.py``, which calls
:func:`serve`); ``pulumi package add <path or repo>/provider`` then generates an SDK from the
schema Pulumi's analyzer infers from the ``<Component>Args`` TypedDicts and the components'
``Output`` attributes.
"""

import pulumi
from pulumi.provider.experimental import component_provider_host

from langop_infra.components._http_tool import HttpTool
from langop_infra.components._k8s import PACKAGE
from langop_infra.components._memory import LanguageMemory
from langop_infra.components.agent import LanguageAgent
from langop_infra.components.cluster import LanguageCluster
from langop_infra.components.model import LanguageModel
from langop_infra.components.tool import LanguageTool

COMPONENTS: list[type[pulumi.ComponentResource]] = [
    LanguageTool,
    LanguageAgent,
    LanguageModel,
    HttpTool,
    LanguageMemory,
    LanguageCluster,
]


def serve() -> None:
    """Serve the components to the Pulumi engine (the plugin's entry point)."""
    from importlib.metadata import version

    component_provider_host(COMPONENTS, name=PACKAGE, version=version("langop-infra"))
