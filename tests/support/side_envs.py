"""The tests' side environments, and the lines a run that skipped tests for want of them ends
with (``pytest_terminal_summary`` in tests/conftest.py): one per missing environment, naming
the command that builds it. ``.ci/side-envs`` builds them; ``.ci/run`` calls it first."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

# Where the environments are looked for: the repository, or (for the test of this summary,
# which runs pytest on a folder of its own) LANGOP_TEST_SIDE_ENVS_ROOT.
ROOT = Path(os.environ.get("LANGOP_TEST_SIDE_ENVS_ROOT") or Path(__file__).resolve().parents[2])
#: environment folder → the file whose presence says it is built (what the tests look for)
SIDE_ENVS = {
    ".venv-checkov": ".venv-checkov/bin/checkov",
    ".venv-litellm": ".venv-litellm/bin/litellm",
    ".venv-mcp-proxy": ".venv-mcp-proxy/bin/mcp-proxy",
    ".conformance": ".conformance/node_modules/@modelcontextprotocol/conformance/package.json",
    ".a2a-js": ".a2a-js/node_modules/@a2a-js/sdk/package.json",
}


def missing_environment_lines(skip_reasons: Iterable[str], root: Path = ROOT) -> list[str]:
    """One line per side environment that is missing under ``root`` and that a skip reason
    names (every such reason names its environment's folder)."""
    reasons = list(skip_reasons)
    lines = []
    for name, built in SIDE_ENVS.items():
        if (root / built).exists():
            continue
        skipped = sum(name in reason for reason in reasons)
        if skipped:
            lines.append(
                f"{skipped} skipped: {name} is missing; build it with: .ci/side-envs {name}"
            )
    return lines
