"""Import paths the README documented before the package layout moved keep working for one
release, with a DeprecationWarning naming the new path; the schema-sync provider still loads
from the module path that Pulumi state written earlier names."""

from __future__ import annotations

import importlib
import pickle
import subprocess
import sys

import pytest

MOVED = {
    "langop_infra.stack_program": "langop_infra.program.stack",
    "langop_infra.package": "langop_infra.program.package",
    "langop_infra.contract": "langop_infra.build.contract",
    "langop_infra.schema_compare": "langop_infra.sync.compare",
    "langop_infra.agent_runtime": "langop_infra.agent.runtime",
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_warns_and_is_the_new_module(old: str) -> None:
    code = (
        "import warnings, importlib\n"
        "warnings.simplefilter('error', DeprecationWarning)\n"
        f"try:\n    importlib.import_module({old!r})\n"
        "except DeprecationWarning as w:\n    print(w)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == f"{old} moved to {MOVED[old]}; import it from there"
    with pytest.warns(DeprecationWarning):
        sys.modules.pop(old, None)
        module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED[old])


def test_state_written_before_the_move_still_names_a_loadable_provider() -> None:
    from langop_infra.sync.provider import ToolSchemaSyncProvider

    # What dill wrote into state before the move: the class by module and name.
    old = pickle.dumps(ToolSchemaSyncProvider(), protocol=0).replace(
        b"langop_infra.sync.provider", b"langop_infra.schema_sync"
    )
    assert b"langop_infra.schema_sync" in old
    assert type(pickle.loads(old)) is ToolSchemaSyncProvider
