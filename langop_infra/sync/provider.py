"""ToolSchemaSync: a Pulumi dynamic resource recording a tool's MCP ``tools/list`` in state.

``create``/``update`` sync; ``read`` (``pulumi refresh``) re-syncs so drift is recorded;
``diff`` compares inputs and, when the tool answers, its live schema hash with the stored one,
so a tool whose schema changed shows in ``pulumi preview``. ``delete`` is a no-op.

The engine hands ``read`` and ``diff`` the previous *outputs*, so the outputs carry every
input, the credentials (``headers``, ``kubeconfig``) included as secrets: Pulumi encrypts
them in state and shows ``[secret]`` in previews, and refresh syncs exactly as ``up`` did.

A failed sync is not fatal by default: phase ``Error``, a one-line, credential-free
``last_error``, and the schemas of the last good sync kept. With ``required`` the failure
fails the resource. The provider keeps no state of its own (nothing but its class is
pickled), and it lives in an importable module, so dill pickles it by reference: a few
hundred bytes in the stack state.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, cast
from urllib.parse import urlsplit

import pulumi
import pulumi.dynamic as dyn
from pulumi.runtime import rpc

from langop_infra.config._fields import canonical_mcp_path
from langop_infra.core._redact import Scrubber, redact, secret_strings
from langop_infra.sync._compare import SchemaTooDeep, schema_hash

# UNKNOWN and has_unknown live in _crud now; this public module still names them.
from langop_infra.sync._crud import (
    UNKNOWN as UNKNOWN,
    SyncProvider,
    has_unknown as has_unknown,
    plain_props,
)
from langop_infra.sync._kube_proxy import (
    KubeAccess,
    ProxyError,
    confinement_prefix,
    kube_api_access,
    kubeconfig_secrets,
    pod_prefix,
    proxied_refusal,
    proxy_url,
    ready_pod,
    service_prefix,
)
from langop_infra.sync._outputs import SyncOutputs

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
    "deployment_mode",
    "pod_selector",
    "oauth",
    "limits",
    "allowed_tools",
)
SECRET_INPUTS = ("headers", "kubeconfig", "oauth")
LIMIT_OPTIONS = ("protocol", "max_total_bytes", "max_tools", "max_pages", "max_response_bytes")
ACCESS_MODES = ("auto", "direct", "apiserver-proxy")
IN_CLUSTER_SUFFIX = ".svc.cluster.local"


def is_sidecar(inputs: Mapping[str, object]) -> bool:
    return inputs.get("deployment_mode") == "sidecar" or bool(inputs.get("pod_selector"))


def proxy_access(inputs: Mapping[str, Any]) -> KubeAccess | None:
    """The API server's URL, auth headers and TLS options when the sync goes through its
    proxy, else None. ``auto`` picks the proxy for an in-cluster endpoint (or a sidecar), since
    such a name resolves only inside the cluster; it never falls back to a direct call then:
    with no usable Kubernetes package or credentials the sync fails, saying which and the fix."""
    access = inputs.get("access") or "auto"
    if access == "direct":
        return None
    host = ""
    if access == "auto":
        host = urlsplit(str(inputs.get("endpoint") or "")).hostname or ""
        in_cluster = host.endswith(IN_CLUSTER_SUFFIX) or is_sidecar(inputs)
        if inputs.get("sync_url") or not in_cluster:
            return None
    try:
        return kube_api_access(inputs.get("kubeconfig") or None, inputs.get("kube_context") or None)
    except ProxyError as exc:
        if access == "apiserver-proxy":
            raise
        # Said first, as the reason is cut at 300 characters: what is missing and its fix.
        where = "a sidecar" if is_sidecar(inputs) else host
        raise ProxyError(
            f"{exc}. access auto: {where} is in-cluster, so it needs the API server proxy "
            "(no direct fallback; else schemaSync.access: direct)"
        ) from None


def resolve_access(inputs: Mapping[str, object]) -> str:
    """``direct`` or ``apiserver-proxy``, as :func:`proxy_access` decides."""
    return "direct" if proxy_access(inputs) is None else "apiserver-proxy"


def sync_target(inputs: Mapping[str, Any]) -> tuple[str, dict[str, str], dict[str, Any]]:
    """The URL to call, extra headers, and client options for the access mode: TLS, and
    through the proxy ``confine_to``, the prefix no request may leave (see
    :func:`~langop_infra.sync._kube_proxy.confinement_prefix`)."""
    given: Mapping[Any, Any] = inputs.get("headers") or {}
    headers = {str(k): str(v) for k, v in given.items()}
    path = inputs.get("mcp_path") or "/mcp"
    if is_sidecar(inputs) and not inputs.get("sync_url"):
        if (inputs.get("access") or "auto") == "direct":
            raise ProxyError(
                f"sidecar tool {inputs.get('service')} listens on localhost inside its agent's "
                "pod: set schemaSync.access to auto or apiserver-proxy, or give a syncUrl"
            )
        if not inputs.get("pod_selector"):
            raise ProxyError(
                f"sidecar tool {inputs.get('service')} is synced through the API server's pod "
                "proxy, which needs pod_selector (the labels of the agent pods carrying it)"
            )
    proxy = proxy_access(inputs)
    if proxy is None:
        try:
            path = canonical_mcp_path(path)
        except ValueError as exc:
            raise ProxyError(f"schema sync mcp_path {exc}") from None
        url = inputs.get("sync_url") or f"{inputs['endpoint']}{path}"
        return url, headers, {}
    host, auth_headers, tls = proxy
    if is_sidecar(inputs):
        seconds = float(inputs.get("timeout") or 10.0)
        pod = ready_pod(proxy, inputs.get("namespace"), inputs["pod_selector"], seconds)
        prefix = pod_prefix(inputs.get("namespace"), pod, inputs.get("port"))
    else:
        prefix = service_prefix(inputs.get("namespace"), inputs.get("service"), inputs.get("port"))
    url = proxy_url(host, prefix, path)
    return url, {**auth_headers, **headers}, {**tls, "confine_to": confinement_prefix(host, prefix)}


def list_tools(inputs: Mapping[str, Any], timeout: float | None = None) -> Any:
    """Call ``initialize`` + ``tools/list`` on the tool as the inputs say."""
    url, headers, tls = sync_target(inputs)
    seconds = float(timeout or inputs.get("timeout") or 10.0)
    # A preview's probe (given a timeout) retries once: it must not hold the preview up.
    return fetch_listing(
        url,
        headers,
        tls,
        seconds,
        retries=1 if timeout else 2,
        oauth=inputs.get("oauth"),
        limits=inputs.get("limits"),
        secrets=credentials(inputs, headers),
    )


def fetch_listing(
    url: str,
    headers: Mapping[str, str],
    tls: Mapping[str, Any],
    seconds: float,
    retries: int = 2,
    oauth: Mapping[str, Any] | None = None,
    limits: Mapping[str, Any] | None = None,
    secrets: Sequence[str] = (),
) -> Any:
    """``initialize`` (or ``server/discover``) + ``tools/list`` at ``url``, all within
    ``seconds``; with ``oauth``, a token from the tool's authorization server by the
    client-credentials grant; ``limits``: the protocol choice and the listing's caps.

    The listing comes back with every credential sent (``headers``, the OAuth secret and
    tokens, ``secrets``) replaced by a marker wherever the server echoed it."""
    from langop_infra.mcp import fetch_tool_listing_sync

    options = listing_options(headers, tls, seconds, retries, oauth, limits)
    try:
        listing = fetch_tool_listing_sync(url, options)
    except Exception as exc:
        raise proxied_refusal(exc, tls.get("confine_to")) from None
    return scrubbed_listing(listing, sent_secrets(options, secrets))


def listing_options(
    headers: Mapping[str, str],
    tls: Mapping[str, Any],
    seconds: float,
    retries: int,
    oauth: Mapping[str, Any] | None = None,
    limits: Mapping[str, Any] | None = None,
    deadline: float | None = None,
) -> Any:
    """The MCP client's options for one listing, as ``pulumi up`` and ``langop-infra
    schemas`` both make it: headers, TLS, caps and, with ``oauth``, the client-credentials
    grant against the pinned issuer. Each request gets ``seconds``; all of it ``deadline``."""
    from langop_infra.mcp import ClientOptions
    from langop_infra.mcp.oauth import OAuth2Auth

    bound = seconds if deadline is None else deadline
    auth = None
    if oauth:
        auth = OAuth2Auth(
            client_id=oauth.get("client_id"),
            client_secret=oauth.get("client_secret"),
            scopes=list(oauth.get("scopes") or ()),
            issuer=oauth.get("issuer"),
            grant="client_credentials",
            verify=tls.get("verify", True),
            timeout=seconds,
            deadline=bound,
        )
    return ClientOptions(
        headers=dict(headers),
        timeout=seconds,
        deadline=bound,
        connect_retries=retries,
        transport="auto",
        auth=auth,
        **tls,
        **limit_options(limits or {}),
    )


def sent_secrets(options: Any, extra: Sequence[str] = ()) -> list[str]:
    """Every credential a listing made with ``options`` sent: its headers, ``extra`` (e.g. an
    OAuth client secret) and the tokens its OAuth flow holds."""
    held: list[str] = options.auth.held_secrets() if options.auth is not None else []
    return secret_strings(options.headers, list(extra), held)


def scrubbed_listing(listing: Any, secrets: list[str]) -> Any:
    """``listing`` with ``secrets`` replaced by a marker in its tools, server info and
    version: a server that echoes its token into a description must not put it in state."""
    scrubber = Scrubber(secrets)
    return dataclasses.replace(
        listing,
        tools=scrubber.value(listing.tools),
        server_info=scrubber.value(listing.server_info),
        protocol_version=scrubber.value(listing.protocol_version),
    )


def limit_options(limits: Mapping[str, Any]) -> dict[str, Any]:
    """The client options from a sync's ``limits``; the engine's structs carry every number
    as a float, and the client wants whole numbers."""
    options = {k: v for k, v in limits.items() if k in LIMIT_OPTIONS and v is not None}
    return {k: v if k == "protocol" else int(v) for k, v in options.items()}


def credentials(inputs: Mapping[str, Any], *route_headers: Mapping[str, str]) -> list[str]:
    """Every credential a sync of ``inputs`` sends, for :func:`failure_message`."""
    oauth: Mapping[str, Any] = inputs.get("oauth") or {}
    return secret_strings(
        inputs.get("headers"),
        kubeconfig_secrets(inputs.get("kubeconfig")),
        {"client_secret": oauth.get("client_secret") or ""},
        *route_headers,
    )


def failure_message(exc: Exception, sent: list[str]) -> str:
    """One bounded, credential-free line saying why a sync failed."""
    from langop_infra.mcp import MCPError

    known = (MCPError, ProxyError, SchemaTooDeep)
    text = str(exc) if isinstance(exc, known) else f"{type(exc).__name__}: {exc}"
    return redact(text, sent)


def input_outputs(inputs: Mapping[str, object]) -> dict[str, Any]:
    """The inputs as outputs, so ``read`` and ``diff`` (which get outputs) see all of them;
    credentials wrapped as secrets so the engine encrypts them even if the input was plain."""
    outs = {k: inputs.get(k) for k in INPUTS}
    for key in SECRET_INPUTS:
        if outs.get(key):
            outs[key] = rpc.wrap_rpc_secret(outs[key])
    if url_carries_credentials(outs.get("sync_url")):
        outs["sync_url"] = rpc.wrap_rpc_secret(outs["sync_url"])
    return outs


def url_carries_credentials(url: object) -> bool:
    """Whether a URL holds a user, password or query (where tokens ride): kept secret."""
    if not isinstance(url, str):
        return False
    parts = urlsplit(url)
    return bool(parts.username or parts.password or parts.query)


def sync_schema(
    inputs: Mapping[str, Any], previous: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Sync once: the resource's outputs. Raises only for a failed ``required`` sync."""
    inputs = plain_props(dict(inputs))
    previous_outputs: Mapping[str, Any] = plain_props(dict(previous or {}))
    sent = credentials(inputs)
    try:
        url, headers, tls = sync_target(inputs)
        sent = credentials(inputs, headers)
        listing = fetch_listing(
            url,
            headers,
            tls,
            float(inputs.get("timeout") or 10.0),
            oauth=inputs.get("oauth"),
            limits=inputs.get("limits"),
            secrets=sent,
        )
        # Hashing is part of the sync: a schema it refuses is this tool's failure.
        result = SyncOutputs.registered(listing, previous_outputs, inputs.get("allowed_tools"))
    except Exception as exc:  # every failure is reported, never half-recorded
        message = failure_message(exc, sent)
        if inputs.get("required"):
            raise RuntimeError(
                f"schema sync of {inputs.get('service')} failed: {message}"
            ) from None
        result = SyncOutputs.failed(message, previous_outputs)
    return {**input_outputs(inputs), **result.as_dict()}


class ToolSchemaSyncProvider(SyncProvider):
    """The provider (the shape: :class:`~langop_infra.sync._crud.SyncProvider`): stateless,
    so it pickles to its class reference. A tool left in phase Error shows as a change once a
    preview's probe reaches it, so ``pulumi up`` tries it again."""

    inputs = INPUTS
    hash_output = "schema_hash"
    retry_failed = True

    def sync(
        self, inputs: Mapping[str, Any], previous: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        return sync_schema(inputs, previous)

    def live_hash(self, inputs: Mapping[str, Any], timeout: float) -> str:
        return schema_hash(list_tools(inputs, timeout=timeout).tools)

    def same(self, old: Any, new: Any) -> bool:
        # An unset input arrives missing, None or empty depending on the path it took.
        empty: tuple[object, ...] = ("", {}, [])
        return (old if old not in empty else None) == (new if new not in empty else None)

    def problems(self, known: Mapping[str, Any], news: Mapping[str, Any]) -> list[tuple[str, str]]:
        problems = input_problems(known)
        if known.get("access") in ("apiserver-proxy", "auto") and not is_sidecar(known):
            for key in ("namespace", "service", "port"):
                if not known.get(key) and key in news:
                    problems.append((key, "required for apiserver-proxy"))
        return problems


def _string_map(value: object) -> bool:
    """A mapping of strings to strings."""
    return isinstance(value, Mapping) and all(
        isinstance(k, str) and isinstance(v, str)
        for k, v in cast("Mapping[object, object]", value).items()
    )


def input_problems(known: Mapping[str, object]) -> list[tuple[str, str]]:
    """(input, reason) for every known input the provider cannot use; values never quoted,
    since some of them are credentials."""
    problems: list[tuple[str, str]] = []
    if known.get("access") not in (None, *ACCESS_MODES):
        problems.append(("access", "must be auto, direct or apiserver-proxy"))
    if "endpoint" in known and not str(known["endpoint"]).startswith(("http://", "https://")):
        problems.append(("endpoint", "must be an http(s) URL"))
    timeout = known.get("timeout")
    if timeout is not None and not (isinstance(timeout, (int, float)) and timeout > 0):
        problems.append(("timeout", "must be a number of seconds > 0"))
    if known.get("mcp_path") is not None:
        try:
            canonical_mcp_path(str(known["mcp_path"]))
        except ValueError as exc:
            problems.append(("mcp_path", str(exc)))
    if known.get("deployment_mode") not in (None, "service", "sidecar"):
        problems.append(("deployment_mode", "must be service or sidecar"))
    selector = known.get("pod_selector")
    if selector is not None and not _string_map(selector):
        problems.append(("pod_selector", "must map label names to label values (strings)"))
    oauth = known.get("oauth")
    auth: Mapping[str, object] = (
        cast("Mapping[str, object]", oauth) if isinstance(oauth, Mapping) else {}
    )
    if auth.get("client_secret") and not auth.get("issuer"):
        problems.append(
            ("oauth", "a client secret needs its issuer (schemaSync.auth.issuer) to be sent to")
        )
    return problems


class ToolSchemaSync(dyn.Resource):
    """The synced schema of one tool; outputs land in the stack state."""

    # Typed views of SyncOutputs' fields (a test keeps the two lists equal).
    tool_schemas: pulumi.Output[list[dict[str, Any]]]
    schema_hash: pulumi.Output[str]
    tool_names: pulumi.Output[list[str]]
    phase: pulumi.Output[str]
    registered_at: pulumi.Output[str]
    last_synced_at: pulumi.Output[str]
    last_error: pulumi.Output[str]
    server_info: pulumi.Output[dict[str, Any]]
    protocol_version: pulumi.Output[str]
    unknown_allowed_tools: pulumi.Output[list[str]]

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
        if url_carries_credentials(props.get("sync_url")):
            props["sync_url"] = pulumi.Output.secret(props["sync_url"])
        props.update(dict.fromkeys(SyncOutputs.names()))
        super().__init__(ToolSchemaSyncProvider(), name, props, opts)
        # A failed sync that is not `required` leaves the deployment green: say so where
        # `pulumi up` and `preview` print, not only in the outputs.
        subject = f"tool {inputs.get('service')!r} in namespace {inputs.get('namespace')!r}"
        pulumi.Output.all(self.phase, self.last_error).apply(
            lambda result: warn_failed_sync(subject, *result)
        )


def warn_failed_sync(subject: str, phase: object, last_error: object) -> None:
    """A ``pulumi.log.warn`` for a sync that ended in phase Error (``last_error`` is
    already credential-free: :func:`failure_message`)."""
    if phase == "Error":
        reason = last_error or "no reason recorded"
        pulumi.log.warn(f"schema sync of {subject} failed (phase Error): {reason}")
