"""HttpTool: an HTTP tool of a namespace (STOA's ``Tool``) that agents reference.

Its Kubernetes object is ConfigMap ``<name>.http-tool`` holding the tool's document
(``tool.json``), labelled ``langop.io/http-tool``: the namespace's catalogue of HTTP tools.
Agents that list it under ``httpTools`` get it in their config.yaml ``webhookTools`` and its
credential as a ``secretKeyRef`` env var, exactly as an inline webhook tool.

Outputs follow STOA's Tool status: ``phase`` (Pending: no endpoint yet; Registered: callable;
Error: the deploy-time probe could not reach the endpoint; Disabled: ``enabled: false``),
``last_error``, ``registered_at`` (when the ConfigMap was created) and ``last_synced_at``
(this deploy). The probe and the time stamp happen in ``pulumi up`` only, never in a preview
or offline. Invocation and error counts live in each agent's registry.
"""

import dataclasses
import datetime
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_kubernetes as k8s
from typing_extensions import Unpack

from langop_infra.components import (
    _http_credentials as credentials,
    _inputs as inputs,
    _namespace as namespaces,
)
from langop_infra.components._k8s import (
    Meta,
    aliased,
    child_options,
    component_error,
    merged_meta,
    object_meta,
    type_token,
)
from langop_infra.components.args import HttpToolArgs, HttpToolRefArgs
from langop_infra.config._http_tool import HttpToolSpec, as_webhook_tool
from langop_infra.config._names import http_tool_config_map_name
from langop_infra.config.checks._validation import parse_http_tool
from langop_infra.core import _pacing as pacing
from langop_infra.core._construction import construction_site
from langop_infra.manifests import _contract as contract

HTTP_TOOL_LABEL = "langop.io/http-tool"
PART_OF = "app.kubernetes.io/part-of"
PROBE_TIMEOUT_SECONDS = 5.0


@dataclasses.dataclass(frozen=True)
class HttpToolPlan:
    """A validated HttpTool in its namespace."""

    spec: HttpToolSpec
    # Outputs of them when the namespace is one (see components/_namespace.py).
    namespace: str | pulumi.Output[str]
    part_of: str | pulumi.Output[str]
    # The ConfigMap's document, labels and annotations (:func:`_built`): an inputs.Pending
    # while a field is an Output.
    document: Any = None
    credential: credentials.Credential = dataclasses.field(default_factory=credentials.Credential)
    # What agents are handed when a field is an Output (see _http_credentials).
    webhook_entry: dict[str, Any] | None = None
    # False when the endpoint is an Output: the deploy-time probe has no URL to try.
    endpoint_known: bool = True


def tool_document(spec: HttpToolSpec) -> dict[str, Any]:
    """What the ConfigMap holds: the document agents get, plus the catalogue fields. The
    catalogue keeps ``inputSchema`` an object, as STOA's Tool has it; agents get it as
    the JSON string ark's runtime reads."""
    doc = contract.webhook_tool_document(as_webhook_tool(spec))
    doc["inputSchema"] = dict(spec.input_schema)
    if spec.endpoint is None:
        doc.pop("url")
    doc = {"name": spec.name, "displayName": spec.display_name, **doc}
    doc["version"] = spec.version
    doc["enabled"] = spec.enabled
    if spec.tags:
        doc["tags"] = list(spec.tags)
    if spec.api_ref is not None:
        doc["apiRef"] = spec.api_ref.model_dump(by_alias=True, exclude_none=True)
    return doc


def plan_http_tool(name: str, args: Any, fields: Mapping[str, Any]) -> HttpToolPlan:
    data = dict(args or {}) if not isinstance(args, HttpToolSpec) else args.model_dump()
    data.update(fields)
    data.setdefault("name", name)
    part_of = data.pop("part_of", None)
    late = data.pop("namespace") if isinstance(data.get("namespace"), pulumi.Output) else None
    subject = f"HttpTool {data.get('name')!r}"
    data, credential = credentials.taken(data, subject)
    with component_error(subject):
        spec, document = inputs.resolve(data, parse_http_tool, _built, _structure, subject)
    namespace: str | pulumi.Output[str] = spec.namespace or contract.DEFAULT_NAMESPACE
    if late is not None:
        namespace = namespaces.checked_name(late, subject, construction_site())
    entry = credentials.webhook_entry(spec, data)
    known = not isinstance(data.get("endpoint"), pulumi.Output)
    return HttpToolPlan(spec, namespace, part_of or namespace, document, credential, entry, known)


def _structure(spec: HttpToolSpec) -> tuple[object, ...]:
    """What decides the tool's phase and whether agents are given it."""
    return (spec.name, spec.enabled, spec.endpoint is None, spec.probe)


def _built(spec: HttpToolSpec) -> tuple[dict[str, Any], dict[str, str], dict[str, str]]:
    """What the tool's objects are made of: its document, labels and annotations."""
    return tool_document(spec), dict(spec.labels), dict(spec.annotations)


def _metadata(spec: HttpToolSpec, part_of: Any, built: Any) -> tuple[Meta, Meta]:
    """The objects' labels and annotations, the user's (Outputs where given) last."""
    labels: dict[str, Any] = {
        **contract.recommended_labels(spec.name, "http-tool", ""),
        HTTP_TOOL_LABEL: spec.name,
        PART_OF: part_of,  # the namespace's, an Output with it, unless the user sets it
    }
    user = inputs.part(built, lambda b: b[1])
    return merged_meta(labels, user), inputs.part(built, lambda b: b[2])


def _tool_json(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False)


def probe(url: str, timeout: float = PROBE_TIMEOUT_SECONDS) -> str:
    """ "" when ``url`` answers (any HTTP status: the host serves), else why not. OPTIONS
    carries no arguments and no credential, so it cannot act on anything."""
    import httpx  # only when probing: a render imports no HTTP client

    try:
        httpx.request("OPTIONS", url, timeout=timeout, follow_redirects=False)
    except httpx.HTTPError as exc:
        return f"probe OPTIONS {url}: {type(exc).__name__}: {exc or 'no answer'}"
    return ""


def phase_of(spec: HttpToolSpec, probe_error: str) -> str:
    if not spec.enabled:
        return "Disabled"
    if spec.endpoint is None:
        return "Pending"
    return "Error" if probe_error else "Registered"


_CONDITION = {
    "Registered": ("True", "agents given this tool can call it"),
    "Pending": ("False", "no endpoint yet: agents are not given the tool"),
    "Disabled": ("False", "enabled is false: agents are not given the tool"),
}


def conditions_of(phase: str, error: str, at: str) -> list[dict[str, str]]:
    """The phase as one Kubernetes condition (``metav1.Condition``'s fields): type Ready,
    status True only when Registered, reason the phase, the message why."""
    status, message = _CONDITION.get(phase, ("False", error))
    return [
        {
            "type": "Ready",
            "status": status,
            "reason": phase,
            "message": message,
            "lastTransitionTime": at,
        }
    ]


class HttpTool(pulumi.ComponentResource):
    """An HTTP tool agents of any namespace reference by ``httpTools: [{name, namespace}]``."""

    phase: pulumi.Output[str]
    """Pending, Registered, Error or Disabled (STOA's meanings)."""
    last_error: pulumi.Output[str]
    """Why the phase is Error; empty otherwise."""
    registered_at: pulumi.Output[str]
    """When the tool's ConfigMap was created (RFC 3339); empty in a preview."""
    last_synced_at: pulumi.Output[str]
    """When this deploy wrote the tool (RFC 3339); empty in a preview."""
    conditions: pulumi.Output[list[dict[str, str]]]
    """The phase in Kubernetes form: ``[{type: Ready, status, reason, message,
    lastTransitionTime}]``."""

    def __init__(
        self,
        name: str,
        args: HttpToolArgs = None,  # type: ignore[assignment]  # also an HttpToolSpec
        opts: pulumi.ResourceOptions | None = None,
        **kwargs: Unpack[HttpToolArgs],
    ) -> None:
        self._build(name, plan_http_tool(name, args, kwargs), opts)

    @classmethod
    def _from_plan(
        cls, name: str, plan: HttpToolPlan, opts: pulumi.ResourceOptions | None
    ) -> "HttpTool":
        """An HttpTool LanguageCluster has validated already."""
        self = cls.__new__(cls)
        self._build(name, plan, opts)
        return self

    def _build(self, name: str, plan: HttpToolPlan, opts: pulumi.ResourceOptions | None) -> None:
        spec = plan.spec
        document = plan.document if plan.document is not None else _built(spec)
        place = namespaces.placement(name, plan.namespace)
        namespaces.registered(self, "HttpTool", place, spec.name, construction_site())
        super().__init__(type_token("HttpTool"), name, None, aliased(opts, "HttpTool"))
        self.spec, self.namespace_name = spec, plan.namespace
        self.webhook_entry = plan.webhook_entry
        # Its credential in a Secret of its own: agents of its namespace only can read it.
        self.credential_owned = plan.credential.value is not None
        labels, annotations = _metadata(spec, plan.part_of, document)
        self.config_map = k8s.core.v1.ConfigMap(
            f"{name}-http-tool",
            metadata=object_meta(
                http_tool_config_map_name(spec.name), plan.namespace, labels, annotations
            ),
            data={"tool.json": inputs.part(document, lambda built: _tool_json(built[0]))},
            opts=child_options(self, opts),
        )
        self.read_secrets = credentials.tool_secret(
            name,
            spec,
            plan.credential,
            object_meta(credentials.credential_secret_name(spec.name), plan.namespace, labels),
            child_options(self, opts),
        )
        # Only a real deploy probes and stamps the time: a preview or an offline render
        # (validate, outputs) stays free of network calls and byte-for-byte repeatable.
        deploying = not pulumi.runtime.is_dry_run() and not pacing.in_process_engine()
        probed = deploying and spec.probe and spec.endpoint and plan.endpoint_known
        error = probe(spec.endpoint) if probed and spec.endpoint else ""
        self.phase = pulumi.Output.from_input(phase_of(spec, error))
        self.last_error = pulumi.Output.from_input(error)
        self.registered_at = self.config_map.metadata.apply(
            lambda meta: getattr(meta, "creation_timestamp", None) or ""
        )
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.last_synced_at = pulumi.Output.from_input(now if deploying else "")
        self.conditions = pulumi.Output.from_input(
            conditions_of(phase_of(spec, error), error, now if deploying else "")
        )
        self.register_outputs(
            {
                "conditions": self.conditions,
                "phase": self.phase,
                "last_error": self.last_error,
                "registered_at": self.registered_at,
                "last_synced_at": self.last_synced_at,
            }
        )


if TYPE_CHECKING:
    # An HttpTool, or a reference to one.
    HttpToolEntry = HttpToolRefArgs | HttpTool
else:  # what Pulumi's analyzer reads: no Union in a package schema
    HttpToolEntry = HttpToolRefArgs
