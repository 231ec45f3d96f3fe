"""Keeping a command's data stream clean while a user's program runs."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Generator


@contextlib.contextmanager
def stdout_to_stderr() -> Generator[None, None, None]:
    """Send everything written to stdout meanwhile to stderr: Python's ``print`` and
    ``sys.stdout``, and, at the file-descriptor level, what child processes
    (``subprocess.run``, ``os.system``) and C extensions write to fd 1."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(contextlib.redirect_stdout(sys.stderr))
        saved = _point_fd(1, 2)
        if saved is not None:
            stack.callback(_restore_fd, 1, saved)
        yield


def _point_fd(fd: int, target: int) -> int | None:
    """Make ``fd`` write where ``target`` does; the saved original, or None when either is
    not a real descriptor (an embedding host, a closed stream): then Python's level only."""
    try:
        for stream in (sys.__stdout__, sys.__stderr__):
            if stream is not None:
                stream.flush()
        saved = os.dup(fd)
    except (OSError, ValueError):
        return None
    try:
        os.dup2(target, fd)
    except OSError:
        os.close(saved)
        return None
    return saved


def _restore_fd(fd: int, saved: int) -> None:
    with contextlib.suppress(OSError, ValueError):
        if sys.__stderr__ is not None:
            sys.__stderr__.flush()
    os.dup2(saved, fd)
    os.close(saved)
