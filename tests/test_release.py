"""The package as a user gets it: a wheel built with ``python -m build``, installed (not
editable) into a clean virtualenv, renders the dev stack and a project made from the
``pulumi new`` template, whose own test passes; and the example CI workflow's shell steps run
against a temporary user project that pins the release in ``requirements.txt``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "templates" / "python"
pytestmark = pytest.mark.slow


def run(argv: list[str | Path], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": "", **env},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode in (0, 1), f"{argv}: {done.returncode}\n{done.stderr[-3000:]}"
    return done


def not_source(folder: str, names: list[str]) -> set[str]:
    """What a copy of the checkout to build from leaves out: environments, caches, and the
    top level's build output (only at the top: a subpackage may be named so)."""
    top = Path(folder) == ROOT
    return {
        name
        for name in names
        if name in (".git", "venv", ".conformance", "node_modules", "__pycache__", ".hypothesis")
        or name.startswith(".venv")
        or name.endswith(".egg-info")
        or (top and name in ("build", "dist", "site", ".benchmarks", ".ruff_cache"))
    }


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a clean venv with the built wheel installed, the folder holding the wheel)."""
    base = tmp_path_factory.mktemp("release")
    venv, dist = base / "venv", base / "dist"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True, timeout=300)
    python = venv / "bin" / "python"
    run([python, "-m", "pip", "install", "-q", "build", "pytest"], base)
    # Built from a copy: setuptools writes build/ and *.egg-info into the source folder, and
    # another xdist worker may be building from the checkout at the same moment.
    source = base / "source"
    shutil.copytree(ROOT, source, ignore=not_source)
    built = run([python, "-m", "build", "--wheel", "--outdir", dist, source], base)
    assert built.returncode == 0, built.stderr[-3000:]
    [wheel] = dist.glob("langop_infra-*.whl")
    run([python, "-m", "pip", "install", "-q", wheel], base)
    return venv, dist


def test_the_wheel_is_installed_not_editable(installed: tuple[Path, Path]) -> None:
    venv, _ = installed
    where = run(
        [venv / "bin" / "python", "-c", "import langop_infra; print(langop_infra.__file__)"],
        venv,
    ).stdout.strip()
    assert where.startswith(str(venv)) and "site-packages" in where
    assert not list((venv / "lib").glob("python3*/site-packages/__editable__*"))
    # The license travels with the wheel.
    [license_file] = (venv / "lib").glob(
        "python3*/site-packages/langop_infra-*.dist-info/**/LICENSE"
    )
    assert "Apache License" in license_file.read_text()


def test_the_installed_wheel_renders_the_dev_stack_as_the_checkout_does(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    venv, _ = installed
    project = tmp_path / "infra"
    shutil.copytree(ROOT / "stacks", project / "stacks")
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, project / name)
    from_wheel = run([venv / "bin" / "langop-infra", "render", "--stack", "dev"], project)
    from_checkout = run([sys.executable, "-m", "langop_infra", "render", "--stack", "dev"], project)
    assert from_wheel.returncode == 0, from_wheel.stderr
    assert from_wheel.stdout == from_checkout.stdout
    assert from_wheel.stdout.count("\nkind: Deployment\n") >= 3


def new_project(folder: Path, name: str = "shop-infra") -> Path:
    """What ``pulumi new ./templates/python`` makes: the files, with its placeholders filled."""
    shutil.copytree(TEMPLATE, folder)
    pulumi_yaml = folder / "Pulumi.yaml"
    text = pulumi_yaml.read_text().replace("${PROJECT}", name)
    pulumi_yaml.write_text(text.replace("${DESCRIPTION}", "A test project"))
    return folder


def test_the_template_installs_renders_and_passes_its_own_test(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    venv, dist = installed
    project = new_project(tmp_path / "shop-infra")
    assert {p.name for p in project.iterdir()} >= {
        "Pulumi.yaml",
        "__main__.py",
        "requirements.txt",
        "Pulumi.dev.yaml",
        "test_main.py",
    }
    assert yaml.safe_load((project / "Pulumi.yaml").read_text())["runtime"]["options"] == {
        "toolchain": "pip",
        "virtualenv": "venv",
    }
    # Only the template's own requirements, langop-infra from a local wheel folder (it is
    # on no public index), as a user without a package index for it installs them.
    pip = [venv / "bin" / "python", "-m", "pip", "install", "-q"]
    installed_dev = run([*pip, "-r", "requirements-dev.txt"], project, PIP_FIND_LINKS=str(dist))
    assert installed_dev.returncode == 0, installed_dev.stderr[-3000:]
    rendered = run([venv / "bin" / "langop-infra", "render", "--stack", "dev"], project)
    assert rendered.returncode == 0, rendered.stderr
    docs = [d for d in yaml.safe_load_all(rendered.stdout) if d]
    assert {(d["kind"], d["metadata"]["name"]) for d in docs} >= {
        ("Deployment", "memory"),
        ("Deployment", "helper"),
        ("ConfigMap", "helper-config"),
        ("Namespace", "apps-dev"),
    }
    assert all(d["metadata"].get("namespace") in (None, "apps-dev") for d in docs)
    tested = run([venv / "bin" / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider"], project)
    assert tested.returncode == 0, tested.stdout[-3000:]
    assert re.search(r"\b3 passed\b", tested.stdout)


def test_the_example_ci_workflow_runs_against_a_user_project(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    """The offline-diff job's shell steps, with GitHub's expressions filled in, on a project
    whose requirements.txt pins the release; the pull request changes an image."""
    venv, dist = installed
    project = new_project(tmp_path / "work" / "shop-infra")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    run([*git, "init", "-q", "-b", "main"], project)
    run([*git, "add", "."], project)
    run([*git, "commit", "-q", "-m", "base"], project)
    base = run(["git", "rev-parse", "HEAD"], project).stdout.strip()
    main = project / "__main__.py"
    main.write_text(main.read_text().replace("memory-mcp:1.4.0", "memory-mcp:1.5.0"))
    run([*git, "commit", "-q", "-am", "head"], project)
    workflow = yaml.safe_load((ROOT / "examples" / "ci" / "preview.yml").read_text())
    steps = {s.get("name"): s for s in workflow["jobs"]["offline-diff"]["steps"]}
    script = "\n".join(steps[name]["run"] for name in ("Render base and head", "Diff"))
    script = script.replace("${{ matrix.stack }}", "dev")
    script = script.replace("${{ github.event.pull_request.base.sha }}", base)
    assert "${{" not in script
    outputs = tmp_path / "github_output"
    done = run(
        ["bash", "-e", "-c", script],
        project,
        PATH=f"{venv / 'bin'}:{os.environ['PATH']}",
        PIP_FIND_LINKS=str(dist),
        GITHUB_OUTPUT=str(outputs),
        LANGOP_FINGERPRINT_KEY="",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert outputs.read_text() == "status=1\n"
    diff = (project / "diff.md").read_text()
    assert "memory-mcp:1.4.0" in diff and "memory-mcp:1.5.0" in diff
