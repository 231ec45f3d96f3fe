"""Which container images a cluster document runs by a tag rather than a digest.

A tag (``:main-stable``, ``:1.4.0``) names whatever the registry serves under it today; a
digest (``@sha256:…``) names one image for good. Every image a document runs is checked:
tools, agents, an agent's workspace init image, managed memories, and the model gateway's
(set or built in).
A warning by default; an error with ``defaults.requireImageDigests``."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from langop_infra.config._model import via_gateway
from langop_infra.config.cluster import ClusterSpec, gateway_defaults
from langop_infra.core.problems import Problem, join_path

# A digest as the OCI image spec writes it: algorithm, then its hex.
DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$|@sha512:[0-9a-f]{128}$")


def is_pinned(image: str) -> bool:
    """Whether ``image`` names one image by digest (a tag may come before it)."""
    return bool(DIGEST.search(image))


def cluster_images(
    cluster: ClusterSpec,
    path: str = "",
    tool_index: Sequence[int] | None = None,
    agent_index: Sequence[int] | None = None,
) -> Iterator[tuple[str, str]]:
    """``(field path, image)`` of every image the document runs; ``*_index``: each item's
    index in the document, when some were left out as invalid."""
    tools = tool_index if tool_index is not None else range(len(cluster.tools))
    agents = agent_index if agent_index is not None else range(len(cluster.agents))
    for i, tool in zip(tools, cluster.tools, strict=True):
        yield join_path(path, f"tools[{i}].image"), tool.image
    for i, agent in zip(agents, cluster.agents, strict=True):
        yield join_path(path, f"agents[{i}].image"), agent.image
        if agent.workspace is not None:
            yield join_path(path, f"agents[{i}].workspace.initImage"), agent.workspace.init_image
    for i, memory in enumerate(cluster.memories):
        if memory.type == "managed":
            yield join_path(path, f"memories[{i}].image"), memory.image
    gateway = gateway_defaults(cluster.defaults)
    if any(via_gateway(model, gateway) for model in cluster.models):
        yield join_path(path, "defaults.modelGateway.image"), gateway.image


def unpinned_images(
    cluster: ClusterSpec,
    path: str = "",
    tool_index: Sequence[int] | None = None,
    agent_index: Sequence[int] | None = None,
) -> list[Problem]:
    """One problem for each image given by tag only."""
    required = cluster.defaults.require_image_digests
    images = cluster_images(cluster, path, tool_index, agent_index)
    return [_unpinned(where, image, required) for where, image in images if not is_pinned(image)]


def workload_unpinned_images(workload: Any, path: str = "") -> list[Problem]:
    """The same for one standalone LanguageTool or LanguageAgent: its image, and an agent's
    workspace init image."""
    images = [(join_path(path, "image"), workload.image)]
    workspace = getattr(workload, "workspace", None)
    if workspace is not None:
        images.append((join_path(path, "workspace.initImage"), workspace.init_image))
    return [_unpinned(where, image, False) for where, image in images if not is_pinned(image)]


def _unpinned(where: str, image: str, required: bool) -> Problem:
    return Problem(
        where,
        f"image {image!r} has no digest, so what runs can change without a change here; "
        "pin it as <image>@sha256:<digest> (docker buildx imagetools inspect <image> "
        "shows it)"
        + (
            ""
            if required
            else ", or set defaults.requireImageDigests: true to refuse unpinned images"
        ),
        "langop_unpinned_image",
    )
