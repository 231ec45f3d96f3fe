"""Every object spec of one agent as plain data: config.yaml, the Deployment spec and its
NetworkPolicies, with its tools, models, persona and identity wired in."""

from collections.abc import Sequence
from dataclasses import dataclass, field

from langop_infra.config._model import ModelSpec, PersonaSpec
from langop_infra.config.agent import AgentSpec
from langop_infra.config.cluster import Defaults
from langop_infra.manifests import (
    _contract as contract,
    _pods as pods,
    _policies as policies,
    _workspace as workspace,
)
from langop_infra.manifests._a2a import caller_labels
from langop_infra.manifests._agent_features import (
    NO_FEATURES,
    AgentFeatures,
    card_text,
    feature_config,
    feature_env,
    feature_pod,
    feature_policies,
    feature_service,
)
from langop_infra.manifests._agent_models import agent_model_parts, override_warnings
from langop_infra.manifests._gateway_policies import with_model_egress
from langop_infra.manifests._k8s_types import (
    ContainerDict,
    DeploymentSpecDict,
    HorizontalPodAutoscalerSpecDict,
    PersistentVolumeClaimSpecDict,
    PodDisruptionBudgetSpecDict,
    PolicyEntry,
    ServiceSpecDict,
)
from langop_infra.manifests._pod_settings import autoscaler_spec, disruption_budget_spec


@dataclass(frozen=True)
class AgentObjects:
    """What the component registers for one agent, and the warnings it logs."""

    config_text: str
    deployment: DeploymentSpecDict
    policies: list[PolicyEntry]
    warnings: list[str] = field(default_factory=list[str])
    service: ServiceSpecDict | None = None
    workspace_claim: PersistentVolumeClaimSpecDict | None = None
    workspace_files: dict[str, str] | None = None
    disruption_budget: PodDisruptionBudgetSpecDict | None = None
    autoscaler: HorizontalPodAutoscalerSpecDict | None = None
    #: The annotations of ServiceAccount ``<agent>`` when the spec asks to create it.
    service_account: dict[str, str] | None = None
    #: The agent card file (ConfigMap ``<agent>-a2a-card``) of an agent with ``a2a``.
    card_text: str | None = None


def agent_env(
    agent: AgentSpec,
    defaults: Defaults,
    part_of: str,
    targets: Sequence[contract.ToolTarget],
    models: Sequence[ModelSpec] = (),
    persona: PersonaSpec | None = None,
    features: AgentFeatures = NO_FEATURES,
) -> tuple[list[contract.EnvVar], dict[str, object]]:
    """Every env var of the agent container (tools, servers, models, identity, A2A, memory,
    schedule) and the literal secrets its own Secret holds."""
    env, owned = contract.agent_env(agent, targets, defaults.endpoint_style)
    namespace = agent.namespace or contract.DEFAULT_NAMESPACE
    extra = agent_model_parts(
        agent, models, defaults, namespace=namespace, part_of=part_of, persona=persona
    )
    more = feature_env(agent, namespace, features, targets, defaults.endpoint_style)
    return [*env, *extra.env, *more], owned


def agent_objects(
    agent: AgentSpec,
    defaults: Defaults,
    part_of: str,
    targets: Sequence[contract.ToolTarget],
    sidecars: Sequence[ContainerDict],
    *,
    models: Sequence[ModelSpec] = (),
    persona: PersonaSpec | None = None,
    image_known: bool = True,
    features: AgentFeatures = NO_FEATURES,
) -> AgentObjects:
    """The agent's config.yaml, Deployment spec (its pods roll when config.yaml or a model
    changes) and NetworkPolicies, given its resolved tools, models and sidecar containers."""
    namespace = agent.namespace or contract.DEFAULT_NAMESPACE
    extra = agent_model_parts(
        agent, models, defaults, namespace=namespace, part_of=part_of, persona=persona
    )
    style = defaults.endpoint_style
    config = {
        **contract.agent_config(agent, targets, style),
        **extra.config,
        **feature_config(agent, namespace, features, targets, style),
    }
    config_text = contract.config_yaml(config)
    card = card_text(agent, namespace)
    env, _ = contract.agent_env(agent, targets, style)
    env += [*extra.env, *feature_env(agent, namespace, features, targets, style)]
    # The card joins the checksum only when there is one: other agents' pods do not roll.
    summed = (config_text,) if card is None else (config_text, card)
    annotations = {
        **agent.annotations,
        contract.CONFIG_CHECKSUM_ANNOTATION: contract.checksum(*summed),
        **extra.annotations,
    }
    labels = {
        **contract.agent_labels(agent, part_of, targets, namespace, image_known=image_known),
        **extra.pod_labels,
        **caller_labels(namespace, features.peers),
    }
    selector = contract.agent_selector(agent.name)
    deployment = pods.deployment_spec(
        agent,
        selector,
        labels,
        annotations,
        feature_pod(pods.agent_pod(agent, defaults, env, sidecars), agent, features.peers),
    )
    space = agent.workspace
    if space is not None and "ReadWriteMany" not in space.access_modes:
        # A ReadWriteOnce volume cannot be attached to the old and new pod at once.
        deployment["strategy"] = {"type": "Recreate"}
    made = policies.agent_policies(agent, namespace, targets, agent.egress or defaults.egress)
    synced = [t.port for t in targets if t.sidecar_container is not None and t.sync_inputs]
    made = policies.with_sync_ingress(made, agent.name, defaults.schema_sync_from, synced)
    made = with_model_egress(made, agent.name, extra.egress_rules)
    made = feature_policies(made, agent, namespace, features, defaults.schema_sync_from)
    warnings = override_warnings(agent.name, extra.overridden)
    return AgentObjects(
        config_text,
        deployment,
        made,
        warnings,
        feature_service(pods.agent_service_spec(agent), agent),
        workspace.claim_spec(space) if space is not None else None,
        dict(space.initial_files) if space is not None and space.initial_files else None,
        disruption_budget_spec(agent, selector),
        autoscaler_spec(agent.name, agent.autoscaling) if agent.autoscaling else None,
        pods.service_account_annotations(agent),
        card,
    )
