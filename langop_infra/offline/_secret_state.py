"""A v1 Secret's outputs as the kubernetes provider reports them: its checked inputs, where
``stringData`` is already folded into ``data``.

The provider's ``Check`` normalizes a Secret whose inputs hold no unknown value
(``clients.normalizeSecret`` in pulumi-kubernetes v4): each ``stringData`` value is base64
encoded into ``data`` (overwriting a ``data`` key of the same name, as the API server does),
``stringData`` is dropped, and each ``data`` value is decoded and re-encoded. So ``data`` is
known at preview and at ``pulumi up`` whichever way the values were given, and
``string_data`` is unknown at preview (absent from the outputs).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import cast

from pulumi.runtime import rpc

from langop_infra.offline._engine_values import unknown_paths

SECRET_TYPE = "kubernetes:core/v1:Secret"


def checked(state: dict[str, object]) -> dict[str, object]:
    """``state`` (a Secret's inputs) as the provider's ``Check`` returns it."""
    if next(unknown_paths(state), None) is not None:
        return state  # the provider leaves an object with an unknown value as given
    string_data, string_secret = _unwrapped(state.get("stringData"))
    data, data_secret = _unwrapped(state.get("data"))
    if string_data and not all(isinstance(v, str) for v in string_data.values()):
        string_data = None  # not a map of strings: the provider folds nothing in
    if not string_data and not data:
        return state
    merged = {key: _reencoded(value) for key, value in dict(data or {}).items()}
    merged.update({key: _encoded(value) for key, value in dict(string_data or {}).items()})
    out = {k: v for k, v in state.items() if not (string_data and k == "stringData")}
    out["data"] = rpc.wrap_rpc_secret(merged) if string_secret or data_secret else merged
    return out


def _unwrapped(value: object) -> tuple[Mapping[str, object] | None, bool]:
    """A map of values with any secret marks taken off, and whether there was one."""
    secret = rpc.is_rpc_secret(value)
    inner: object = rpc.unwrap_rpc_secret(value)
    if not isinstance(inner, Mapping):
        return None, False
    items = cast("Mapping[str, object]", inner)
    found = {k: rpc.unwrap_rpc_secret(v) for k, v in items.items()}
    return found, secret or any(rpc.is_rpc_secret(v) for v in items.values())


def _encoded(value: object) -> object:
    return base64.b64encode(value.encode()).decode() if isinstance(value, str) else value


def _reencoded(value: object) -> object:
    """A ``data`` value decoded and encoded again (line breaks gone, as Go's decoder skips
    them); one that is not base64 is left for the API server to refuse."""
    if not isinstance(value, str):
        return value
    try:
        decoded = base64.b64decode(value.replace("\r", "").replace("\n", ""), validate=True)
        return base64.b64encode(decoded).decode()
    except binascii.Error:
        return value
