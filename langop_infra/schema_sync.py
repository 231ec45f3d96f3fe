"""ToolSchemaSync: a Pulumi dynamic resource recording a tool's MCP ``tools/list`` in state.

``create``/``update`` sync; ``read`` (``pulumi refresh``) re-syncs so drift is recorded;
``diff`` compares inputs and, when the tool answers, its live schema hash with the stored one,
so a tool whose schema changed shows in ``pulumi preview``. ``delete`` is a no-op.

A failed sync is not fatal by default: phase ``Error``, a one-line ``last_error``, and the
schemas of the last good sync kept. With ``required`` the failure fails the resource.
The provider keeps no state of its own (nothing but its class is pickled), and it lives in an
importable module, so dill pickles it by reference: a few hundred bytes in the stack state.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import pulumi
import pulumi.dynamic as dyn

from langop_infra import yaml_io
from langop_infra.errors import one_line
from langop_infra.schema_compare import schema_hash

UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # pulumi's marker for a preview-time unknown
INPUTS = (
    "endpoint",
    "mcp_path",
    "access",
    "sync_url",
    "namespace",
    "service",
    "port",
    "timeout",
    "required",
    "headers",
    "kube_context",
    "kubeconfig",
)
SECRET_INPUTS = ("headers", "kubeconfig")
ACCESS_MODES = ("auto", "direct", "apiserver-proxy")
IN_CLUSTER_SUFFIX = ".svc.cluster.local"
DIFF_PROBE_TIMEOUT = 5.0


KubeAccess = tuple[str, dict[str, str], dict[str, Any]]


def proxy_access(inputs: Mapping[str, Any]) -> KubeAccess | None:
    """The API server's URL, auth headers and TLS options when the sync goes through its
    service proxy, else None. ``auto`` picks the proxy for an in-cluster endpoint when
    Kubernetes credentials load here, since such a name resolves only inside the cluster."""
    access = inputs.get("access") or "auto"
    if access == "direct":
        return None
    if access == "auto":
        host = urlsplit(str(inputs.get("endpoint") or "")).hostname or ""
        if inputs.get("sync_url") or not host.endswith(IN_CLUSTER_SUFFIX):
            return None
    try:
        return kube_api_access(inputs.get("kubeconfig") or None, inputs.get("kube_context") or None)
    except RuntimeError:
        if access == "apiserver-proxy":
            raise
        return None


def resolve_access(inputs: Mapping[str, Any]) -> str:
    """``direct`` or ``apiserver-proxy``, as :func:`proxy_access` decides."""
    return "direct" if proxy_access(inputs) is None else "apiserver-proxy"


def sync_target(inputs: Mapping[str, Any]) -> tuple[str, dict[str, str], dict[str, Any]]:
    """The URL to call, extra headers, and TLS options for the access mode."""
    headers = dict(inputs.get("headers") or {})
    proxy = proxy_access(inputs)
    if proxy is not None:
        host, auth_headers, tls = proxy
        url = (
            f"{host.rstrip('/')}/api/v1/namespaces/{inputs['namespace']}/services/"
            f"{inputs['service']}:{int(inputs['port'])}/proxy{inputs.get('mcp_path') or '/mcp'}"
        )
        return url, {**auth_headers, **headers}, tls
    url = inputs.get("sync_url") or f"{inputs['endpoint']}{inputs.get('mcp_path') or '/mcp'}"
    return url, headers, {}


def kube_api_access(kubeconfig: str | None, context: str | None) -> KubeAccess:
    """API server URL, auth headers and TLS options from the kubeconfig (exec plugins, tokens
    and client certificates handled by the ``kubernetes`` client), or in-cluster config."""
    try:
        from kubernetes import client, config
    except ImportError:
        raise RuntimeError(
            "schema sync access 'apiserver-proxy' needs the kubernetes package: "
            "pip install 'langop-infra[kube]'"
        ) from None
    configuration = client.Configuration()
    try:
        if kubeconfig and kubeconfig.lstrip().startswith(("apiVersion", "{", "kind")):
            # The kubernetes provider's `kubeconfig` setting may hold the document itself.
            config.load_kube_config_from_dict(
                yaml_io.load(kubeconfig), context=context, client_configuration=configuration
            )
        else:
            config.load_kube_config(
                config_file=kubeconfig, context=context, client_configuration=configuration
            )
    except Exception as kube_exc:
        try:
            config.load_incluster_config(client_configuration=configuration)
        except Exception:
            raise RuntimeError(
                f"cannot load a kubeconfig for apiserver-proxy: {kube_exc}"
            ) from None
    # auth_settings() knows every place the client may keep a token (static, exec plugin,
    # in-cluster), so the proxy call authenticates exactly as the kubernetes client would.
    headers = {
        setting["key"]: setting["value"]
        for setting in configuration.auth_settings().values()
        if setting.get("in") == "header" and setting.get("value")
    }
    tls: dict[str, Any] = {"verify": configuration.ssl_ca_cert or bool(configuration.verify_ssl)}
    if configuration.cert_file and configuration.key_file:
        tls["cert"] = (configuration.cert_file, configuration.key_file)
    return configuration.host, headers, tls


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


def list_tools(inputs: Mapping[str, Any], timeout: float | None = None) -> Any:
    """Call ``initialize`` + ``tools/list`` on the tool as the inputs say."""
    from langop_infra.mcp import ClientOptions, fetch_tool_listing_sync

    seconds = float(timeout or inputs.get("timeout") or 10.0)
    url, headers, tls = sync_target(inputs)
    options = ClientOptions(
        headers=headers,
        timeout=seconds,
        deadline=seconds,
        connect_retries=1 if timeout else 2,
        transport="auto",
        **tls,
    )
    return fetch_tool_listing_sync(url, options)


def sync_schema(inputs: Mapping[str, Any], previous: Mapping[str, Any] | None = None) -> dict:
    """Sync once: the resource's outputs. Raises only for a failed ``required`` sync."""
    previous = previous or {}
    # Credentials stay inputs only: outputs are shown by `pulumi stack output` and previews.
    outs = {k: inputs.get(k) for k in INPUTS if k not in SECRET_INPUTS}
    try:
        listing = list_tools(inputs)
    except Exception as exc:  # every failure is reported, never half-recorded
        message = one_line(f"{type(exc).__name__}: {exc}" if not _is_mcp(exc) else str(exc))
        if inputs.get("required"):
            raise RuntimeError(
                f"schema sync of {inputs.get('service')} failed: {message}"
            ) from None
        return {
            **outs,
            "phase": "Error",
            "last_error": message,
            "tool_schemas": previous.get("tool_schemas") or [],
            "tool_names": previous.get("tool_names") or [],
            "schema_hash": previous.get("schema_hash") or "",
            "server_info": previous.get("server_info") or {},
            "protocol_version": previous.get("protocol_version") or "",
            "registered_at": previous.get("registered_at") or "",
            "last_synced_at": previous.get("last_synced_at") or "",
        }
    now = _now()
    return {
        **outs,
        "phase": "Registered",
        "last_error": "",
        "tool_schemas": listing.tools,
        "tool_names": [t.get("name") for t in listing.tools],
        "schema_hash": schema_hash(listing.tools),
        "server_info": listing.server_info,
        "protocol_version": listing.protocol_version,
        "registered_at": previous.get("registered_at") or now,
        "last_synced_at": now,
    }


def _is_mcp(exc: Exception) -> bool:
    from langop_infra.mcp import MCPError

    return isinstance(exc, MCPError)


def _has_unknown(value: Any) -> bool:
    if isinstance(value, Mapping):
        return any(_has_unknown(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_unknown(v) for v in value)
    return value == UNKNOWN


class ToolSchemaSyncProvider(dyn.ResourceProvider):
    """The provider: stateless, so it pickles to its class reference."""

    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> dyn.CheckResult:
        failures = []
        known = {k: v for k, v in news.items() if not _has_unknown(v)}
        if known.get("access") not in (None, *ACCESS_MODES):
            failures.append(dyn.CheckFailure("access", "must be auto, direct or apiserver-proxy"))
        if "endpoint" in known and not str(known["endpoint"]).startswith(("http://", "https://")):
            failures.append(dyn.CheckFailure("endpoint", "must be an http(s) URL"))
        timeout = known.get("timeout")
        if timeout is not None and not (isinstance(timeout, (int, float)) and timeout > 0):
            failures.append(dyn.CheckFailure("timeout", "must be a number of seconds > 0"))
        if known.get("access") in ("apiserver-proxy", "auto"):
            for key in ("namespace", "service", "port"):
                if not known.get(key) and key in news:
                    failures.append(dyn.CheckFailure(key, "required for apiserver-proxy"))
        return dyn.CheckResult(news, failures)

    def create(self, props: dict[str, Any]) -> dyn.CreateResult:
        outs = sync_schema(props)
        return dyn.CreateResult(id_=f"{props.get('namespace')}/{props.get('service')}", outs=outs)

    def read(self, id_: str, props: dict[str, Any]) -> dyn.ReadResult:
        return dyn.ReadResult(id_=id_, outs=sync_schema({**props, "required": False}, props))

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> dyn.UpdateResult:
        return dyn.UpdateResult(outs=sync_schema(news, olds))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> dyn.DiffResult:
        changed = [k for k in INPUTS if k in news and olds.get(k) != news.get(k)]
        if _has_unknown(news):
            return dyn.DiffResult(
                changes=True, replaces=[], stables=[], delete_before_replace=False
            )
        if not changed:
            try:
                listing = list_tools(
                    news, timeout=min(DIFF_PROBE_TIMEOUT, news.get("timeout") or 10)
                )
            except Exception:  # unreachable at preview time: nothing to compare with
                listing = None
            if listing is not None and schema_hash(listing.tools) != olds.get("schema_hash"):
                changed.append("tool_schemas")
            elif listing is None and olds.get("phase") == "Error":
                changed.append("phase")
        return dyn.DiffResult(
            changes=bool(changed), replaces=[], stables=[], delete_before_replace=False
        )

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        return None


class ToolSchemaSync(dyn.Resource):
    """The synced schema of one service tool; outputs land in the stack state."""

    tool_schemas: pulumi.Output[list]
    schema_hash: pulumi.Output[str]
    tool_names: pulumi.Output[list]
    phase: pulumi.Output[str]
    registered_at: pulumi.Output[str]
    last_synced_at: pulumi.Output[str]
    last_error: pulumi.Output[str]
    server_info: pulumi.Output[dict]
    protocol_version: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        inputs: Mapping[str, Any],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {key: inputs.get(key) for key in INPUTS}
        for key in SECRET_INPUTS:
            if props.get(key):
                props[key] = pulumi.Output.secret(props[key])
        props.update(
            {
                "tool_schemas": None,
                "schema_hash": None,
                "tool_names": None,
                "phase": None,
                "registered_at": None,
                "last_synced_at": None,
                "last_error": None,
                "server_info": None,
                "protocol_version": None,
            }
        )
        super().__init__(ToolSchemaSyncProvider(), name, props, opts)
