"""After `pulumi up`, nothing changes until the stack file does, and then only what the edit
touches: the real engine's preview, step by step, and the offline `diff` of the same edit."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.engine import REPO, Engine, python_project, reseal_secrets, stack_state

pytestmark = pytest.mark.engine

STACK = "dev"


@pytest.fixture(scope="module")
def deployed(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The dev stack after one `pulumi up`, rendered to a folder."""
    root = tmp_path_factory.mktemp("no-diff")
    project = python_project(root / "project", stacks=(STACK,))
    engine.run(project, "stack", "init", STACK)
    reseal_secrets(engine, project, STACK, "canary-2b8d")
    engine.run(
        project,
        "config",
        "set",
        "--stack",
        STACK,
        "kubernetes:renderYamlToDirectory",
        str(root / "out"),
    )
    engine.run(project, "up", "--stack", STACK, "--yes", "--skip-preview")
    return project


def stack_file(project: Path) -> Path:
    return project / "stacks" / f"Pulumi.{STACK}.yaml"


def planned_steps(engine: Engine, project: Path) -> list[dict[str, Any]]:
    """The steps of `pulumi preview --json` that change something."""
    done = engine.run(project, "preview", "--stack", STACK, "--json", "--diff")
    steps = json.loads(done.stdout)["steps"]
    return [s for s in steps if s["op"] != "same"]


def short(step: dict[str, Any]) -> tuple[str, str]:
    """(op, type::name) of a step."""
    urn = step["urn"]
    return step["op"], f"{urn.split('::')[2].split('$')[-1]}::{urn.split('::')[3]}"


def edited(project: Path, old: str, new: str) -> str:
    text = stack_file(project).read_text()
    assert text.count(old) == 1, old
    stack_file(project).write_text(text.replace(old, new))
    return text


def test_a_second_up_changes_nothing(engine: Engine, deployed: Path) -> None:
    assert planned_steps(engine, deployed) == []
    engine.run(deployed, "preview", "--stack", STACK, "--expect-no-changes")
    done = engine.run(deployed, "up", "--stack", STACK, "--yes", "--expect-no-changes")
    assert "Resources:" in done.stdout


def test_an_image_bump_updates_one_deployment(engine: Engine, deployed: Path) -> None:
    old = "docs-search-mcp:main@sha256:c9f312d39f6d9eebfbd729400a37dc6069e1b9d28a1ec7d4c15f9164e5cada51"
    new = "docs-search-mcp:main@sha256:" + "1" * 64
    before = edited(deployed, old, new)
    try:
        steps = planned_steps(engine, deployed)
    finally:
        stack_file(deployed).write_text(before)
    assert [short(s) for s in steps] == [
        ("update", "kubernetes:apps/v1:Deployment::research-dev/docs-search")
    ]
    assert steps[0]["diffReasons"] == ["spec"]


def test_a_rotated_secret_changes_the_secret_and_the_digest_only(
    engine: Engine, deployed: Path
) -> None:
    where = 'langop-infra:secrets["ticketing-token"].token'
    engine.run(
        deployed, "config", "set", "--stack", STACK, "--secret", "--path", where, "rotated-c41e"
    )
    steps = planned_steps(engine, deployed)
    changed = sorted(short(s) for s in steps)
    assert ("update", "kubernetes:core/v1:Secret::research-dev/researcher-env") in changed or any(
        kind.endswith("core/v1:Secret::research-dev/ticketing-token") for _, kind in changed
    ), changed
    for step in steps:
        if "Deployment" in step["urn"] or "CronJob" in step["urn"]:
            paths = set(step.get("detailedDiff", {}))
            assert paths and all("langop.io/secret-digest" in p for p in paths), (
                step["urn"],
                paths,
            )


def test_a_storage_class_change_replaces_the_claim_and_keeps_the_volume(
    engine: Engine, deployed: Path
) -> None:
    old = "persistence: {size: 1Gi, mountPath: /data}"
    before = edited(
        deployed, old, "persistence: {size: 1Gi, mountPath: /data, storageClassName: fast}"
    )
    try:
        steps = planned_steps(engine, deployed)
        offline = offline_diff(deployed, before)
    finally:
        stack_file(deployed).write_text(before)
    claim = [s for s in steps if "PersistentVolumeClaim" in s["urn"]]
    assert [s["op"] for s in claim] == ["replace"]
    assert (
        "+- PersistentVolumeClaim research-dev/memory-data (replace: spec.storageClassName"
        in offline
    )
    state = stack_state(engine, deployed, STACK)
    claims = [
        r
        for r in state["deployment"]["resources"]
        if r["type"] == "kubernetes:core/v1:PersistentVolumeClaim"
    ]
    assert claims and all(r.get("retainOnDelete") is True for r in claims)


def offline_diff(project: Path, before: str) -> str:
    """`langop-infra diff` of the stack file before and after the edit."""
    old_file = project / "before.yaml"
    old_file.write_text(before)
    renders = []
    for config in (old_file, stack_file(project)):
        done = subprocess.run(
            [str(REPO / "venv" / "bin" / "langop-infra"), "render", "--config", str(config), "--project-dir", str(project)],
            capture_output=True, text=True, timeout=300, check=True,
        )  # fmt: skip
        target = project / f"render-{len(renders)}.yaml"
        target.write_text(done.stdout)
        renders.append(str(target))
    done = subprocess.run(
        [str(REPO / "venv" / "bin" / "langop-infra"), "diff", *renders],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    return done.stdout
