"""A loopback STAND-IN for the Kubernetes API server and its service and pod proxies (no real
API server runs here), at least as hostile to a client as the real one. Written from:

- ``k8s.io/apimachinery/pkg/util/proxy/upgradeaware.go`` (``ServeHTTP``) and
  ``transport.go``; ``pkg/registry/core/service/proxy.go`` and the pod ``ProxyREST``, which
  build the handler without ``UseLocationHost``;
- ``pkg/registry/core/service/storage`` ``ResourceLocation`` and
  ``pkg/registry/core/pod/strategy.go`` ``ResourceLocation``;
- the request-info, RBAC and Status sources listed in ``tests/support/kube_authz.py``.

What it does, as the real one does:

- authentication: the bearer token (or, on a listener that requires one, a client
  certificate signed by the cluster CA) names a user; anything else is a 401 ``Status``.
  ``Authorization`` is dropped before proxying (the authentication filter deletes it);
- authorization: each request is named as ``NewRequestInfo`` names it (``POST`` is
  ``create`` on ``services/proxy``, ``GET`` ``get``, ``DELETE`` ``delete``, a pod listing
  ``list pods``) and checked against the user's RBAC rules by verb, API group, resource,
  subresource, resource name and namespace; a refusal is the 403 ``Status`` with the
  authorizer's exact message. The ``token`` given first is a cluster-admin's;
- ``.../services/<svc>:<port>/proxy/...``: a Service that does not exist is a 404
  ``Status``, a port it does not have a 503 ``no service port <port> found for service
  "<svc>"``, no ready endpoint a 503 ``no endpoints available for service "<svc>"``;
  ``.../pods/<pod>:<port>/proxy/...`` dials the pod's IP at that port, so only what listens
  there (``pod_backends``) answers: a sidecar bound to 127.0.0.1 alone is a refused dial;
- a backend that cannot be reached is the 503 ``Status`` ``error trying to reach service:
  dial tcp <addr>: connect: connection refused`` (``transport.go``), never plain text;
- every request header goes to the backend but hop-by-hop ones and ``Authorization``, and
  ``Host`` stays the one the client sent the API server (``httputil.ReverseProxy`` keeps it):
  the tool sees the API server's host name, never its own. The stand-in listens on
  ``API_HOST`` (127.0.0.2), not the tools' 127.0.0.1, so a tool that allows only its own
  host refuses it as in a cluster; ``X-Forwarded-Uri`` and ``X-Forwarded-For`` are added;
- every response header comes back but hop-by-hop and CORS ones; ``Location`` is rewritten
  as ``Transport.rewriteURL`` does: another host's URL and a relative one pass unchanged; an
  absolute path already under the prefix passes; any other absolute path becomes
  ``path.Join(prefix, location)``, which cleans ``..``, so ``/../../../apis/...`` names the
  API server's own ``/apis/...``;
- bodies are streamed chunk by chunk as the backend sends them (the real proxy flushes
  every 200 ms, and at once for event streams), so SSE works through it;
- a GET or HEAD of the bare ``.../proxy`` is a 301 to ``.../proxy/`` keeping the query
  string (``proxyRedirectsforRootPath``), after the service or pod is located;
- ``GET /api/v1/namespaces/<ns>/pods?labelSelector=`` lists pods (equality selectors only),
  each with ``status.podIP``;
- HTTPS: served with ``serve_api(api, **pki.uvicorn())`` (``tests/support/cluster_pki.py``)
  it presents a certificate of a CA made in the test, which a kubeconfig carries as
  ``certificate-authority-data``.

Anything else an authorized user asks for is answered ``200 Success``: the stand-in does not
refuse what the real one would carry out. Every request is recorded in ``calls``; every one
outside a proxy prefix also in ``outside``, with the credentials it carried.

Not reproduced: HTML link rewriting (``rewriteHTML``; an MCP client never follows links in an
HTML body), upgrade (websocket) requests, a Service's named ``targetPort`` mapping (a port
maps straight to its endpoint URL), several endpoints (one per port), the per-connection
bandwidth limit, ``proxy-url`` and ``tls-server-name`` on the server side (it answers to its
certificate's names), and admission, audit and priority-and-fairness (429) filters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit, urlunsplit

import httpx
import yaml
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from tests.support.kube_authz import (
    User,
    forbidden,
    not_found,
    request_info,
    unauthorized,
    unavailable,
)
from tests.support.loopback import serve

# Another loopback address than the tools': the Host the API server forwards is not theirs.
API_HOST = "127.0.0.2"
# What an in-cluster tool binds (every interface, so the pod IP answers); for it the MCP SDK's
# streamable_http_app()/sse_app() turn on no DNS-rebinding protection (only for a loopback
# host). A tool behind the stand-in is made with host=IN_CLUSTER_BIND.
IN_CLUSTER_BIND = "0.0.0.0"

PROXY = re.compile(r"^(/api/v1/namespaces/([^/]+)/(services|pods)/([^/:]+):(\d+)/proxy)(/.*)?$")
PODS = re.compile(r"^/api/v1/namespaces/([^/]+)/pods$")
# net/http/httputil.ReverseProxy removes these both ways (RFC 7230 hop-by-hop headers).
HOP_BY_HOP = frozenset(
    {
        "connection",
        "proxy-connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
# Authorization: deleted by the authentication filter; Host: kept (see ``forward``).
NOT_FORWARDED = HOP_BY_HOP | {"authorization", "content-length"}
CORS = frozenset(
    {
        "access-control-allow-credentials",
        "access-control-allow-headers",
        "access-control-allow-methods",
        "access-control-allow-origin",
    }
)


@dataclass
class Pod:
    """A pod as the API server stores it; ``ip`` is its ``status.podIP``, what the pod proxy
    dials (``pod_backends`` says what listens there)."""

    name: str
    labels: dict[str, str]
    ready: bool = True
    ip: str = "10.244.0.7"

    def manifest(self, namespace: str) -> dict[str, Any]:
        condition = {"type": "Ready", "status": "True" if self.ready else "False"}
        return {
            "metadata": {"name": self.name, "namespace": namespace, "labels": self.labels},
            "status": {
                "phase": "Running",
                "conditions": [condition],
                "podIP": self.ip,
                "podIPs": [{"ip": self.ip}],
            },
        }


@dataclass(frozen=True)
class Outside:
    """A request that arrived outside every proxy prefix, and the credentials it carried."""

    method: str
    path: str
    authorization: str | None


def go_path_join(prefix: str, path: str) -> str:
    """Go's ``path.Join(prefix, path)``: joined, then ``path.Clean``ed (``..`` cannot climb
    above the root, so it is dropped there)."""
    parts: list[str] = []
    for segment in f"{prefix}/{path}".split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if parts:
                parts.pop()
            continue
        parts.append(segment)
    return "/" + "/".join(parts)


def rewrite_location(location: str, prepend: str, backend_host: str, request_host: str) -> str:
    """``Transport.rewriteURL`` of ``transport.go``, for a request the API server serves
    (whose ``req.URL`` has no scheme or host, so ``t.Scheme`` and ``t.Host`` are empty)."""
    try:
        parts = urlsplit(location)
    except ValueError:
        return location
    different_host = parts.netloc not in ("", backend_host, request_host)
    path = unquote(parts.path)  # Go's url.URL.Path is the decoded path
    if different_host or not path.startswith("/"):
        return location
    scheme, netloc = (parts.scheme, parts.netloc) if parts.netloc == request_host else ("", "")
    if not path.startswith(prepend):
        joined = go_path_join(prepend, path)
        path = joined + "/" if path.endswith("/") and joined != "/" else joined
    return urlunsplit((scheme, netloc, quote(path, safe="/:@!$&'()*+,;="), parts.query, ""))


Backends = dict[tuple[str, str, int], "str | None"]


@dataclass
class ApiServer:
    """A cluster behind one API server.

    ``services[(ns, svc, port)]``: the Service's ports, each with the URL its ready endpoint
    listens at (None: no endpoint is ready). ``pod_backends[(ns, pod, port)]``: what listens
    on that pod's IP at that port (a sidecar bound to 127.0.0.1 only has no entry: the API
    server dials the pod IP). ``token`` is a cluster-admin's bearer token; ``users`` maps
    other tokens to users and their RBAC rules; ``client_cert_user`` is who a request
    without a token is, when the listener requires a client certificate signed by the CA.
    """

    token: str
    services: Backends = field(default_factory=dict)
    pods: dict[str, list[Pod]] = field(default_factory=dict)
    pod_backends: Backends = field(default_factory=dict)
    users: dict[str, User] = field(default_factory=dict)
    client_cert_user: User | None = None
    calls: list[str] = field(default_factory=list)
    outside: list[Outside] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # "<verb> <resource>" the authorizer denied

    def escapes(self) -> list[Outside]:
        """Requests outside every proxy prefix that carried credentials, except the pod
        listing a sidecar sync makes on purpose."""
        return [
            call
            for call in self.outside
            if call.authorization and not (call.method == "GET" and PODS.match(call.path))
        ]

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        path = request.url.path
        query = f"?{request.url.query}" if request.url.query else ""
        self.calls.append(f"{request.method} {path}{query}")
        if not PROXY.match(path):
            self.outside.append(Outside(request.method, path, request.headers.get("authorization")))
        response = await self.answer(request)
        await response(scope, receive, send)

    def authenticate(self, request: Request) -> User | None:
        """The bearer token's user (the authentication filter), else the client
        certificate's; None is a 401."""
        header = request.headers.get("authorization")
        if header is None:
            return self.client_cert_user
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer":
            return None
        if token == self.token:
            return User("kubernetes-admin")
        return self.users.get(token)

    async def answer(self, request: Request) -> Response:
        user = self.authenticate(request)
        if user is None:
            return unauthorized()
        path, query = request.url.path, request.url.query
        info = request_info(request.method, path, query)
        if not user.may(info):
            self.refused.append(f"{info.verb} {info.combined or info.path}")
            return forbidden(user.name, info)
        listing = PODS.match(path)
        if listing and request.method == "GET":
            return self.list_pods(listing.group(1), query)
        proxied = PROXY.match(path)
        if proxied is None:
            # What a cluster-admin's token gets: the request is carried out.
            return JSONResponse({"kind": "Status", "status": "Success", "code": 200})
        prefix, namespace, kind, name, port, rest = proxied.groups()
        located = self.locate(namespace, kind, name, int(port))
        if isinstance(located, Response):
            return located
        if not rest and request.method in ("GET", "HEAD"):
            # proxyRedirectsforRootPath: the query string is kept.
            query_part = f"?{query}" if query else ""
            return Response(status_code=301, headers={"location": f"{path}/{query_part}"})
        upstream, dialled = located
        return await self.forward(request, upstream, dialled, rest or "/", prefix)

    def locate(self, namespace: str, kind: str, name: str, port: int) -> Any:
        """``ResourceLocation`` of the service or pod registry: the backend URL and the
        address dialled, or the error Status the API server answers instead."""
        if kind == "services":
            ports = {
                p: url
                for (ns, svc, p), url in self.services.items()
                if (ns, svc) == (namespace, name)
            }
            if not ports:
                return not_found("services", name)
            if port not in ports:
                return unavailable(f'no service port {port} found for service "{name}"')
            upstream = ports[port]
            if upstream is None:
                return unavailable(f'no endpoints available for service "{name}"')
            return upstream, urlsplit(upstream).netloc
        pod = next((p for p in self.pods.get(namespace, []) if p.name == name), None)
        if pod is None:
            return not_found("pods", name)
        # The pod proxy dials podIP:port; nothing listening there is a refused dial.
        return self.pod_backends.get((namespace, name, port)), f"{pod.ip}:{port}"

    def list_pods(self, namespace: str, query: str) -> Response:
        selector = parse_qs(query).get("labelSelector", [""])[0]
        wanted = dict(term.split("=", 1) for term in selector.split(",") if term)
        items = [
            pod.manifest(namespace)
            for pod in self.pods.get(namespace, [])
            if all(pod.labels.get(k) == v for k, v in wanted.items())
        ]
        return JSONResponse({"kind": "PodList", "apiVersion": "v1", "items": items})

    @staticmethod
    async def forward(
        request: Request, upstream: str | None, dialled: str, rest: str, prefix: str
    ) -> Response:
        refused = unavailable(
            f"error trying to reach service: dial tcp {dialled}: connect: connection refused"
        )
        if upstream is None:
            return refused
        # The Host header is the one the client sent the API server: the handler does not set
        # UseLocationHost, and httputil.ReverseProxy keeps the incoming Host.
        headers = {k: v for k, v in request.headers.items() if k.lower() not in NOT_FORWARDED}
        headers["x-forwarded-uri"] = request.url.path
        if request.client is not None:
            headers["x-forwarded-for"] = request.client.host
        query = f"?{request.url.query}" if request.url.query else ""
        client = httpx.AsyncClient(timeout=httpx.Timeout(30.0))
        try:
            outgoing = client.build_request(
                request.method,
                upstream + rest + query,
                content=await request.body(),
                headers=headers,
            )
            reply = await client.send(outgoing, stream=True)
        except httpx.HTTPError:
            await client.aclose()
            return refused  # transport.go: NewServiceUnavailable("error trying to reach ...")
        kept = {
            k: v
            for k, v in reply.headers.items()
            if k.lower() not in HOP_BY_HOP | CORS | {"content-length"}
        }
        if "location" in kept:
            kept["location"] = rewrite_location(
                kept["location"], prefix, urlsplit(upstream).netloc, request.headers["host"]
            )

        async def close() -> None:
            await reply.aclose()
            await client.aclose()

        return StreamingResponse(
            reply.aiter_raw(),  # as sent: encoded bodies stay encoded
            status_code=reply.status_code,
            headers=kept,
            background=BackgroundTask(close),
        )


@contextmanager
def serve_api(api: ApiServer, **config: Any) -> Iterator[str]:
    """Serve the stand-in at ``API_HOST`` (``config``: TLS settings for uvicorn); yields its
    URL. Not 127.0.0.1: a tool must see a Host that is not its own, as in a cluster."""
    with serve(api, host=API_HOST, **config) as url:
        yield url


def kubeconfig(
    server: str,
    token: str | None,
    cluster: dict[str, Any] | None = None,
    user: dict[str, Any] | None = None,
) -> str:
    """An inline kubeconfig document (as ``kubernetes:kubeconfig`` may hold it); ``cluster``
    adds e.g. ``certificate-authority-data``, ``user`` e.g. ``client-certificate-data``."""
    credentials = {"token": token} if token else {}
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "c", "cluster": {"server": server, **(cluster or {})}}],
            "users": [{"name": "u", "user": {**credentials, **(user or {})}}],
            "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "ctx",
        }
    )


def proxy_sync_inputs(kubeconfig_value: Any, **extra: Any) -> dict[str, Any]:
    """ToolSchemaSync's inputs for service tool ``memory`` in ``apps``, port 8080, synced
    through the API server's proxy with ``kubeconfig_value``; ``extra`` added or replaced."""
    return {
        "endpoint": "http://memory.apps.svc.cluster.local:8080",
        "mcp_path": "/mcp",
        "access": "apiserver-proxy",
        "namespace": "apps",
        "service": "memory",
        "port": 8080,
        "timeout": 3,
        "required": False,
        "kubeconfig": kubeconfig_value,
        **extra,
    }


def kubeconfig_file(directory: Path, server: str, token: str) -> str:
    path = directory / "kubeconfig"
    path.write_text(kubeconfig(server, token))
    return str(path)
