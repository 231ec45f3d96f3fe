"""HttpTool (STOA's ``Tool``): an HTTP tool of a namespace that agents reference.

An HttpTool carries what an agent needs to call it (:class:`HttpToolFields`, shared with inline
``webhookTools``) plus STOA's catalogue fields. An agent's ``httpTools: [{name,
namespace}]`` resolves to the tool, which then reaches the agent exactly as an inline webhook
tool does (:func:`resolved_webhook_tools`): same config.yaml entry, same ``secretKeyRef`` env
var, same egress check, same executor.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Annotated, Any, cast

from pydantic import BeforeValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from langop_infra.config._fields import (
    AnnotationMap,
    ConcreteHttpUrl,
    DnsLabel,
    LabelMap,
    SecretKeyRef,
    Spec,
    invalid,
)
from langop_infra.config._input_schema import json_schema_input
from langop_infra.config.agent import AgentSpec, HttpToolFields, WebhookToolSpec

__all__ = [
    "ApiRef",
    "HttpToolSpec",
    "http_tool_secret_refs",
    "resolved_webhook_tools",
    "with_http_tools",
]


class ApiRef(Spec):
    """The API the tool comes from (STOA's ``apiRef``)."""

    name: Annotated[str, Field(min_length=1, max_length=253)] = Field(
        description="The source API's name."
    )
    version: str | None = Field(default=None, description="The API's version, e.g. v2.")
    operation_id: str | None = Field(default=None, description="The OpenAPI operationId.")


MANIFEST_KEYS = frozenset({"apiVersion", "kind", "metadata", "spec", "status"})
METADATA_KEYS = ("name", "namespace", "labels", "annotations")


def flatten_manifest(value: object) -> Any:
    """STOA's Tool manifest as written (``apiVersion``, ``kind``, ``metadata``, ``spec``,
    and ``status``, which is what STOA observed and is dropped) as the flattened entry."""
    if not isinstance(value, dict):
        return value
    document = cast("dict[str, Any]", value)
    if not ({"metadata", "spec"} & set(document)):
        return document
    extra = sorted(set(document) - MANIFEST_KEYS)
    if extra:
        raise invalid(
            "http_tool_manifest",
            f"a Tool manifest has apiVersion, kind, metadata, spec and status; {extra} are "
            "not among them: move them under spec, or write the entry flattened",
        )
    api = str(document.get("apiVersion", "gostoa.dev/v1alpha1"))
    if api.partition("/")[0] != "gostoa.dev" or document.get("kind", "Tool") != "Tool":
        raise invalid(
            "http_tool_manifest",
            f"{api} {document.get('kind')} is not STOA's Tool (gostoa.dev/v1alpha1 Tool); "
            "convert other manifests with `langop-infra import`",
        )
    metadata: dict[str, object] = document.get("metadata") or {}
    spec: dict[str, object] = document.get("spec") or {}
    return {**{k: metadata[k] for k in METADATA_KEYS if k in metadata}, **spec}


def flattened_entries(items: object) -> Any:
    """``httpTools`` entries with the manifest ones flattened (a bad manifest is left as
    written: validating it reports why)."""
    if not isinstance(items, list):
        return items
    found: list[object] = []
    for item in cast("list[Any]", items):
        try:
            found.append(flatten_manifest(item))
        except PydanticCustomError:
            found.append(item)
    return found


class HttpToolSpec(HttpToolFields):
    """An HTTP tool of a namespace (STOA's Tool): flattened, or the manifest itself."""

    @model_validator(mode="before")
    @classmethod
    def _manifest_form(cls, value: object) -> object:
        return flatten_manifest(value)

    name: DnsLabel = Field(description="Unique in its namespace; the tool's name for the LLM.")
    namespace: DnsLabel | None = Field(default=None, description="Unset: the stack's namespace.")
    labels: LabelMap = Field(default={}, description="Extra labels on the tool's ConfigMap.")
    annotations: AnnotationMap = Field(
        default={}, description="Annotations on the tool's ConfigMap."
    )
    display_name: Annotated[str, Field(min_length=1, max_length=64)] = Field(
        description="Human-readable name (1-64 characters)."
    )
    description: Annotated[str, Field(min_length=1, max_length=1024)] = Field(
        description="What the tool does, for the LLM (1-1024 characters)."
    )
    endpoint: ConcreteHttpUrl | None = Field(
        default=None, description="The http(s) URL agents call; unset: phase Pending, not callable."
    )
    input_schema: Annotated[dict[str, Any], BeforeValidator(json_schema_input)] = Field(
        default={}, description="JSON Schema draft-07 the arguments are checked against."
    )
    tags: list[Annotated[str, Field(min_length=1, max_length=63)]] = Field(
        default=[], description="Categorisation tags."
    )
    version: Annotated[str, Field(min_length=1, max_length=64)] = Field(
        default="1.0.0", description="The tool's version."
    )
    api_ref: ApiRef | None = Field(
        default=None, description="The source API: {name, version, operationId}."
    )
    probe: bool = Field(
        default=False,
        description="At deploy, send one request to the endpoint (no arguments, no credential) "
        "and set phase Error when it cannot be reached.",
    )


def as_webhook_tool(tool: HttpToolSpec) -> WebhookToolSpec:
    """The tool as an agent calls it: the same fields an inline webhook tool has."""
    shared = {name: getattr(tool, name) for name in HttpToolFields.model_fields}
    return WebhookToolSpec.model_construct(name=tool.name, url=tool.endpoint, **shared)


def resolved_webhook_tools(
    http_tools: Sequence[HttpToolSpec], agent: AgentSpec, namespace: str
) -> list[WebhookToolSpec]:
    """The enabled HttpTools ``agent`` references (its namespace is ``namespace``), as
    webhook tools; a disabled or endpoint-less tool is left out."""
    by_key = {(t.namespace or namespace, t.name): t for t in http_tools}
    found: list[WebhookToolSpec] = []
    own = agent.namespace or namespace
    for ref in agent.http_tools:
        tool = by_key.get((ref.namespace or own, ref.name))
        if tool is not None and tool.enabled and tool.endpoint is not None:
            found.append(as_webhook_tool(tool))
    return found


def with_http_tools(
    http_tools: Sequence[HttpToolSpec], agent: AgentSpec, namespace: str
) -> AgentSpec:
    """``agent`` with the HttpTools it references added to its ``webhookTools``."""
    resolved = resolved_webhook_tools(http_tools, agent, namespace)
    if not resolved:
        return agent
    return agent.model_copy(update={"webhook_tools": [*agent.webhook_tools, *resolved]})


def http_tool_secret_refs(
    http_tools: Sequence[HttpToolSpec], index: Sequence[int]
) -> Iterator[tuple[str, SecretKeyRef]]:
    """Each HttpTool's credential reference, with its path."""
    for i, tool in zip(index, http_tools, strict=True):
        if tool.authentication.secret_ref is not None:
            yield f"httpTools[{i}].authentication.secretRef", tool.authentication.secret_ref
