"""The README's two commands: they make and use ``venv/`` (the virtualenv ``Pulumi.yaml``
names), never install into the system Python (refused under PEP 668), and CI runs the same
test command; the editable install they make is visible to pyright."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.pyright import run_pyright

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    block = (ROOT / "README.md").read_text().split("```bash", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_two_commands_that_make_and_use_the_projects_venv() -> None:
    first, second = readme_commands()
    virtualenv = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())["runtime"]["options"][
        "virtualenv"
    ]
    # Each works on its own on a fresh machine: both make the venv (a no-op when it exists).
    for command in (first, second):
        assert command.startswith(f"python3 -m venv {virtualenv} && "), command
    assert "langop-infra render --stack dev" in first
    for command in (first, second):
        for step in command.split(" && "):
            tool = step.split()[0]
            # PEP 668: a system Python refuses `pip install`; everything runs from venv/.
            assert step.startswith(f"{virtualenv}/bin/") or step.startswith("python3 -m venv"), step
            if "pip install" in step:
                assert "--config-settings editable_mode=compat" in step, step
            assert tool != "pip" and not step.startswith("python -m pip"), step


def test_ci_runs_the_readmes_test_command() -> None:
    _, second = readme_commands()
    test_command = second.split(" && ")[-1]
    assert test_command == "venv/bin/python -m pytest -n 3"
    script = (ROOT / ".ci" / "run").read_text()
    assert re.search(rf"^{re.escape(test_command)}$", script, re.MULTILINE)


@pytest.mark.slow
def test_the_first_command_works_and_pyright_resolves_the_editable_install(
    tmp_path: Path,
) -> None:
    """Run the README's first command in a fresh copy of the repository, then pyright over a
    user's file with that venv: the package's types resolve (no `Unknown` import)."""
    clone = tmp_path / "langop-infra"
    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    for name in files:
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, clone / name)
    first, _ = readme_commands()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        ["bash", "-c", first], cwd=clone, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "\nkind: Deployment\n" in done.stdout
    user = tmp_path / "user" / "infra.py"
    user.parent.mkdir()
    user.write_text(
        "from langop_infra import LanguageTool\n"
        'tool = LanguageTool("memory", image="ghcr.io/acme/memory:1", namespace="apps")\n'
        "reveal_type(tool.endpoint)\n"
    )
    checked = run_pyright(str(user), cwd=user.parent, python=str(clone / "venv" / "bin" / "python"))
    assert "could not be resolved" not in checked.stdout, checked.stdout
    assert 'Type of "tool.endpoint" is "Output[str]"' in checked.stdout, checked.stdout


def ci_blocks() -> list[list[str]]:
    """The command lines of the README's "In CI" bash blocks, comments left out."""
    section = (ROOT / "README.md").read_text().split("## In CI", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.S)
    return [
        [line.split("  #")[0].strip() for line in b.splitlines() if line.strip()] for b in blocks
    ]


@pytest.mark.slow
def test_the_ci_block_runs_offline_as_written(tmp_path: Path) -> None:
    """Issue 51 §5: what the README says runs without a cluster does, line by line, in a
    copy of the project; base.yaml is the base branch's render (here the same)."""
    offline, _ = ci_blocks()
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    base = subprocess.run(
        ["langop-infra", "render", "--stack", "prod"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    (tmp_path / "base.yaml").write_text(base.stdout)
    for command in offline:
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, (command, done.stderr[-2000:])
    assert "kind: Deployment" in (tmp_path / "head.yaml").read_text()


def test_the_schemas_sample_writes_the_lock_before_comparing() -> None:
    """The lock must exist before a comparison: the first schemas line writes it."""
    _, schemas = ci_blocks()
    assert schemas == [
        "langop-infra schemas --stack prod --lock schemas.lock.yaml --update",
        "langop-infra schemas --stack prod --lock schemas.lock.yaml",
    ]
    offline, _ = ci_blocks()
    assert not [line for line in offline if " schemas " in line]
