"""The schema-sync concurrency benchmark's ``--quick`` mode runs and reports sane figures."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "schema_sync_concurrency.py"


@pytest.mark.slow
@pytest.mark.bench
def test_quick_mode_completes_with_a_positive_wall_time() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"servers\s+10\n", done.stdout), done.stdout
    match = re.search(r"wall time \(median\)\s+([0-9.]+) s", done.stdout)
    assert match, done.stdout
    assert float(match.group(1)) > 0
    assert re.search(r"met\?\s+(yes|NO)", done.stdout)
