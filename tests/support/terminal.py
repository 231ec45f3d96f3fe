"""Run a command with one of its output streams on a pseudo-terminal, as a user's shell would."""

from __future__ import annotations

import os
import pty
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal


def run_on_a_terminal(
    argv: Sequence[str],
    *,
    stream: Literal["stdout", "stderr"],
    env: Mapping[str, str],
    cwd: Path | None = None,
    timeout: float = 60,
) -> tuple[subprocess.CompletedProcess[bytes], str]:
    """Run ``argv`` with ``stream`` on a pseudo-terminal (the other one piped); return the
    finished process and what it wrote to the terminal."""
    leader, follower = pty.openpty()
    other = "stderr" if stream == "stdout" else "stdout"
    done = subprocess.run(
        list(argv),
        cwd=cwd,
        env=dict(env),
        timeout=timeout,
        check=False,
        **{stream: follower, other: subprocess.PIPE},  # type: ignore[arg-type]
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the terminal's other side is closed and drained
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return done, b"".join(chunks).decode()
