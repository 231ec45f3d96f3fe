"""`langop-infra render` shows what `pulumi up` registers: each shipped stack run by the real
engine with the Kubernetes provider's `renderYamlToDirectory`, object by object and field by
field against the offline render of the same stack file."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.engine import REPO, Engine, python_project, read_manifests, reseal_secrets

pytestmark = pytest.mark.engine

CANARY = "canary-7f3a9c"
# Values `render` cannot know, each with its reason. Nothing else may differ.
UNKNOWN_AT_RENDER = {
    # A keyed HMAC of the Secrets a pod reads; its key exists only in state (RolloutKey).
    ("metadata", "annotations", "langop.io/secret-digest"): "keyed by a key made at `pulumi up`",
}


def offline_render(project: Path, stack: str, out: Path, env: dict[str, str]) -> None:
    done = subprocess.run(
        [str(REPO / "venv" / "bin" / "langop-infra"), "render", "--stack", stack,
         "--project-dir", str(project), "--output-dir", str(out)],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def up_rendered(engine: Engine, tmp_path: Path, stack: str) -> tuple[Path, dict[str, str]]:
    """The stack's project in tmp_path, `pulumi up` with renderYamlToDirectory; returns the
    project and the canary secrets it was given."""
    project = python_project(tmp_path / "project", stacks=(stack,))
    engine.run(project, "stack", "init", stack)
    secrets = reseal_secrets(engine, project, stack, CANARY)
    out = tmp_path / "rendered"
    engine.run(
        project, "config", "set", "--stack", stack, "kubernetes:renderYamlToDirectory", str(out)
    )
    engine.run(project, "up", "--stack", stack, "--yes", "--skip-preview")
    return project, secrets


def differences(path: tuple[str, ...], offline: Any, real: Any) -> list[str]:
    """Every leaf where the two objects differ, as `a.b.c: offline != real`."""
    if isinstance(offline, dict) and isinstance(real, dict):
        found: list[str] = []
        for key in sorted(set(offline) | set(real)):
            found += differences(
                (*path, key), offline.get(key, "<absent>"), real.get(key, "<absent>")
            )
        return found
    if isinstance(offline, list) and isinstance(real, list) and len(offline) == len(real):
        return [
            d
            for i, (a, b) in enumerate(zip(offline, real))
            for d in differences((*path, str(i)), a, b)
        ]
    if offline == real or (offline == "[unknown]" and path[-3:] in UNKNOWN_AT_RENDER):
        return []
    return [f"{'.'.join(path)}: render {offline!r} != engine {real!r}"]


def without_secret_values(obj: dict[str, Any]) -> dict[str, Any]:
    """A Secret's values: render redacts them, the provider writes them; compared apart."""
    if obj["kind"] != "Secret":
        return obj
    return {k: v for k, v in obj.items() if k not in ("data", "stringData")}


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_render_matches_what_pulumi_up_registers(
    engine: Engine, tmp_path: Path, stack: str
) -> None:
    project, secrets = up_rendered(engine, tmp_path, stack)
    offline_dir = tmp_path / "offline"
    offline_render(project, stack, offline_dir, engine.env)
    real = read_manifests(tmp_path / "rendered")
    offline = read_manifests(offline_dir)
    assert sorted(offline) == sorted(real)
    found = [
        f"{key}: {d}"
        for key in sorted(offline)
        for d in differences(
            (), without_secret_values(offline[key]), without_secret_values(real[key])
        )
    ]
    assert found == []
    for key, obj in offline.items():
        if obj["kind"] == "Secret":
            assert set(obj.get("stringData", obj.get("data", {}))) == set(
                real[key].get("stringData", real[key].get("data", {}))
            ), key
    assert len(secrets) == sum(
        1
        for line in (REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text().splitlines()
        if "secure:" in line
    )
