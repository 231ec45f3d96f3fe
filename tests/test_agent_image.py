"""images/agent/Dockerfile without Docker: the same environment (a clean venv with the built
wheel and its ``agent`` extra, nothing from this checkout) runs the Dockerfile's exact CMD,
which is also the command ``runtime: builtin`` renders."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from langop_infra.config._builtin import BUILTIN_AGENT_COMMAND, BUILTIN_AGENT_IMAGE
from tests.fake_openai import FakeOpenAI
from tests.support.loopback import serve

REPO = Path(__file__).resolve().parents[1]
DOCKERFILE = REPO / "images" / "agent" / "Dockerfile"


def dockerfile_cmd() -> list[str]:
    (line,) = [x for x in DOCKERFILE.read_text().splitlines() if x.startswith("CMD ")]
    return json.loads(line.removeprefix("CMD "))


def test_the_dockerfile_pins_its_base_and_runs_what_the_render_names() -> None:
    text = DOCKERFILE.read_text()
    base = re.search(r"^ARG PYTHON_IMAGE=(\S+)$", text, re.MULTILINE)
    assert base is not None and re.fullmatch(r"python:\d+\.\d+\.\d+-slim-\w+", base.group(1))
    assert '"$(ls /wheels/langop_infra-*.whl)[agent]"' in text
    assert dockerfile_cmd() == list(BUILTIN_AGENT_COMMAND)
    version = re.search(r'^version = "(.+)"$', (REPO / "pyproject.toml").read_text(), re.M)
    assert version is not None and BUILTIN_AGENT_IMAGE.endswith(f":{version.group(1)}")


@pytest.mark.slow
def test_a_clean_venv_from_the_wheel_runs_the_cmd(tmp_path: Path) -> None:
    wheels, env_dir = tmp_path / "wheels", tmp_path / "env"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(REPO)],
        check=True,
        capture_output=True,
    )
    (wheel,) = wheels.glob("langop_infra-*.whl")
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
    # Without the caller's PYTHONPATH: a checkout on it holds the egg-info `pip wheel` left
    # there, which the clean venv's pip would take for langop-infra installed already.
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run(
        [str(env_dir / "bin" / "pip"), "install", "-q", f"{wheel}[agent]"],
        check=True,
        capture_output=True,
        env=clean,
    )
    bin_path = f"{env_dir / 'bin'}:/usr/bin:/bin"
    where = subprocess.run(
        ["python", "-c", "import langop_infra; print(langop_infra.__file__)"],
        env={"PATH": bin_path},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.startswith(str(env_dir))
    fake = FakeOpenAI()
    with serve(fake.app()) as model:
        run = subprocess.run(
            dockerfile_cmd(),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            env={
                "PATH": bin_path,
                "MODEL_ENDPOINT": model,
                "LLM_MODEL": "local",
                "AGENT_MODE": "scheduled",
                "AGENT_INPUT": "hello?",
                "LANGOP_PATH_ROOT": str(tmp_path),
            },
        )
    assert run.returncode == 0, run.stderr[-3000:]
    (line,) = [json.loads(x) for x in run.stdout.splitlines()]
    assert (line["type"], line["answer"], line["error"]) == ("answer", "hello from local", None)
