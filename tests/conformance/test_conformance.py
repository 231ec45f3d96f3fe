"""The official MCP conformance suite's client scenarios, run against our client.

Each scenario is its own test: the suite (npm ``@modelcontextprotocol/conformance``, run by
Node 22 from npm ``node@22``, both installed under ``.conformance/`` by ``.ci/run``) starts
its scenario's servers on loopback and runs ``client.py`` beside this file against them.
Scenarios our client cannot pass yet are expected failures, each with its reason.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / ".conformance" / "node_modules"
NODE = INSTALL / "node" / "bin" / "node"
SUITE = INSTALL / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
CLIENT = Path(__file__).resolve().parent / "client.py"
MISSING = (
    "the conformance suite is not installed; run: npm install --prefix .conformance "
    "node@22 @modelcontextprotocol/conformance@0.1.16 (as .ci/run does)"
)

# Why each scenario that fails still fails; see docs/mcp-client.md, "MCP conformance".
EXPECTED_FAILURES = {
    "elicitation-sep1034-client-defaults": (
        "the client answers elicitation/create with an error by design (it runs unattended, "
        "with no one to ask); the scenario expects an accept filled with the schema's defaults"
    ),
    "auth/cross-app-access-complete-flow": (
        "needs enterprise-managed authorization (SEP-990: RFC 8693 token exchange and the "
        "RFC 7523 JWT-bearer grant), neither client credentials nor authorization code"
    ),
}


@cache
def scenarios() -> list[str]:
    """Every client scenario the installed suite lists (empty when it is not installed)."""
    if not (NODE.exists() and SUITE.exists()):
        return []
    listed = subprocess.run(
        [str(NODE), str(SUITE), "list", "--client"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    return re.findall(r"^\s*-\s+(\S+)", listed, re.MULTILINE)


def _params() -> list[object]:
    names = scenarios()
    if not names:
        return [pytest.param("", marks=pytest.mark.skip(reason=MISSING), id="suite-missing")]
    return [
        pytest.param(
            name,
            id=name,
            marks=[pytest.mark.xfail(reason=EXPECTED_FAILURES[name], strict=False)]
            if name in EXPECTED_FAILURES
            else [],
        )
        for name in names
    ]


@pytest.mark.slow
@pytest.mark.parametrize("scenario", _params())
def test_client_scenario_passes(scenario: str, tmp_path: Path) -> None:
    command = f"{sys.executable} {CLIENT}"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    suite = [str(NODE), str(SUITE), "client", "--command", command, "--scenario", scenario]
    run = subprocess.run(
        [*suite, "--timeout", "30000", "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    output = re.sub(r"\x1b\[[0-9;]*m", "", run.stdout + run.stderr)
    summary = re.search(r"Passed: \d+/\d+, \d+ failed, \d+ warnings", output)
    failures = [
        line.strip() for line in output.splitlines() if "FAILURE" in line or "WARNING" in line
    ]
    client_errors = [line for line in output.splitlines() if line.startswith("error (")]
    assert run.returncode == 0, (
        f"{scenario}: {summary.group(0) if summary else 'no result'}; "
        + "; ".join(failures[:5] + client_errors[:2])
    )
    assert summary is not None and " 0 failed, 0 warnings" in summary.group(0), output[-2000:]


def test_every_expected_failure_names_a_listed_scenario() -> None:
    names = scenarios()
    if not names:
        pytest.skip(MISSING)
    assert set(EXPECTED_FAILURES) <= set(names)
    assert {"initialize", "tools_call"} <= set(names)
    assert sum(name.startswith("auth/") for name in names) >= 20
