"""A loopback STAND-IN for the Kubernetes API server's proxy (no real API server runs here).

It checks the bearer token as the API server does, forwards
``/api/v1/namespaces/<ns>/services/<svc>:<port>/proxy/...`` and
``/api/v1/namespaces/<ns>/pods/<pod>:<port>/proxy/...`` to real MCP servers, lists pods by
``labelSelector`` (equality selectors only), and answers 503 when the backend is down, as
the real proxy does. Everything it is asked is recorded in ``calls``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx
import yaml
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

PROXY = re.compile(r"^/api/v1/namespaces/([^/]+)/(services|pods)/([^/:]+):(\d+)/proxy(/.*)?$")
PODS = re.compile(r"^/api/v1/namespaces/([^/]+)/pods$")
FORWARDED = ("content-type", "accept", "mcp-session-id", "mcp-protocol-version")


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


@dataclass
class ApiServer:
    """``services[(ns, svc)]`` and ``pod_backends[(ns, pod)]`` name the upstream base URLs."""

    token: str
    services: dict[tuple[str, str], str] = field(default_factory=dict)
    pods: dict[str, list[Pod]] = field(default_factory=dict)
    pod_backends: dict[tuple[str, str], str] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        query = f"?{request.url.query}" if request.url.query else ""
        self.calls.append(f"{request.method} {request.url.path}{query}")
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
            return JSONResponse({"kind": "Status", "code": 404, "reason": "NotFound"}, 404)
        namespace, kind, name, _port, rest = proxied.groups()
        backends = self.services if kind == "services" else self.pod_backends
        upstream = backends.get((namespace, name))
        if upstream is None:
            return JSONResponse({"kind": "Status", "code": 404, "reason": "NotFound"}, 404)
        return await self.forward(request, upstream + (rest or "/"))

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
    async def forward(request: Request, url: str) -> Response:
        headers = {k: v for k, v in request.headers.items() if k.lower() in FORWARDED}
        try:
            async with httpx.AsyncClient() as client:
                reply = await client.request(
                    request.method, url, content=await request.body(), headers=headers
                )
        except httpx.HTTPError:
            return Response("error trying to reach service: connection refused", 503)
        kept = {
            k: v
            for k, v in reply.headers.items()
            if k.lower() in ("content-type", "mcp-session-id")
        }
        return Response(reply.content, status_code=reply.status_code, headers=kept)


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
