"""Endpoints that deserve a second look, reported as warnings by validate and render (and
judged by the policy pack's ``langop-endpoints``, which configuration can make mandatory):

- a URL whose query carries a credential (``?apikey=``, ``&token=``, ``sig=``). An MCP
  server's or webhook tool's is routed into the agent's own Secret (config.yaml and env carry
  ``${VAR}``: :mod:`langop_infra.manifests._query_secrets`), but still travels in the URL
  into every access log on the way; a model endpoint, an HttpTool's endpoint (its catalogue
  ConfigMap) and a schema-sync URL cannot be routed, so theirs lands in plain text. Each
  warning says which, and names the field that takes it from a Secret instead;
- a URL on a link-local address (``169.254.0.0/16``, ``fe80::/10``), a cloud metadata
  service (``169.254.169.254``, ``metadata.google.internal``, ``fd00:ec2::254``,
  ``100.100.100.200``), the Kubernetes API server (``kubernetes.default…``) or a node
  service on loopback (``localhost:10250``, the kubelet): a tool, an MCP server or a model
  there hands the agent the node's or the cluster's credentials. Addresses are judged
  normalized: decimal, hex, octal and short IPv4 forms (``2852039166``, ``0xa9fea9fe``,
  ``169.254.43518``) and IPv4 inside IPv6 (``::ffff:169.254.169.254``, NAT64) are the
  address they name. Loopback on other ports is a sidecar's contract, not a warning. The
  API server by address: its ClusterIP (the first address of ``defaults.serviceCidr``, else
  where the common distributions put it) and any host on port 6443.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterator, Mapping
from urllib.parse import parse_qsl, urlsplit

from langop_infra.config.cluster import ClusterSpec
from langop_infra.core.problems import Problem, join_path

_CREDENTIAL_PARAM = re.compile(
    r"(?i)^(api[_-]?key|apikey|key|token|access[_-]?token|auth|authorization|secret|"
    r"client[_-]?secret|password|passwd|pwd|sig|signature|code|x-api-key|.*[_-](key|token|"
    r"secret|password))$"
)
METADATA_HOSTS = frozenset(
    {
        "169.254.169.254",
        "169.254.170.2",
        "fd00:ec2::254",
        "100.100.100.200",
        "metadata",
        "metadata.google.internal",
        "metadata.azure.internal",
    }
)
API_SERVER_HOSTS = frozenset(
    {
        "kubernetes",
        "kubernetes.default",
        "kubernetes.default.svc",
        "kubernetes.default.svc.cluster.local",
    }
)
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# The ``kubernetes`` Service's ClusterIP (the first address of the Service range) where
# common distributions put it by default; ``defaults.serviceCidr`` names a cluster's own.
DEFAULT_API_SERVER_IPS: Mapping[Address, str] = {
    ipaddress.ip_address(ip): f"the Kubernetes API server's ClusterIP in {where}"
    for ip, where in (
        ("10.96.0.1", "kubeadm, kind and minikube clusters"),
        ("10.43.0.1", "k3s clusters"),
        ("10.100.0.1", "EKS clusters"),
        ("172.20.0.1", "EKS clusters"),
        ("10.0.0.1", "AKS clusters"),
        ("34.118.224.1", "GKE clusters"),
        ("172.30.0.1", "OpenShift clusters"),
        ("10.152.183.1", "MicroK8s clusters"),
    )
}
API_SERVER_PORT = 6443
# Node services an agent must not reach through loopback (a host-network pod's localhost).
NODE_PORTS = {
    10250: "the kubelet's API",
    10255: "the kubelet's read-only API",
    10248: "the kubelet's health port",
    10249: "kube-proxy's metrics",
    10256: "kube-proxy's health port",
    2379: "etcd",
    2380: "etcd's peer port",
    6443: "the Kubernetes API server",
}
_NUMERIC_HOST = re.compile(r"(?i)^(0x[0-9a-f]+|[0-9]+)(\.(0x[0-9a-f]+|[0-9]+)){0,3}$")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
# Where each field's credential goes instead of its query string.
SECRET_ROUTES = {
    "mcpServers": "a header with valueFrom: {secretKeyRef: {name, key}}",
    "webhookTools": "authentication: {type: apiKey, headerName, ...} from a Secret",
    "httpTools": "authentication: {type: apiKey, headerName, ...} from a Secret",
    "models": "apiKey: {secretKeyRef: {name, key}}",
    "schemaSync": "schemaSync.headers with valueFrom: {secretKeyRef: {name, key}}",
    "agents": "the peer's headers with valueFrom: {secretKeyRef: {name, key}}",
    "memories": "headers from a Secret, or the whole address from one (address.valueFrom)",
}
# Why a field's query credential cannot be routed into a Secret; the others are routed.
NOT_ROUTED = {
    "httpTools": (
        "the HttpTool's ConfigMap <name>.http-tool holds the endpoint as written (agents "
        "that reference it read the value from their own Secret)"
    ),
    "models": (
        "a model endpoint reaches MODEL_ENDPOINT, config.yaml and the gateway's config as written"
    ),
    "schemaSync": (
        "the schema sync calls it at deploy time, from Pulumi, whose state keeps its inputs; "
        "no pod reads it"
    ),
    "agents": "a peer's URL reaches the caller's A2A_PEERS env and config.yaml as written",
    "memories": "address.value reaches AGENT_MEMORY_ENDPOINT as written",
}


# A value that is only a ``${VAR}`` reference: the agent fills it in from its env (a routed
# credential reads its Secret), so the URL itself carries no credential. ``${VAR:-default}``
# is not one: its default is a literal.
_REFERENCE = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*\}$")


def is_credential_param(name: str) -> bool:
    """Whether a query parameter of this name looks like it carries a credential."""
    return bool(_CREDENTIAL_PARAM.match(name))


def is_reference(value: str) -> bool:
    """Whether a query value is nothing but a ``${VAR}`` reference (no default)."""
    return bool(_REFERENCE.match(value))


def query_credentials(url: str) -> list[str]:
    """The names of the query parameters of ``url`` that look like credentials (a value
    that is only a ``${VAR}`` reference is none)."""
    try:
        query = urlsplit(url).query
    except ValueError:
        return []
    pairs = parse_qsl(query, keep_blank_values=True)
    names = [name for name, value in pairs if value and not is_reference(value)]
    return sorted({name for name in names if is_credential_param(name)})


def api_server_addresses(cluster: ClusterSpec | None = None) -> Mapping[Address, str]:
    """Where the API server answers by address: the first of ``defaults.serviceCidr``
    beside the common distributions' defaults."""
    found = dict(DEFAULT_API_SERVER_IPS)
    cidr = cluster.defaults.service_cidr if cluster is not None else None
    if cidr:
        first = ipaddress.ip_network(cidr, strict=False).network_address + 1
        found[first] = f"the Kubernetes API server's ClusterIP (defaults.serviceCidr {cidr})"
    return found


def endpoint_risk(
    url: str, api_servers: Mapping[Address, str] = DEFAULT_API_SERVER_IPS
) -> str | None:
    """Why ``url``'s host deserves a warning (metadata, link-local, API server, a node
    service on loopback), or None."""
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower().rstrip(".")
        port = parts.port
    except ValueError:
        return None
    address = normalized_address(host)
    shown = host if address is None or str(address) == host else f"{host} ({address})"
    if host in METADATA_HOSTS or str(address) in METADATA_HOSTS:
        return f"{shown} is a cloud metadata service, which hands out the node's credentials"
    if host in API_SERVER_HOSTS or host.startswith("kubernetes.default.svc."):
        return f"{host} is the Kubernetes API server"
    if address is not None and address in api_servers:
        return f"{shown} is {api_servers[address]}"
    loopback = host == "localhost" or host.endswith(".localhost")
    if address is not None and (address.is_loopback or address.is_unspecified):
        loopback = True
    if loopback and port in NODE_PORTS:
        return f"{shown}:{port} is {NODE_PORTS[port]} on the node (a host-network pod's loopback)"
    if port == API_SERVER_PORT:
        return f"{shown}:{port} is the Kubernetes API server's port"
    if address is not None and address.is_link_local:
        return f"{shown} is a link-local address, where metadata services answer"
    return None


def normalized_address(host: str) -> Address | None:
    """The address ``host`` names, however written: dotted, decimal, hex, octal or short
    IPv4 (as ``inet_aton`` reads it, which is how C resolvers and curl take them), and an
    IPv4 address mapped into IPv6 or behind NAT64, as that IPv4 address; None for a name."""
    try:
        address: Address = ipaddress.ip_address(host)
    except ValueError:
        if not _NUMERIC_HOST.match(host):
            return None
        try:
            address = ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address in _NAT64:
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


def endpoints(cluster: ClusterSpec) -> Iterator[tuple[str, str, str]]:
    """``(path, url, kind)`` of every URL the stack config gives an agent or the gateway."""
    for i, agent in enumerate(cluster.agents):
        for j, server in enumerate(agent.mcp_servers):
            yield f"agents[{i}].mcpServers[{j}].url", server.url, "mcpServers"
        for j, hook in enumerate(agent.webhook_tools):
            yield f"agents[{i}].webhookTools[{j}].url", hook.url, "webhookTools"
        for j, peer in enumerate(agent.agents):
            if peer.url is not None:
                yield f"agents[{i}].agents[{j}].url", str(peer.url), "agents"
            if peer.card_url is not None:
                yield f"agents[{i}].agents[{j}].cardUrl", str(peer.card_url), "agents"
    for i, memory in enumerate(cluster.memories):
        if memory.address is not None and memory.address.value is not None:
            yield f"memories[{i}].address.value", str(memory.address.value), "memories"
    for i, tool in enumerate(cluster.http_tools):
        if tool.endpoint:
            yield f"httpTools[{i}].endpoint", tool.endpoint, "httpTools"
    for i, model in enumerate(cluster.models):
        if model.endpoint:
            yield f"models[{i}].endpoint", model.endpoint, "models"
    for i, tool in enumerate(cluster.tools):
        if tool.schema_sync.sync_url:
            yield f"tools[{i}].schemaSync.syncUrl", tool.schema_sync.sync_url, "schemaSync"


def credential_advice(names: list[str], kind: str) -> str:
    """What becomes of a query credential in a field of ``kind``, and the better way."""
    plural = "s" if len(names) > 1 else ""
    said = f"the query parameter{plural} {', '.join(names)} look like a credential"
    better = f"send it with {SECRET_ROUTES[kind]}"
    why = NOT_ROUTED.get(kind)
    if why is None:
        return (
            f"{said}: the agent is given it from its own Secret <agent>-env (config.yaml and "
            "env carry ${VAR} in its place), but it still travels in the URL into access "
            f"logs, and the stack config holds it; {better}"
        )
    return (
        f"{said}, which this field cannot take from a Secret ({why}): it lands in plain "
        f"text in Kubernetes objects, Pulumi state and access logs; {better}"
    )


def endpoint_warnings(cluster: ClusterSpec, path: str = "") -> list[Problem]:
    """A warning for each query-string credential and each risky host among the stack's
    endpoints; the messages never quote a query value."""
    warnings: list[Problem] = []
    api_servers = api_server_addresses(cluster)
    for where, url, kind in endpoints(cluster):
        names = query_credentials(url)
        if names:
            warnings.append(
                Problem(
                    join_path(path, where),
                    credential_advice(names, kind),
                    "langop_query_credential",
                )
            )
        risk = endpoint_risk(url, api_servers)
        if risk:
            warnings.append(
                Problem(
                    join_path(path, where),
                    f"{risk}; an agent calling it may be handed credentials it must not "
                    "have. Point it at the service meant, or accept it in the policy pack "
                    "(langop-endpoints)",
                    "langop_risky_endpoint",
                )
            )
    return warnings
