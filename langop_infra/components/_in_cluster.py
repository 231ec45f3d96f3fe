"""Addresses a standalone component was given that name an in-cluster Service the program
neither creates nor declares (config/checks/_in_cluster_services.py is the stack file's rule).

A model's ``endpoint``, an agent's MCP server or remote A2A peer ``url`` and an external
memory's ``address`` at ``http://<svc>.<ns>.svc.cluster.local`` reach a pod only if that
Service exists. The program makes one for each service-mode LanguageTool (a managed memory's
included), each LanguageAgent with ports or A2A and each gateway LanguageModel built before;
any other is declared with :func:`external_service`. A component in a namespace given as an
Output is in no namespace yet: a Service of its name is taken to be it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langop_infra.config.checks._in_cluster_services import EVERY_CLUSTER, KIND, service_of
from langop_infra.core._program_index import built_components, index_for_building
from langop_infra.core.problems import Problem, SpecError
from langop_infra.manifests._gateway import GATEWAY_NAME

DECLARED = "ExternalService"
# The kinds whose components may make a Service of their name (a gateway's is "gateway").
SERVING = frozenset({"LanguageTool", "LanguageAgent", "ModelGateway", DECLARED})
# Components waiting for their namespace Output, by the name their Service would have.
PENDING = "pending"


def _makes_service(kind: str, component: Any) -> bool:
    """Whether ``component`` (of ``kind``, as the program index holds it) has a Service."""
    if kind == "LanguageTool":
        return component.spec.deployment_mode == "service"
    if kind == "LanguageAgent":
        return bool(component.spec.ports) or component.spec.a2a is not None
    return kind in SERVING


def external_service(name: str, namespace: str) -> None:
    """Declare that Service ``name`` of ``namespace`` runs already (made by something other
    than this program), so components may be given its address; as a stack file's
    ``externalServices: [{name, namespace}]``."""
    index_for_building()[(DECLARED, namespace, name)] = True


def services() -> tuple[set[tuple[str, str]], set[str]]:
    """(namespace, name) of the Services this program makes or declares, the API server's
    included; and the Service names of those whose namespace is not known yet."""
    made: set[tuple[str, str]] = set(EVERY_CLUSTER)
    waiting: set[str] = set()
    for (kind, namespace, name), component in built_components().items():
        if kind == PENDING:
            waiting.add(name)
        elif _makes_service(kind, component):
            made.add((namespace, GATEWAY_NAME if kind == "ModelGateway" else name))
    return made, waiting


def refuse_unknown_services(addresses: Iterable[tuple[str, object]], own: str) -> None:
    """A field problem for each address (``(field, url)``; a value not a string is skipped:
    an Output is checked nowhere) naming a Service the program does not have; ``own`` is the
    component's namespace."""
    made, waiting = services()
    namespaces = {ns for ns, _ in made} | {own}
    problems: list[Problem] = []
    for field, url in addresses:
        found = service_of(url, namespaces) if isinstance(url, str) else None
        if found is None or found in made or found[1] in waiting:
            continue
        namespace, name = found
        problems.append(
            Problem(
                field,
                f"{url} is Service {name!r} in namespace {namespace!r}, which this program "
                "does not create, so pods would call nothing: point it at a component built "
                "before this one (a service-mode LanguageTool, an agent with ports or A2A, a "
                "gateway LanguageModel), or, if it runs already, declare it first with "
                f"langop_infra.external_service({name!r}, {namespace!r})",
                KIND,
            )
        )
    if problems:
        raise SpecError(problems)


def pending(kind: str, name: str) -> None:
    """Record a component of ``kind`` whose namespace is an Output, by its Service's name."""
    if kind in SERVING:
        index_for_building()[(PENDING, "", GATEWAY_NAME if kind == "ModelGateway" else name)] = True
