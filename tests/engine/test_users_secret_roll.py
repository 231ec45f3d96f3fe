"""A user's own ``k8s.core.v1.Secret`` handed to an HttpTool, written with ``string_data=`` and
with base64 ``data=``, under the real engine (renderYamlToDirectory): rotating the value rolls
the agent that reads it either way, and `pulumi preview --diff` already shows the new digest
(the provider folds ``stringData`` into ``data``, which the digest reads; the mock engine's
``offline/_secret_state.py`` answers the same)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.engine.test_user_program import DIGEST, user_project
from tests.support.engine import Engine, read_manifests, render_to

pytestmark = pytest.mark.engine

PROGRAM = f"""\
import base64

import pulumi
import pulumi_kubernetes as k8s

from langop_infra import HttpTool, LanguageAgent

token = pulumi.Config().require_secret("token")
ways = {{
    "text": {{"string_data": {{"token": token}}}},
    "base64": {{"data": {{"token": token.apply(lambda t: base64.b64encode(t.encode()).decode())}}}},
}}
for way, values in ways.items():
    secret = k8s.core.v1.Secret(
        f"shared-{{way}}", metadata={{"name": f"shared-{{way}}", "namespace": "apps"}}, **values
    )
    tool = HttpTool(
        f"lookup-{{way}}",
        namespace="apps",
        display_name="Ticket lookup",
        description="Look a ticket up.",
        endpoint="https://tickets.example.com/x",
        authentication={{"type": "bearer", "secretRef": {{"name": secret, "key": "token"}}}},
    )
    LanguageAgent(
        f"helper-{{way}}",
        image="ghcr.io/acme/helper-agent:2{DIGEST}",
        namespace="apps",
        http_tools=[tool],
    )
"""
AGENTS = ("helper-text", "helper-base64")
# The annotation's line in `preview --diff` when its new value is known.
KNOWN_CHANGE = re.compile(r'langop\.io/secret-digest\s*: "hmac-sha256:[0-9a-f]+" => "hmac-sha256:')


def digests(folder: Path) -> dict[str, str]:
    objects = read_manifests(folder)
    return {
        name: objects[("Deployment", "apps", name)]["spec"]["template"]["metadata"]["annotations"][
            "langop.io/secret-digest"
        ]
        for name in AGENTS
    }


def test_rotating_a_users_secret_rolls_its_reader_either_way_it_was_written(
    engine: Engine, tmp_path: Path
) -> None:
    project = user_project(tmp_path / "shop", PROGRAM)
    engine.run(project, "stack", "init", "dev")
    render_to(engine, project, "dev", tmp_path / "out")
    engine.run(project, "config", "set", "--stack", "dev", "--secret", "token", "first-7c2d")
    engine.run(project, "up", "--stack", "dev", "--yes", "--skip-preview")
    before = digests(tmp_path / "out")
    assert all(d.startswith("hmac-sha256:") for d in before.values()), before

    engine.run(project, "config", "set", "--stack", "dev", "--secret", "token", "other-7c2d")
    preview = engine.run(project, "preview", "--stack", "dev", "--diff").stdout
    assert len(KNOWN_CHANGE.findall(preview)) == len(AGENTS), preview
    engine.run(project, "up", "--stack", "dev", "--yes", "--skip-preview")
    after = digests(tmp_path / "out")
    assert all(after[name] != before[name] for name in AGENTS), (before, after)
