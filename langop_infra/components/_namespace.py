"""A component's namespace given as a ``pulumi.Output`` (``namespace=ns.metadata.name``).

The namespace is read from the spec the way every other Output field is
(:class:`langop_infra.components._inputs.Pending`): ``metadata.namespace``, labels, endpoints
and policies are made from its real value as it resolves, and its checks (a DNS label, not a
secret) run then, failing as field errors naming the line that built the component. Under
``pulumi preview`` an unknown namespace stays unknown in every object.

What cannot wait is the objects' logical names (Pulumi URNs must be known when the program
runs): while the namespace is an Output they are prefixed ``[<component's resource name>]``
instead of the namespace. ``[`` cannot start a namespace, so such a name never meets one made
from a plain namespace. The check that no two components of a kind share a namespace and a
name runs when the namespace resolves.
"""

from __future__ import annotations

import dataclasses
from typing import Any, cast

import pulumi

from langop_infra.components import _in_cluster as in_cluster
from langop_infra.components._k8s import register_component
from langop_infra.components._secret_routing import guarded
from langop_infra.config._fields import dns_label
from langop_infra.config._structure import LATE_FIELDS
from langop_infra.core._program_index import index_for_building
from langop_infra.core.problems import Problem, SpecError

# The structural fields a component builds from as they resolve (see inputs.resolve).
LATE = frozenset(LATE_FIELDS)


@dataclasses.dataclass(frozen=True)
class Placement:
    """Where a component's objects go: ``value`` for their ``metadata.namespace`` (the name,
    or an Output of it), ``prefix`` for their logical names."""

    value: str | pulumi.Output[str]
    prefix: str

    @property
    def known(self) -> bool:
        return not isinstance(self.value, pulumi.Output)


def placement(resource_name: str, value: object) -> Placement:
    """The placement of a component named ``resource_name`` whose namespace is ``value``."""
    if isinstance(value, pulumi.Output):
        return Placement(cast("pulumi.Output[str]", value), f"[{resource_name}]")
    return Placement(str(value), str(value))


def registered(component: object, kind: str, where: Placement, name: str, site: str) -> Placement:
    """Record ``component`` (see :func:`register_component`), at once with a known namespace,
    else as it resolves: the namespace its objects get then fails, as a field error naming
    ``site`` (the user's line), when another one of that kind and name is already there."""
    if where.known:
        register_component(component, kind, str(where.value), name)
        return where
    index_for_building()  # made now, in the context the callback copies
    in_cluster.pending(kind, name)

    def record(namespace: str) -> str:
        register_component(component, kind, namespace, name, site=site)
        return namespace

    return Placement(pulumi.Output.from_input(where.value).apply(record), where.prefix)


def checked_name(value: pulumi.Output[object], subject: str, site: str) -> pulumi.Output[str]:
    """A namespace Output of a component whose spec holds no namespace (LanguageModel),
    failing as a field error naming ``site`` when it resolves as a secret or to a name
    Kubernetes refuses."""

    def check(name: object) -> str:
        try:
            return dns_label(str(name))
        except ValueError as exc:
            raise SpecError([Problem("namespace", str(exc))], subject=subject, where=site) from None

    return guarded(value, ("namespace",), subject, site).apply(check)


# Builds objects for a namespace given as an Output: no DNS label of a user's contains it.
STAND_IN = "langop-namespace-stand-in"


def substituted(built: object, namespace: str | pulumi.Output[str]) -> Any:
    """``built`` (objects made for namespace :data:`STAND_IN`) with each string that holds
    the stand-in an Output of it made with ``namespace``: only those fields wait for it."""
    if isinstance(namespace, str):
        return _replaced(built, namespace)
    if isinstance(built, str):
        text = built
        return namespace.apply(lambda n: text.replace(STAND_IN, n)) if STAND_IN in text else text
    if isinstance(built, dict):
        items = cast("dict[object, object]", built).items()
        return {k: substituted(v, namespace) for k, v in items}
    if isinstance(built, (list, tuple)):
        return [substituted(v, namespace) for v in cast("list[object]", built)]
    return built


def _replaced(built: object, namespace: str) -> Any:
    if isinstance(built, str):
        return built.replace(STAND_IN, namespace)
    if isinstance(built, dict):
        return {k: _replaced(v, namespace) for k, v in cast("dict[object, object]", built).items()}
    if isinstance(built, (list, tuple)):
        return [_replaced(v, namespace) for v in cast("list[object]", built)]
    return built
