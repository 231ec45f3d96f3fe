"""A loopback STAND-IN for the Kubernetes API server's proxy (no real API server runs here).

Written from Kubernetes' own proxy (``k8s.io/apimachinery/pkg/util/proxy``: ``transport.go``
and ``upgradeaware.go``), and at least as hostile to a client as it:

- it checks the bearer token as the API server does, and drops ``Authorization`` before
  proxying (the authentication filter deletes it), so a backend never sees the token;
- ``/api/v1/namespaces/<ns>/services/<svc>:<port>/proxy/...`` and
  ``/api/v1/namespaces/<ns>/pods/<pod>:<port>/proxy/...`` go to real MCP servers, with every
  request header but hop-by-hop ones, and every response header but hop-by-hop and CORS ones;
- a backend's ``Location`` is rewritten as ``Transport.rewriteURL`` does: another host's URL
  and a relative one pass unchanged; an absolute path already under the prefix passes; any
  other absolute path becomes ``path.Join(prefix, location)``, which cleans ``..``, so
  ``/../../../apis/...`` names the API server's own ``/apis/...``;
- bodies are streamed, chunk by chunk as the backend sends them (the real proxy flushes
  every 200 ms, and at once for event streams), so SSE works through it;
- a GET of the bare ``.../proxy`` is redirected to ``.../proxy/`` (``proxyRedirectsforRootPath``);
- it lists pods by ``labelSelector`` (equality selectors only) and answers 503 when the
  backend is down.

Anything else a valid token asks for is answered ``200 Success``, as a cluster-admin
deployer's request would be: the stand-in does not refuse what the real one would carry out.
Every request is recorded in ``calls``; every one outside a proxy prefix also in ``outside``,
with the credentials it carried. HTML link rewriting (``rewriteHTML``) is not reproduced: an
MCP client never follows links in an HTML body.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit, urlunsplit

import httpx
import yaml
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

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
NOT_FORWARDED = HOP_BY_HOP | {"authorization", "host", "content-length"}
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
    name: str
    labels: dict[str, str]
    ready: bool = True

    def manifest(self, namespace: str) -> dict[str, Any]:
        condition = {"type": "Ready", "status": "True" if self.ready else "False"}
        return {
            "metadata": {"name": self.name, "namespace": namespace, "labels": self.labels},
            "status": {"phase": "Running", "conditions": [condition]},
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


@dataclass
class ApiServer:
    """``services[(ns, svc)]`` and ``pod_backends[(ns, pod)]`` name the upstream base URLs."""

    token: str
    services: dict[tuple[str, str], str] = field(default_factory=dict)
    pods: dict[str, list[Pod]] = field(default_factory=dict)
    pod_backends: dict[tuple[str, str], str] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    outside: list[Outside] = field(default_factory=list)

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

    async def answer(self, request: Request) -> Response:
        if request.headers.get("authorization") != f"Bearer {self.token}":
            return JSONResponse({"kind": "Status", "code": 401, "reason": "Unauthorized"}, 401)
        path = request.url.path
        listing = PODS.match(path)
        if listing and request.method == "GET":
            return self.list_pods(listing.group(1), request.url.query)
        proxied = PROXY.match(path)
        if proxied is None:
            # What a cluster-admin's token gets: the request is carried out.
            return JSONResponse({"kind": "Status", "status": "Success", "code": 200})
        prefix, namespace, kind, name, _port, rest = proxied.groups()
        if not rest and request.method in ("GET", "HEAD"):
            return Response(status_code=301, headers={"location": f"{prefix}/"})
        backends = self.services if kind == "services" else self.pod_backends
        upstream = backends.get((namespace, name))
        if upstream is None:
            return JSONResponse({"kind": "Status", "code": 404, "reason": "NotFound"}, 404)
        return await self.forward(request, upstream, rest or "/", prefix)

    def list_pods(self, namespace: str, query: str) -> Response:
        selector = parse_qs(query).get("labelSelector", [""])[0]
        wanted = dict(term.split("=", 1) for term in selector.split(",") if term)
        items = [
            pod.manifest(namespace)
            for pod in self.pods.get(namespace, [])
            if all(pod.labels.get(k) == v for k, v in wanted.items())
        ]
        return JSONResponse({"kind": "PodList", "items": items})

    @staticmethod
    async def forward(request: Request, upstream: str, rest: str, prefix: str) -> Response:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in NOT_FORWARDED}
        headers["x-forwarded-uri"] = request.url.path
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
            return Response("error trying to reach service: connection refused", 503)
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


def kubeconfig(server: str, token: str) -> str:
    """An inline kubeconfig document (as ``kubernetes:kubeconfig`` may hold it)."""
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "c", "cluster": {"server": server}}],
            "users": [{"name": "u", "user": {"token": token}}],
            "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "ctx",
        }
    )


def kubeconfig_file(directory: Path, server: str, token: str) -> str:
    path = directory / "kubeconfig"
    path.write_text(kubeconfig(server, token))
    return str(path)
