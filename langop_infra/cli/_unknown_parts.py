"""Rendered manifests in which values known only at `pulumi up` show as ``[unknown]``: the
parts ``graph`` and ``outputs`` read, each either known or reported unknown, never a crash.

A connection's verdict is unknown when the spec of a NetworkPolicy that may decide it is
unknown, when the port is unknown, or when a pod label whose value is unknown changes the
answer: every value a selector compares that key with is tried, and one that no selector
names. Objects whose namespace is unknown are taken to share one namespace, as they do when
a program builds them from one Output (``namespace=ns.metadata.name``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import replace
from typing import Any, cast

from langop_infra.netpol import NAMESPACE_NAME_LABEL, IPAddress, Network, Pod
from langop_infra.offline._engine_values import UNKNOWN_MARKER

# A label value no selector names (label values cannot hold a space).
OTHER_VALUE = "(any other value)"
# Cases tried for one pair of endpoints; past this the verdict is reported unknown.
MAX_CASES = 256


def has_unknown(value: object) -> bool:
    """Whether ``value`` is, or holds, the render's unknown marker."""
    if isinstance(value, str):
        return value == UNKNOWN_MARKER
    if isinstance(value, dict):
        return any(has_unknown(v) for v in cast("dict[Any, Any]", value).values())
    if isinstance(value, list):
        return any(has_unknown(v) for v in cast("list[Any]", value))
    return False


def mapping(value: object) -> dict[str, Any]:
    """``value`` if it is a mapping; an unknown or unset part reads as empty."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


def pod_template(workload: dict[str, Any]) -> dict[str, Any]:
    """A Deployment's or a CronJob's pod template; empty where it is unknown."""
    spec = mapping(workload.get("spec"))
    if workload.get("kind") == "CronJob":
        spec = mapping(mapping(spec.get("jobTemplate")).get("spec"))
    return mapping(spec.get("template"))


def pod_spec(workload: dict[str, Any]) -> dict[str, Any] | None:
    """A workload's pod spec, or None when it, its containers or one of them is unknown."""
    spec = mapping(pod_template(workload).get("spec"))
    containers: object = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        return None
    if not all(isinstance(c, dict) for c in cast("list[Any]", containers)):
        return None
    return spec


def pod_labels(workload: dict[str, Any]) -> dict[str, str] | None:
    """A workload's pod labels (a value known only at `pulumi up` is the unknown marker), or
    None when the labels as a whole are unknown."""
    metadata: object = pod_template(workload).get("metadata")
    labels: object = mapping(metadata).get("labels") if isinstance(metadata, dict) else metadata
    if labels is not None and not isinstance(labels, dict):
        return None
    return {str(k): str(v) for k, v in mapping(labels).items()}


def _selector_values(specs: list[object]) -> dict[str, set[str]]:
    """Every value a label selector among ``specs`` compares each label key with."""
    found: dict[str, set[str]] = {}

    def walk(node: object) -> None:
        if isinstance(node, list):
            for item in cast("list[Any]", node):
                walk(item)
            return
        if not isinstance(node, dict):
            return
        node = cast("dict[str, Any]", node)
        for key, value in mapping(node.get("matchLabels")).items():
            found.setdefault(key, set()).add(str(value))
        expressions: object = node.get("matchExpressions")
        for expression in cast("list[Any]", expressions if isinstance(expressions, list) else []):
            values: object = mapping(expression).get("values")
            listed = cast("list[Any]", values if isinstance(values, list) else [])
            found.setdefault(str(mapping(expression).get("key")), set()).update(map(str, listed))
        for value in node.values():
            walk(value)

    walk(specs)
    return found


class Verdicts:
    """``Network.allows`` over rendered NetworkPolicies some of whose parts may be unknown:
    True, False, or None for unknown."""

    def __init__(self, manifests: list[dict[str, Any]]) -> None:
        policies = [m for m in manifests if m.get("kind") == "NetworkPolicy"]
        known = [p for p in policies if not _unknown_policy(p)]
        self._doubtful = {
            str(mapping(p.get("metadata")).get("namespace")) for p in policies if _unknown_policy(p)
        }
        self.network = Network(known)
        self._values = _selector_values([p.get("spec") for p in known])

    def doubtful(self, namespace: str) -> bool:
        """Whether policies that may decide connections in ``namespace`` are unknown."""
        return namespace in self._doubtful or UNKNOWN_MARKER in self._doubtful

    def allows(
        self, source: Pod | IPAddress, destination: Pod | IPAddress, port: int | None
    ) -> bool | None:
        if port is None:
            return None
        pods = [e for e in (source, destination) if isinstance(e, Pod)]
        if any(self.doubtful(p.namespace) for p in pods):
            return None
        answers: set[bool] = set()
        for case in self._cases(source, destination):
            if case is None:
                return None
            answers.add(self.network.allows(case[0], case[1], port))
        return answers.pop() if len(answers) == 1 else None

    def _cases(
        self, source: Pod | IPAddress, destination: Pod | IPAddress
    ) -> Iterator[tuple[Pod | IPAddress, Pod | IPAddress] | None]:
        """The endpoints with each unknown label value replaced, in every way that matters;
        one None when there are too many ways."""
        ends = (source, destination)
        slots = [
            (i, key)
            for i, end in enumerate(ends)
            if isinstance(end, Pod)
            for key, value in end.labels.items()
            if value == UNKNOWN_MARKER
        ]
        choices = [[*sorted(self._values.get(key, ())), OTHER_VALUE] for _, key in slots]
        count = 1
        for options in choices:
            count *= len(options)
        if count > MAX_CASES:
            yield None
            return
        for picked in itertools.product(*choices):
            case = list(ends)
            for (i, key), value in zip(slots, picked, strict=True):
                pod = cast("Pod", case[i])
                case[i] = replace(pod, labels={**pod.labels, key: value})
            yield case[0], case[1]


def _unknown_policy(policy: dict[str, Any]) -> bool:
    """Whether the policy's spec holds an unknown other than a namespace's name (an unknown
    namespace is the one unknown namespace, whose name label is the marker)."""

    def without_names(node: object) -> object:
        if isinstance(node, list):
            return [without_names(v) for v in cast("list[Any]", node)]
        if not isinstance(node, dict):
            return node
        node = cast("dict[str, Any]", node)
        kept = {k: without_names(v) for k, v in node.items() if k != "namespaceSelector"}
        labels = mapping(mapping(node.get("namespaceSelector")).get("matchLabels"))
        if "namespaceSelector" in node and set(labels) == {NAMESPACE_NAME_LABEL}:
            return kept
        return {
            **kept,
            **({"ns": node["namespaceSelector"]} if "namespaceSelector" in node else {}),
        }

    return has_unknown(without_names(policy.get("spec")))
