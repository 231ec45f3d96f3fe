"""What a user's program and its child processes print goes to stderr, at the file-descriptor
level too: render's stdout is the YAML stream and nothing else."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.support.user_project import make_project

PROGRAM = """
import os, subprocess, sys
from langop_infra import LanguageTool
print("python-print-line")
subprocess.run(["echo", "subprocess-line"], check=True)
os.system("echo os-system-line")
os.write(1, b"fd-one-line\\n")
LanguageTool("memory", image="ghcr.io/acme/memory:1@sha256:" + "a" * 64, namespace="apps")
"""
LINES = ["python-print-line", "subprocess-line", "os-system-line", "fd-one-line"]


def test_child_processes_and_fd_1_writes_reach_stderr_not_the_render(tmp_path: Path) -> None:
    project = make_project(tmp_path / "shop", PROGRAM)
    done = subprocess.run(
        [sys.executable, "-m", "langop_infra", "render", "--stack", "dev"],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# "), done.stdout[:200]  # the banner comes first
    for line in LINES:
        assert line not in done.stdout
        assert f"{line}\n" in done.stderr
    kinds = sorted(d["kind"] for d in yaml.safe_load_all(done.stdout) if d)
    assert kinds == ["Deployment", "NetworkPolicy", "Service"], kinds


def test_stdout_is_restored_after_the_run(tmp_path: Path) -> None:
    """The redirect lasts for the program only: the render itself still reaches fd 1."""
    script = (
        "import os, sys\n"
        "from langop_infra.core._streams import stdout_to_stderr\n"
        "with stdout_to_stderr():\n"
        "    print('inside'); os.write(1, b'inside-fd\\n')\n"
        "print('after'); sys.stdout.flush(); os.write(1, b'after-fd\\n')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert (done.stdout, done.stderr) == ("after\nafter-fd\n", "inside\ninside-fd\n")
