"""The real LiteLLM proxy (from ``.venv-litellm``, which ``.ci/side-envs .venv-litellm``
builds) started as the gateway's rendered container runs it: its args, with ``--config``
pointing at the test's config file and ``--port`` at a free port, on 127.0.0.1, its output in
``proxy.log``; ready when its readiness path answers, stopped afterwards."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from langop_infra.manifests import _gateway as gateway
from tests.support.loopback import free_port
from tests.support.processes import stop_process

REPO = Path(__file__).resolve().parents[2]
LITELLM = REPO / ".venv-litellm" / "bin" / "litellm"
START_DEADLINE = 120.0
# What the skip says when the side environment is missing (names its folder, which the
# run's closing summary looks for).
MISSING = "LiteLLM's proxy is not installed in .venv-litellm; .ci/side-envs builds it"


def base_env(root: Path) -> dict[str, str]:
    """A pod's bare environment: PATH, and HOME and TMPDIR in ``root`` (TMPDIR made)."""
    (root / "tmp").mkdir(exist_ok=True)
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(root), "TMPDIR": str(root / "tmp")}


@contextmanager
def running(
    root: Path, container: Mapping[str, Any], config: Path, env: Mapping[str, str]
) -> Iterator[str]:
    """The proxy's URL while it runs with ``container``'s args and ``env`` (in full: nothing
    of the test's own environment), in ``root``."""
    args = [str(a) for a in container["args"]]
    args[args.index("--config") + 1] = str(config)
    port = free_port()
    args[args.index("--port") + 1] = str(port)
    log_path = root / "proxy.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [str(LITELLM), *args, "--host", "127.0.0.1"],
            env=dict(env),
            cwd=root,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            wait_ready(url, process, log_path)
            yield url
        finally:
            stop_process(process)


def wait_ready(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Until the proxy's readiness path answers 200; fails the test if it exits or is not
    ready within :data:`START_DEADLINE`, with the end of its log."""
    deadline = time.monotonic() + START_DEADLINE
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"LiteLLM exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(url + gateway.READINESS_PATH, timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    pytest.fail(f"LiteLLM not ready within {START_DEADLINE:g}s:\n{log.read_text()[-3000:]}")
