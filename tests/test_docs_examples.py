"""Every code sample in the README and docs runs, as a reader would run it.

- A Python block that builds components is a Pulumi program: it becomes the ``__main__.py`` of
  a fresh project outside this repository and is rendered with ``langop-infra render``.
- A Python block that uses the MCP client runs against a real official-SDK server on
  loopback (its ``http://localhost:8080/mcp`` points there).
- A test module (``@pulumi.runtime.test``) runs under pytest; an agent-side sample runs with
  ``MCP_SERVERS`` naming such a server.
- Any other Python block runs as a script.
- A YAML block holding ``langop-infra:`` stack config is checked with ``langop-infra
  validate`` against this repository's program, as a stack file of it.

A sample that cannot run here is listed in ``NOT_RUN`` (by its page and a line of its code)
with the reason, and the list is checked too, so it cannot go stale.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.faultservers import memory_server
from tests.support.loopback import serve

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "SECURITY.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.S | re.M)
SAMPLE_URL = "http://localhost:8080/mcp"
COMPONENTS = re.compile(r"\b(LanguageTool|LanguageAgent|LanguageCluster|LanguageModel)\(")
BIN = Path(sys.executable).parent
# Samples that cannot run on this machine, and why: "<page>|<the start of a line of the
# sample's code>" (not a line number: an edit above it on the page does not unlist it).
NOT_RUN: dict[str, str] = {
    "docs/schema-sync.md|existing = k8s.core.v1.Secret.get(": "reads a Secret from a live "
    "cluster (Secret.get)",
    "docs/runtime.md|from langop_infra.agent._local_tools import chat_with_tools": "needs an "
    "OpenAI-compatible model; tests/test_agent_loop.py makes the same chat_with_tools call "
    "against a scripted one",
    "docs/runtime.md|peers = PeerClient(load_peers(os.environ))": "needs an A2A peer; "
    "tests/test_agent_peer_tools.py sends to one",
    "docs/toolkit.md|llm = LangChainLLM()": "needs an OpenAI-compatible model; "
    "tests/test_seed_documents.py runs seed 003's own example of this call against a "
    "scripted one",
}


@dataclass(frozen=True)
class Sample:
    page: Path
    line: int
    language: str
    code: str

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def listed(key: str, sample: Sample) -> bool:
    """Whether the NOT_RUN entry ``key`` names ``sample``."""
    page, line = key.split("|", 1)
    lines = (code.strip() for code in sample.code.splitlines())
    return sample.id.startswith(page + ":") and any(code.startswith(line) for code in lines)


def samples() -> Iterator[Sample]:
    for page in PAGES:
        text = page.read_text()
        for match in FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            yield Sample(page, line, match.group(1), match.group(2))


def is_stack_file(sample: Sample) -> bool:
    if sample.language != "yaml":
        return False
    try:
        document = yaml.safe_load(sample.code)
    except yaml.YAMLError:
        return False
    config = document.get("config") if isinstance(document, dict) else None
    return isinstance(config, dict) and any(str(k).startswith("langop-infra:") for k in config)


RUNNABLE = [s for s in samples() if s.language == "python" or is_stack_file(s)]


def run(argv: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", **env}
    return subprocess.run(
        argv, cwd=cwd, env=environment, capture_output=True, text=True, timeout=120
    )


def render_program(code: str, project: Path) -> subprocess.CompletedProcess[str]:
    (project / "Pulumi.yaml").write_text("name: docs-example\nruntime: python\n")
    (project / "Pulumi.dev.yaml").write_text("config: {}\n")
    (project / "__main__.py").write_text(code)
    return run(["langop-infra", "render", "--stack", "dev"], project)


@pytest.mark.slow
@pytest.mark.parametrize("sample", RUNNABLE, ids=[s.id for s in RUNNABLE])
def test_the_sample_runs(sample: Sample, tmp_path: Path) -> None:
    for key, why in NOT_RUN.items():
        if listed(key, sample):
            pytest.skip(why)
    if sample.language == "yaml":
        # A stack file of this project: checked with this project's program.
        stack = tmp_path / "Pulumi.dev.yaml"
        stack.write_text(sample.code)
        done = run(["langop-infra", "validate", "--config", str(stack)], ROOT)
        assert done.returncode == 0, done.stderr
        return
    if "@pulumi.runtime.test" in sample.code:  # a test module: run it as its author would
        (tmp_path / "test_sample.py").write_text(sample.code)
        done = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        assert " passed" in done.stdout and "failed" not in done.stdout
        return
    if COMPONENTS.search(sample.code):
        done = render_program(sample.code, tmp_path)
        assert done.returncode == 0, done.stderr
        manifests = [m for m in yaml.safe_load_all(done.stdout) if m]
        assert any(m["kind"] == "Deployment" for m in manifests)
        assert "None" not in done.stdout
        return
    script = tmp_path / "sample.py"
    if "langop_infra.agent" in sample.code:  # an agent: its servers from MCP_SERVERS
        with serve(memory_server().streamable_http_app()) as base:
            script.write_text(sample.code)
            done = run([sys.executable, str(script)], tmp_path, MCP_SERVERS=f"{base}/mcp")
        assert done.returncode == 0, done.stderr
        assert "remember" in done.stdout
        return
    if "langop_infra.mcp" in sample.code:
        with serve(memory_server().streamable_http_app()) as base:
            script.write_text(sample.code.replace(SAMPLE_URL, f"{base}/mcp"))
            done = run([sys.executable, str(script)], tmp_path, MCP_SECRET="docs-sample")
        assert done.returncode == 0, done.stderr
        assert "remember" in done.stdout
        return
    script.write_text(sample.code)
    done = run([sys.executable, str(script)], tmp_path)
    assert done.returncode == 0, done.stderr


def test_the_samples_are_found_and_the_exceptions_are_current() -> None:
    named = {key: [s.id for s in RUNNABLE if listed(key, s)] for key in NOT_RUN}
    assert all(len(ids) == 1 for ids in named.values()), named  # each names one sample
    readme = [s for s in RUNNABLE if s.page.name == "README.md"]
    assert [s.language for s in readme] == ["yaml", "python"]


def test_a_broken_sample_fails(tmp_path: Path) -> None:
    """The program check is not vacuous: a misspelt field fails the render."""
    done = render_program(
        'from langop_infra import LanguageTool\nLanguageTool("t", image="x:1", prot=9000)\n',
        tmp_path,
    )
    assert done.returncode != 0
    assert "prot" in done.stderr
