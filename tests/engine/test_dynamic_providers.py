"""The dynamic providers under the engine's own provider host (`pulumi-resource-pulumi-python`):
schema sync against an official-SDK MCP server on loopback, A2A card sync against a loopback
card, and the rollout key, through `up`, `refresh` and `destroy`; no secret in clear in state."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.faultservers import GOOD_TOKEN, guarded_memory_server
from tests.support.engine import Engine, python_project, stack_state
from tests.support.loopback import free_port, serve

pytestmark = pytest.mark.engine

STACK = "sync"
DIGEST = "@sha256:" + "ab" * 32
CANARIES = {"partner-token": "partner-canary-51c9", "model-key": "model-canary-93fe"}


def card_app(skills: list[str]) -> Starlette:
    card = {
        "name": "partner",
        "description": "A partner agent on loopback.",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": "http://127.0.0.1/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": s, "name": s, "description": f"does {s}", "tags": [s]} for s in skills],
    }

    async def served(_request: Any) -> JSONResponse:
        return JSONResponse(card)

    return Starlette(routes=[Route("/.well-known/agent-card.json", served)])


def stack_config(mcp: str, partner: str) -> str:
    return f"""\
config:
  langop-infra:namespace: sync-test
  langop-infra:secrets:
    memory-token:
      token: "Bearer {GOOD_TOKEN}"
  langop-infra:tools:
    - name: memory
      image: ghcr.io/acme/memory-mcp:1{DIGEST}
      schemaSync:
        access: direct
        syncUrl: {mcp}/mcp
        required: true
        headers:
          - name: Authorization
            valueFrom:
              secretKeyRef: {{name: memory-token, key: token}}
  langop-infra:agents:
    - name: caller
      image: ghcr.io/acme/caller:1{DIGEST}
      tools:
        - name: memory
      agents:
        - name: partner
          url: {partner}/a2a
          headers:
            - name: Authorization
              valueFrom:
                secretKeyRef: {{name: partner-token, key: token}}
"""


@pytest.fixture
def servers() -> Iterator[tuple[str, str]]:
    port = free_port()
    mcp = f"http://127.0.0.1:{port}"
    with serve(guarded_memory_server(mcp).streamable_http_app(), port=port) as tool:
        with serve(card_app(["research"])) as partner:
            yield tool, partner


def outputs_of(state: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [
        r.get("outputs", {}) for r in state["deployment"]["resources"] if r["type"].endswith(kind)
    ]


def test_up_refresh_destroy_through_the_provider_host(
    engine: Engine, tmp_path: Path, servers: tuple[str, str]
) -> None:
    tool, partner = servers
    project = python_project(tmp_path / "project")
    (project / "Pulumi.yaml").write_text(
        (project / "Pulumi.yaml").read_text().replace("stackConfigDir: stacks\n", "")
    )
    (project / f"Pulumi.{STACK}.yaml").write_text(stack_config(tool, partner))
    engine.run(project, "stack", "init", STACK)
    for name, value in CANARIES.items():
        engine.run(
            project,
            "config",
            "set",
            "--stack",
            STACK,
            "--secret",
            "--path",
            f'langop-infra:secrets["{name}"].token',
            value,
        )
    engine.run(
        project,
        "config",
        "set",
        "--stack",
        STACK,
        "kubernetes:renderYamlToDirectory",
        str(tmp_path / "out"),
    )
    up = engine.run(project, "up", "--stack", STACK, "--yes", "--skip-preview")
    state = stack_state(engine, project, STACK)
    text = json.dumps(state)
    for secret in (*CANARIES.values(), GOOD_TOKEN):
        assert secret not in text, secret
        assert secret not in up.stdout + up.stderr
    assert "pulumi-python:dynamic:Resource" in {r["type"] for r in state["deployment"]["resources"]}
    synced = [o for o in outputs_of(state, "dynamic:Resource") if "tools" in o or "toolNames" in o]
    assert synced, [o.keys() for o in outputs_of(state, "dynamic:Resource")]
    assert "remember" in json.dumps(synced)
    assert "research" in json.dumps(outputs_of(state, "dynamic:Resource"))

    refreshed = engine.run(
        project, "refresh", "--stack", STACK, "--yes", "--expect-no-changes", check=False
    )
    assert refreshed.returncode == 0, refreshed.stdout + refreshed.stderr
    engine.run(project, "preview", "--stack", STACK, "--expect-no-changes")

    engine.run(project, "destroy", "--stack", STACK, "--yes")
    after = stack_state(engine, project, STACK)
    assert after["deployment"].get("resources") in (None, [])
