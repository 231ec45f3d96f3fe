"""`langop-infra render` shows what `pulumi up` registers: each shipped stack run by the real
engine with the Kubernetes provider's `renderYamlToDirectory`, object by object and field by
field against the offline render of the same stack file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.engine import (
    REPO,
    Engine,
    offline_render,
    python_project,
    read_manifests,
    render_differences,
    render_to,
    reseal_secrets,
)

pytestmark = pytest.mark.engine

CANARY = "canary-7f3a9c"
# With renderYamlToDirectory there is no cluster to sync a tool's schema through, so a sync
# marked required fails `pulumi up`, as it must; the copy marks it not required, which changes
# no object (the offline diff of the two stack files is empty).
NO_CLUSTER = (
    "schemaSync: {required: true, timeout: 20s}",
    "schemaSync: {required: false, timeout: 20s}",
)


def up_rendered(engine: Engine, tmp_path: Path, stack: str) -> tuple[Path, dict[str, str]]:
    """The stack's project in tmp_path, `pulumi up` with renderYamlToDirectory; returns the
    project and the canary secrets it was given."""
    project = python_project(tmp_path / "project", stacks=(stack,))
    stack_file = project / "stacks" / f"Pulumi.{stack}.yaml"
    stack_file.write_text(stack_file.read_text().replace(*NO_CLUSTER))
    engine.run(project, "stack", "init", stack)
    secrets = reseal_secrets(engine, project, stack, CANARY)
    out = tmp_path / "rendered"
    render_to(engine, project, stack, out)
    engine.run(project, "up", "--stack", stack, "--yes", "--skip-preview")
    return project, secrets


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_render_matches_what_pulumi_up_registers(
    engine: Engine, tmp_path: Path, stack: str
) -> None:
    project, secrets = up_rendered(engine, tmp_path, stack)
    offline = offline_render(project, stack, tmp_path / "offline", engine.env)
    real = read_manifests(tmp_path / "rendered")
    assert sorted(offline) == sorted(real)
    assert render_differences(offline, real) == []
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
