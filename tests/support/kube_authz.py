"""How the Kubernetes API server names a request and decides whether a user may make it, for
the stand-in API server (``tests/support/apiserver.py``). Written from:

- ``k8s.io/apiserver/pkg/endpoints/request/requestinfo.go`` ``NewRequestInfo``: POST is
  ``create``, GET and HEAD ``get`` (``list``/``watch`` without a name), PUT ``update``, PATCH
  ``patch``, DELETE ``delete`` (``deletecollection`` without a name), any other method no
  verb; ``/namespaces/<ns>/<resource>/<name>/<subresource>/...``, so a proxied
  ``POST .../services/memory:8080/proxy/mcp`` is ``create`` on ``services/proxy``, name
  ``memory:8080``;
- ``k8s.io/kubernetes/pkg/apis/rbac/v1/evaluation_helpers.go`` (``VerbMatches``,
  ``APIGroupMatches``, ``ResourceMatches`` with ``*`` and ``*/<subresource>``,
  ``ResourceNameMatches``), a RoleBinding granting in its namespace and a ClusterRoleBinding
  everywhere;
- ``k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go`` ``Forbidden`` and
  ``apimachinery/pkg/api/errors`` ``NewForbidden``/``NewNotFound``/``NewServiceUnavailable``/
  ``NewUnauthorized``: the JSON ``Status`` bodies, field for field.

Not reproduced: aggregated ClusterRoles, impersonation, webhook authorizers, the ``/proxy``
verb-via-path prefix (deprecated), and ``nonResourceURLs`` other than ``*``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from starlette.responses import JSONResponse

_VERBS = {
    "POST": "create",
    "GET": "get",
    "HEAD": "get",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}


@dataclass(frozen=True)
class RequestInfo:
    """The fields of Kubernetes' ``RequestInfo`` the authorizer and the handlers read."""

    is_resource: bool
    verb: str
    path: str
    api_group: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""

    @property
    def combined(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


def request_info(method: str, path: str, query: str) -> RequestInfo:
    """``NewRequestInfo`` for the ``/api`` (groupless) and ``/apis`` prefixes."""
    parts = [p for p in path.split("/") if p]
    plain = RequestInfo(False, method.lower(), path)
    if len(parts) < 3 or parts[0] not in ("api", "apis"):
        return plain
    prefix, parts, group = parts[0], parts[1:], ""
    if prefix == "apis":
        if len(parts) < 3:
            return plain
        group, parts = parts[0], parts[1:]
    parts = parts[1:]  # the version
    verb = _VERBS.get(method.upper(), "")
    namespace = ""
    if parts and parts[0] == "namespaces" and len(parts) > 1:
        namespace = parts[1]
        if len(parts) > 2 and parts[2] not in ("status", "finalize"):
            parts = parts[2:]
    resource = parts[0] if parts else ""
    name = parts[1] if len(parts) >= 2 else ""
    subresource = parts[2] if len(parts) >= 3 else ""
    if not name and verb == "get":
        watch = parse_qs(query).get("watch", [""])[0].lower() not in ("", "false", "0")
        verb = "watch" if watch else "list"
    if not name and verb == "delete":
        verb = "deletecollection"
    return RequestInfo(True, verb, path, group, namespace, resource, subresource, name)


@dataclass(frozen=True)
class Rule:
    """One RBAC PolicyRule, bound by a RoleBinding in ``namespace`` (None: a
    ClusterRoleBinding, granting in every namespace and at the cluster scope)."""

    verbs: tuple[str, ...]
    resources: tuple[str, ...]
    namespace: str | None = None
    api_groups: tuple[str, ...] = ("",)
    resource_names: tuple[str, ...] = ()

    def allows(self, info: RequestInfo) -> bool:
        if not info.is_resource:
            return "*" in self.resources and "*" in self.verbs and self.namespace is None
        if self.namespace is not None and info.namespace != self.namespace:
            return False
        verb = "*" in self.verbs or info.verb in self.verbs
        group = "*" in self.api_groups or info.api_group in self.api_groups
        resource = any(
            r in ("*", info.combined) or (info.subresource and r == f"*/{info.subresource}")
            for r in self.resources
        )
        names = not self.resource_names or info.name in self.resource_names
        return verb and group and resource and names


CLUSTER_ADMIN = (Rule(("*",), ("*",), None, ("*",)),)


@dataclass
class User:
    """An authenticated user and the rules its bindings grant."""

    name: str
    rules: tuple[Rule, ...] = field(default_factory=lambda: CLUSTER_ADMIN)

    def may(self, info: RequestInfo) -> bool:
        return any(rule.allows(info) for rule in self.rules)


def status(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> Any:
    """A ``metav1.Status`` failure as the API server writes it (JSON, in its field order)."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
    }
    if details:
        body["details"] = details
    body["code"] = code
    return JSONResponse(body, code)


def unauthorized() -> Any:
    return status(401, "Unauthorized", "Unauthorized")


def forbidden(user: str, info: RequestInfo) -> Any:
    """``responsewriters.Forbidden`` with RBAC's empty reason."""
    if not info.is_resource:
        return status(
            403, "Forbidden", f'forbidden: User "{user}" cannot {info.verb} path "{info.path}"'
        )
    where = f'in the namespace "{info.namespace}"' if info.namespace else "at the cluster scope"
    why = (
        f'User "{user}" cannot {info.verb} resource "{info.combined}" in API group '
        f'"{info.api_group}" {where}'
    )
    qualified = f"{info.resource}.{info.api_group}" if info.api_group else info.resource
    subject = f'{qualified} "{info.name}"' if info.name else qualified
    details: dict[str, Any] = {"name": info.name} if info.name else {}
    if info.api_group:
        details["group"] = info.api_group
    details["kind"] = info.resource
    return status(403, "Forbidden", f"{subject} is forbidden: {why}", details)


def not_found(resource: str, name: str) -> Any:
    return status(
        404, "NotFound", f'{resource} "{name}" not found', {"name": name, "kind": resource}
    )


def unavailable(message: str) -> Any:
    return status(503, "ServiceUnavailable", message)
