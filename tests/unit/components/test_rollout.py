"""``components/_rollout.py``: the keyed digest of the Secrets a workload reads, under the
package's own mocks (``langop_mocks``: the RolloutKey answers with ``OFFLINE_KEY``)."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

from langop_infra.components._rollout import (
    DIGEST_PREFIX,
    DigestedSecret,
    canonical,
    digest,
    secret_digest,
    with_digest,
)
from langop_infra.offline._mock_engine import run_program
from langop_infra.sync.rollout_key import OFFLINE_KEY
from langop_infra.testing.secrets import secret_leaves

ANNOTATION = "langop.io/secret-digest"
OPTS = pulumi.ResourceOptions()


def expected(*pairs: tuple[str, dict[str, object]]) -> str:
    body = canonical(sorted(pairs, key=lambda p: p[0]))
    return "hmac-sha256:" + hmac.new(bytes.fromhex(OFFLINE_KEY), body, hashlib.sha256).hexdigest()


def secret(name: str, data: Any) -> DigestedSecret:
    return DigestedSecret(
        f"r-{name}", name=name, metadata={"name": name, "namespace": "apps"}, data=data, opts=OPTS
    )


def resolved(output: pulumi.Output[Any]) -> Any:
    """The value and secretness of ``output``, as an Output of ``(value, is_secret)``."""
    return pulumi.Output.all(output, pulumi.Output.from_input(output.is_secret()))


def test_canonical_is_sorted_compact_utf8_json() -> None:
    assert canonical([("b", {"y": 1, "x": "é"}), ("a", {})]) == (
        b'{"a":{},"b":{"x":"\xc3\xa9","y":1}}'
    )


def test_digest_is_the_hmac_of_the_canonical_bytes_under_the_hex_key() -> None:
    key = "0f" * 32
    pairs = [("s", {"k": "v"})]
    mac = hmac.new(bytes.fromhex(key), b'{"s":{"k":"v"}}', hashlib.sha256).hexdigest()
    assert DIGEST_PREFIX == "hmac-sha256:"
    assert digest(key, pairs) == "hmac-sha256:" + mac
    assert digest("1f" * 32, pairs) != digest(key, pairs)


def test_a_digested_secret_keeps_its_name_and_data(langop_mocks: Any) -> None:
    made = secret("env", {"K": "v"})
    assert (made.given_name, made.given_data) == ("env", {"K": "v"})


@pulumi.runtime.test
def test_the_digest_covers_every_secret_read_in_name_order(langop_mocks: Any) -> Any:
    first = secret("b-env", {"K": "1"})
    second = secret("a-env", {"T": pulumi.Output.secret("2")})
    read, signed = secret_digest([first, None, second], "wl-key", OPTS)
    again_read, again = secret_digest([second, first], "wl-key2", OPTS)

    def check(parts: list[Any]) -> None:
        (flag, flag_secret), (value, value_secret), (other, _), (other_flag, _) = parts
        assert (flag, flag_secret, value_secret) == (True, False, False)
        assert value == expected(("b-env", {"K": "1"}), ("a-env", {"T": "2"}))
        assert (other, other_flag) == (value, True)  # the order read does not roll pods

    return pulumi.Output.all(
        resolved(read), resolved(signed), resolved(again), resolved(again_read)
    ).apply(check)


@pulumi.runtime.test
def test_a_workload_that_reads_no_secret_has_no_digest(langop_mocks: Any) -> Any:
    read, signed = secret_digest([None, pulumi.Output.from_input(None)], "k", OPTS)
    empty_read, empty = secret_digest([], "k2", OPTS)

    def check(parts: list[Any]) -> None:
        assert parts == [False, None, False, None]

    return pulumi.Output.all(read, signed, empty_read, empty).apply(check)


@pulumi.runtime.test
def test_an_output_of_a_secret_and_one_registered_elsewhere_are_read(langop_mocks: Any) -> Any:
    ours = pulumi.Output.from_input("x").apply(lambda _: secret("ours", {"A": "1"}))
    theirs = k8s.core.v1.Secret(
        "theirs", metadata={"name": "theirs", "namespace": "apps"}, string_data={"B": "2"}
    )
    empty = secret("empty", None)
    read, signed = secret_digest([ours, theirs, empty], "k", OPTS)

    def check(parts: list[Any]) -> None:
        assert parts[0] is True
        assert parts[1] == expected(("ours", {"A": "1"}), ("theirs", {"B": "2"}), ("empty", {}))

    return pulumi.Output.all(read, signed).apply(check)


@pulumi.runtime.test
def test_the_digest_joins_the_given_annotations_only_when_a_secret_is_read(
    langop_mocks: Any,
) -> Any:
    yes = pulumi.Output.from_input(True)
    no = pulumi.Output.from_input(False)
    signed = pulumi.Output.from_input("hmac-sha256:ab")
    plain = with_digest({"a": "1"}, yes, signed)
    unread = with_digest({"a": "1"}, no, signed)
    late = with_digest(pulumi.Output.from_input({"b": "2"}), yes, signed)
    late_unread = with_digest(pulumi.Output.from_input(None), no, signed)
    nothing = with_digest(None, yes, signed)

    def check(parts: list[Any]) -> None:
        assert parts == [
            {"a": "1", ANNOTATION: "hmac-sha256:ab"},
            {"a": "1"},
            {"b": "2", ANNOTATION: "hmac-sha256:ab"},
            {},
            {ANNOTATION: "hmac-sha256:ab"},
        ]

    return pulumi.Output.all(plain, unread, late, late_unread, nothing).apply(check)


@pytest.mark.langop_mocks(preview=True)
@pulumi.runtime.test
def test_the_given_annotations_stay_a_mapping_while_the_digest_is_pending(
    langop_mocks: Any,
) -> Any:
    read = pulumi.Output.from_input(True)
    pending: pulumi.Output[str | None] = pulumi.Output.from_input("d")
    merged = with_digest({"a": "1"}, read, pending)

    def check(value: dict[str, Any]) -> None:
        assert value["a"] == "1"
        assert isinstance(value[ANNOTATION], pulumi.Output)

    return merged.apply(check)


class Owner(pulumi.ComponentResource):
    """A component for the objects under test to be parented to."""

    def __init__(self) -> None:
        super().__init__("test:index:Owner", "owner")


def test_a_digested_secret_and_the_rollout_key_register_as_given() -> None:
    def program() -> None:
        opts = pulumi.ResourceOptions(parent=Owner())
        made = DigestedSecret(
            "r-env",
            name="env",
            metadata={"name": "env", "namespace": "apps"},
            data={"K": "v"},
            opts=opts,
        )
        secret_digest([made], "wl-key", opts)

    run = run_program(program)
    # Registered in the order their inputs resolve.
    found = {r.type: r for r in run.registrations}
    owner, key = found["test:index:Owner"], found["pulumi-python:dynamic/langop:RolloutKey"]
    made = found["kubernetes:core/v1:Secret"]
    assert len(run.registrations) == 3
    assert (key.name, key.parent, made.name, made.parent) == (
        "wl-key",
        owner.urn,
        "r-env",
        owner.urn,
    )
    assert run.manifests() == [
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "Opaque",
            "metadata": {"name": "env", "namespace": "apps"},
            "stringData": {"K": "[secret]"},
        }
    ]
    assert secret_leaves(made.inputs) == [(".stringData.K", "v")]
