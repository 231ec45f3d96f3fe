"""The environment `pulumi up` builds from this repository's files reaches the API-server proxy.

Pulumi (``runtime.options.virtualenv: venv``, ``toolchain: pip``) makes a fresh venv in the
project directory and runs ``pip install -r requirements.txt`` there. This test does the same
on a copy of the project's files, then runs schema sync's access decision inside that venv:
with the ``kubernetes`` package only in an extra, ``auto`` could not reach an in-cluster tool.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROJECT_FILES = ("pyproject.toml", "requirements.txt", "README.md", "Pulumi.yaml")

# Run inside the built venv: proves the proxy path is importable and chosen there.
PROBE = """
import json, sys, kubernetes
from langop_infra.sync.provider import resolve_access, sync_target
inputs = {
    "endpoint": "http://memory.apps.svc.cluster.local:8080", "mcp_path": "/mcp",
    "access": "auto", "namespace": "apps", "service": "memory", "port": 8080,
    "kubeconfig": sys.argv[1],
}
url, headers, _ = sync_target(inputs)
print(json.dumps({"access": resolve_access(inputs), "url": url,
                  "auth": headers.get("authorization"), "kubernetes": kubernetes.__file__}))
"""


@pytest.mark.slow
def test_the_venv_pulumi_builds_from_requirements_reaches_the_apiserver_proxy(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    for name in PROJECT_FILES:
        shutil.copy2(ROOT / name, project / name)
    shutil.copytree(
        ROOT / "langop_infra",
        project / "langop_infra",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    venv = project / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    installed = subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "-r",
            "requirements.txt",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://10.0.0.1:6443'}}]\n"
        "users: [{name: u, user: {token: t0ken}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    probe = subprocess.run(
        [str(python), "-I", "-c", PROBE, str(kubeconfig)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert probe.returncode == 0, probe.stderr[-2000:]

    result = json.loads(probe.stdout)
    assert result["access"] == "apiserver-proxy"
    assert result["url"] == (
        "https://10.0.0.1:6443/api/v1/namespaces/apps/services/memory:8080/proxy/mcp"
    )
    assert result["auth"] == "Bearer t0ken"
    # The package came from the new venv, not from the system site the tests run in.
    assert result["kubernetes"].startswith(str(venv))
