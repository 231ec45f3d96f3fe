"""Network peers: extra ingress sources and the destinations of restricted egress."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    Field,
    model_validator,
)
from typing_extensions import Self

from langop_infra.config._fields import Cidr, DnsLabel, LabelMap, Port, Spec, invalid


class LabelSelector(Spec):
    """Objects selected by their labels."""

    match_labels: LabelMap = {}
    """Labels an object must carry, all of them."""


class IPBlock(Spec):
    """A range of IP addresses, less some sub-ranges."""

    cidr: Cidr
    """The range, e.g. 10.0.0.0/8."""
    except_: list[Cidr] = Field(default=[], alias="except")
    """Ranges inside cidr to leave out; each must be strictly smaller than cidr."""


class PeerSpec(Spec):
    """An extra ingress source: pods and/or namespaces by label, or an IP block."""

    pod_selector: LabelSelector | None = None
    """Pods with these labels (in the workload's namespace unless namespaceSelector is set)."""
    namespace_selector: LabelSelector | None = None
    """Namespaces with these labels."""
    ip_block: IPBlock | None = None
    """An IP range (not with the selectors)."""

    @model_validator(mode="after")
    def _one_kind(self) -> PeerSpec:
        selectors = self.pod_selector is not None or self.namespace_selector is not None
        if selectors == (self.ip_block is not None):
            raise invalid("one_kind", "give podSelector and/or namespaceSelector, or ipBlock alone")
        return self


class PortSpec(Spec):
    """A port and its protocol."""

    port: Port
    """Port number, 1-65535."""
    protocol: Literal["TCP", "UDP", "SCTP"] = "TCP"
    """Protocol of the port."""


class NetworkPeer(Spec):
    """A peer given as ``{cidr, except}`` or as ``{namespace, podLabels}`` (not both)."""

    cidr: Cidr | None = None
    """An IP range, e.g. 10.0.0.0/8 (not with namespace or podLabels)."""
    except_: list[Cidr] = Field(default=[], alias="except")
    """Ranges inside cidr to leave out; each must be strictly smaller than cidr."""
    namespace: DnsLabel | None = Field(default=None, description="Pods of this namespace.")
    pod_labels: LabelMap | None = Field(default=None, description="Pods with these labels.")
    host: str | None = Field(
        default=None, description="The host name this CIDR serves, for the render's egress check."
    )

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        in_cluster = self.namespace is not None or self.pod_labels is not None
        if in_cluster and self.cidr is not None:
            raise invalid(
                "peer_form",
                "give cidr (with optional except), or namespace and/or podLabels, not both",
            )
        if not in_cluster and self.cidr is None:
            raise invalid(
                "peer_form",
                "a peer needs cidr (with optional except), or namespace and/or podLabels; "
                "give one of them",
            )
        if in_cluster and (self.except_ or self.host):
            raise invalid("peer_form", "except and host apply to a cidr peer only")
        return self


class EgressRule(NetworkPeer):
    """A destination a workload with ``egress: restricted`` may reach: a CIDR, or pods by
    namespace and labels; on ``ports`` (all ports when empty)."""

    ports: list[PortSpec] = []
    """Ports allowed (all ports when empty)."""
