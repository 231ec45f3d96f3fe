"""Small helpers that register Kubernetes objects the same way for every component."""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Generator, Mapping, Sequence
from typing import Any, cast

import pulumi
import pulumi_kubernetes as k8s

from langop_infra.components import (
    _inputs as inputs,
    _rollout as rollout,
    _secret_routing as secret_routing,
)
from langop_infra.core import _pulumi_sdk as pulumi_sdk
from langop_infra.core.problems import Problem, SpecError
from langop_infra.manifests._contract import workload_secret_name

# Labels or annotations: a mapping (its values may be Outputs), or an Output of one while a
# value the user gave is not known yet (see inputs.part).
Meta = Mapping[str, Any] | pulumi.Output[Any]
# A namespace: its name, or an Output of it (see components/_namespace.py).
Namespace = str | pulumi.Output[str]


def object_meta(
    name: str,
    namespace: Namespace | None,
    labels: Meta,
    annotations: Meta | None = None,
) -> k8s.meta.v1.ObjectMetaArgsDict:
    meta: k8s.meta.v1.ObjectMetaArgsDict = {"name": name, "labels": _copied(labels)}
    if namespace is not None:
        meta["namespace"] = namespace
    if isinstance(annotations, pulumi.Output) or annotations:
        meta["annotations"] = _copied(annotations)
    return meta


def api_object(value: Mapping[str, object] | pulumi.Output[object]) -> Any:
    """A builder's typed object (or part of one) as pulumi_kubernetes takes it. The builders
    write the API's camelCase keys, which the provider accepts; its ``*ArgsDict`` types name
    snake_case keys instead, so the typed value crosses into the SDK untyped, here."""
    return value


def _copied(values: Meta) -> Any:
    if isinstance(values, pulumi.Output):
        return values
    return dict(values)


def merged_meta(*parts: Meta | None) -> Meta:
    """Labels or annotations merged left to right (later wins), an Output when one of the
    parts is one."""
    given = [p for p in parts if p is not None]
    if any(isinstance(p, pulumi.Output) for p in given):
        return pulumi.Output.all(*given).apply(_merge_all)
    return _merge_all(given)


def _merge_all(parts: Sequence[object]) -> dict[str, Any]:
    merged: dict[str, object] = {}
    for part in parts:
        merged.update(cast("Mapping[str, object]", part or {}))
    return merged


def service_account(
    key: str,
    workload: Any,
    namespace: Namespace,
    labels: Meta,
    opts: pulumi.ResourceOptions,
    annotations: Meta | None = None,
) -> k8s.core.v1.ServiceAccount | None:
    """ServiceAccount ``<workload>`` when its spec says ``serviceAccount: {create: true}``,
    with the given annotations (cloud workload identity); its token is never auto-mounted,
    the pod's ``automountServiceAccountToken`` decides."""
    account = getattr(workload, "service_account", None)
    if account is None or not account.create:
        return None
    return k8s.core.v1.ServiceAccount(
        f"{key}-sa",
        metadata=object_meta(
            workload.name,
            namespace,
            labels,
            account.annotations if annotations is None else annotations,
        ),
        automount_service_account_token=False,
        opts=opts,
    )


def opaque_secret(
    resource_name: str,
    *,
    name: str,
    namespace: Namespace,
    labels: Meta,
    values: Mapping[str, Any],
    opts: pulumi.ResourceOptions,
) -> k8s.core.v1.Secret:
    """A Secret whose every value is a Pulumi secret, whatever form it came in."""
    data = {key: pulumi.Output.secret(value) for key, value in values.items()}
    secret = k8s.core.v1.Secret(
        resource_name,
        metadata=object_meta(name, namespace, labels),
        type="Opaque",
        string_data=data,
        opts=opts,
    )
    return rollout.remember(secret, name, data)


def network_policy(
    name: str,
    namespace: Namespace,
    labels: Meta,
    spec: Mapping[str, object] | pulumi.Output[object],
    opts: pulumi.ResourceOptions,
    prefix: str | None = None,
) -> k8s.networking.v1.NetworkPolicy:
    """A NetworkPolicy named ``name`` in ``namespace`` (logical name ``<prefix>/<name>``, the
    prefix being the namespace unless it is an Output: see components/_namespace.py)."""
    return k8s.networking.v1.NetworkPolicy(
        f"{namespace if prefix is None else prefix}/{name}",
        metadata=object_meta(name, namespace, labels),
        spec=api_object(spec),
        opts=opts,
    )


def scaling_objects(
    key: str,
    name: str,
    namespace: Namespace,
    labels: Meta,
    objects: object,
    *,
    budget: bool | pulumi.Output[bool],
    scaler: bool,
    opts: pulumi.ResourceOptions,
) -> tuple[Any, k8s.autoscaling.v2.HorizontalPodAutoscaler | None]:
    """The workload's PodDisruptionBudget and HorizontalPodAutoscaler ``<name>`` (logical name
    ``key``), each only when asked for; their specs come from ``objects``, plain or an Output.

    ``budget`` is an Output when it depends on a value not known yet (``replicas`` from an
    Output): the budget is then registered when that value resolves, so ``pulumi preview``
    shows it only if the value is known there, and ``pulumi up`` creates it when needed.
    """

    def budget_object(_: object = None) -> k8s.policy.v1.PodDisruptionBudget:
        return k8s.policy.v1.PodDisruptionBudget(
            key,
            metadata=object_meta(name, namespace, labels),
            spec=inputs.part(objects, lambda o: o.disruption_budget),
            opts=opts,
        )

    pdb: object = None
    hpa = None
    if isinstance(budget, pulumi.Output):
        pdb = budget.apply(lambda wanted: budget_object() if wanted else None)
    elif budget:
        pdb = budget_object()
    if scaler:
        hpa = k8s.autoscaling.v2.HorizontalPodAutoscaler(
            key,
            metadata=object_meta(name, namespace, labels),
            spec=inputs.part(objects, lambda o: o.autoscaler),
            opts=opts,
        )
    return pdb, hpa


def workload_secret(
    key: str,
    workload: str,
    namespace: Namespace,
    labels: Meta,
    owned: Mapping[str, Any],
    opts: pulumi.ResourceOptions,
    routed: Sequence[pulumi.Output[Any]] = (),
) -> Any:
    """Secret ``<workload>-env`` holding a workload's literal secrets and the env values
    routed to it (see :mod:`secret_routing`), or None without any.

    With no literal secret, whether it exists depends on whether a routed env value turns
    out to be a secret: it is then an Output of the Secret (or of None), registered when
    that is known, as a PodDisruptionBudget waits for ``replicas``.
    """
    if not owned and not routed:
        return None

    def secret(_: Any = None) -> k8s.core.v1.Secret:
        name = workload_secret_name(workload)
        data = secret_routing.secret_data(owned, routed)
        made = k8s.core.v1.Secret(
            f"{key}-env",
            metadata=object_meta(name, namespace, labels),
            type="Opaque",
            string_data=data,
            opts=opts,
        )
        return rollout.remember(made, name, data)

    if owned:
        return secret()
    # Whether one is a secret is no secret: the Deployment reading the Secret's version
    # must not become secret as a whole.
    needed = pulumi.Output.all(
        *[pulumi.Output.unsecret(r.apply(lambda pair: pair[1] is not None)) for r in routed]
    )
    return needed.apply(lambda flags: secret() if any(flags) else None)


def child_options(
    parent: pulumi.Resource,
    opts: pulumi.ResourceOptions | None,
    depends_on: Sequence[pulumi.Resource | None] = (),
) -> pulumi.ResourceOptions:
    """Options for a component's child: parented, and waiting for what the component waits
    for (Pulumi does not pass a component's ``depends_on`` on to its children); None in
    ``depends_on`` (an object the component does not have) is left out."""
    inherited: Any = opts.depends_on if opts is not None and opts.depends_on else []
    if isinstance(inherited, pulumi.Resource):
        inherited = [inherited]
    deps = [*inherited, *(d for d in depends_on if d is not None)]
    return pulumi.ResourceOptions(parent=parent, depends_on=deps or None)


def claim_options(child: pulumi.ResourceOptions) -> pulumi.ResourceOptions:
    """A PersistentVolumeClaim's options: a replacement (storage class, access modes, or size
    down are immutable) or a removal forgets the claim instead of deleting its volume, so no
    edit of a stack file deletes data; the namespace's deletion still removes it."""
    return pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(retain_on_delete=True))


def with_pod_annotations(
    deployment: Any, secrets: Sequence[Any], key_name: str, opts: pulumi.ResourceOptions
) -> Any:
    """A Deployment spec whose pod template also carries the keyed digest of the Secrets the
    pods read (see :mod:`components._rollout`), so a change of their data rolls the pods;
    the workload's rollout key ``key_name`` is registered with ``opts`` when there are any.
    The annotations stay an Output inside a plain spec, so a preview shows the rest of it."""
    if not secrets:
        return deployment
    read, signed = rollout.secret_digest(secrets, key_name, opts)

    def merge(spec: dict[str, Any]) -> dict[str, Any]:
        template = spec["template"]
        given = template["metadata"].get("annotations", {})
        annotations = rollout.with_digest(given, read, signed)
        metadata = {**template["metadata"], "annotations": annotations}
        return {**spec, "template": {**template, "metadata": metadata}}

    if isinstance(deployment, pulumi.Output):
        return cast("pulumi.Output[dict[str, Any]]", deployment).apply(merge)
    return merge(deployment)


@contextlib.contextmanager
def component_error(subject: str) -> Generator[None, None, None]:
    """Name the component in a SpecError raised inside: ``invalid LanguageTool 'm': ...``."""
    try:
        yield
    except SpecError as exc:
        if exc.subject != "configuration":
            raise
        raise SpecError(exc.problems, subject=subject) from None


def kubernetes_access(
    opts: pulumi.ResourceOptions | None,
) -> tuple[pulumi.Input[str | None], pulumi.Input[str | None]]:
    """The context and kubeconfig of the kubernetes provider the component's objects use:
    the one in ``opts`` (``provider`` or ``providers``), else the stack's default provider,
    which reads ``kubernetes:context`` and ``kubernetes:kubeconfig``."""
    provider = _kubernetes_provider(opts)
    if provider is not None:
        return provider.context, pulumi.Output.secret(provider.kubeconfig)  # type: ignore[attr-defined]
    config = pulumi.Config("kubernetes")
    return config.get("context"), config.get("kubeconfig")


def _kubernetes_provider(opts: pulumi.ResourceOptions | None) -> k8s.Provider | None:
    if opts is None:
        return None
    if isinstance(opts.provider, k8s.Provider):
        return opts.provider
    providers = opts.providers
    if isinstance(providers, Mapping):
        found = providers.get("kubernetes")
        return found if isinstance(found, k8s.Provider) else None
    return next((p for p in providers or () if isinstance(p, k8s.Provider)), None)


# Components built in the running program, by (kind, namespace, name): a second one with the
# same key would register the same Kubernetes objects twice. Keyed by the root Stack resource
# (runs of the offline mock engine each get one), and within it by the RPC manager's list of
# outstanding RPCs: `pulumi.runtime.test` starts each test with `rpc_manager.clear()`, which
# makes a new list, so each test is its own program while the root Stack stays the same.
_BUILT: weakref.WeakKeyDictionary[object, tuple[list[object], dict[tuple[str, str, str], Any]]] = (
    weakref.WeakKeyDictionary()
)


class _NoProgram:
    """Stands for the stack root outside a running program (weak references need an object)."""


_OUTSIDE_A_PROGRAM = _NoProgram()


def built_components() -> dict[tuple[str, str, str], Any]:
    """The components built so far in this program run: runs in one process (the mock
    engine's, or one per ``@pulumi.runtime.test`` function) never see each other's."""
    root = pulumi.runtime.get_root_resource()
    key = root if root is not None else _OUTSIDE_A_PROGRAM
    rpcs = pulumi_sdk.pending_rpcs()  # renewed by each runtime test
    entry = _BUILT.get(key)
    if entry is None or entry[0] is not rpcs:
        entry = _BUILT[key] = (rpcs, {})
    return entry[1]


def register_component(
    component: object, kind: str, namespace: str, name: str, site: str | None = None
) -> None:
    """Record a component; a second one of the same kind, namespace and name is an error
    (naming ``site``, the user's line, when it is found as a namespace resolves)."""
    built = built_components()
    key = (kind, namespace, name)
    if key in built:
        raise SpecError(
            [
                Problem(
                    "name",
                    f"a {kind} named {name!r} already exists in namespace {namespace!r}; "
                    "give this one another name or namespace",
                )
            ],
            subject=f"{kind} {name!r}",
            where=site,
        )
    built[key] = component


def find_component(kind: str, namespace: str, name: str) -> Any | None:
    """A component built earlier in this program, or None."""
    return built_components().get((kind, namespace, name))


PACKAGE = "langop-infra"
# The token components had before they were served as a package; the alias keeps stacks
# created then from replacing every object.
OLD_PACKAGE = "langop"


def type_token(component: str) -> str:
    """``langop-infra:index:<Component>``, the token the component package serves."""
    return f"{PACKAGE}:index:{component}"


def aliased(opts: pulumi.ResourceOptions | None, component: str) -> pulumi.ResourceOptions:
    """``opts`` plus an alias from the component's earlier type token."""
    alias = pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=f"{OLD_PACKAGE}:index:{component}")])
    return pulumi.ResourceOptions.merge(opts, alias)
