"""What an agent sees, as plain data: names, labels, endpoints, env vars and config.yaml.

Pure functions of the specs; nothing here knows Pulumi. Agent images written for the
language-operator (``MCP_SERVERS``, ``/etc/agent/config.yaml``) or for ark
(``AGENT_MCP_SERVERS``, ``ARK_MCP_<SERVER>_HEADER_<HEADER>``) read these unchanged.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langop_infra.config._fields import HeaderSpec, SecretSource
from langop_infra.config._names import (
    CONFIG_PATH,
    DEFAULT_MCP_PATH,
    header_env_name,
    tool_header_env_name,
    webhook_auth_env_name,
    workload_secret_name,
)
from langop_infra.config.agent import AgentSpec, WebhookToolSpec, agent_headers
from langop_infra.config.cluster import ExportedToolTarget
from langop_infra.config.tool import ToolSpec
from langop_infra.core import _yaml_io as yaml_io
from langop_infra.manifests._k8s_types import EnvVarDict
from langop_infra.manifests._query_secrets import (
    routed_query_env,
    server_url,
    url_variables,
    webhook_url,
)

MANAGED_BY = "langop-infra"
DEFAULT_NAMESPACE = "default"
TOOL_LABEL = "langop.io/tool"
AGENT_LABEL = "langop.io/agent"
ACCESS_LABEL_PREFIX = "access.langop.io/"
CONFIG_CHECKSUM_ANNOTATION = "langop.io/config-checksum"
SECRET_DIGEST_ANNOTATION = "langop.io/secret-digest"


@dataclass(frozen=True)
class ToolTarget:
    """Where an agent finds one tool: all an agent needs to know of a LanguageTool, as data.

    A sidecar tool also carries the container that joins the agent's pod, and whether that
    container reads its tool's own Secret ``<tool>-env``.
    """

    name: str
    namespace: str
    port: int = 8080
    mcp_path: str = DEFAULT_MCP_PATH
    deployment_mode: Literal["service", "sidecar"] = "service"
    required: bool = False
    sidecar_container: Any = field(default=None, compare=False, repr=False)
    owns_secret: bool = False
    # A sidecar's schema-sync inputs: each agent carrying it syncs it through its own pods.
    sync_inputs: Any = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, tool: ToolSpec, namespace: str, *, required: bool = False) -> ToolTarget:
        return cls(
            name=tool.name,
            namespace=tool.namespace or namespace,
            port=tool.port,
            mcp_path=tool.mcp_path,
            deployment_mode=tool.deployment_mode,
            required=required,
            owns_secret=any(not isinstance(v, SecretSource) for v in tool.secret_env.values()),
        )

    @classmethod
    def from_exported(cls, exported: ExportedToolTarget) -> ToolTarget:
        """A tool another stack exports (one entry of its ``toolTargets``)."""
        return cls(exported.name, exported.namespace, exported.port, exported.mcp_path)

    def exported(self) -> dict[str, object]:
        """This service tool as one entry of a stack's ``toolTargets`` output: the
        :class:`ExportedToolTarget` model, dumped by alias, the same that reads it back."""
        return ExportedToolTarget(
            name=self.name,
            namespace=self.namespace,
            port=self.port,
            mcp_path=self.mcp_path,
            deployment_mode="service",
        ).model_dump(by_alias=True)

    @property
    def endpoint(self) -> str:
        return tool_endpoint(self.name, self.namespace, self.port, self.deployment_mode)

    @property
    def mcp_url(self) -> str:
        return self.endpoint + self.mcp_path


def tool_endpoint(name: str, namespace: str, port: int, deployment_mode: str = "service") -> str:
    """``http://<name>.<namespace>.svc.cluster.local:<port>``; ``http://localhost:<port>`` for
    a sidecar."""
    if deployment_mode == "sidecar":
        return f"http://localhost:{port}"
    return f"http://{name}.{namespace}.svc.cluster.local:{port}"


# Kinds by component, for `app.kubernetes.io/name` when no image names the application.
COMPONENT_KINDS = {
    "tool": "language-tool",
    "agent": "language-agent",
    "cluster": "language-cluster",
    "gateway": "language-gateway",
    "http-tool": "http-tool",
}
_LABEL_VALUE = re.compile(r"[^A-Za-z0-9_.-]+")


def label_value(text: str) -> str:
    """``text`` as a label value: at most 63 of ``[A-Za-z0-9_.-]``, alphanumeric at both ends."""
    return _LABEL_VALUE.sub("-", text)[:63].strip("-_.")


def image_name_and_version(image: str | None) -> tuple[str, str]:
    """``ghcr.io/acme/memory-mcp:1.4.0@sha256:…`` -> ``("memory-mcp", "1.4.0")``; an image
    without a tag has no version (``""``)."""
    if not image:
        return "", ""
    reference = image.split("@", 1)[0]
    repository, _, tag = (
        reference.rpartition(":")
        if ":" in reference.rsplit("/", 1)[-1]
        else (
            reference,
            "",
            "",
        )
    )
    return label_value(repository.rsplit("/", 1)[-1]), label_value(tag)


def recommended_labels(
    name: str,
    component: Literal["tool", "agent", "cluster", "gateway", "http-tool"],
    part_of: str,
    image: str | None = None,
) -> dict[str, str]:
    """The Kubernetes recommended labels every object carries: ``name`` the application (the
    image's name, else the component's kind), ``instance`` this object, ``version`` the image
    tag when there is one, ``component``, ``part-of`` and ``managed-by``."""
    application, version = image_name_and_version(image)
    labels = {
        "app.kubernetes.io/name": application or COMPONENT_KINDS[component],
        "app.kubernetes.io/instance": name,
    }
    if version:
        labels["app.kubernetes.io/version"] = version
    return {
        **labels,
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/part-of": part_of,
        "app.kubernetes.io/managed-by": MANAGED_BY,
    }


def tool_selector(name: str) -> dict[str, str]:
    return {TOOL_LABEL: name}


def agent_selector(name: str) -> dict[str, str]:
    return {AGENT_LABEL: name}


def tool_labels(tool: ToolSpec, part_of: str, *, image_known: bool = True) -> dict[str, str]:
    """``image_known=False`` while the image is an Output not resolved yet: no image labels."""
    image = tool.image if image_known else None
    return {
        **tool.labels,
        **recommended_labels(tool.name, "tool", part_of, image),
        **tool_selector(tool.name),
    }


def access_label(tool_name: str) -> str:
    """The pod label that lets an agent through its same-namespace tool's ingress policy."""
    return ACCESS_LABEL_PREFIX + tool_name


def agent_labels(
    agent: AgentSpec,
    part_of: str,
    targets: Iterable[ToolTarget] = (),
    namespace: str = "",
    *,
    image_known: bool = True,
) -> dict[str, str]:
    """Labels of the agent's objects; its pods also get one access label per same-namespace
    service tool (see :func:`access_label`)."""
    image = agent.image if image_known else None
    labels = {
        **agent.labels,
        **recommended_labels(agent.name, "agent", part_of, image),
        **agent_selector(agent.name),
    }
    for target in targets:
        if target.deployment_mode == "service" and target.namespace == namespace:
            labels[access_label(target.name)] = "true"
    return labels


EndpointStyle = Literal["base", "path"]


def agent_endpoint(target: ToolTarget, style: EndpointStyle = "base") -> str:
    """The endpoint an agent is given: ``base`` (the LanguageTool contract) or ``path``, with
    the MCP path, as current upstream agents expect."""
    return target.mcp_url if style == "path" else target.endpoint


def mcp_servers_env(targets: Iterable[ToolTarget], style: EndpointStyle = "base") -> str:
    """``MCP_SERVERS``: comma-separated endpoints, in declaration order."""
    return ",".join(agent_endpoint(t, style) for t in targets)


def agent_mcp_servers(agent: AgentSpec) -> list[dict[str, Any]]:
    """``AGENT_MCP_SERVERS`` as data: ``[{"name", "url"}]`` (ark's contract), with ``env``
    declaring the URL's variables when it has any (a query credential is one: see
    :mod:`langop_infra.manifests._query_secrets`), and ``allowedTools`` when it is set."""
    servers: list[dict[str, Any]] = []
    for server in agent.mcp_servers:
        url = server_url(server.name, server.url).url
        entry: dict[str, Any] = {"name": server.name, "url": url}
        named = url_variables(url)
        if named:
            entry["env"] = named
        if server.allowed_tools is not None:  # ark's runtime ignores it; ours enforces it
            entry["allowedTools"] = list(server.allowed_tools)
        servers.append(entry)
    return servers


def header_document(header: HeaderSpec, env_name: str) -> dict[str, str]:
    """A header in config.yaml: its literal value, or the env var that holds it."""
    if header.value is not None:
        return {"name": header.name, "value": header.value}
    return {"name": header.name, "valueFromEnv": env_name}


def webhook_tool_document(tool: WebhookToolSpec) -> dict[str, object]:
    """A webhook tool as agents see it: every field but the secret itself.

    ``inputSchema`` is a JSON string, as ark's spec and runtime have it (its Go runtime
    unmarshals the field into a string and refuses an object): the user's own text when
    given as one, else compact JSON.
    """
    doc: dict[str, object] = {
        "name": tool.name,
        "description": tool.description,
        "url": tool.url,
        "method": tool.method,
        "inputSchema": tool.input_schema_text,
        "timeoutSeconds": _seconds(tool.timeout),
    }
    auth = tool.authentication
    if auth.type != "none":
        doc["authentication"] = {
            "type": auth.type,
            "headerName": auth.header_name,
            "valueFromEnv": webhook_auth_env_name(tool.name),
        }
    if tool.rate_limit is not None:
        doc["rateLimit"] = {
            "requestsPerMinute": tool.rate_limit.requests_per_minute,
            "burst": tool.rate_limit.burst,
        }
    return doc


def enabled_webhook_tools(agent: AgentSpec) -> list[WebhookToolSpec]:
    return [t for t in agent.webhook_tools if t.enabled]


def agent_webhook_document(tool: WebhookToolSpec) -> dict[str, Any]:
    """A webhook tool as an agent is given it: :func:`webhook_tool_document` with its query
    credentials read from env, declared in the entry's ``env``."""
    doc = webhook_tool_document(tool)
    url = webhook_url(tool.name, tool.url).url
    named = url_variables(url)
    if named:
        doc["url"] = url
        doc["env"] = named
    return doc


def agent_config(
    agent: AgentSpec, targets: Sequence[ToolTarget], style: EndpointStyle = "base"
) -> dict[str, object]:
    """The ``/etc/agent/config.yaml`` document.

    ``tools`` follows the language-operator contract exactly (``endpoint``, ``protocol``),
    adding ``mcpPath`` only for a tool whose MCP path is not ``/mcp``, and the reference's
    ``allowedTools`` and ``headers`` when it has them; an agent without tools gets no
    ``tools`` key. No secret value appears: a secret header or
    credential is named by the env var that holds it (``valueFromEnv``).
    """
    tools: dict[str, dict[str, object]] = {}
    refs = {ref.name: ref for ref in agent.tools if ref.enabled}
    for target in targets:
        entry: dict[str, object] = {"endpoint": agent_endpoint(target, style), "protocol": "mcp"}
        if target.mcp_path != DEFAULT_MCP_PATH:
            entry["mcpPath"] = target.mcp_path
        ref = refs.get(target.name)
        if ref is not None and ref.required:  # the built-in runtime's /readyz waits for it
            entry["required"] = True
        if ref is not None and ref.allowed_tools is not None:
            entry["allowedTools"] = list(ref.allowed_tools)
        if ref is not None and ref.overrides:
            entry["overrides"] = {
                tool: o.model_dump(exclude_none=True) for tool, o in ref.overrides.items()
            }
        if ref is not None and ref.headers:
            entry["headers"] = [
                header_document(h, tool_header_env_name(ref.name, h.name)) for h in ref.headers
            ]
        tools[target.name] = entry
    doc: dict[str, object] = {"tools": tools} if tools else {}
    servers: list[dict[str, object]] = []
    for server in agent.mcp_servers:
        url = server_url(server.name, server.url).url
        entry = {"name": server.name, "url": url}
        if server.transport != "http":
            entry["transport"] = server.transport
        if not server.auto_connect:
            entry["autoConnect"] = False
        if server.timeout is not None:
            entry["timeoutSeconds"] = _seconds(server.timeout)
        if server.allowed_tools is not None:
            entry["allowedTools"] = list(server.allowed_tools)
        named = url_variables(url)
        if named:  # the agent expands in a URL only the variables its entry declares
            entry["env"] = named
        if server.headers:
            entry["headers"] = [
                header_document(h, header_env_name(server.name, h.name)) for h in server.headers
            ]
        servers.append(entry)
    if servers:
        doc["mcpServers"] = servers
    webhooks = [agent_webhook_document(t) for t in enabled_webhook_tools(agent)]
    if webhooks:
        doc["webhookTools"] = webhooks
    return doc


def config_yaml(document: Mapping[str, object]) -> str:
    """The document as YAML, stable byte for byte for the same input."""
    return yaml_io.dump(dict(document), sort_keys=False)


def compact_json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def checksum(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


@dataclass(frozen=True)
class EnvVar:
    """One container env var: a literal ``value`` or a Secret key reference."""

    name: str
    value: str | None = None
    secret_name: str | None = None
    secret_key: str | None = None
    field_path: str | None = None  # the downward API: metadata.name, metadata.namespace

    def manifest(self) -> EnvVarDict:
        if self.field_path is not None:
            return {"name": self.name, "valueFrom": {"fieldRef": {"fieldPath": self.field_path}}}
        if self.secret_name is None:
            return {"name": self.name, "value": self.value}
        return {
            "name": self.name,
            "valueFrom": {"secretKeyRef": {"name": self.secret_name, "key": self.secret_key}},
        }


def workload_env(
    workload: str, env: Mapping[str, str], secret_env: Mapping[str, object]
) -> tuple[list[EnvVar], dict[str, object]]:
    """Env vars of a tool or agent, and the literal secret values its own Secret must hold.

    A literal secret (string or pulumi secret) goes into ``<workload>-env`` under its env var
    name; a ``secretKeyRef`` points at the existing Secret; neither copies a value into env.
    """
    out = [EnvVar(name, value=value) for name, value in env.items()]
    owned: dict[str, object] = {}
    for name, value in secret_env.items():
        if isinstance(value, SecretSource):
            ref = value.secret_key_ref
            out.append(EnvVar(name, secret_name=ref.name, secret_key=ref.key))
        else:
            owned[name] = value
            out.append(EnvVar(name, secret_name=workload_secret_name(workload), secret_key=name))
    return out, owned


def agent_env(
    agent: AgentSpec, targets: Sequence[ToolTarget], style: EndpointStyle = "base"
) -> tuple[list[EnvVar], dict[str, object]]:
    """Every env var the agent container gets, and the literal secrets its Secret holds;
    ``MCP_SERVERS`` only for an agent with tools."""
    env, owned = workload_env(agent.name, agent.env, agent.secret_env)
    own_secret = workload_secret_name(agent.name)
    if targets:
        env.append(EnvVar("MCP_SERVERS", value=mcp_servers_env(targets, style)))
    env += [
        EnvVar("AGENT_MCP_SERVERS", value=compact_json(agent_mcp_servers(agent))),
        EnvVar(
            "AGENT_WEBHOOK_TOOLS",
            value=compact_json([agent_webhook_document(t) for t in enabled_webhook_tools(agent)]),
        ),
        EnvVar("AGENT_CONFIG_PATH", value=CONFIG_PATH),
    ]
    for _, name, header in agent_headers(agent):
        if header.value is not None:
            env.append(EnvVar(name, value=header.value))
        elif header.value_from is not None:
            ref = header.value_from.secret_key_ref
            env.append(EnvVar(name, secret_name=ref.name, secret_key=ref.key))
        else:
            owned[name] = header.secret
            env.append(EnvVar(name, secret_name=own_secret, secret_key=name))
    for tool in enabled_webhook_tools(agent):
        ref = tool.authentication.secret_ref
        if ref is not None:
            env.append(
                EnvVar(webhook_auth_env_name(tool.name), secret_name=ref.name, secret_key=ref.key)
            )
    for name, value in routed_query_env(agent).items():  # query credentials: the Secret
        owned[name] = value
        env.append(EnvVar(name, secret_name=own_secret, secret_key=name))
    return env, owned


def secret_names_used(env: Iterable[EnvVar]) -> list[str]:
    """Every Secret an env list reads from, sorted."""
    return sorted({v.secret_name for v in env if v.secret_name is not None})


def _seconds(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def otel_env(
    otlp_endpoint: str | None,
    service: str,
    namespace: str,
    workload: str,
    sampler: tuple[str | None, str | None] = (None, None),
) -> list[EnvVar]:
    """``OTEL_*`` of one workload (``defaults.observability``), or nothing without an
    endpoint; ``sampler`` is ``(OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG)``, each passed
    when set, as upstream's ``buildAgentEnv`` passes them."""
    if otlp_endpoint is None:
        return []
    env = [
        EnvVar("OTEL_EXPORTER_OTLP_ENDPOINT", value=otlp_endpoint),
        EnvVar("OTEL_SERVICE_NAME", value=service),
        EnvVar(
            "OTEL_RESOURCE_ATTRIBUTES",
            value=f"k8s.namespace.name={namespace},k8s.deployment.name={workload}",
        ),
    ]
    names = ("OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG")
    for name, value in zip(names, sampler, strict=True):
        if value is not None:
            env.append(EnvVar(name, value=value))
    return env
