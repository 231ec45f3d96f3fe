"""LanguageModel: a provider's model as agents reach it; and the namespace's model gateway.

A LanguageCluster runs one LiteLLM gateway (Deployment and Service ``gateway``, port 8000)
for the models of its namespace that go through it. A LanguageModel outside a cluster is
reached directly (``gateway: false``) unless it asks for a gateway: then it runs its
namespace's gateway itself, for itself alone.
"""

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast, overload

import pulumi
import pulumi_kubernetes as k8s
from typing_extensions import Unpack

from langop_infra.components import (
    _in_cluster as in_cluster,
    _inputs as inputs,
    _namespace as namespaces,
)
from langop_infra.components._base import PlannedComponent
from langop_infra.components._k8s import (
    aliased,
    api_object,
    child_options,
    component_error,
    find_component,
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

# The program index's kind for a standalone model's gateway (one per namespace).
GATEWAY_KIND = "ModelGateway"
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
    # Built outside a LanguageCluster: it registers its own gateway when it uses one.
    standalone: bool = False


def plan_model(name: str, args: object, fields: Mapping[str, object]) -> ModelPlan:
    """Validate a standalone model: reached directly (it needs an endpoint), or through the
    gateway it runs in its namespace."""
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
        if spec.gateway and isinstance(namespace, str):
            problems += _second_gateway(namespace)
        if not spec.gateway and spec.endpoint is None and spec.provider not in KNOWN_ENDPOINTS:
            problems.append(
                Problem("endpoint", f"set endpoint: agents call {spec.provider!r} directly")
            )
        if not spec.gateway and spec.endpoint is not None:
            own = namespace if isinstance(namespace, str) else ""
            in_cluster.refuse_unknown_services([("endpoint", spec.endpoint)], own)
        if spec.fallbacks and not spec.gateway:
            problems.append(
                Problem("fallbacks", "fallbacks need the gateway; set gateway: true or remove them")
            )
        if problems:
            raise SpecError(problems)
    return ModelPlan(spec, namespace, Defaults(), standalone=True)


def _second_gateway(namespace: str) -> list[Problem]:
    """A second standalone gateway model in ``namespace``: both would be Service ``gateway``."""
    first = find_component(GATEWAY_KIND, namespace, gateway.GATEWAY_NAME)
    if first is None:
        return []
    return [
        Problem(
            "gateway",
            f"LanguageModel {first.spec.name!r} runs the gateway of namespace {namespace!r} "
            "already, and a standalone gateway serves one model: declare both models under "
            "one LanguageCluster's models (one gateway serves them all), or set gateway: false",
        )
    ]


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
        routed = via_gateway(plan.spec, gateway_defaults(plan.defaults))
        # Agents reach a gateway in their own namespace (_agent_plan.gateway_problems); an
        # Output one is checked against theirs as both resolve.
        self.gateway_namespace = (place.prefix if place.known else place.value) if routed else None
        url: Any = model_endpoint(plan.spec, gateway_defaults(plan.defaults), place.prefix)
        self.gateway: Gateway | None = None
        if plan.standalone and routed:
            site = construction_site()
            namespaces.registered(self, GATEWAY_KIND, place, gateway.GATEWAY_NAME, site)
            self.gateway = register_gateway(
                [plan.spec],
                plan.defaults,
                namespace=place.value,
                part_of=place.value,
                secrets={},
                opts=child_options(self, opts),
                prefix=place.prefix,
            )
            url = self.gateway.endpoint if self.gateway is not None else url
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
    endpoint: str | pulumi.Output[str]


def register_gateway(
    models: Sequence[ModelSpec],
    defaults: Defaults,
    *,
    namespace: str | pulumi.Output[str],
    part_of: str | pulumi.Output[str],
    secrets: Mapping[str, k8s.core.v1.Secret],
    opts: pulumi.ResourceOptions,
    prefix: str | None = None,
) -> Gateway | None:
    """The namespace's gateway for the models that go through it, or None without any; a
    ``namespace`` Output reaches only the fields made from it, ``prefix`` starting the
    logical names (see components/_namespace.py)."""
    settings = gateway_defaults(defaults)
    routed = [m for m in models if via_gateway(m, settings)]
    if not routed:
        return None
    space = namespace if isinstance(namespace, str) else namespaces.STAND_IN
    made_of = part_of if isinstance(part_of, str) else namespaces.STAND_IN
    config_map, deployment, service = gateway.gateway_objects(
        routed,
        settings,
        namespace=space,
        part_of=made_of,
        security=defaults.security,
        image_pull_policy=defaults.image_pull_policy,
        observability=defaults.observability,
    )
    key = f"{prefix or space}/{gateway.GATEWAY_NAME}"
    env = deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    used = {
        e["valueFrom"]["secretKeyRef"]["name"]
        for e in env
        if "valueFrom" in e and "secretKeyRef" in e["valueFrom"]
    }
    otlp = defaults.observability.otlp_endpoint if defaults.observability else None
    specs: list[tuple[str, Any]] = [
        (gateway_policies.gateway_ingress_name(), gateway_policies.gateway_ingress_spec(space))
    ]
    if defaults.egress == "restricted":
        specs.append(
            (
                gateway_policies.gateway_egress_name(),
                gateway_policies.gateway_egress_spec(routed, otlp),
            )
        )
    placed: Any = namespaces.substituted(
        (config_map, deployment, service, specs, gateway.gateway_labels(made_of, settings.image)),
        namespace,
    )
    config_map, deployment, service, specs, labels = placed
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
            network_policy(name, namespace, labels, spec, opts, prefix) for name, spec in specs
        ],
        endpoint=namespaces.substituted(gateway.gateway_endpoint(space), namespace),
    )
