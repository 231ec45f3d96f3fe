"""LanguageAgent: an agent Deployment wired to its tools, MCP servers and webhook tools."""

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast, overload

import pulumi
import pulumi_kubernetes as k8s
from typing_extensions import Unpack

from langop_infra.components import (
    _agent_namespace as agent_namespace,
    _inputs as inputs,
    _namespace as namespaces,
    _secret_routing as secret_routing,
)
from langop_infra.components._agent_plan import AgentPlan, plan_agent
from langop_infra.components._agent_workload import (
    register_card,
    register_card_syncs,
    register_workload,
)
from langop_infra.components._base import PlannedComponent
from langop_infra.components._k8s import (
    Meta,
    aliased,
    child_options,
    claim_options,
    network_policy,
    object_meta,
    scaling_objects,
    service_account,
    type_token,
    with_pod_annotations,
    workload_secret,
)
from langop_infra.components.agent_args import LanguageAgentArgs
from langop_infra.config import _names as names
from langop_infra.config.agent import AgentSpec
from langop_infra.core import _pacing as pacing
from langop_infra.core._construction import construction_site
from langop_infra.manifests import _contract as contract, _policies as policies
from langop_infra.manifests._a2a import PeerTarget
from langop_infra.manifests._a2a_policies import a2a_policies
from langop_infra.manifests._agent_objects import AgentObjects, agent_env, agent_objects
from langop_infra.manifests._k8s_types import NetworkPolicySpecDict
from langop_infra.manifests._pod_settings import disruption_budget_spec
from langop_infra.sync.provider import ToolSchemaSync

if TYPE_CHECKING:
    AgentInput = LanguageAgentArgs | AgentSpec | None
else:
    AgentInput = LanguageAgentArgs  # what Pulumi's analyzer reads as the component's inputs


class LanguageAgent(PlannedComponent):
    """An agent whose pods find their tools at start: ``MCP_SERVERS``, ``AGENT_MCP_SERVERS``,
    ``AGENT_WEBHOOK_TOOLS``, header env vars and ``/etc/agent/config.yaml``.

    Sidecar tools join the pod with a shared workspace. A ``required`` reference makes the
    Deployment wait for the tool. Python programs also find ``spec``, ``targets`` and the
    registered objects as attributes.
    """

    config_yaml: pulumi.Output[str]
    """The agent's ``/etc/agent/config.yaml``."""
    mcp_servers: pulumi.Output[str]
    """The agent's ``MCP_SERVERS``."""

    @overload
    def __init__(
        self,
        name: str,
        args: LanguageAgentArgs | AgentSpec,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None: ...

    @overload
    def __init__(
        self,
        name: str,
        args: None = None,
        opts: pulumi.ResourceOptions | None = None,
        **kwargs: Unpack[LanguageAgentArgs],
    ) -> None: ...

    def __init__(
        self,
        name: str,
        args: AgentInput = None,
        opts: pulumi.ResourceOptions | None = None,
        **kwargs: Any,
    ) -> None:
        plan, final = plan_agent(name, args, kwargs)
        self._build(name, plan, opts, final)

    def _build(
        self,
        name: str,
        plan: AgentPlan,
        opts: pulumi.ResourceOptions | None,
        resolved: Any = None,
    ) -> None:
        final = plan.spec if resolved is None else resolved
        agent, targets, site = plan.spec, plan.targets, construction_site()
        place = namespaces.placement(name, inputs.part(final, agent_namespace.namespace_of))
        place = namespaces.registered(self, "LanguageAgent", place, agent.name, site)
        place = agent_namespace.checked(
            place, plan.followers, f"LanguageAgent {name!r}", site, plan.http_followers, plan.others
        )
        namespace = place.value
        super().__init__(type_token("LanguageAgent"), name, None, aliased(opts, "LanguageAgent"))
        child = child_options(self, opts)
        key = f"{place.prefix}/{agent.name}"
        self.spec, self.targets = agent, targets
        # Agents handed this one as a peer take it to be in theirs while this is an Output.
        self.namespace_known = not plan.namespace_late
        self.namespace = pulumi.Output.from_input(place.value)
        # Read from ``final``, not ``agent``: an Output label has a stand-in in ``agent``.
        labels = inputs.part(
            final,
            lambda s: contract.agent_labels(s, plan.placed(s)[0], image_known=plan.image_known),
        )
        objects = _objects(plan, final)
        inputs.whole(objects, lambda o: [pulumi.log.warn(w) for w in o.warnings])
        config_text = _guarded_config(objects, agent, final)
        self.config_map = k8s.core.v1.ConfigMap(
            f"{key}-config",
            metadata=object_meta(names.config_map_name(agent.name), namespace, labels),
            data={"config.yaml": config_text},
            opts=child,
        )
        owned = contract.agent_env(agent, targets)[1]
        deployment, routed = secret_routing.route_env(
            inputs.part(objects, lambda o: o.deployment),
            contract.workload_secret_name(agent.name),
        )
        self.secret = workload_secret(key, agent.name, namespace, labels, owned, child, routed)
        self.service_account = service_account(
            key,
            agent,
            namespace,
            labels,
            child,
            inputs.part(final, lambda s: s.service_account.annotations if s.service_account else {})
            if agent.service_account is not None
            else None,
        )
        account = [self.service_account] if self.service_account else []
        pod_spec = with_pod_annotations(
            deployment, self._secrets(plan), f"{key}-rollout-key", child
        )
        self.card_config_map = register_card(key, agent, namespace, labels, objects, child)
        self.deployment, self.cron_job = register_workload(
            key,
            agent,
            object_meta(
                agent.name, namespace, labels, inputs.part(final, lambda s: dict(s.annotations))
            ),
            pod_spec,
            child_options(self, opts, [*_waits_for(plan), *account]),
        )
        self.network_policies = _register_policies(plan, place, labels, objects, child)
        self._register_pod_objects(key, place, plan, labels, objects, child)
        self.sidecar_syncs = self._sidecar_syncs(key, plan, opts)
        peers, access = _card_peers(plan, place), plan.defaults.schema_sync_access
        self.card_syncs = register_card_syncs(key, self, peers, access, opts, plan.peer_objects)
        self.config_yaml = pulumi.Output.from_input(config_text)
        style = plan.defaults.endpoint_style
        self.mcp_servers = pulumi.Output.from_input(
            inputs.part(final, lambda s: contract.mcp_servers_env(plan.placed(s)[1], style))
        )
        self.register_outputs({"config_yaml": self.config_yaml, "mcp_servers": self.mcp_servers})
        pacing.workload_built()

    def _sidecar_syncs(
        self, key: str, plan: AgentPlan, opts: pulumi.ResourceOptions | None
    ) -> list[ToolSchemaSync]:
        """One schema sync per sidecar tool, through the agent's pod once it exists."""
        selector = contract.agent_selector(plan.spec.name)
        return [
            ToolSchemaSync(
                f"{key}/{target.name}-schema",
                {**target.sync_inputs, "pod_selector": selector},
                opts=child_options(self, opts, [self.deployment or self.cron_job]),
            )
            for target in plan.targets
            if target.sidecar_container is not None and target.sync_inputs is not None
        ]

    def _register_pod_objects(
        self,
        key: str,
        place: namespaces.Placement,
        plan: AgentPlan,
        labels: Meta,
        objects: object,
        child: pulumi.ResourceOptions,
    ) -> None:
        """Service, workspace claim and its initial files, disruption budget and autoscaler, each
        when the spec asks for it."""
        agent, namespace = plan.spec, place.value
        self.service = self.workspace_claim = self.workspace_files = None
        if agent.ports or agent.a2a is not None:
            self.service = k8s.core.v1.Service(
                key,
                metadata=object_meta(agent.name, namespace, labels),
                spec=inputs.part(objects, lambda o: o.service),
                opts=child,
            )
        if agent.workspace is not None:
            claim = names.workspace_claim_name(agent.name)
            self.workspace_claim = k8s.core.v1.PersistentVolumeClaim(
                f"{place.prefix}/{claim}",
                metadata=object_meta(claim, namespace, labels),
                spec=inputs.part(objects, lambda o: o.workspace_claim),
                opts=claim_options(child),
            )
            if agent.workspace.initial_files:
                files = names.initial_files_name(agent.name)
                self.workspace_files = k8s.core.v1.ConfigMap(
                    f"{place.prefix}/{files}",
                    metadata=object_meta(files, namespace, labels),
                    data=inputs.part(objects, lambda o: o.workspace_files),
                    opts=child,
                )
        selector = contract.agent_selector(agent.name)
        self.disruption_budget, self.autoscaler = scaling_objects(
            key,
            agent.name,
            namespace,
            labels,
            objects,
            budget=inputs.exists(objects, lambda o: o.disruption_budget)
            if isinstance(objects, inputs.Pending)
            else disruption_budget_spec(agent, selector) is not None,
            scaler=agent.autoscaling is not None,
            opts=child,
        )

    def _secrets(self, plan: AgentPlan) -> list[Any]:
        """The Secrets whose data rolls the pods: its own, the cluster's it reads, its
        HttpTools' credentials and its sidecars' own."""
        env = agent_env(
            plan.spec,
            plan.defaults,
            plan.part_of,
            plan.targets,
            plan.models,
            plan.persona,
            plan.features,
        )[0]
        used = set(contract.secret_names_used(env))
        secrets = [self.secret] if self.secret is not None else []
        secrets += [s for n, s in sorted(plan.managed_secrets.items()) if n in used]
        secrets += plan.http_secrets
        for tool, target in zip(plan.tools, plan.targets, strict=True):
            if target.sidecar_container is not None:
                secrets += getattr(tool, "read_secrets", [])
        return secrets


def _card_peers(
    plan: AgentPlan, place: namespaces.Placement
) -> list[tuple[PeerTarget, pulumi.Output[PeerTarget] | None]]:
    """The peers whose cards are synced; with the agent's namespace an Output, those in it
    (handed over as objects) with an Output of their target made from it as it resolves."""
    value = pulumi.Output.from_input(place.value)

    def resolved(index: int) -> pulumi.Output[PeerTarget]:
        def peer(namespace: str) -> PeerTarget:
            spec = plan.spec.model_copy(update={"namespace": namespace})
            return plan.features_for(spec).peers[index]

        return value.apply(peer)

    return [
        (p, resolved(i) if plan.namespace_late and p.namespace == plan.namespace else None)
        for i, p in enumerate(plan.features.peers)
    ]


def _objects(plan: AgentPlan, final: Any) -> Any:
    """The agent's object specs, as an Output when its spec or a sidecar is not known yet."""
    sidecars = [t.sidecar_container for t in plan.targets if t.sidecar_container is not None]

    def build(spec: AgentSpec, containers: Sequence[Any]) -> AgentObjects:
        part_of, targets = plan.placed(spec)
        return agent_objects(
            spec,
            plan.defaults,
            part_of,
            targets,
            containers,
            models=plan.models,
            persona=plan.persona,
            image_known=plan.image_known,
            features=plan.features_for(spec),
        )

    if any(isinstance(c, pulumi.Output) for c in sidecars):
        final = final.final if isinstance(final, inputs.Pending) else final
    elif not isinstance(final, pulumi.Output):
        # A sidecar's unknown values (an env value) wait where they are, as the agent's do.
        return inputs.with_leaves(final, sidecars, build)
    # Here ``final`` is the spec or an Output of it (the branches above return the rest).
    spec = cast("pulumi.Input[AgentSpec]", final)
    return pulumi.Output.all(spec, *sidecars).apply(lambda xs: build(xs[0], xs[1:]))


def _guarded_config(objects: Any, agent: AgentSpec, final: Any) -> Any:
    """config.yaml, failing as a field error when a URL given as an Output has a query
    credential (routing it would change the agent's env and Secret)."""
    return secret_routing.unroutable_query_guard(
        inputs.part(objects, lambda o: o.config_text),
        agent,
        inputs.part(final, secret_routing.query_urls),
        f"LanguageAgent {agent.name!r}",
        construction_site() or None,
    )


def _register_policies(
    plan: AgentPlan,
    place: namespaces.Placement,
    labels: Meta,
    objects: Any,
    child: pulumi.ResourceOptions,
) -> list[k8s.networking.v1.NetworkPolicy]:
    """The agent's NetworkPolicies; ``where`` is the agent's namespace (a stand-in while it
    is an Output: ``place`` then) or a tool's."""
    agent, here = plan.spec, plan.namespace
    egress = agent.egress or plan.defaults.egress
    return [
        network_policy(
            policy,
            place.value if where == here else where,
            labels,
            inputs.part(objects, _policy_spec(n)),
            child,
            place.prefix if where == here else where,
        )
        for n, (policy, where, _) in enumerate(
            [
                *policies.agent_policies(agent, here, plan.targets, egress),
                *a2a_policies(agent, here, plan.features.peers),
            ]
        )
    ]


def _policy_spec(index: int) -> Callable[[AgentObjects], NetworkPolicySpecDict]:
    return lambda objects: objects.policies[index][2]


def _waits_for(plan: AgentPlan) -> list[pulumi.Resource]:
    """What a required reference waits for: the tool's workload, then its schema."""
    return [
        dep
        for tool, target in zip(plan.tools, plan.targets, strict=True)
        if target.required and tool is not None
        for dep in tool.ready_dependencies
    ]
