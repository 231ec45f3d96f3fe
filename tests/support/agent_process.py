"""The built-in agent as a real process (``python -m langop_infra.agent serve``), started
the way its image starts it, and waited for by the lines it writes on stderr (no polling)."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

READY = "serving A2A at"
START_TIMEOUT = 60.0  # guards a hang only


class AgentProcess:
    """A running agent; ``lines`` is its stderr so far (drained by a thread, so the pipe
    never fills)."""

    def __init__(self, process: subprocess.Popen[str], waits_for: Sequence[str]) -> None:
        self.process, self.lines = process, list[str]()
        self._waits_for, self._ready = list(waits_for), threading.Event()
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)
            self._waits_for = [w for w in self._waits_for if w not in line]
            if not self._waits_for:
                self._ready.set()
        self._ready.set()  # it exited: wake the waiter, which then reports the log

    def wait_ready(self) -> None:
        if not self._ready.wait(START_TIMEOUT) or self._waits_for:
            raise AssertionError(f"the agent never wrote {self._waits_for}:\n{self.log()}")

    def log(self) -> str:
        return "".join(self.lines)[-4000:]


@contextmanager
def agent_process(
    root: Path, env: dict[str, str], config: dict[str, Any], waits_for: Sequence[str] = ()
) -> Iterator[AgentProcess]:
    """The agent with ``config`` as its config.yaml under ``root`` (``LANGOP_PATH_ROOT``),
    ready once it wrote ``READY`` and every line in ``waits_for``."""
    path = root / "etc" / "agent" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config))
    process = subprocess.Popen(
        [sys.executable, "-m", "langop_infra.agent", "serve"],
        env={"PATH": "/usr/bin:/bin", "LANGOP_PATH_ROOT": str(root), **env},
        stderr=subprocess.PIPE,
        text=True,
    )
    running = AgentProcess(process, [READY, *waits_for])
    try:
        running.wait_ready()
        yield running
    finally:
        process.terminate()
        process.wait(timeout=20)
