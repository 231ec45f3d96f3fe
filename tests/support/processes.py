"""Ending the server processes tests start."""

from __future__ import annotations

import subprocess

STOP_LIMIT = 20  # seconds a process has to exit after SIGTERM before SIGKILL


def stop_process(process: subprocess.Popen[bytes] | subprocess.Popen[str]) -> None:
    """SIGTERM, and SIGKILL if it has not exited within ``STOP_LIMIT``; reaped either way."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=STOP_LIMIT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
