"""LanguageTool: an MCP server as a Deployment + Service, or as a container for agent pods."""

import dataclasses
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, overload

import pulumi
import pulumi_kubernetes as k8s
from typing_extensions import Unpack

from langop_infra.components import (
    _inputs as inputs,
    _namespace as namespaces,
    _secret_routing as secret_routing,
    _user_meta as user_meta,
)
from langop_infra.components._base import PlannedComponent
from langop_infra.components._k8s import (
    Meta,
    Namespace,
    aliased,
    child_options,
    claim_options,
    component_error,
    kubernetes_access,
    merged_meta,
    network_policy,
    object_meta,
    scaling_objects,
    service_account,
    type_token,
    with_pod_annotations,
    workload_secret,
)
from langop_infra.components._tool_sync import sync_limits, warn_unknown_allowed
from langop_infra.components.args import LanguageToolArgs, ToolRefArgs
from langop_infra.config import _names as names
from langop_infra.config.checks._admission import deploy_problems
from langop_infra.config.checks._advice import header_warnings
from langop_infra.config.checks._image_pins import workload_unpinned_images
from langop_infra.config.checks._secret_refs import sync_secret_refs
from langop_infra.config.checks._sync_path_check import sync_path_verdict
from langop_infra.config.checks._validation import parse_tool
from langop_infra.config.cluster import Defaults
from langop_infra.config.tool import ToolSpec
from langop_infra.core import _pacing as pacing
from langop_infra.core._construction import construction_site
from langop_infra.core.problems import Problem, SpecError
from langop_infra.manifests import _contract as contract, _pods as pods
from langop_infra.manifests._contract import workload_secret_name
from langop_infra.sync.provider import SyncOutputs, ToolSchemaSync

SecretValues = Mapping[str, Mapping[str, Any]]

if TYPE_CHECKING:
    ToolInput = LanguageToolArgs | ToolSpec | None
else:
    ToolInput = LanguageToolArgs  # what Pulumi's analyzer reads as the component's inputs


@dataclasses.dataclass(frozen=True)
class ToolPlan:
    """A validated tool and its context: what LanguageCluster hands a tool it declares."""

    spec: ToolSpec
    defaults: Defaults
    part_of: str
    sync_headers: dict[str, Any]
    sync_auth: dict[str, Any] | None = None
    # ``{"<namespace>/<agent>": [names]}``: referencing agents' allowedTools, which schema
    # sync checks against the tool's listing.
    allowed_tools: Mapping[str, list[str]] = dataclasses.field(default_factory=dict[str, list[str]])
    # False while the image is an Output not resolved yet: its labels wait for it.
    image_known: bool = True
    # The tool's target with its real values (port, MCP path) when an Output feeds them:
    # ``spec`` holds stand-ins for those. None: ``spec`` is the whole truth.
    pending_target: inputs.Pending | None = None
    # The spec with the user's values where ``spec`` holds stand-ins (labels are read here).
    pending_spec: inputs.Pending | None = None
    cluster_secrets: tuple[Any, ...] = ()  # the cluster's Secrets its env reads: they roll it
    # False when ``part_of`` is a stand-in, from a namespace given as an Output.
    part_of_known: bool = True

    def part_of_for(self, tool: ToolSpec) -> str:
        return self.part_of if self.part_of_known else _namespace(tool)

    def spec_part(self, pick: Callable[[ToolSpec], object]) -> Any:
        """``pick`` of the tool's spec as the user wrote it: known now, or Outputs of it."""
        return pick(self.spec) if self.pending_spec is None else self.pending_spec.pick(pick)

    @property
    def namespace(self) -> str:
        return self.spec.namespace or contract.DEFAULT_NAMESPACE

    def target_part(self, pick: Callable[[contract.ToolTarget], object]) -> Any:
        """``pick`` of the tool's target: known now, or an Output of its real value."""
        target = contract.ToolTarget.of(self.spec, self.namespace)
        return pick(target) if self.pending_target is None else self.pending_target.pick(pick)

    @property
    def target_known(self) -> bool:
        """Whether the target (endpoint, port, MCP path) is known when the program runs."""
        return self.pending_target is None or not self.pending_target.depends(
            lambda t: (t.port, t.mcp_path)
        )


def sync_headers(tool: ToolSpec, secret_values: SecretValues) -> dict[str, Any]:
    """Schema-sync headers with their values; a ``valueFrom`` must name a secret whose value
    this program holds (``langop-infra:secrets``), since ``pulumi up`` cannot read the
    cluster's Secrets. Validation reports a missing one; here it is simply left out."""
    headers: dict[str, object] = {}
    for header in tool.schema_sync.headers:
        if header.value_from is None:
            headers[header.name] = header.value if header.value is not None else header.secret
        else:
            ref = header.value_from.secret_key_ref
            headers[header.name] = secret_values.get(ref.name, {}).get(ref.key)
    return headers


def standalone_problems(tool: ToolSpec, defaults: Defaults) -> list[Problem]:
    """What a tool outside a LanguageCluster cannot do, and what Kubernetes would refuse."""
    problems = deploy_problems(tool, defaults)
    verdict = sync_path_verdict(tool, defaults)
    if verdict is not None and defaults.strict_egress:
        problems.append(Problem("schemaSync", verdict))
    for where, ref in sync_secret_refs(tool):
        problems.append(
            Problem(
                where,
                f"secret {ref.name!r} key {ref.key!r} is not declared under secrets; "
                "schema sync can only send values this program holds: use LanguageCluster "
                "with secrets",
            )
        )
    return problems


def sync_auth(tool: ToolSpec, secret_values: SecretValues) -> dict[str, Any] | None:
    """The OAuth client credentials schema sync sends, with the secret's value."""
    auth = tool.schema_sync.auth
    if auth is None:
        return None
    ref = auth.client_secret.secret_key_ref
    secret = secret_values.get(ref.name, {}).get(ref.key)
    return {
        "client_id": auth.client_id,
        "client_secret": secret,
        "scopes": list(auth.scopes),
        "issuer": auth.issuer,
    }


def sync_inputs(plan: ToolPlan, kube_context: object, kubeconfig: object) -> dict[str, Any]:
    """What ToolSchemaSync needs to list the tool's schema (see docs/SCHEMA_SYNC.md)."""
    tool = plan.spec
    inputs = {
        "endpoint": plan.target_part(lambda t: t.endpoint),
        "mcp_path": plan.target_part(lambda t: t.mcp_path),
        "access": tool.schema_sync.access or plan.defaults.schema_sync_access,
        "sync_url": tool.schema_sync.sync_url,
        "namespace": plan.namespace,
        "service": tool.name,
        "port": plan.target_part(lambda t: t.port),
        "timeout": tool.schema_sync.timeout,
        "required": tool.schema_sync.required,
        "headers": plan.sync_headers,
        "oauth": plan.sync_auth,
        "kube_context": kube_context,
        "kubeconfig": kubeconfig,
        "limits": sync_limits(tool),
    }
    if tool.deployment_mode == "sidecar":
        inputs["deployment_mode"] = "sidecar"
    if plan.allowed_tools:
        inputs["allowed_tools"] = {k: list(v) for k, v in sorted(plan.allowed_tools.items())}
    return inputs


def tool_document(name: str, args: object, fields: Mapping[str, object]) -> dict[str, Any]:
    """One mapping from the ``args`` given (a mapping or a ToolSpec) and keyword fields."""
    data = inputs.merged_input(args, fields, ToolSpec)
    data.setdefault("name", name)
    inputs.refuse_whole_lists(data, ToolSpec, f"LanguageTool {data.get('name')!r}")
    return data


def plan_tool(name: str, args: object, fields: Mapping[str, object]) -> tuple[ToolPlan, Any]:
    """Validate a standalone tool; return its plan and its objects (an Output when a value
    is unknown until deployment)."""
    data = tool_document(name, args, fields)
    part_of = data.pop("part_of", None) or data.pop("partOf", None)
    defaults = Defaults.model_validate(data.pop("defaults", None) or {})
    # The image's labels are built from the real image as it resolves (inputs.Pending).
    image_known = True

    def parse(document: object) -> ToolSpec:
        tool = parse_tool(document)
        problems = standalone_problems(tool, defaults)
        if problems:
            raise SpecError(problems)
        return tool

    def build(tool: ToolSpec) -> pods.ToolObjects:
        return pods.tool_objects(
            tool, defaults, _namespace(tool), part_of or _namespace(tool), image_known=image_known
        )

    def build_with_target(tool: ToolSpec) -> tuple[Any, contract.ToolTarget, ToolSpec]:
        return build(tool), contract.ToolTarget.of(tool, _namespace(tool)), tool

    subject = f"LanguageTool {data.get('name')!r}"
    with component_error(subject):
        tool, built = inputs.resolve(
            data, parse, build_with_target, _structure, subject, namespaces.LATE
        )
    pending_target = pending_spec = None
    if isinstance(built, inputs.Pending):
        objects, pending_target = built.map(lambda b: b[0]), built.map(lambda b: b[1])
        pending_spec = built.map(lambda b: b[2])
    else:
        objects = built[0]
    warnings = header_warnings(tool.schema_sync.headers, "schemaSync", "Pulumi state")
    warnings += workload_unpinned_images(tool)
    for warning in warnings:
        pulumi.log.warn(user_meta.pythonic(f"{subject}: {warning}"))
    verdict = sync_path_verdict(tool, defaults)
    if verdict is not None and not defaults.strict_egress:
        pulumi.log.warn(user_meta.pythonic(f"{subject}: schemaSync: {verdict}"))
    plan = ToolPlan(
        tool,
        defaults,
        part_of or _namespace(tool),
        sync_headers(tool, {}),
        image_known=image_known,
        pending_target=pending_target,
        pending_spec=pending_spec,
        part_of_known=bool(part_of) or pending_spec is None or not pending_spec.depends(_namespace),
    )
    return plan, objects


def _namespace(tool: ToolSpec) -> str:
    return tool.namespace or contract.DEFAULT_NAMESPACE


def _structure(tool: ToolSpec) -> tuple[Any, ...]:
    return (
        tool.name,
        tool.deployment_mode,
        tool.persistence is None,
        tool.schema_sync.enabled,
        tool.egress,
        tool.autoscaling is None,
        sorted(tool.secret_env),
        tool.service_account is not None and tool.service_account.create,
    )


class LanguageTool(PlannedComponent):
    """An MCP tool server, deployed per the LanguageTool contract.

    Service mode: Deployment ``<name>`` and ClusterIP Service ``<name>`` in the tool's
    namespace, endpoint ``http://<name>.<namespace>.svc.cluster.local:<port>``, and an ingress
    NetworkPolicy admitting only the agents that reference it. Sidecar mode: no workload of its
    own; its container joins each referencing agent's pod, endpoint ``http://localhost:<port>``.

    Validation happens before anything is registered: bad input raises ``SpecError`` naming
    every problem with its field path. Python programs also find ``spec`` (the ToolSpec),
    ``target`` (what agents need, as plain data) and the registered objects as attributes.
    """

    endpoint: pulumi.Output[str]
    """The tool's URL as agents see it (without the MCP path)."""
    service_name: pulumi.Output[str]
    """Name of the Service (and Deployment)."""
    namespace: pulumi.Output[str]
    """Namespace of the tool's objects."""
    deployment_mode: pulumi.Output[str]
    """``service`` or ``sidecar``."""
    tool_schemas: pulumi.Output[list[Any]]
    """The tools the server listed at the last sync."""
    schema_hash: pulumi.Output[str]
    """Canonical hash of ``tool_schemas``."""
    tool_names: pulumi.Output[list[str]]
    """Names of the listed tools."""
    phase: pulumi.Output[str]
    """Schema-sync phase: Pending, Registered, Error or Disabled."""

    @overload
    def __init__(
        self,
        name: str,
        args: LanguageToolArgs | ToolSpec,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None: ...

    @overload
    def __init__(
        self,
        name: str,
        args: None = None,
        opts: pulumi.ResourceOptions | None = None,
        **kwargs: Unpack[LanguageToolArgs],
    ) -> None: ...

    def __init__(
        self,
        name: str,
        args: ToolInput = None,
        opts: pulumi.ResourceOptions | None = None,
        **kwargs: Any,
    ) -> None:
        plan, objects = plan_tool(name, args, kwargs)
        self._build(name, plan, opts, objects)

    def _build(
        self,
        name: str,
        plan: ToolPlan,
        opts: pulumi.ResourceOptions | None,
        resolved: Any = None,
    ) -> None:
        objects = resolved
        if objects is None:
            objects = pods.tool_objects(
                plan.spec, plan.defaults, plan.namespace, plan.part_of, image_known=plan.image_known
            )
        tool, site = plan.spec, construction_site()
        place = namespaces.placement(name, plan.spec_part(_namespace))
        place = namespaces.registered(self, "LanguageTool", place, tool.name, site)
        namespace = place.value
        super().__init__(type_token("LanguageTool"), name, None, aliased(opts, "LanguageTool"))
        child = child_options(self, opts)
        key = f"{place.prefix}/{tool.name}"
        self.spec = tool
        self.target_known = plan.target_known
        labels = plan.spec_part(
            lambda t: contract.tool_labels(t, plan.part_of_for(t), image_known=plan.image_known)
        )
        owned = contract.workload_env(tool.name, tool.env, tool.secret_env)[1]
        service = tool.deployment_mode == "service"
        spec = inputs.part(objects, lambda o: o.deployment) if service else None
        deployment, routed = secret_routing.route_env(spec, workload_secret_name(tool.name))
        self.secret = workload_secret(key, tool.name, namespace, labels, owned, child, routed)
        self.read_secrets = [s for s in (self.secret, *plan.cluster_secrets) if s is not None]
        self.persistent_volume_claim = None
        if tool.persistence is not None and tool.deployment_mode == "service":
            self.persistent_volume_claim = k8s.core.v1.PersistentVolumeClaim(
                f"{key}-data",
                metadata=object_meta(f"{tool.name}-data", namespace, labels),
                spec=inputs.part(objects, lambda o: o.claim[1]),
                opts=claim_options(child),
            )
        self.deployment = self.service = self.network_policy = self.service_account = None
        self.sidecar_container = None
        if tool.deployment_mode == "sidecar":
            self.sidecar_container = inputs.part(objects, lambda o: o.container)
        else:
            self._register_service(key, place, plan, labels, objects, deployment, child)
        self.target = dataclasses.replace(
            contract.ToolTarget.of(tool, plan.namespace), sidecar_container=self.sidecar_container
        )
        # Agents read ``target``, whose namespace is a stand-in while ``place`` is not known.
        self.namespace_known = place.known
        self._register_schema_sync(key, plan, opts, namespace)
        self._export(tool, namespace, plan.target_part(lambda t: t.endpoint))
        pacing.workload_built()

    def _register_service(
        self,
        key: str,
        place: namespaces.Placement,
        plan: ToolPlan,
        labels: Meta,
        objects: object,
        deployment: object,
        child: pulumi.ResourceOptions,
    ) -> None:
        tool, namespace = plan.spec, place.value
        account = user_meta.account_annotations(tool, plan.spec_part)
        self.service_account = service_account(key, tool, namespace, labels, child, account)
        self.deployment = k8s.apps.v1.Deployment(
            key,
            metadata=object_meta(
                tool.name, namespace, labels, plan.spec_part(user_meta.workload_annotations)
            ),
            spec=with_pod_annotations(deployment, self.read_secrets, f"{key}-rollout-key", child),
            opts=pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(depends_on=[self.service_account])
            )
            if self.service_account
            else child,
        )
        self.service = k8s.core.v1.Service(
            key,
            # The recommended labels win over the user's: selectors and tools rely on them.
            metadata=object_meta(
                tool.name,
                namespace,
                merged_meta(plan.spec_part(user_meta.service_labels), labels),
                plan.spec_part(user_meta.service_annotations),
            ),
            spec=inputs.part(objects, lambda o: o.service),
            opts=child,
        )
        self.network_policy = network_policy(
            names.tool_ingress_name(tool.name),
            namespace,
            labels,
            inputs.part(objects, lambda o: o.ingress_policy[1]),
            child,
            place.prefix,
        )
        # Which objects exist follows from the spec; their specs may wait for Outputs.
        shape = pods.tool_objects(
            tool, plan.defaults, plan.namespace, plan.part_of, image_known=plan.image_known
        )
        self.egress_policy = None
        if shape.egress_policy is not None:
            self.egress_policy = network_policy(
                shape.egress_policy[0],
                namespace,
                labels,
                inputs.part(objects, lambda o: o.egress_policy[1]),
                child,
                place.prefix,
            )
        self.disruption_budget, self.autoscaler = scaling_objects(
            key,
            tool.name,
            namespace,
            labels,
            objects,
            budget=inputs.exists(objects, lambda o: o.disruption_budget)
            if isinstance(objects, inputs.Pending)
            else shape.disruption_budget is not None,
            scaler=shape.autoscaler is not None,
            opts=child,
        )

    def _register_schema_sync(
        self, key: str, plan: ToolPlan, opts: pulumi.ResourceOptions | None, namespace: Namespace
    ) -> None:
        tool = plan.spec
        self.schema_sync = None
        inputs = None
        if tool.schema_sync.enabled:
            inputs = {**sync_inputs(plan, *kubernetes_access(opts)), "namespace": namespace}
        if tool.deployment_mode == "sidecar":
            # Each agent carrying the sidecar syncs it through its own pods (pod proxy).
            self.target = dataclasses.replace(self.target, sync_inputs=inputs)
        if self.deployment is None or inputs is None:
            disabled = SyncOutputs.disabled()
            for name in SyncOutputs.EXPORTED:
                setattr(self, name, pulumi.Output.from_input(getattr(disabled, name)))
            return
        self.schema_sync = ToolSchemaSync(
            f"{key}-schema",
            inputs,
            opts=child_options(self, opts, [self.deployment, self.service]),
        )
        if plan.allowed_tools:
            self.schema_sync.unknown_allowed_tools.apply(
                lambda found: warn_unknown_allowed(tool.name, found)
            )
        for name in SyncOutputs.EXPORTED:
            setattr(self, name, getattr(self.schema_sync, name))

    def _export(self, tool: ToolSpec, namespace: Namespace, endpoint: Any) -> None:
        self.endpoint = pulumi.Output.from_input(endpoint)
        self.service_name = pulumi.Output.from_input(tool.name)
        self.namespace = pulumi.Output.from_input(namespace)
        self.deployment_mode = pulumi.Output.from_input(tool.deployment_mode)
        self.register_outputs(
            {
                "endpoint": self.endpoint,
                "service_name": self.service_name,
                "namespace": self.namespace,
                "deployment_mode": self.deployment_mode,
                **{name: getattr(self, name) for name in SyncOutputs.EXPORTED},
            }
        )

    @property
    def ready_dependencies(self) -> list[pulumi.Resource]:
        """What an agent that requires this tool waits for: its workload, then its schema."""
        return [r for r in (self.deployment, self.service, self.schema_sync) if r is not None]


if TYPE_CHECKING:
    # A LanguageTool, or a reference to one.
    ToolEntry = ToolRefArgs | LanguageTool
else:  # what Pulumi's analyzer reads: no Union in a package schema
    ToolEntry = ToolRefArgs
