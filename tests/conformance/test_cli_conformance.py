"""The official conformance suite's client scenarios, with the ``langop-infra`` CLI alone as
the client (``cli_client.py`` runs the executable; no Python API of ours).

Before: 18 of 26 through the CLI (no ``tools call``, no CIMD or ``private_key_jwt`` flags, a
login with its own scope before the server's challenge). The two expected failures are the
Python runner's (see ``test_conformance.py``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conformance.test_conformance import MISSING, NODE, ROOT, SUITE, scenarios

CLI_CLIENT = Path(__file__).resolve().parent / "cli_client.py"
AT_LEAST = 24


def _passes(scenario: str, workdir: Path) -> tuple[bool, str]:
    suite = [str(NODE), str(SUITE), "client", "--command", f"{sys.executable} {CLI_CLIENT}"]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    run = subprocess.run(
        [*suite, "--scenario", scenario, "--timeout", "30000", "-o", str(workdir)],
        capture_output=True,
        text=True,
        timeout=150,
        cwd=workdir,
        env=env,
    )
    output = re.sub(r"\x1b\[[0-9;]*m", "", run.stdout + run.stderr)
    summary = re.search(r"Passed: \d+/\d+, \d+ failed, \d+ warnings", output)
    passed = run.returncode == 0 and summary is not None and " 0 failed, 0 warnings" in summary[0]
    return passed, summary[0] if summary else output[-300:]


@pytest.mark.slow
def test_the_cli_alone_passes_at_least_24_client_scenarios(tmp_path: Path) -> None:
    names = scenarios()
    if not names:
        pytest.skip(MISSING)
    results = {name: _passes(name, tmp_path) for name in names}
    failed = {name: why for name, (ok, why) in results.items() if not ok}
    passed = len(names) - len(failed)
    print(f"{passed} of {len(names)} client scenarios pass through the CLI; failed: {failed}")
    assert len(names) == 26
    assert passed >= AT_LEAST, failed
