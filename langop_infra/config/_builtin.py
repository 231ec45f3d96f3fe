"""``agents[].runtime``: ``image`` runs the agent image given; ``builtin`` runs the package's
own agent (images/agent/Dockerfile, ``python -m langop_infra.agent serve``; docs/runtime.md),
whose image and command are filled in unless given."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, cast

from pydantic import Field, model_validator
from typing_extensions import Self

from langop_infra.config._fields import Image, Int, Spec, invalid

__all__ = [
    "BUILTIN_AGENT_COMMAND",
    "BUILTIN_AGENT_IMAGE",
    "BuiltinRuntime",
    "RuntimeKind",
    "builtin_defaults",
    "image_field",
    "max_iterations_field",
    "require_image",
    "runtime_field",
]

BUILTIN_AGENT_IMAGE = "ghcr.io/langop/langop-agent:0.1.0"
BUILTIN_AGENT_COMMAND = ("python", "-m", "langop_infra.agent", "serve")
BUILTIN_HEALTH_PORT = 9090  # the runtime's A2A_HEALTH_PORT default (agent/_settings.py)
RuntimeKind = Literal["image", "builtin"]


def runtime_field() -> Any:
    return Field(
        default="image",
        description="image: run the agent image given; builtin: the package's own agent "
        f"(image {BUILTIN_AGENT_IMAGE} unless image is given; command "
        f"{' '.join(BUILTIN_AGENT_COMMAND)} unless command is given).",
    )


def max_iterations_field() -> Any:
    return Field(
        default=None,
        ge=1,
        le=1000,
        description="The built-in runtime's bound on model calls per turn (config.yaml "
        "agent.maxIterations; unset: 10).",
    )


def image_field() -> Any:
    return Field(
        default="",
        description="Container image, e.g. ghcr.io/org/agent:1.2.3 (required unless runtime "
        "is builtin).",
    )


def builtin_defaults(data: Any) -> Any:
    """``runtime: builtin`` fills in the built-in agent's image and command."""
    if not isinstance(data, Mapping):
        return cast("object", data)
    fields = dict(cast("Mapping[str, Any]", data))
    if fields.get("runtime") != "builtin":
        return fields
    fields.setdefault("image", BUILTIN_AGENT_IMAGE)
    if fields.get("command") is None and fields.get("args") is None:
        fields["command"] = list(BUILTIN_AGENT_COMMAND)
    if fields.get("probes") is None and fields.get("schedule") is None:
        fields["probes"] = builtin_probes()  # a scheduled run serves nothing to probe
    return fields


def builtin_probes() -> dict[str, object]:
    """Readiness (``/readyz``: every required tool connected) and liveness (``/healthz``)
    on the runtime's health port, which no caller's traffic shares."""
    port = BUILTIN_HEALTH_PORT
    return {
        "readiness": {"httpGet": {"path": "/readyz", "port": port}, "periodSeconds": 10},
        "liveness": {
            "httpGet": {"path": "/healthz", "port": port},
            "periodSeconds": 20,
            "failureThreshold": 3,
        },
    }


def require_image(image: str) -> None:
    if not image:
        raise invalid(
            "agent_image",
            "an agent needs an image: give image, or runtime: builtin for the package's own agent",
        )


class BuiltinRuntime(Spec):
    """An agent's ``runtime``, ``maxIterations`` and ``image`` (required unless builtin)."""

    runtime: RuntimeKind = runtime_field()
    max_iterations: Int | None = max_iterations_field()
    image: Image = image_field()

    @model_validator(mode="before")
    @classmethod
    def _builtin_runtime(cls, data: object) -> Any:
        return builtin_defaults(data)

    @model_validator(mode="after")
    def _needs_image(self) -> Self:
        require_image(self.image)
        return self
