"""Pods roll when a Secret they read changes: the pod template carries
``langop.io/secret-digest: hmac-sha256:<hex>``, an HMAC-SHA256 of the data of every Secret the
workload reads that langop-infra makes, keyed by the workload's :class:`RolloutKey`.

Keyed, not a plain hash: anyone who can read a Deployment could test guesses of a secret
against a plain hash of it; the key lives only in Pulumi state. The digest changes when,
and only when, the Secrets' data changes (not on a relabel or a ``pulumi refresh``, as a
``resourceVersion`` would). It is not secret, so it is unsecreted: a Pulumi secret anywhere
in the pod template would hide the whole Deployment spec in previews.

The data is what the program gives each Secret (its ``stringData``), carried by the Secret
langop-infra registers (:class:`DigestedSecret`), so the digest is known as soon as the
values are, whatever the kubernetes provider reports back. A user's own Secret object counts
by its ``data`` output, in which the provider has folded its ``stringData`` (base64), so
either way the user gave a value, changing it changes the digest.
"""

# pyright: reportUnknownMemberType=false

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from typing import Any, cast

import pulumi
import pulumi_kubernetes as k8s

from langop_infra.manifests._contract import SECRET_DIGEST_ANNOTATION
from langop_infra.sync._compare import canonical_json
from langop_infra.sync.rollout_key import RolloutKey

DIGEST_PREFIX = "hmac-sha256:"


class DigestedSecret(k8s.core.v1.Secret):
    """An Opaque Secret langop-infra registers, which keeps its Kubernetes name and the
    ``stringData`` it was given for the digests of the workloads that read it."""

    def __init__(
        self,
        resource_name: str,
        *,
        name: str,
        metadata: k8s.meta.v1.ObjectMetaArgsDict,
        data: Any,
        opts: pulumi.ResourceOptions,
    ) -> None:
        # The SDK's overloads leave ``__props__`` untyped (reportUnknownMemberType is off for
        # this file at its top: a line's ignore is "unnecessary" to a user's basic-mode check).
        super().__init__(
            resource_name, metadata=metadata, type="Opaque", string_data=data, opts=opts
        )
        self.given_name = name  # ``metadata``'s
        self.given_data: Any = data


def canonical(secrets: Sequence[tuple[str, Mapping[str, object]]]) -> bytes:
    """The bytes the digest covers: ``{secret name: {key: value}}`` as JSON, keys sorted."""
    return canonical_json({name: dict(data) for name, data in secrets}).encode()


def digest(key: str, secrets: Sequence[tuple[str, Mapping[str, object]]]) -> str:
    """``hmac-sha256:<hex>`` of :func:`canonical` ``secrets`` under the hex ``key``."""
    mac = hmac.new(bytes.fromhex(key), canonical(secrets), hashlib.sha256)
    return DIGEST_PREFIX + mac.hexdigest()


def _data_of(secret: Any) -> Any:
    """``(name, data)`` of a Secret, as an Output; None for a Secret the workload does not
    get (an Output of None: a routed Secret none of whose values turned out secret)."""
    if secret is None:
        return None
    if isinstance(secret, pulumi.Output):
        return cast("pulumi.Output[Any]", secret).apply(_data_of)
    if isinstance(secret, DigestedSecret):
        name: Any = secret.given_name
        data: Any = secret.given_data
    else:  # a Secret registered elsewhere: what the provider reports
        name = secret.metadata.name
        # ``data``, not ``string_data``: the provider folds ``stringData`` into ``data`` (base64)
        # and reports no ``stringData``, so ``data`` is known at preview either way it was given.
        data = secret.data

    def pair(parts: list[object]) -> tuple[str, Mapping[str, object]]:
        return str(parts[0]), cast("Mapping[str, object]", parts[1] or {})

    return pulumi.Output.all(name, pulumi.Output.from_input(data)).apply(pair)


def secret_digest(
    secrets: Sequence[object], key_name: str, opts: pulumi.ResourceOptions
) -> tuple[pulumi.Output[bool], pulumi.Output[str | None]]:
    """Whether the workload reads any of ``secrets`` (Secrets, Outputs of one or of None),
    and the digest of those it reads, neither of them secret. Registers the workload's
    :class:`RolloutKey` ``key_name`` with ``opts``. The first is known as soon as the
    Secrets' data is; the digest also waits for the key (unknown at a first preview)."""
    key = pulumi.Output.secret(RolloutKey(key_name, opts).key)
    data = pulumi.Output.all(*[_data_of(s) for s in secrets])
    # From which Secrets there are, not their data: an unknown value leaves it known.
    read = pulumi.Output.all(*[_present(s) for s in secrets]).apply(any)

    def sign(parts: list[Any]) -> str | None:
        key_hex, found = parts[0], [p for p in parts[1] if p is not None]
        # Without a key (a user's own mocks that do not know RolloutKey) there is no digest.
        if not found or not key_hex:
            return None
        return digest(key_hex, sorted(found, key=lambda p: str(p[0])))

    signed = pulumi.Output.all(key, data).apply(sign)
    return pulumi.Output.unsecret(read), pulumi.Output.unsecret(signed)


def _present(secret: object) -> bool | pulumi.Output[bool]:
    """Whether the workload gets ``secret`` (a Secret, or an Output of one or of None)."""
    if isinstance(secret, pulumi.Output):
        return cast("pulumi.Output[object]", secret).apply(_present)
    return secret is not None


def with_digest(
    annotations: Any, read: pulumi.Output[bool], signed: pulumi.Output[str | None]
) -> pulumi.Output[Any]:
    """Pod-template ``annotations`` (a mapping or an Output of one), plus the digest when the
    workload reads a Secret. The digest stays an Output inside the mapping: while it is
    unknown, the other annotations are not."""

    def merge(parts: list[object]) -> dict[str, object]:
        given = dict(cast("Mapping[str, object]", parts[0] or {}))
        return {**given, SECRET_DIGEST_ANNOTATION: signed} if parts[1] else given

    given: Any = annotations
    if isinstance(annotations, pulumi.Output):
        return pulumi.Output.all(cast("pulumi.Output[Any]", given), read).apply(merge)
    return read.apply(lambda flag: merge([given, flag]))
