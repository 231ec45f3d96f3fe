"""Reaching a tool through the Kubernetes API server's proxy, for schema sync.

A service tool is reached at ``/api/v1/namespaces/<ns>/services/<svc>:<port>/proxy/<path>``;
a sidecar tool, which its agent calls on localhost, at
``/api/v1/namespaces/<ns>/pods/<pod>:<port>/proxy/<path>`` of one ready pod chosen by labels
(the API server dials the pod's IP: the sidecar must listen there, not on 127.0.0.1 alone).
The API server authorizes a proxied POST as ``create``, a GET as ``get`` and a DELETE as
``delete`` on ``services/proxy`` (``pods/proxy``), and forwards its own ``Host`` to the tool:
:func:`proxied_refusal` says which of them refused a sync.
Every URL built here is checked to stay under its proxy prefix: the API server's bearer token
goes with it, so a path that climbed out would hand the token to another API. The MCP client
is then confined to that prefix (:func:`confinement_prefix`): the tool cannot steer a later
request out with a redirect or a legacy-SSE endpoint.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast
from urllib.parse import unquote, urlsplit

import langop_infra._json as _json
from langop_infra._errors import LangopError
from langop_infra.config._fields import DNS_LABEL, DNS_SUBDOMAIN, canonical_mcp_path
from langop_infra.core import _yaml_io as yaml_io
from langop_infra.core._text import one_line

KubeAccess = tuple[str, dict[str, str], dict[str, Any]]
INLINE_KUBECONFIG = ("apiVersion", "{", "kind")


class ProxyError(LangopError, RuntimeError):
    """The API server proxy cannot be used: no credentials, a bad name, no ready pod."""


# What the kubeconfig's user needs (requestinfo.go names proxied requests by HTTP method: the
# MCP POSTs are create, its GET streams get, the session's DELETE delete).
SERVICE_RBAC = "the kubeconfig's user needs create, get and delete on services/proxy"
SIDECAR_RBAC = "the kubeconfig's user needs list on pods and create, get and delete on pods/proxy"


def is_inline(kubeconfig: str | None) -> bool:
    """Whether the kubernetes provider's ``kubeconfig`` setting holds the document itself."""
    return bool(kubeconfig) and str(kubeconfig).lstrip().startswith(INLINE_KUBECONFIG)


def kube_api_access(kubeconfig: str | None, context: str | None) -> KubeAccess:
    """API server URL, auth headers and TLS options from the kubeconfig (exec plugins, tokens
    and client certificates handled by the ``kubernetes`` client), or in-cluster config."""
    try:
        from kubernetes import client, config
    except ImportError:
        raise ProxyError(
            "the kubernetes package is missing here (fix: pip install -r requirements.txt)"
        ) from None
    configuration = client.Configuration()
    # The kubernetes client's config loaders leave their parameters untyped, hence the
    # `pyright: ignore[reportUnknownMemberType]` on each call.
    try:
        if is_inline(kubeconfig):
            config.load_kube_config_from_dict(  # pyright: ignore[reportUnknownMemberType]
                bounded_kubeconfig(str(kubeconfig)),
                context=context,
                client_configuration=configuration,
            )
        else:
            # The kubernetes client parses files with yaml.safe_load: check them first.
            for path in kubeconfig_files(kubeconfig):
                bounded_kubeconfig_file(path)
            config.load_kube_config(  # pyright: ignore[reportUnknownMemberType]
                config_file=kubeconfig, context=context, client_configuration=configuration
            )
    except Exception as kube_exc:
        try:
            config.load_incluster_config(client_configuration=configuration)  # pyright: ignore[reportUnknownMemberType]
        except Exception:
            # An inline document's parse error quotes the document: name the kind only.
            reason = type(kube_exc).__name__ if is_inline(kubeconfig) else str(kube_exc)
            raise ProxyError(
                f"cannot load a kubeconfig for apiserver-proxy ({reason}); fix: set "
                "kubernetes:kubeconfig/context, or run in-cluster"
            ) from None
    # auth_settings() knows every place the client may keep a token (static, exec plugin,
    # in-cluster), so the proxy call authenticates exactly as the kubernetes client would.
    settings: Mapping[str, Any] = configuration.auth_settings()
    found: list[Any] = list(settings.values())  # the client's typing says object
    headers = {
        setting["key"]: setting["value"]
        for setting in found
        if setting.get("in") == "header" and setting.get("value")
    }
    tls: dict[str, Any] = {"verify": configuration.ssl_ca_cert or bool(configuration.verify_ssl)}
    if configuration.cert_file and configuration.key_file:
        tls["cert"] = (configuration.cert_file, configuration.key_file)
    # The cluster's tls-server-name: the name its certificate is checked against.
    server_name = getattr(configuration, "tls_server_name", None)
    if server_name:
        tls["tls_server_name"] = str(server_name)
    return configuration.host, headers, tls


def bounded_kubeconfig(text: str | bytes) -> Any:
    """A kubeconfig document read within the limits of stack files (size, depth, aliases,
    duplicate keys): a pull request can change the file a CI run points at."""
    return yaml_io.load_config(text.encode("utf-8") if isinstance(text, str) else text)


def bounded_kubeconfig_file(path: Path) -> Any:
    """:func:`bounded_kubeconfig` of a file, whose name is in the error."""
    try:
        if path.stat().st_size > yaml_io.MAX_CONFIG_BYTES:
            raise yaml_io.ConfigYAMLError(f"over {yaml_io.MAX_CONFIG_BYTES} bytes")
        return bounded_kubeconfig(path.read_bytes())
    except yaml_io.YAMLError as exc:
        raise ValueError(f"{path}: {one_line(str(exc))}") from None


def kubeconfig_files(kubeconfig: str | None) -> list[Path]:
    """The kubeconfig files the kubernetes client would read: the one named, else those of
    ``KUBECONFIG``, else ``~/.kube/config``; only those that exist."""
    named = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
    paths = [Path(part).expanduser() for part in str(named).split(os.pathsep) if part]
    return [path for path in paths if path.is_file()]


def kubeconfig_secrets(kubeconfig: str | None) -> list[str]:
    """Every string under ``users:`` of the kubeconfig, inline or a readable file (tokens,
    keys, passwords): what a message about it must never quote."""
    if not kubeconfig:
        return []
    text = str(kubeconfig)
    if not is_inline(text):
        try:
            text = Path(text).expanduser().read_text(encoding="utf-8")
        except (OSError, ValueError):
            return []
    try:
        document = bounded_kubeconfig(text)
    except Exception:
        return [line.strip() for line in text.splitlines() if line.strip()]
    found: list[str] = []

    def collect(value: object) -> None:
        if isinstance(value, Mapping):
            for item in cast("Mapping[object, object]", value).values():
                collect(item)
        elif isinstance(value, list):
            for item in cast("list[object]", value):
                collect(item)
        elif isinstance(value, str):
            found.append(value)

    if isinstance(document, Mapping):
        collect(cast("Mapping[str, object]", document).get("users"))
    return found


def _label(value: object, what: str) -> str:
    if not isinstance(value, str) or not DNS_LABEL.fullmatch(value):
        raise ProxyError(
            f"schema sync {what} {value!r} is not a DNS label; cannot build a proxy URL"
        )
    return value


def _port(value: Any) -> int:
    try:
        port = int(value)
    except (TypeError, ValueError):
        port = 0
    if not 0 < port < 65536:
        raise ProxyError(f"schema sync port {value!r} is not a port number (1-65535)")
    return port


def service_prefix(namespace: object, service: object, port: object) -> str:
    """``/api/v1/namespaces/<ns>/services/<svc>:<port>/proxy``."""
    ns, svc = _label(namespace, "namespace"), _label(service, "service")
    return f"/api/v1/namespaces/{ns}/services/{svc}:{_port(port)}/proxy"


def pod_prefix(namespace: object, pod: object, port: object) -> str:
    """``/api/v1/namespaces/<ns>/pods/<pod>:<port>/proxy``."""
    ns = _label(namespace, "namespace")
    if not isinstance(pod, str) or not DNS_SUBDOMAIN.fullmatch(pod):
        raise ProxyError(f"the API server named a pod {pod!r} that is not a valid pod name")
    return f"/api/v1/namespaces/{ns}/pods/{pod}:{_port(port)}/proxy"


def proxy_url(host: str, prefix: str, mcp_path: str | None) -> str:
    """``host + prefix + mcp_path``, refused unless it stays under ``prefix/``."""
    try:
        path = canonical_mcp_path(mcp_path or "/mcp")
    except ValueError as exc:
        raise ProxyError(f"schema sync mcp_path {exc}") from None
    url = f"{host.rstrip('/')}{prefix}{path}"
    parts = urlsplit(url)
    base = urlsplit(host).path.rstrip("/") + prefix + "/"
    decoded = unquote(parts.path)
    resolved = posixpath.normpath(decoded) + ("/" if decoded.endswith("/") else "")
    if parts.query or parts.fragment or resolved != decoded or not decoded.startswith(base):
        raise ProxyError(f"schema sync refused {parts.path!r}: it leaves the proxy prefix {base}")
    return url


def confinement_prefix(host: str, prefix: str) -> str:
    """The URL prefix every request of a sync through ``prefix`` must stay under: the MCP
    client follows no redirect there and refuses a message endpoint outside it, since a
    ``Location`` the proxy rewrites with ``path.Join(prefix, location)`` can name any API."""
    return f"{host.rstrip('/')}{prefix}/"


def ready_pod(
    access: KubeAccess, namespace: Any, selector: Mapping[str, Any], timeout: float
) -> str:
    """The name of one ready pod in ``namespace`` matching ``selector`` (the first by name, so
    repeated syncs ask the same pod while it lives)."""
    import httpx

    from langop_infra.mcp._http import kubernetes_status, tls_context

    host, headers, tls = access
    ns = _label(namespace, "namespace")
    labels = ",".join(f"{key}={value}" for key, value in sorted(selector.items()))
    url = f"{host.rstrip('/')}/api/v1/namespaces/{ns}/pods"
    server_name = tls.get("tls_server_name")
    try:
        # The MCP client's TLS context: the kubeconfig's CA and client certificate, once.
        verify = tls_context(tls.get("verify", True), tls.get("cert"))
        with httpx.Client(verify=verify, timeout=timeout) as client:
            reply = client.get(
                url,
                params={"labelSelector": labels},
                headers=headers,
                extensions={"sni_hostname": server_name} if server_name else None,
            )
    except (httpx.HTTPError, OSError) as exc:
        raise ProxyError(f"cannot list pods at {url}: {type(exc).__name__}") from None
    if reply.status_code == 403:
        # Only the API server's Status message is quoted: it names the missing permission.
        said = kubernetes_status(reply.content, reply.headers.get("content-type", ""))
        raise ProxyError(
            f"the API server refused to list pods ({said or 'HTTP 403'}); {SIDECAR_RBAC} in "
            f"namespace {ns}"
        )
    if reply.status_code != 200:
        raise ProxyError(
            f"listing pods at {url} answered HTTP {reply.status_code}: check the kubeconfig's "
            f"credentials; {SIDECAR_RBAC} in namespace {ns}"
        )
    try:
        # A namespace's pod list may outgrow a message: 64 MiB, the depth bounded as ever.
        items: Any = _json.read(reply.content, max_bytes=64 << 20).get("items") or []
    except (ValueError, AttributeError):
        raise ProxyError(f"listing pods at {url} gave no pod list") from None
    ready = sorted(name for name in map(_ready_name, items) if name)
    if not ready:
        raise ProxyError(
            f"no ready pod in namespace {ns} matches {labels}: the sidecar is synced through a "
            "running pod of an agent that carries it"
        )
    return ready[0]


def _ready_name(pod: Any) -> str | None:
    if not isinstance(pod, Mapping):
        return None
    fields = cast("Mapping[str, Any]", pod)
    meta: Any = fields.get("metadata") or {}
    status: Any = fields.get("status") or {}
    if meta.get("deletionTimestamp") or status.get("phase") != "Running":
        return None
    conditions: Any = status.get("conditions") or []
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
    return meta.get("name") if ready else None


_PROXIED = re.compile(
    r"^(https?://[^/]+)(?:/.*)?/api/v1/namespaces/([^/]+)/(services|pods)/([^/]+)/proxy/$"
)


def _unreachable_hint(detail: str) -> str:
    """What to check when the API server's proxy answered 503 with ``detail``."""
    if "no endpoints available" in detail:
        return "no pod behind the Service is Ready: check the tool's Deployment and its probes"
    if "no service port" in detail:
        return "the Service has no such port: check the tool's port"
    return (
        "the tool's pods do not answer the API server on the Service's targetPort: check that "
        "they run and listen on every interface, and that the control plane can reach pod "
        "addresses"
    )


def proxied_refusal(exc: Exception, confine_to: str | None) -> Exception:
    """``exc`` said as what it is when a sync through the API server's proxy (whose prefix is
    ``confine_to``) was refused by the API server's authorizer, or by a tool that does not
    accept the API server's Host header; any other ``exc`` unchanged."""
    from langop_infra.mcp._errors import MCPHTTPError, ServerUnreachable

    found = _PROXIED.match(confine_to or "")
    if found is not None and isinstance(exc, ServerUnreachable) and " not trusted (" in str(exc):
        # The API server's certificate: its CA comes from the kubeconfig, not a CA bundle.
        said = str(exc).partition(": pass its CA bundle")[0]
        return ProxyError(
            f"{said}: give the cluster's CA in the kubeconfig (certificate-authority-data), "
            "and tls-server-name if its certificate names another host"
        )
    if found is None or not isinstance(exc, MCPHTTPError):
        return exc
    origin, namespace, kind, name = found.groups()
    rules = SERVICE_RBAC if kind == "services" else SIDECAR_RBAC
    if exc.status == 403 and exc.kubernetes_status:
        return ProxyError(
            f"the API server refused the sync: {exc.detail}; {rules} in namespace "
            f"{namespace} (docs/SCHEMA_SYNC.md)"
        )
    target = name.rpartition(":")[0]
    tool = f"tool {target}" if kind == "services" else f"the sidecar tool in pod {target}"
    if exc.status == 503 and exc.kubernetes_status:
        return ProxyError(
            f"the API server's proxy could not reach {tool} in namespace {namespace}: "
            f"{exc.detail}; {_unreachable_hint(exc.detail)}"
        )
    if exc.status == 421 or "invalid host header" in exc.detail.lower():
        host = urlsplit(origin).netloc
        said = f"HTTP {exc.status}" + (f": {exc.detail}" if exc.detail else "")
        return ProxyError(
            f"{tool} refused the API server's Host header {host} through the proxy ({said}); "
            f"allow {host} in the tool's allowed hosts (its DNS-rebinding "
            "protection), or sync with schemaSync.access: direct from inside the cluster"
        )
    return exc
