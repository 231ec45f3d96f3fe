"""May endpoint A open a connection to endpoint B? Kubernetes NetworkPolicy semantics, offline.

The input is rendered ``networking.k8s.io/v1`` NetworkPolicy manifests as plain dicts (what
``kubectl get -o yaml`` shows) plus optional namespace labels. The rules are Kubernetes':

- a pod is isolated for ingress (egress) iff a policy in its namespace selects it and lists
  Ingress (Egress) in ``policyTypes``; when ``policyTypes`` is omitted or empty it defaults, as
  the API server does, to Ingress plus Egress iff the ``egress`` list is non-empty;
- allows are the union of all selecting policies' rules; a connection needs egress admitted at
  the source and ingress admitted at the destination, each only where that side is isolated;
- external addresses (``IPAddress``) are never isolated: only the pod side is checked;
- a named pod may always reach itself.

Not modelled: traffic from a pod's own node (always allowed by Kubernetes), hostNetwork pods,
Services (pass the backing pod and its container port, i.e. the port after DNAT), and the
protocol of a named container port (a named port matches on name and number only).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, cast

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
PROTOCOLS = ("TCP", "UDP", "SCTP")

_IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class Pod:
    """A pod: namespace, labels, optional name and IP, and named container ports (name -> port)."""

    namespace: str
    labels: Mapping[str, str]
    name: str = ""
    ip: str | None = None
    ports: Mapping[str, int] = field(default_factory=dict[str, int])

    def __post_init__(self) -> None:
        if self.ip is not None:
            ipaddress.ip_address(self.ip)


@dataclass(frozen=True)
class IPAddress:
    """An address outside the pod network, such as an external API; never isolated."""

    ip: str

    def __post_init__(self) -> None:
        ipaddress.ip_address(self.ip)


Endpoint = Pod | IPAddress


@dataclass(frozen=True)
class Verdict:
    """Whether a connection is allowed, and which policies decided it."""

    allowed: bool
    reason: str


_MATCHERS: dict[str, Callable[[Mapping[str, str], str, frozenset[str]], bool]] = {
    "In": lambda labels, key, values: labels.get(key) in values,
    "NotIn": lambda labels, key, values: labels.get(key) not in values,
    "Exists": lambda labels, key, values: key in labels,
    "DoesNotExist": lambda labels, key, values: key not in labels,
}


@dataclass(frozen=True)
class _Selector:
    labels: tuple[tuple[str, str], ...]
    expressions: tuple[tuple[str, str, frozenset[str]], ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(labels.get(key) == value for key, value in self.labels) and all(
            _MATCHERS[operator](labels, key, values) for key, operator, values in self.expressions
        )


@dataclass(frozen=True)
class _Peer:
    pods: _Selector | None
    namespaces: _Selector | None
    cidr: _IPNetwork | None = None
    excepts: tuple[_IPNetwork, ...] = ()


@dataclass(frozen=True)
class _Port:
    protocol: str
    port: int | str | None
    end_port: int | None


@dataclass(frozen=True)
class _Rule:
    peers: tuple[_Peer, ...] | None  # None: every peer
    ports: tuple[_Port, ...] | None  # None: every port


@dataclass(frozen=True)
class _Policy:
    key: str
    order: int
    namespace: str
    selector: _Selector
    ingress: tuple[_Rule, ...] | None  # None: the policy does not isolate for ingress
    egress: tuple[_Rule, ...] | None


class _Query(NamedTuple):
    """One connection as a rule sees it: the far end resolved once, and the port asked for."""

    other: Endpoint
    other_namespace_labels: Mapping[str, str]
    other_address: ipaddress.IPv4Address | ipaddress.IPv6Address | None
    destination: Endpoint
    port: int
    protocol: str


def _mapping(value: object, where: str, fields: tuple[str, ...]) -> dict[str, Any]:
    """``value`` as a dict without null entries (null means omitted), rejecting unknown fields."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{where}: expected a mapping, got {type(value).__name__}")
    mapping = cast("Mapping[Any, Any]", value)
    unknown = sorted(str(key) for key in mapping if key not in fields)
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {unknown}; expected some of {list(fields)}")
    return {str(key): item for key, item in mapping.items() if item is not None}


def _list(value: object, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        raise ValueError(f"{where}: expected a list, got {type(value).__name__}")
    return list(cast("list[Any] | tuple[Any, ...]", value))


def _selector(value: Any, where: str) -> _Selector:
    spec = _mapping(value, where, ("matchLabels", "matchExpressions"))
    given: Any = spec.get("matchLabels", {})
    labels = cast("Mapping[Any, Any]", given) if isinstance(given, Mapping) else None
    if labels is None or not all(
        isinstance(key, str) and isinstance(value, str) for key, value in labels.items()
    ):
        raise ValueError(f"{where}.matchLabels: expected strings mapped to strings, got {given!r}")
    expressions: list[tuple[str, str, frozenset[str]]] = []
    for i, raw in enumerate(_list(spec.get("matchExpressions"), f"{where}.matchExpressions")):
        at = f"{where}.matchExpressions[{i}]"
        expression = _mapping(raw, at, ("key", "operator", "values"))
        key, operator = expression.get("key"), expression.get("operator")
        values = _list(expression.get("values"), f"{at}.values")
        if operator not in _MATCHERS:
            raise ValueError(f"{at}.operator: {operator!r} is not one of {', '.join(_MATCHERS)}")
        if not isinstance(key, str) or not key:
            raise ValueError(f"{at}.key: expected a label key, got {key!r}")
        if not all(isinstance(value, str) for value in values):
            raise ValueError(f"{at}.values: expected strings, got {values!r}")
        if (operator in ("In", "NotIn")) != bool(values):
            raise ValueError(f"{at}.values: In/NotIn need values, Exists/DoesNotExist take none")
        expressions.append((key, operator, frozenset(values)))
    return _Selector(tuple(sorted(labels.items())), tuple(expressions))


def _network(value: Any, where: str) -> _IPNetwork:
    try:
        return ipaddress.ip_network(value, strict=False)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: {value!r} is not a CIDR such as 10.0.0.0/8") from None


def _peer(value: object, where: str) -> _Peer:
    spec = _mapping(value, where, ("podSelector", "namespaceSelector", "ipBlock"))
    if not spec:
        raise ValueError(f"{where}: a peer needs podSelector, namespaceSelector or ipBlock")
    if "ipBlock" not in spec:
        pods, namespaces = (
            _selector(spec[key], f"{where}.{key}") if key in spec else None
            for key in ("podSelector", "namespaceSelector")
        )
        return _Peer(pods, namespaces)
    if len(spec) > 1:
        raise ValueError(f"{where}: ipBlock cannot be combined with a selector in one peer")
    block = _mapping(spec["ipBlock"], f"{where}.ipBlock", ("cidr", "except"))
    cidr = _network(block.get("cidr"), f"{where}.ipBlock.cidr")
    excepts: list[_IPNetwork] = []
    for i, raw in enumerate(_list(block.get("except"), f"{where}.ipBlock.except")):
        excluded = _network(raw, f"{where}.ipBlock.except[{i}]")
        inside = excluded.version == cidr.version and excluded.subnet_of(cidr)  # type: ignore[arg-type]
        if not inside or excluded == cidr:
            raise ValueError(f"{where}.ipBlock.except[{i}]: {raw} is not strictly inside {cidr}")
        excepts.append(excluded)
    return _Peer(None, None, cidr, tuple(excepts))


def _port(value: Any, where: str) -> _Port:
    spec = _mapping(value, where, ("protocol", "port", "endPort"))
    protocol, port, end_port = spec.get("protocol", "TCP"), spec.get("port"), spec.get("endPort")
    if protocol not in PROTOCOLS:
        raise ValueError(f"{where}.protocol: {protocol!r} is not one of {', '.join(PROTOCOLS)}")
    named = isinstance(port, str) and port != "" and not port.isdigit()
    if port is not None and not named and not _is_port_number(port):
        raise ValueError(f"{where}.port: expected a number 1-65535 or a port name, got {port!r}")
    numeric = isinstance(port, int)
    if end_port is not None and not (numeric and _is_port_number(end_port) and end_port >= port):
        raise ValueError(f"{where}.endPort: needs a numeric port and port <= endPort <= 65535")
    return _Port(protocol, port, end_port)


def _is_port_number(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 65535


def _rules(spec: Mapping[str, object], direction: str, where: str) -> tuple[_Rule, ...]:
    peers_field = "from" if direction == "ingress" else "to"
    rules: list[_Rule] = []
    for i, raw in enumerate(_list(spec.get(direction), f"{where}.{direction}")):
        at = f"{where}.{direction}[{i}]"
        rule = _mapping(raw, at, (peers_field, "ports"))
        peers = _list(rule.get(peers_field), f"{at}.{peers_field}")
        ports = _list(rule.get("ports"), f"{at}.ports")
        rules.append(
            _Rule(
                tuple(_peer(p, f"{at}.{peers_field}[{j}]") for j, p in enumerate(peers)) or None,
                tuple(_port(p, f"{at}.ports[{j}]") for j, p in enumerate(ports)) or None,
            )
        )
    return tuple(rules)


def _policy(manifest: object, order: int) -> _Policy:
    if not isinstance(manifest, Mapping):
        raise ValueError(f"policies[{order}]: expected a NetworkPolicy mapping, got {manifest!r}")
    policy = cast("Mapping[str, Any]", manifest)
    given: object = policy.get("metadata")
    metadata = cast("Mapping[str, Any]", given if isinstance(given, Mapping) else {})
    name, namespace = metadata.get("name"), metadata.get("namespace")
    where = f"NetworkPolicy {namespace}/{name}"
    kind = (policy.get("apiVersion"), policy.get("kind"))
    if kind != ("networking.k8s.io/v1", "NetworkPolicy"):
        raise ValueError(f"{where}: expected networking.k8s.io/v1 NetworkPolicy, got {kind}")
    if not (isinstance(name, str) and name and isinstance(namespace, str) and namespace):
        raise ValueError(f"{where}: metadata.name and metadata.namespace are required")
    fields = ("podSelector", "policyTypes", "ingress", "egress")
    spec = _mapping(policy.get("spec"), f"{where}: spec", fields)
    if "podSelector" not in spec:
        raise ValueError(f"{where}: spec.podSelector is required; {{}} selects every pod")
    types = _list(spec.get("policyTypes"), f"{where}: spec.policyTypes")
    # The API server's defaulting: a non-empty egress list is what turns Egress on.
    types = types or (["Ingress", "Egress"] if spec.get("egress") else ["Ingress"])
    for policy_type in types:
        if policy_type not in ("Ingress", "Egress"):
            raise ValueError(f"{where}: spec.policyTypes: {policy_type!r} is not Ingress or Egress")
    ingress, egress = (_rules(spec, d, f"{where}: spec") for d in ("ingress", "egress"))
    return _Policy(
        key=f"{namespace}/{name}",
        order=order,
        namespace=namespace,
        selector=_selector(spec["podSelector"], f"{where}: spec.podSelector"),
        ingress=ingress if "Ingress" in types else None,
        egress=egress if "Egress" in types else None,
    )


def _admits(rule: _Rule, query: _Query, policy_namespace: str) -> bool:
    return (
        rule.peers is None or any(_peer_matches(p, query, policy_namespace) for p in rule.peers)
    ) and (rule.ports is None or any(_port_matches(p, query) for p in rule.ports))


def _peer_matches(peer: _Peer, query: _Query, policy_namespace: str) -> bool:
    if peer.cidr is not None:
        ip = query.other_address
        return ip is not None and ip in peer.cidr and all(ip not in e for e in peer.excepts)
    pod = query.other
    if not isinstance(pod, Pod):
        return False
    if peer.namespaces is None:
        in_namespace = pod.namespace == policy_namespace
    else:
        in_namespace = peer.namespaces.matches(query.other_namespace_labels)
    return in_namespace and (peer.pods is None or peer.pods.matches(pod.labels))


def _port_matches(rule: _Port, query: _Query) -> bool:
    if rule.protocol != query.protocol:
        return False
    if rule.port is None:
        return True
    if isinstance(rule.port, str):  # a named port means the destination pod's port of that name
        destination = query.destination
        ports: Mapping[str, int] = destination.ports if isinstance(destination, Pod) else {}
        return ports.get(rule.port) == query.port
    return rule.port <= query.port <= (rule.end_port or rule.port)


def _describe(endpoint: Endpoint) -> str:
    if isinstance(endpoint, IPAddress):
        return endpoint.ip
    if endpoint.name:
        return f"{endpoint.namespace}/{endpoint.name}"
    labels = ",".join(f"{key}={value}" for key, value in sorted(endpoint.labels.items()))
    return f"{endpoint.namespace}/pod{{{labels}}}"


class Network:
    """NetworkPolicies indexed by namespace, built once and queried for many endpoint pairs."""

    def __init__(
        self,
        policies: Iterable[Mapping[str, Any]],
        namespace_labels: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        self._namespace_labels: dict[str, dict[str, str]] = {}
        for namespace, labels in (namespace_labels or {}).items():
            named = labels.get(NAMESPACE_NAME_LABEL, namespace)
            if named != namespace:
                raise ValueError(
                    f"namespace_labels[{namespace!r}]: {NAMESPACE_NAME_LABEL} is always the "
                    f"namespace's own name, got {named!r}"
                )
            self._namespace_labels[namespace] = {**labels, NAMESPACE_NAME_LABEL: namespace}
        # Pods carry few labels, so looking a policy up by one of its matchLabels pairs keeps
        # selection cheap when a namespace holds hundreds of per-agent policies.
        self._by_label: dict[str, dict[tuple[str, str], list[_Policy]]] = {}
        self._unkeyed: dict[str, list[_Policy]] = {}
        self._selected: dict[tuple[str, frozenset[tuple[str, str]]], list[_Policy]] = {}
        seen: set[str] = set()
        self._policies: list[_Policy] = []
        for order, manifest in enumerate(policies):
            policy = _policy(manifest, order)
            self._policies.append(policy)
            if policy.key in seen:
                raise ValueError(f"NetworkPolicy {policy.key}: given twice")
            seen.add(policy.key)
            if policy.selector.labels:
                index = self._by_label.setdefault(policy.namespace, {})
                index.setdefault(policy.selector.labels[0], []).append(policy)
            else:
                self._unkeyed.setdefault(policy.namespace, []).append(policy)

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        """The labels of ``namespace``, always including ``kubernetes.io/metadata.name``."""
        return self._namespace_labels.get(namespace) or {NAMESPACE_NAME_LABEL: namespace}

    def allows(
        self, source: Endpoint, destination: Endpoint, port: int, protocol: str = "TCP"
    ) -> bool:
        """Whether ``source`` may open a connection to ``destination`` on ``protocol`` ``port``."""
        _check_query(source, destination, port, protocol)
        if isinstance(source, Pod) and source.name and source == destination:
            return True
        return all(
            not isolating or admitting
            for _, _, _, isolating, admitting in self._sides(source, destination, port, protocol)
        )

    def explain(
        self, source: Endpoint, destination: Endpoint, port: int, protocol: str = "TCP"
    ) -> Verdict:
        """Like ``allows``, with a reason naming the policies that isolate or admit each side."""
        _check_query(source, destination, port, protocol)
        if isinstance(source, Pod) and source.name and source == destination:
            return Verdict(True, f"allowed: {_describe(source)} may always reach itself")
        admitted: list[str] = []
        blocked: list[str] = []
        sides = self._sides(source, destination, port, protocol)
        for direction, subject, other, isolating, admitting in sides:
            who = _describe(subject)
            if not isolating:
                admitted.append(f"{who} is not isolated for {direction}")
            elif admitting:
                admitted.append(f"{direction} of {who} admitted by [{', '.join(admitting)}]")
            else:
                blocked.append(
                    f"{who} is isolated for {direction} by [{', '.join(isolating)}] and no rule "
                    f"admits {_describe(other)} on {protocol} {port}"
                )
        if blocked:
            return Verdict(False, "blocked: " + "; ".join(blocked))
        return Verdict(True, "allowed: " + "; ".join(admitted))

    def _sides(
        self, source: Endpoint, destination: Endpoint, port: int, protocol: str
    ) -> Iterator[tuple[str, Endpoint, Endpoint, list[str], list[str]]]:
        """For egress at the source, then ingress at the destination: the policies that
        isolate that side, and those of them whose rules admit the connection."""
        for direction, subject, other in (
            ("egress", source, destination),
            ("ingress", destination, source),
        ):
            isolating = [p for p in self._selecting(subject) if getattr(p, direction) is not None]
            if not isolating:
                yield direction, subject, other, [], []
                continue
            query = _Query(
                other,
                self.namespace_labels(other.namespace) if isinstance(other, Pod) else {},
                ipaddress.ip_address(other.ip) if other.ip else None,
                destination,
                port,
                protocol,
            )
            admitting = [
                p.key
                for p in isolating
                if any(_admits(rule, query, p.namespace) for rule in getattr(p, direction))
            ]
            yield direction, subject, other, [p.key for p in isolating], admitting

    def peer_label_keys(self, direction: str) -> frozenset[str]:
        """Every label key the pod selectors of ``direction`` rules' peers look at: two pods
        of one namespace that agree on these keys are admitted alike on that side."""
        keys: set[str] = set()
        for policy in self._policies:
            for rule in getattr(policy, direction) or ():
                for peer in rule.peers or ():
                    if peer.pods is not None:
                        keys |= {key for key, _ in peer.pods.labels}
                        keys |= {key for key, _, _ in peer.pods.expressions}
        return frozenset(keys)

    def selecting(self, pod: Endpoint) -> list[str]:
        """The policies (``namespace/name``) that select ``pod``, in the order given."""
        return [policy.key for policy in self._selecting(pod)]

    def isolated(self, pod: Endpoint, direction: str) -> bool:
        """Whether a policy isolates ``pod`` for ``direction`` (``ingress`` or ``egress``)."""
        return any(getattr(p, direction) is not None for p in self._selecting(pod))

    def _selecting(self, pod: Endpoint) -> list[_Policy]:
        if not isinstance(pod, Pod):
            return []  # addresses outside the pod network are never isolated
        # Asked once per pair of endpoints; the answer depends only on namespace and labels.
        key = (pod.namespace, frozenset(pod.labels.items()))
        found = self._selected.get(key)
        if found is None:
            index = self._by_label.get(pod.namespace, {})
            candidates = [p for item in pod.labels.items() for p in index.get(item, ())]
            candidates += self._unkeyed.get(pod.namespace, ())
            matching = [p for p in candidates if p.selector.matches(pod.labels)]
            found = self._selected[key] = sorted(matching, key=lambda p: p.order)
        return found


def _check_query(source: object, destination: object, port: object, protocol: object) -> None:
    for endpoint in (source, destination):
        if not isinstance(endpoint, Pod | IPAddress):
            raise TypeError(f"expected a Pod or IPAddress, got {endpoint!r}")
    if not _is_port_number(port):
        raise ValueError(f"port: expected a number from 1 to 65535, got {port!r}")
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol: {protocol!r} is not one of {', '.join(PROTOCOLS)}")


def may_reach(
    policies: Iterable[Mapping[str, object]],
    source: Endpoint,
    destination: Endpoint,
    port: int,
    protocol: str = "TCP",
    namespace_labels: Mapping[str, Mapping[str, str]] | None = None,
) -> bool:
    """One-off ``Network(policies, namespace_labels).allows(...)``; build a Network to ask often."""
    return Network(policies, namespace_labels).allows(source, destination, port, protocol)
