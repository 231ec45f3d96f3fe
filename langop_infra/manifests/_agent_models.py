"""What an agent learns of its models, instructions, persona and identity, as plain data.

Env vars and config.yaml entries follow the upstream language-operator (``MODEL_ENDPOINT``,
``LLM_MODEL``, ``AGENT_INSTRUCTIONS``, identity env) so its agent images read them unchanged.
A user ``env`` or ``secretEnv`` entry of the same name wins over any of these; callers report
each such override (see :func:`override_warnings`).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from langop_infra.config._model import (
    KNOWN_ENDPOINTS,
    ModelGatewayDefaults,
    ModelSpec,
    ObservabilityDefaults,
    PersonaSpec,
    via_gateway,
)
from langop_infra.config.agent import AgentSpec, model_refs, passthrough_model
from langop_infra.config.cluster import Defaults, gateway_defaults
from langop_infra.manifests._contract import EnvVar, access_label, checksum, compact_json, otel_env
from langop_infra.manifests._gateway import GATEWAY_NAME, api_key_env_name, gateway_endpoint
from langop_infra.manifests._gateway_policies import agent_model_egress_rules
from langop_infra.manifests._k8s_types import NetworkPolicyEgressRuleDict

# Every AGENT_UUID is uuid5(this, "<namespace>/<name>"): stable across renders and clusters.
AGENT_UUID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_DNS, "agents.langop.io")
MODELS_CHECKSUM_ANNOTATION = "langop.io/models-checksum"


@dataclass(frozen=True)
class ModelTarget:
    """Where an agent finds one referenced model, and under which name to ask for it."""

    name: str
    provider: str
    model: str
    endpoint: str
    role: str
    priority: int | None
    via_gateway: bool
    key_secret: tuple[str, str] | None = None


def model_targets(
    agent: AgentSpec,
    models: Mapping[str, ModelSpec],
    gateway: ModelGatewayDefaults,
    namespace: str,
) -> list[ModelTarget]:
    """The agent's references resolved, in reference order; every name must be in ``models``.

    Through the gateway an agent asks for the model's ``name`` (the gateway's alias);
    directly, for the provider's ``modelName`` at the provider's endpoint.
    """
    targets: list[ModelTarget] = []
    for ref in model_refs(agent, models):
        model = models[ref.name]
        routed = via_gateway(model, gateway)
        key = model.api_key.secret_key_ref if model.api_key is not None else None
        targets.append(
            ModelTarget(
                name=model.name,
                provider=model.provider,
                model=model.name if routed else model.model_name,
                endpoint=(
                    gateway_endpoint(namespace)
                    if routed
                    else model.endpoint or KNOWN_ENDPOINTS[model.provider]
                ),
                role=ref.role,
                priority=ref.priority,
                via_gateway=routed,
                key_secret=None if routed or key is None else (key.name, key.key),
            )
        )
    return targets


def agent_uuid(namespace: str, name: str) -> str:
    return str(uuid.uuid5(AGENT_UUID_NAMESPACE, f"{namespace}/{name}"))


def persona_text(persona: PersonaSpec) -> str:
    """``AGENT_PERSONA``: one ``<Field>: <value>.`` line per non-empty field."""
    lines: list[str] = []
    for label, value in (
        ("Tone", persona.tone),
        ("Personality", persona.personality),
        ("Expertise", persona.expertise),
    ):
        text = value.strip().rstrip(".")
        if text:
            lines.append(f"{label}: {text}.")
    return "\n".join(lines)


def cluster_uuid(cluster: str) -> str:
    """``AGENT_CLUSTER_UUID``: upstream gives the LanguageCluster's Kubernetes UID; with no
    such object, a UUID stable for the cluster's name (its namespace)."""
    return str(uuid.uuid5(AGENT_UUID_NAMESPACE, f"cluster/{cluster}"))


def identity_env(agent: AgentSpec, namespace: str, part_of: str) -> list[EnvVar]:
    return [
        EnvVar("AGENT_NAME", value=agent.name),
        EnvVar("AGENT_NAMESPACE", value=namespace),
        EnvVar("AGENT_UUID", value=agent_uuid(namespace, agent.name)),
        # Upstream reads the LanguageCluster named after the agent's namespace.
        EnvVar("AGENT_CLUSTER_NAME", value=namespace),
        EnvVar("AGENT_CLUSTER_UUID", value=cluster_uuid(namespace)),
        # ark's config.Load reads POD_NAME (its default is the hostname)
        EnvVar("POD_NAME", field_path="metadata.name"),
    ]


def model_env(
    targets: Sequence[ModelTarget], gateway: ModelGatewayDefaults, agent: str
) -> list[EnvVar]:
    """``MODEL_ENDPOINT``, ``LLM_MODEL`` and the keys, from Secrets only.

    ``MODEL_ENDPOINT`` names each endpoint once, in reference order, as upstream does (its
    ``resolveModels`` adds the gateway URL once however many models it serves): one gateway
    URL for any number of gateway models. ``MODEL_API_KEY`` is the agent's own gateway key
    (key ``agent`` of ``agentKeys``, never the master key) when the agent uses the gateway,
    else the first direct model's key; each direct model's key is also
    ``MODEL_<NAME>_API_KEY``.
    """
    if not targets:
        return []
    env = [
        EnvVar("MODEL_ENDPOINT", value=",".join(dict.fromkeys(t.endpoint for t in targets))),
        EnvVar("LLM_MODEL", value=",".join(t.model for t in targets)),
    ]
    direct_keys = [(t.name, t.key_secret) for t in targets if t.key_secret is not None]
    main_key: tuple[str, str] | None = None
    if any(t.via_gateway for t in targets) and gateway.agent_keys is not None:
        main_key = (gateway.agent_keys.secret_name, agent)
    elif direct_keys:
        main_key = direct_keys[0][1]
    if main_key is not None:
        env.append(EnvVar("MODEL_API_KEY", secret_name=main_key[0], secret_key=main_key[1]))
    for name, (secret, key) in direct_keys:
        env.append(EnvVar(api_key_env_name(name), secret_name=secret, secret_key=key))
    return env


def agent_model_env(
    agent: AgentSpec,
    targets: Sequence[ModelTarget],
    gateway: ModelGatewayDefaults,
    *,
    namespace: str,
    part_of: str,
    persona: PersonaSpec | None = None,
    observability: ObservabilityDefaults | None = None,
    passthrough: str | None = None,
) -> list[EnvVar]:
    """Identity, model, instructions, persona and OTEL env of one agent container.

    ark's runtime requires ``AGENT_MODEL`` (the primary model, or a ``model:`` no declared
    model serves, ``passthrough``) and ``AGENT_SYSTEM_PROMPT`` (the instructions).
    """
    env = identity_env(agent, namespace, part_of) + model_env(targets, gateway, agent.name)
    if agent.instructions:
        env.append(EnvVar("AGENT_INSTRUCTIONS", value=agent.instructions))
    primary = next((t for t in targets if t.role == "primary"), targets[0] if targets else None)
    model = passthrough or (primary.model if primary is not None else None)
    if model is not None:
        env.append(EnvVar("AGENT_MODEL", value=model))
    if agent.instructions:
        env.append(EnvVar("AGENT_SYSTEM_PROMPT", value=agent.instructions))
    if persona is not None and (text := persona_text(persona)):
        env.append(EnvVar("AGENT_PERSONA", value=text))
    otlp = observability.otlp_endpoint if observability is not None else None
    sampler = (
        (observability.traces_sampler, observability.traces_sampler_arg)
        if observability is not None
        else (None, None)
    )
    env += otel_env(otlp, f"agent-{agent.name}", namespace, agent.name, sampler)
    return env


def override_warnings(agent: str, overridden: Iterable[str]) -> list[str]:
    return [
        f"agent {agent!r}: env {name} overrides the value langop-infra injects"
        for name in overridden
    ]


def agent_model_config(
    agent: AgentSpec,
    targets: Sequence[ModelTarget],
    namespace: str,
    persona: PersonaSpec | None = None,
) -> dict[str, object]:
    """config.yaml additions: ``agent``, ``models``, ``instructions``, ``personas``.

    No secret: a direct model's key is named by the env var holding it (``apiKeyFromEnv``).
    """
    identity: dict[str, object] = {"name": agent.name, "namespace": namespace}
    doc: dict[str, object] = {"agent": identity}
    if agent.max_iterations is not None:
        identity["maxIterations"] = agent.max_iterations
    if targets:
        models: dict[str, object] = {}
        for t in targets:
            entry: dict[str, object] = {
                "role": t.role,
                "provider": t.provider,
                "model": t.model,
                "endpoint": t.endpoint,
            }
            if t.priority is not None:
                entry["priority"] = t.priority
            if t.key_secret is not None:
                entry["apiKeyFromEnv"] = api_key_env_name(t.name)
            models[t.name] = entry
        doc["models"] = models
    if agent.instructions:
        doc["instructions"] = agent.instructions
    if persona is not None:
        doc["personas"] = [persona.model_dump(mode="json")]
    return doc


def models_checksum(models: Iterable[ModelSpec]) -> str:
    """A digest of the referenced models' whole specs (key references included): a change
    to any rolls the agents that use them."""
    return checksum(*(compact_json(m.model_dump(mode="json", by_alias=True)) for m in models))


def model_endpoint(model: ModelSpec, gateway: ModelGatewayDefaults, namespace: str) -> str:
    """Where agents reach ``model``: the namespace gateway, or the provider itself."""
    if via_gateway(model, gateway):
        return gateway_endpoint(namespace)
    return model.endpoint or KNOWN_ENDPOINTS[model.provider]


@dataclass(frozen=True)
class AgentModelParts:
    """Everything models, instructions, persona and identity add to one agent."""

    env: list[EnvVar]
    overridden: list[str]
    config: dict[str, object]
    annotations: dict[str, str]
    pod_labels: dict[str, str]
    egress_rules: list[NetworkPolicyEgressRuleDict]


def agent_model_parts(
    agent: AgentSpec,
    models: Sequence[ModelSpec],
    defaults: Defaults,
    *,
    namespace: str,
    part_of: str,
    persona: PersonaSpec | None = None,
) -> AgentModelParts:
    """The injected env (minus what the user's ``env``/``secretEnv`` overrides), config.yaml
    additions, the rollout annotation, the gateway's access label and restricted egress."""
    gateway = gateway_defaults(defaults)
    by_name = {m.name: m for m in models}
    targets = model_targets(agent, by_name, gateway, namespace)
    if isinstance(agent.persona, PersonaSpec):
        persona = agent.persona
    otlp = defaults.observability.otlp_endpoint if defaults.observability else None
    injected = agent_model_env(
        agent,
        targets,
        gateway,
        namespace=namespace,
        part_of=part_of,
        persona=persona,
        observability=defaults.observability,
        passthrough=passthrough_model(agent, by_name),
    )
    user = set(agent.env) | set(agent.secret_env)
    used = [by_name[t.name] for t in targets]
    uses_gateway = any(t.via_gateway for t in targets)
    direct = [m for m, t in zip(used, targets, strict=True) if not t.via_gateway]
    return AgentModelParts(
        env=[v for v in injected if v.name not in user],
        overridden=[v.name for v in injected if v.name in user],
        config=agent_model_config(agent, targets, namespace, persona),
        annotations={MODELS_CHECKSUM_ANNOTATION: models_checksum(used)} if used else {},
        pod_labels={access_label(GATEWAY_NAME): "true"} if uses_gateway else {},
        egress_rules=agent_model_egress_rules(namespace, uses_gateway, direct, otlp),
    )
