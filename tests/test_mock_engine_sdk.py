"""The Pulumi SDK internals the offline mock engine relies on are there, by name.

``render`` runs programs under ``pulumi.runtime.set_mocks`` with a recording monitor; it
reaches into a few private SDK names to do so. A new SDK that renames one fails here, with
the name, rather than somewhere deep in a render.
"""

from __future__ import annotations

import importlib

import pytest

USED = [
    ("pulumi.runtime.mocks", "MockMonitor"),
    ("pulumi.runtime.mocks", "MockResourceArgs"),
    ("pulumi.runtime.rpc", "UNKNOWN"),
    ("pulumi.runtime.rpc", "_special_secret_sig"),
    ("pulumi.runtime.rpc", "_special_sig_key"),
    ("pulumi.runtime.rpc", "deserialize_properties"),
    ("pulumi.runtime.rpc", "serialize_properties"),
    ("pulumi.runtime.resource", "_get_stack_trace"),
    ("pulumi.runtime.proto.source_pb2", "StackTrace"),
    ("pulumi.runtime.settings", "ROOT"),
    ("pulumi.runtime.settings", "SETTINGS"),
    ("pulumi.runtime.stack", "run_pulumi_func"),
    ("pulumi.runtime.stack", "wait_for_rpcs"),
    ("pulumi.runtime.sync_await", "_ensure_event_loop"),
    ("pulumi.runtime.sync_await", "_sync_await"),
    ("pulumi.provider.experimental", "component_provider_host"),
    ("pulumi.dynamic.__main__", None),  # the provider host the schema-sync tests load
]


@pytest.mark.parametrize(("module", "name"), USED, ids=[f"{m}.{n}" for m, n in USED])
def test_sdk_internal_is_there(module: str, name: str | None) -> None:
    if name is None:
        spec = importlib.util.find_spec(module)
        assert spec is not None, f"{module} is gone from this Pulumi SDK"
        return
    assert hasattr(importlib.import_module(module), name), f"{module}.{name} is gone"


def test_settings_keep_the_run_state_the_engine_clears() -> None:
    from pulumi.runtime import settings

    assert hasattr(settings.SETTINGS, "rpc_manager") and hasattr(settings.SETTINGS, "outputs")
