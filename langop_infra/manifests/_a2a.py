"""A2A as plain data: an agent's card (A2A v1.0, the version ``a2a-sdk`` 1.x implements),
its endpoint and env, the peers it calls (``A2A_PEERS``, config.yaml ``agents:``), the card's
ConfigMap and volume, and the NetworkPolicies between callers and callees."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from langop_infra.config._a2a import (
    A2ASecurityScheme,
    A2ASkill,
    A2ASpec,
    A2ATokenVerification,
    AgentPeerRef,
)
from langop_infra.config._fields import HeaderSpec, SecretSource
from langop_infra.config._names import (
    A2A_CARD_DIR,
    A2A_CARD_FILE,
    a2a_card_config_map_name,
    caller_identity_env_name,
    caller_token_env_name,
    config_map_name,
    peer_token_env_name,
    peer_token_file_env_name,
)
from langop_infra.config.agent import AgentSpec
from langop_infra.manifests._contract import EnvVar, agent_selector, compact_json, tool_endpoint
from langop_infra.manifests._k8s_types import (
    ContainerDict,
    ContainerPortDict,
    PodSpecDict,
    ServicePortDict,
    ServiceSpecDict,
    VolumeDict,
    VolumeMountDict,
    VolumeProjectionDict,
)

A2A_PROTOCOL_VERSION = "1.0"
A2A_BINDING = "JSONRPC"
WELL_KNOWN_CARD = "/.well-known/agent-card.json"
CALLER_LABEL_PREFIX = "a2a.langop.io/"
CONFIG_VOLUME = "config"
PEER_TOKEN_VOLUME = "a2a-peer-tokens"
PEER_TOKEN_DIR = "/var/run/secrets/langop.io/a2a"
PEER_TOKEN_SECONDS = 3600  # the kubelet renews a projected token at 80% of its life
# The scheme a built-in agent's card names when it admits callers by token.
CALLER_TOKEN_SCHEME = A2ASecurityScheme(
    name="callerToken",
    type="bearer",
    description="A bearer token per caller (a2a.callers), from a Secret",
)


@dataclass(frozen=True)
class PeerTarget:
    """Where a caller finds one A2A peer: an agent of the stack, or a remote endpoint."""

    name: str
    url: str
    card_url: str
    #: An in-cluster peer's namespace, agent name and A2A port; None for a remote one.
    namespace: str | None = None
    agent: str | None = None
    port: int | None = None
    headers: tuple[HeaderSpec, ...] = field(default=(), compare=False)
    #: The token an in-cluster callee lists for this caller (``a2a.callers``), if any.
    token: SecretSource | None = field(default=None, compare=False)
    #: The audience of the service-account token sent to a callee that lists this caller
    #: by ``identity``, if any.
    audience: str | None = field(default=None, compare=False)

    @property
    def in_cluster(self) -> bool:
        return self.agent is not None


def a2a_endpoint(agent: str, namespace: str, spec: A2ASpec) -> str:
    """``http://<agent>.<namespace>.svc.cluster.local:<port><path>``: the JSON-RPC endpoint."""
    return tool_endpoint(agent, namespace, spec.port) + spec.path


def card_url(agent: str, namespace: str, spec: A2ASpec) -> str:
    """Where the agent serves its card: the well-known path on its A2A port."""
    return tool_endpoint(agent, namespace, spec.port) + WELL_KNOWN_CARD


def remote_card_url(url: str) -> str:
    """A remote peer's card: the well-known path at the origin of its endpoint."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{WELL_KNOWN_CARD}"


def peer_targets(
    agent: AgentSpec, namespace: str, agents: Mapping[tuple[str, str], AgentSpec]
) -> list[PeerTarget]:
    """The agent's peers, in order; ``agents`` by (namespace, name) holds every agent of the
    stack (validation has checked that each in-cluster peer is there and serves A2A)."""
    return [_peer_target(peer, agent.name, namespace, agents) for peer in agent.agents]


def _peer_target(
    peer: AgentPeerRef, caller: str, namespace: str, agents: Mapping[tuple[str, str], AgentSpec]
) -> PeerTarget:
    if peer.url is not None:
        card = peer.card_url or remote_card_url(peer.url)
        return PeerTarget(peer.name, peer.url, card, headers=tuple(peer.headers))
    space = peer.namespace or namespace
    callee = agents[(space, peer.name)]
    spec = callee.a2a
    if spec is None:  # refused by validation (peer_checks)
        raise AssertionError(f"peer {peer.name!r} serves no A2A")
    listed = next((c for c in spec.callers if c.name == caller), None)
    # A Secret is read in its own namespace only: a token is shared within one.
    token = listed.token_from if listed is not None and space == namespace else None
    verified = listed is not None and listed.identity and spec.token_verification
    return PeerTarget(
        peer.name,
        a2a_endpoint(peer.name, space, spec),
        card_url(peer.name, space, spec),
        namespace=space,
        agent=peer.name,
        port=spec.port,
        token=token,
        audience=token_audience(peer.name, space, spec) if verified else None,
    )


def peer_token_file(peer: str) -> str:
    """Where a caller's projected token for ``peer`` is mounted."""
    return f"{PEER_TOKEN_DIR}/{peer}/token"


def with_peer_tokens(pod: PodSpecDict, peers: Sequence[PeerTarget]) -> PodSpecDict:
    """The pod with one projected volume holding a service-account token per peer that
    lists this agent by identity (each for that peer's audience), mounted read-only in the
    agent's container."""
    sources: list[VolumeProjectionDict] = [
        {
            "serviceAccountToken": {
                "audience": p.audience,
                "expirationSeconds": PEER_TOKEN_SECONDS,
                "path": f"{p.name}/token",
            }
        }
        for p in peers
        if p.audience
    ]
    if not sources:
        return pod
    volume: VolumeDict = {"name": PEER_TOKEN_VOLUME, "projected": {"sources": sources}}
    main, *rest = pod["containers"]
    mount: VolumeMountDict = {
        "name": PEER_TOKEN_VOLUME,
        "mountPath": PEER_TOKEN_DIR,
        "readOnly": True,
    }
    mounted: ContainerDict = {**main, "volumeMounts": [*main.get("volumeMounts", []), mount]}
    return {**pod, "containers": [mounted, *rest], "volumes": [*pod["volumes"], volume]}


def agent_card(agent: AgentSpec, namespace: str) -> dict[str, object]:
    """The agent card document (A2A v1.0 JSON: ``supportedInterfaces`` holds the endpoint)."""
    spec = agent.a2a
    if spec is None:
        raise ValueError(f"agent {agent.name!r} has no a2a")
    description = spec.description or _first_line(agent.instructions) or f"Agent {agent.name}"
    card: dict[str, object] = {
        "name": agent.name,
        "description": description,
        "supportedInterfaces": [
            {
                "url": a2a_endpoint(agent.name, namespace, spec),
                "protocolBinding": A2A_BINDING,
                "protocolVersion": A2A_PROTOCOL_VERSION,
            }
        ],
        "version": spec.version,
        "capabilities": {
            "streaming": spec.streaming,
            "pushNotifications": spec.push_notifications,
        },
        "defaultInputModes": list(spec.default_input_modes),
        "defaultOutputModes": list(spec.default_output_modes),
        "skills": [_skill(s) for s in spec.skills],
    }
    schemes = {s.name: _scheme(s) for s in spec.security_schemes}
    if agent.runtime == "builtin" and spec.access == "authenticated" and not schemes:
        schemes = enforced_schemes(agent.name, namespace, spec)  # said as enforced
    if schemes:
        card["securitySchemes"] = schemes
        card["securityRequirements"] = [{"schemes": {name: {"list": []}}} for name in schemes]
    return card


def enforced_schemes(agent: str, namespace: str, spec: A2ASpec) -> dict[str, object]:
    """The schemes the built-in runtime accepts, each one a way in: a caller's own bearer
    token (``callerToken``, also when no caller is listed yet), a verified token
    (``serviceAccountToken`` or ``oidc``) when some caller is given by identity."""
    schemes: dict[str, object] = {}
    if any(c.token_from for c in spec.callers) or not spec.callers:
        schemes[CALLER_TOKEN_SCHEME.name] = _scheme(CALLER_TOKEN_SCHEME)
    verification = spec.token_verification
    if verification is None or not any(c.identity for c in spec.callers):
        return schemes
    audience = token_audience(agent, namespace, spec)
    if verification.method == "oidc":
        issuer = str(verification.issuer).rstrip("/")
        schemes["oidc"] = {
            "openIdConnectSecurityScheme": {
                "openIdConnectUrl": f"{issuer}/.well-known/openid-configuration",
                "description": f"A JWT of this issuer for audience {audience}, from a listed "
                "subject",
            }
        }
        return schemes
    schemes["serviceAccountToken"] = {
        "httpAuthSecurityScheme": {
            "scheme": "Bearer",
            "bearerFormat": "JWT",
            "description": f"A Kubernetes service-account token for audience {audience} "
            "(a projected serviceAccountToken volume), of a listed service account",
        }
    }
    return schemes


def token_audience(agent: str, namespace: str, spec: A2ASpec) -> str:
    """The audience a verified token must name: the one given, else the A2A endpoint."""
    given = spec.token_verification.audience if spec.token_verification else None
    return given or a2a_endpoint(agent, namespace, spec)


def _first_line(text: str | None) -> str:
    return text.strip().splitlines()[0].strip() if text and text.strip() else ""


def _skill(skill: A2ASkill) -> dict[str, object]:
    out: dict[str, object] = {
        "id": skill.id,
        "name": skill.name,
        "description": skill.description,
        "tags": list(skill.tags),
    }
    if skill.examples:
        out["examples"] = list(skill.examples)
    if skill.input_modes:
        out["inputModes"] = list(skill.input_modes)
    if skill.output_modes:
        out["outputModes"] = list(skill.output_modes)
    return out


def _scheme(scheme: A2ASecurityScheme) -> dict[str, object]:
    extra = {"description": scheme.description} if scheme.description else {}
    if scheme.type == "bearer":
        http: dict[str, object] = {"scheme": "Bearer", **extra}
        if scheme.bearer_format:
            http["bearerFormat"] = scheme.bearer_format
        return {"httpAuthSecurityScheme": http}
    return {"apiKeySecurityScheme": {"location": "header", "name": scheme.header_name, **extra}}


def card_json(card: Mapping[str, object]) -> str:
    """The card file's text: stable, indented JSON."""
    return json.dumps(card, indent=2, ensure_ascii=False) + "\n"


def a2a_env(agent: AgentSpec, peers: Sequence[PeerTarget], namespace: str) -> list[EnvVar]:
    """``A2A_PORT``, ``A2A_PATH``, ``A2A_AGENT_CARD``, ``A2A_ACCESS`` and the callers when
    serving; ``A2A_PEERS`` when calling. Peer headers travel in
    :func:`~langop_infra.config.agent.agent_headers`."""
    env: list[EnvVar] = []
    if agent.a2a is not None:
        env += [
            EnvVar("A2A_PORT", value=str(agent.a2a.port)),
            EnvVar("A2A_PATH", value=agent.a2a.path),
            EnvVar("A2A_AGENT_CARD", value=f"{A2A_CARD_DIR}/{A2A_CARD_FILE}"),
            EnvVar("A2A_ACCESS", value=agent.a2a.access),
        ]
        env += [
            _secret_env(caller_token_env_name(c.name), c.token_from)
            for c in agent.a2a.callers
            if c.token_from is not None
        ]
        env += verification_env(agent.name, namespace, agent.a2a)
    if peers:
        listed = [{"name": p.name, "url": p.url, "cardUrl": p.card_url} for p in peers]
        env.append(EnvVar("A2A_PEERS", value=compact_json(listed)))
        env += [_secret_env(peer_token_env_name(p.name), p.token) for p in peers if p.token]
        env += [
            EnvVar(peer_token_file_env_name(p.name), value=peer_token_file(p.name))
            for p in peers
            if p.audience
        ]
    return env


def verification_env(agent: str, namespace: str, spec: A2ASpec) -> list[EnvVar]:
    """``A2A_CALLER_<CALLER>_IDENTITY`` of callers given by identity, and how their tokens
    are verified (``A2A_TOKEN_VERIFY``, ``A2A_TOKEN_AUDIENCE``, ``A2A_OIDC_*``)."""
    env = [
        EnvVar(caller_identity_env_name(c.name), value=c.identity)
        for c in spec.callers
        if c.identity is not None
    ]
    verification: A2ATokenVerification | None = spec.token_verification
    if verification is None:
        return env
    env += [
        EnvVar("A2A_TOKEN_VERIFY", value=verification.method.lower()),
        EnvVar("A2A_TOKEN_AUDIENCE", value=token_audience(agent, namespace, spec)),
    ]
    if verification.issuer is not None:
        env.append(EnvVar("A2A_OIDC_ISSUER", value=str(verification.issuer)))
    if verification.jwks_url is not None:
        env.append(EnvVar("A2A_OIDC_JWKS_URL", value=str(verification.jwks_url)))
    return env


def _secret_env(name: str, source: SecretSource) -> EnvVar:
    ref = source.secret_key_ref
    return EnvVar(name, secret_name=ref.name, secret_key=ref.key)


def a2a_config(agent: AgentSpec, namespace: str, peers: Sequence[PeerTarget]) -> dict[str, object]:
    """config.yaml ``a2a:`` (what the agent serves) and ``agents:`` (its peers; a header
    is named, its value is in env ``A2A_PEER_<PEER>_HEADER_<HEADER>``)."""
    doc: dict[str, object] = {}
    if agent.a2a is not None:
        doc["a2a"] = {
            "port": agent.a2a.port,
            "path": agent.a2a.path,
            "url": a2a_endpoint(agent.name, namespace, agent.a2a),
            "cardPath": f"{A2A_CARD_DIR}/{A2A_CARD_FILE}",
        }
    if peers:
        entries: dict[str, object] = {}
        for peer in peers:
            entry: dict[str, object] = {"url": peer.url, "cardUrl": peer.card_url}
            if peer.headers:
                entry["headers"] = [h.name for h in peer.headers]
            entries[peer.name] = entry
        doc["agents"] = entries
    return doc


def caller_label(callee: str) -> str:
    """The pod label that lets a caller through its same-namespace callee's A2A policy."""
    return CALLER_LABEL_PREFIX + callee


def caller_labels(namespace: str, peers: Sequence[PeerTarget]) -> dict[str, str]:
    """One label per in-cluster peer of the caller's own namespace."""
    return {
        caller_label(p.name): "true" for p in peers if p.in_cluster and p.namespace == namespace
    }


def with_card_volume(pod: PodSpecDict, agent: str) -> PodSpecDict:
    """The pod with its config volume projected from two ConfigMaps: config.yaml and the
    card at ``a2a/agent-card.json`` (one volume, as a mount nested in a ConfigMap's read-only
    mount cannot be created)."""
    projected: VolumeDict = {
        "name": CONFIG_VOLUME,
        "projected": {
            "sources": [
                {
                    "configMap": {
                        "name": config_map_name(agent),
                        "items": [{"key": "config.yaml", "path": "config.yaml"}],
                    }
                },
                {
                    "configMap": {
                        "name": a2a_card_config_map_name(agent),
                        "items": [{"key": A2A_CARD_FILE, "path": f"a2a/{A2A_CARD_FILE}"}],
                    }
                },
            ]
        },
    }
    volumes = [projected if v["name"] == CONFIG_VOLUME else v for v in pod["volumes"]]
    return {**pod, "volumes": volumes}


def with_a2a_port(pod: PodSpecDict, spec: A2ASpec) -> PodSpecDict:
    """The pod's first (the agent's) container with container port ``a2a``."""
    main, *rest = pod["containers"]
    port: ContainerPortDict = {"name": "a2a", "containerPort": spec.port, "protocol": "TCP"}
    served: ContainerDict = {**main, "ports": [*main.get("ports", []), port]}
    return {**pod, "containers": [served, *rest]}


def with_a2a_service_port(
    service: ServiceSpecDict | None, agent: str, spec: A2ASpec
) -> ServiceSpecDict:
    """Service ``<agent>`` with port ``a2a`` (made for it when the agent has no ports)."""
    port: ServicePortDict = {
        "name": "a2a",
        "port": spec.port,
        "targetPort": "a2a",
        "protocol": "TCP",
    }
    if service is None:
        return {"type": "ClusterIP", "selector": agent_selector(agent), "ports": [port]}
    return {**service, "ports": [*service["ports"], port]}
