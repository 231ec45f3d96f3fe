"""LanguageCluster: one namespace's tools, agents, secrets and defaults from a single spec."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from langop_infra import contract, policies
from langop_infra.agent import LanguageAgent
from langop_infra.errors import SpecError
from langop_infra.k8s import child_options, network_policy, object_meta, opaque_secret
from langop_infra.specs import ClusterSpec
from langop_infra.tool import LanguageTool
from langop_infra.validation import external_reference_problems, parse_cluster


class LanguageCluster(pulumi.ComponentResource):
    """A namespace (created, or adopted with ``createNamespace: false``) with its Secrets,
    every tool, then every agent with its tool references resolved by name.

    ``external_tools`` are LanguageTools of other namespaces that agents here may reference.
    ``tools`` and ``agents`` map names to the components built.
    """

    spec: ClusterSpec
    namespace: pulumi.Output[str]
    namespace_resource: k8s.core.v1.Namespace | None
    secrets: dict[str, k8s.core.v1.Secret]
    tools: dict[str, LanguageTool]
    agents: dict[str, LanguageAgent]
    default_deny: k8s.networking.v1.NetworkPolicy | None

    def __init__(
        self,
        name: str,
        spec: ClusterSpec | Mapping[str, Any],
        *,
        external_tools: Sequence[LanguageTool] = (),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        cluster = parse_cluster(spec)
        external = {(t.target.namespace, t.spec.name): t for t in external_tools}
        problems = external_reference_problems(cluster, external.keys())
        if problems:
            raise SpecError(problems)
        super().__init__("langop:index:LanguageCluster", name, None, opts)
        ns = cluster.namespace
        part_of = cluster.part_of or ns
        defaults = cluster.defaults
        self.spec = cluster
        labels = contract.recommended_labels(ns, "cluster", part_of)

        self.namespace_resource = None
        depends: list[pulumi.Resource] = []
        if cluster.create_namespace:
            self.namespace_resource = k8s.core.v1.Namespace(
                ns,
                metadata=object_meta(
                    ns,
                    None,
                    {
                        **labels,
                        # Kubernetes then refuses any pod that is not restricted-compliant.
                        "pod-security.kubernetes.io/enforce": "restricted",
                        "pod-security.kubernetes.io/enforce-version": "latest",
                    },
                ),
                opts=child_options(self, opts),
            )
            depends.append(self.namespace_resource)
        child = child_options(self, opts, depends)

        self.secrets = {
            secret_name: opaque_secret(
                f"{ns}/{secret_name}",
                name=secret_name,
                namespace=ns,
                labels=labels,
                values=values,
                opts=child,
            )
            for secret_name, values in sorted(cluster.secrets.items())
        }

        self.tools = {}
        for tool in cluster.tools:
            # LanguageTool takes the schema-sync access mode from `defaults` when unset.
            self.tools[tool.name] = LanguageTool(
                f"{ns}/{tool.name}",
                tool.model_copy(update={"namespace": ns}),
                defaults=defaults,
                part_of=part_of,
                secret_values=cluster.secrets,
                opts=child,
            )

        index = {**external, **{(ns, n): t for n, t in self.tools.items()}}
        self.agents = {
            agent.name: LanguageAgent(
                f"{ns}/{agent.name}",
                agent.model_copy(update={"namespace": ns}),
                tool_index=index,
                managed_secrets=self.secrets,
                defaults=defaults,
                part_of=part_of,
                opts=child,
            )
            for agent in cluster.agents
        }

        self.default_deny = None
        if defaults.default_deny:
            self.default_deny = network_policy(
                policies.DEFAULT_DENY_NAME, ns, labels, policies.default_deny_spec(), child
            )

        self.namespace = pulumi.Output.from_input(ns)
        self.register_outputs(
            {
                "namespace": self.namespace,
                "tools": {n: t.endpoint for n, t in self.tools.items()},
                "agents": {n: a.config_yaml for n, a in self.agents.items()},
            }
        )
