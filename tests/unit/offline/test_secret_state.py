"""A Secret's outputs under the mock engine, held to pulumi-kubernetes v4's own
``clients.normalizeSecret`` (run by its ``Check``): ``stringData`` folded into ``data``."""

from __future__ import annotations

import base64

from pulumi.output import Unknown
from pulumi.runtime import rpc

from langop_infra.offline._secret_state import checked


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_string_data_is_folded_into_data_and_overwrites_a_key_of_the_same_name() -> None:
    state = {
        "kind": "Secret",
        "data": {"a": b64("old"), "b": b64("kept")},
        "stringData": {"a": "new"},
    }
    assert checked(state) == {"kind": "Secret", "data": {"a": b64("new"), "b": b64("kept")}}


def test_data_values_are_decoded_and_encoded_again_and_bad_base64_is_left_as_given() -> None:
    wrapped = b64("a value long enough to wrap")[:8] + "\n" + b64("a value long enough to wrap")[8:]
    state = {"data": {"wrapped": wrapped, "bad": "not base64!"}}
    assert checked(state) == {
        "data": {"wrapped": b64("a value long enough to wrap"), "bad": "not base64!"}
    }


def test_a_secret_value_keeps_data_secret() -> None:
    state = {"stringData": rpc.wrap_rpc_secret({"token": "t0k"})}
    assert checked(state) == {"data": rpc.wrap_rpc_secret({"token": b64("t0k")})}


def test_an_unknown_anywhere_leaves_the_inputs_as_given() -> None:
    state = {"metadata": {"namespace": Unknown()}, "stringData": {"token": "t0k"}}
    assert checked(state) is state


def test_string_data_that_is_not_a_map_of_strings_is_not_folded() -> None:
    state = {"stringData": {"n": 1}, "data": {"a": b64("x")}}
    assert checked(state) == state
