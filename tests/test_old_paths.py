"""No release shipped the pre-layout import paths, so they are gone; only the schema-sync
provider's old module path stays, because Pulumi state written from a checkout before the
layout move names it (a dynamic provider is pickled by module and class name)."""

from __future__ import annotations

import importlib
import pickle

import pytest

GONE = [
    "langop_infra.stack_program",
    "langop_infra.package",
    "langop_infra.contract",
    "langop_infra.schema_compare",
    "langop_infra.agent_runtime",
    "langop_infra.spec",
    "langop_infra.build",
    "langop_infra.testing.reachability",
]


@pytest.mark.parametrize("old", GONE)
def test_an_unreleased_old_path_is_gone(old: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)


def test_state_written_before_the_move_still_names_a_loadable_provider() -> None:
    from langop_infra.sync.provider import ToolSchemaSyncProvider

    # What dill wrote into state before the move: the class by module and name.
    old = pickle.dumps(ToolSchemaSyncProvider(), protocol=0).replace(
        b"langop_infra.sync.provider", b"langop_infra.schema_sync"
    )
    assert b"langop_infra.schema_sync" in old
    assert type(pickle.loads(old)) is ToolSchemaSyncProvider
