"""LanguageModel: a provider's model as agents reach it; and the namespace's model gateway.

A LanguageCluster runs one LiteLLM gateway (Deployment and Service ``gateway``, port 8000)
for the models of its namespace that go through it. A LanguageModel outside a cluster has no
gateway to join, so it is reached directly (``gateway: false``).
"""

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast, overload

import pulumi
import pulumi_kubernetes as k8s
from typing_extensions import Unpack

from langop_infra.components import _inputs as inputs, _namespace as namespaces
from langop_infra.components._base import PlannedComponent
from langop_infra.components._k8s import (
    aliased,
    api_object,
    component_error,
    network_policy,
    type_token,
    with_pod_annotations,
)
from langop_infra.components.args import LanguageModelArgs, ModelRefArgs
from langop_infra.config._model import KNOWN_ENDPOINTS, ModelSpec, PersonaSpec, via_gateway
from langop_infra.config.checks._validation import parse_model
from langop_infra.config.cluster import Defaults, gateway_defaults
from langop_infra.core._construction import construction_site
from langop_infra.core.problems import Problem, SpecError
from langop_infra.manifests import (
    _contract as contract,
    _gateway as gateway,
    _gateway_policies as gateway_policies,
)
from langop_infra.manifests._agent_models import model_endpoint

# A persona is plain data: no Kubernetes object of its own.
LanguagePersona = PersonaSpec
if TYPE_CHECKING:
    ModelInput = LanguageModelArgs | ModelSpec | None
else:
    ModelInput = LanguageModelArgs  # what Pulumi's analyzer reads as the component's inputs


@dataclasses.dataclass(frozen=True)
class ModelPlan:
    """A validated model, its namespace and the cluster's defaults."""

    spec: ModelSpec
    # An Output of it for a standalone model (see components/_namespace.py).
    namespace: str | pulumi.Output[str]
    defaults: Defaults


def plan_model(name: str, args: object, fields: Mapping[str, object]) -> ModelPlan:
    """Validate a standalone model: it is reached directly, so it needs an endpoint."""
    data = inputs.merged_input(args, fields, ModelSpec)
    data.setdefault("name", name)
    namespace = data.pop("namespace", None) or contract.DEFAULT_NAMESPACE
    if isinstance(namespace, pulumi.Output):
        # Only agents' lookups by name read it: checked when it resolves.
        site, subject = construction_site(), f"LanguageModel {data.get('name')!r}"
        namespace = namespaces.checked_name(cast("pulumi.Output[str]", namespace), subject, site)
    # Outside a LanguageCluster there is no gateway: agents call the provider directly.
    data.setdefault("gateway", False)
    inputs.refuse_outputs(
        data,
        f"LanguageModel {data.get('name')!r}",
        "agents copy a model's settings into their config when they are built; pass a plain value",
    )
    with component_error(f"LanguageModel {data.get('name')!r}"):
        spec = parse_model(data)
        problems: list[Problem] = []
        if spec.gateway:
            problems.append(
                Problem(
                    "gateway",
                    "a LanguageModel outside a LanguageCluster has no gateway to go through; "
                    "set gateway: false (agents call the provider), or declare it under a "
                    "LanguageCluster's models",
                )
            )
        if spec.endpoint is None and spec.provider not in KNOWN_ENDPOINTS:
            problems.append(
                Problem("endpoint", f"set endpoint: agents call {spec.provider!r} directly")
            )
        if spec.fallbacks:
            problems.append(Problem("fallbacks", "fallbacks need the gateway; remove them"))
        if problems:
            raise SpecError(problems)
    return ModelPlan(spec, namespace, Defaults())


class LanguageModel(PlannedComponent):
    """A model agents reference by name (``models:``/``model:``); no Kubernetes object of its
    own: the cluster's gateway serves it, or agents call the provider directly."""

    endpoint: pulumi.Output[str]
    """Where agents reach the model: the gateway's URL, or the provider's."""

    @overload
    def __init__(
        self,
        name: str,
        args: LanguageModelArgs | ModelSpec,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None: ...

    @overload
    def __init__(
        self,
        name: str,
        args: None = None,
        opts: pulumi.ResourceOptions | None = None,
        **kwargs: Unpack[LanguageModelArgs],
    ) -> None: ...

    def __init__(
        self,
        name: str,
        args: ModelInput = None,
        opts: pulumi.ResourceOptions | None = None,
        **kwargs: Any,
    ) -> None:
        self._build(name, plan_model(name, args, kwargs), opts)

    def _build(
        self,
        name: str,
        plan: ModelPlan,
        opts: pulumi.ResourceOptions | None,
        resolved: Any = None,
    ) -> None:
        place = namespaces.placement(name, plan.namespace)
        place = namespaces.registered(
            self, "LanguageModel", place, plan.spec.name, construction_site()
        )
        super().__init__(type_token("LanguageModel"), name, None, aliased(opts, "LanguageModel"))
        self.spec = plan.spec
        # Not through a gateway (refused outside a cluster): the namespace plays no part.
        routed = via_gateway(plan.spec, gateway_defaults(plan.defaults))
        # Agents reach a gateway in their own namespace (_agent_plan.model_problems).
        self.gateway_namespace = place.prefix if routed else None
        url = model_endpoint(plan.spec, gateway_defaults(plan.defaults), place.prefix)
        self.endpoint = pulumi.Output.from_input(url)
        self.register_outputs({"endpoint": self.endpoint})


if TYPE_CHECKING:
    # A LanguageModel, or a reference to one.
    ModelEntry = ModelRefArgs | LanguageModel
    # A LanguageModel or its name.
    ModelName = str | LanguageModel
else:  # what Pulumi's analyzer reads: no Union in a package schema
    ModelEntry = ModelRefArgs
    ModelName = str


@dataclasses.dataclass
class Gateway:
    """The registered gateway objects of one namespace."""

    config_map: k8s.core.v1.ConfigMap
    deployment: k8s.apps.v1.Deployment
    service: k8s.core.v1.Service
    network_policies: list[k8s.networking.v1.NetworkPolicy]
    endpoint: str


def register_gateway(
    models: Sequence[ModelSpec],
    defaults: Defaults,
    *,
    namespace: str,
    part_of: str,
    secrets: Mapping[str, k8s.core.v1.Secret],
    opts: pulumi.ResourceOptions,
) -> Gateway | None:
    """The namespace's gateway for the models that go through it, or None without any."""
    settings = gateway_defaults(defaults)
    routed = [m for m in models if via_gateway(m, settings)]
    if not routed:
        return None
    config_map, deployment, service = gateway.gateway_objects(
        routed,
        settings,
        namespace=namespace,
        part_of=part_of,
        security=defaults.security,
        image_pull_policy=defaults.image_pull_policy,
        observability=defaults.observability,
    )
    key = f"{namespace}/{gateway.GATEWAY_NAME}"
    env = deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    used = {
        e["valueFrom"]["secretKeyRef"]["name"]
        for e in env
        if "valueFrom" in e and "secretKeyRef" in e["valueFrom"]
    }
    labels = gateway.gateway_labels(part_of, settings.image)
    otlp = defaults.observability.otlp_endpoint if defaults.observability else None
    specs = [
        (
            gateway_policies.gateway_ingress_name(),
            gateway_policies.gateway_ingress_spec(namespace),
        )
    ]
    if defaults.egress == "restricted":
        specs.append(
            (
                gateway_policies.gateway_egress_name(),
                gateway_policies.gateway_egress_spec(routed, otlp),
            )
        )
    return Gateway(
        config_map=k8s.core.v1.ConfigMap(
            f"{key}-config",
            metadata=api_object(config_map["metadata"]),
            data=config_map["data"],
            opts=opts,
        ),
        deployment=k8s.apps.v1.Deployment(
            key,
            metadata=api_object(deployment["metadata"]),
            spec=with_pod_annotations(
                deployment["spec"],
                [s for n, s in sorted(secrets.items()) if n in used],
                f"{key}-rollout-key",
                opts,
            ),
            opts=opts,
        ),
        service=k8s.core.v1.Service(
            key,
            metadata=api_object(service["metadata"]),
            spec=api_object(service["spec"]),
            opts=opts,
        ),
        network_policies=[
            network_policy(name, namespace, labels, spec, opts) for name, spec in specs
        ],
        endpoint=gateway.gateway_endpoint(namespace),
    )
