"""The key behind pod-rollout digests: 32 random bytes kept only in Pulumi state, as a secret.

A workload's pod template carries ``langop.io/secret-digest: hmac-sha256:<hex>``, an HMAC
of the Secrets it reads (``components/_rollout.py``), so that its pods roll when, and only
when, their data changes. A plain hash of a secret would let anyone who can read the
Deployment test guesses against it; the HMAC's key never reaches the cluster.

:class:`RolloutKey` is a dynamic resource: ``create`` draws the key, ``diff`` never asks for
a change (so the key never changes while the resource exists) and ``read`` (``pulumi
refresh``) returns it as it was. Its output ``key`` is a secret
(``additional_secret_outputs``); the program reads it only through ``Output.secret``.

Public by name: Pulumi pickles the provider by this module's path into every stack's state.
Offline runs never run it. The mock engine (``render``) answers with a key only when given
one (``render --fingerprint-key-env``: a key derived from the user's), else leaves the key,
and so the digest, unknown, as the first ``pulumi preview`` shows it: a digest under a key
anyone knows would be a plain hash of the secrets in disguise. :class:`langop_infra.testing.
Mocks` answers with :data:`OFFLINE_KEY`, a fixed key, so users' tests can assert rollouts.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from collections.abc import Mapping
from typing import ClassVar

import pulumi
from pulumi import dynamic as dyn

KEY_BYTES = 32
# The resource's one input: says what it is in previews and lets offline runs answer it.
PURPOSE = "pod-rollout HMAC key"
# The Pulumi type token the SDK derives from ``module`` and ``name`` below.
TYPE = "pulumi-python:dynamic/langop:RolloutKey"
# Documented (SECURITY.md, Pod rollouts): the key of users' test mocks, 32 bytes of 0x6c.
# Public: a digest under it is no better than a plain hash, so renders never use it.
OFFLINE_KEY = "6c" * KEY_BYTES


def new_key() -> str:
    """A fresh key: ``KEY_BYTES`` bytes from the OS's CSPRNG, as hex."""
    return secrets.token_hex(KEY_BYTES)


def offline_outputs(
    type_: str, inputs: Mapping[str, object], key: object
) -> dict[str, object] | None:
    """The outputs offline mocks give a :class:`RolloutKey` (its inputs with ``key``), or
    None for any other resource."""
    if type_ != TYPE:
        return None
    return {**inputs, "key": key}


def derived_key(user_key: bytes) -> str:
    """A rollout key for offline renders from a key the user holds (``render
    --fingerprint-key-env``): digests only that user can reproduce."""
    return hmac.new(user_key, b"langop-infra rollout key", hashlib.sha256).hexdigest()


class RolloutKeyProvider(dyn.ResourceProvider):
    """The provider: stateless, so it pickles to its class reference."""

    def create(self, props: dict[str, object]) -> dyn.CreateResult:
        return dyn.CreateResult(
            id_=uuid.uuid4().hex, outs={"purpose": props.get("purpose", PURPOSE), "key": new_key()}
        )

    def diff(self, _id: str, _olds: dict[str, object], _news: dict[str, object]) -> dyn.DiffResult:
        # Never a change, never a replacement: a new key would roll every pod once for nothing.
        return dyn.DiffResult(changes=False, replaces=[], stables=["key"])

    def update(
        self, _id: str, olds: dict[str, object], _news: dict[str, object]
    ) -> dyn.UpdateResult:
        return dyn.UpdateResult(outs=_kept(olds))

    def read(self, id_: str, props: dict[str, object]) -> dyn.ReadResult:
        # The key lives only in state: what the engine holds is what there is.
        return dyn.ReadResult(id_=id_, outs=_kept(props))

    def delete(self, _id: str, _props: dict[str, object]) -> None:
        return None


def _kept(olds: Mapping[str, object]) -> dict[str, object]:
    return {"purpose": olds.get("purpose", PURPOSE), "key": olds.get("key")}


class RolloutKey(dyn.Resource, module="langop", name="RolloutKey"):
    """A workload's rollout key (see the module docstring)."""

    SECRET_OUTPUTS: ClassVar[list[str]] = ["key"]
    key: pulumi.Output[str]
    purpose: pulumi.Output[str]

    def __init__(self, name: str, opts: pulumi.ResourceOptions | None = None) -> None:
        secret = pulumi.ResourceOptions(additional_secret_outputs=list(self.SECRET_OUTPUTS))
        super().__init__(
            RolloutKeyProvider(),
            name,
            {"purpose": PURPOSE, "key": None},
            pulumi.ResourceOptions.merge(opts, secret),
        )
