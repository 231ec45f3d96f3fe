"""The A2A JavaScript SDK (npm ``@a2a-js/sdk``, the second independent A2A implementation)
under Node 22 from npm, in ``.a2a-js/`` (``.ci/side-envs .a2a-js``, which ``.ci/run`` calls):
its server (tests/a2a_js/server.mjs) and its client (tests/a2a_js/client.mjs) as processes.

A test that needs it builds it when it is missing and skips only when npm cannot install it
(the registry is unreachable), with npm's words."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOME = ROOT / ".a2a-js"
NODE = HOME / "node_modules" / "node" / "bin" / "node"
SDK = HOME / "node_modules" / "@a2a-js" / "sdk" / "package.json"
SCRIPTS = ROOT / "tests" / "a2a_js"
GUARD = 60.0  # guards a hang only


@cache
def _install() -> str:
    """Build ``.a2a-js`` unless it is there (one process at a time); npm's error, else ``""``."""
    lock = Path(tempfile.gettempdir()) / "langop-infra-a2a-js.lock"
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if NODE.exists() and SDK.exists():
            return ""
        built = subprocess.run(
            [str(ROOT / ".ci" / "side-envs"), ".a2a-js"],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if NODE.exists() and SDK.exists():
            return ""
        return (built.stderr or built.stdout).strip()[-600:] or f"exit {built.returncode}"


def require() -> None:
    """Skip the test when ``.a2a-js`` is missing and npm cannot install it."""
    problem = _install()
    if problem:
        pytest.skip(f".a2a-js is missing and npm could not install @a2a-js/sdk: {problem}")


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "A2A_JS_HOME": str(HOME), **extra}


@contextmanager
def server(streaming: bool = True) -> Iterator[str]:
    """A2A agent on ``@a2a-js/sdk`` (tests/a2a_js/server.mjs) on loopback; yields its base
    URL once it listens. Its card says it streams when ``streaming``."""
    require()
    env = _env(A2A_JS_STREAMING=str(streaming).lower())
    process = subprocess.Popen(
        [str(NODE), str(SCRIPTS / "server.mjs")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # its readiness line, or "" when it died
        if not line.startswith("listening "):
            said = process.stderr.read() if process.stderr is not None else ""
            raise RuntimeError(f"the @a2a-js/sdk server did not start: {said}")
        yield line.split()[1]
    finally:
        process.kill()
        process.wait(GUARD)
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def client(scenario: str, base: str) -> dict[str, dict[str, Any]]:
    """Run tests/a2a_js/client.mjs's ``scenario`` against ``base``; its steps by name."""
    require()
    done = subprocess.run(
        [str(NODE), str(SCRIPTS / "client.mjs"), scenario, base],
        capture_output=True,
        text=True,
        timeout=GUARD,
        env=_env(),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return steps(done.stdout)


def client_process(scenario: str, base: str) -> subprocess.Popen[str]:
    """tests/a2a_js/client.mjs's ``scenario`` against ``base``, running (stdin and stdout
    piped: a scenario that waits reads a line)."""
    require()
    return subprocess.Popen(
        [str(NODE), str(SCRIPTS / "client.mjs"), scenario, base],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )


def steps(output: str) -> dict[str, dict[str, Any]]:
    """The client's JSON lines, by step name."""
    found: dict[str, dict[str, Any]] = {}
    for line in output.splitlines():
        document = json.loads(line)
        found[document.pop("step")] = document
    return found
