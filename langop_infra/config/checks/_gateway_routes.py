"""Where the model gateway runs, and which Secrets a model route reads in which namespace.

An agent reaches a gateway model at ``gateway.<its namespace>``: one gateway per namespace
that uses it (the cluster's own, whenever a model goes through it, and each other namespace
with an agent using such a model), never a route across namespaces. A Pod reads a Secret
only in its own namespace, so each gateway's keys and each agent's model key land there too.
"""

from __future__ import annotations

from collections.abc import Iterator

from langop_infra.config._model import ModelSpec, via_gateway
from langop_infra.config.agent import AgentSpec, model_refs
from langop_infra.config.cluster import ClusterSpec, gateway_defaults


def gateway_namespaces(cluster: ClusterSpec) -> list[str]:
    """Namespaces that get a gateway, the cluster's first; none when no model uses one."""
    settings = gateway_defaults(cluster.defaults)
    routed = {m.name for m in cluster.models if via_gateway(m, settings)}
    if not routed:
        return []
    models = {m.name: m for m in cluster.models}
    spaces = {cluster.namespace}
    for agent in cluster.agents:
        if any(ref.name in routed for ref in model_refs(agent, models)):
            spaces.add(agent.namespace or cluster.namespace)
    return sorted(spaces, key=lambda space: (space != cluster.namespace, space))


def gateway_agents(cluster: ClusterSpec, namespace: str) -> list[str]:
    """The agents that call the gateway of ``namespace`` (those of that namespace using a
    model through it), in declaration order."""
    settings = gateway_defaults(cluster.defaults)
    models = {m.name: m for m in cluster.models}
    return [
        agent.name
        for agent in cluster.agents
        if (agent.namespace or cluster.namespace) == namespace
        and any(
            ref.name in models and via_gateway(models[ref.name], settings)
            for ref in model_refs(agent, models)
        )
    ]


def gateway_secret_names(cluster: ClusterSpec) -> Iterator[str]:
    """The Secrets a gateway reads: its master key, its agents' keys, its models' API keys."""
    settings = gateway_defaults(cluster.defaults)
    if settings.master_key is not None:
        yield settings.master_key.secret_key_ref.name
    if settings.agent_keys is not None:
        yield settings.agent_keys.secret_name
    for model in cluster.models:
        if via_gateway(model, settings) and model.api_key is not None:
            yield model.api_key.secret_key_ref.name


def agent_model_secret_names(cluster: ClusterSpec, agent: AgentSpec) -> Iterator[str]:
    """The Secrets an agent's pod reads for its models: its own gateway key when it uses
    the gateway, each direct model's API key."""
    settings = gateway_defaults(cluster.defaults)
    models: dict[str, ModelSpec] = {m.name: m for m in cluster.models}
    for ref in model_refs(agent, models):
        model = models.get(ref.name)
        if model is None:
            continue
        if via_gateway(model, settings):
            if settings.agent_keys is not None:
                yield settings.agent_keys.secret_name
        elif model.api_key is not None:
            yield model.api_key.secret_key_ref.name
