"""stdio-only MCP servers as tools: the pod that runs them behind mcp-proxy, and (slow) the
real bridge on loopback in front of a real official-SDK stdio server, listed through our MCP
client and synced by the schema-sync provider, compared with what the official client gets
over stdio directly."""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from langop_infra.components.cluster import LanguageCluster
from langop_infra.config.tool import ToolSpec
from langop_infra.manifests import _stdio_bridge as stdio_bridge
from langop_infra.mcp import ClientOptions, fetch_tool_listing_sync
from langop_infra.sync.provider import ToolSchemaSyncProvider
from tests.support.loopback import free_port
from tests.support.provider_host import EngineHost, reveal, service_inputs
from tests.support.startup import HUNG_AFTER
from tests.test_pod_security import RULES

ROOT = Path(__file__).resolve().parents[1]
STDIO_SERVER = ROOT / "tests" / "support" / "stdio_server.py"
# Installed by .ci/run, like the other peers (its mcp<2 pin clashes with ours).
MCP_PROXY = ROOT / ".venv-mcp-proxy" / "bin" / "mcp-proxy"

STDIO_TOOL = {
    "name": "everything",
    "image": "ghcr.io/acme/mcp-bridge:1",
    "transport": "stdio",
    "command": ["npx", "-y", "@modelcontextprotocol/server-everything@2025.9.25"],
    "args": ["stdio"],
    "env": {"STDIO_GREETING": "Hi"},
    "port": 3000,
}


def document(**tool: Any) -> dict[str, Any]:
    spec = {**STDIO_TOOL, **tool}
    return {
        "namespace": "apps",
        "tools": [spec],
        "agents": [
            {"name": "helper", "image": "ghcr.io/acme/helper:1", "tools": [{"name": spec["name"]}]}
        ],
    }


def main_container(pod: dict[str, Any], name: str) -> dict[str, Any]:
    everything = pod.get("containers", []) + pod.get("initContainers", [])
    [found] = [c for c in everything if c["name"] == name]
    return found


def test_a_stdio_tool_runs_its_server_behind_the_bridge(render) -> None:
    rendered = render(lambda: LanguageCluster("c", document()))
    pod = rendered.find("Deployment", "everything", "apps")["spec"]["template"]["spec"]
    main = main_container(pod, "everything")
    assert main["command"] == ["mcp-proxy"]
    assert main["args"] == [
        "--host",
        "0.0.0.0",
        "--port",
        "3000",
        "--pass-environment",
        "--",
        "npx",
        "-y",
        "@modelcontextprotocol/server-everything@2025.9.25",
        "stdio",
    ]
    env = {e["name"]: e.get("value") for e in main["env"]}
    assert env["HOME"] == "/home/mcp" and env["STDIO_GREETING"] == "Hi"
    assert env["npm_config_cache"].startswith("/home/mcp/")
    assert env["UV_CACHE_DIR"].startswith("/home/mcp/")
    assert {"name": "bridge-home", "mountPath": "/home/mcp"} in main["volumeMounts"]
    assert {"name": "bridge-home", "emptyDir": {}} in pod["volumes"]
    assert main["readinessProbe"]["httpGet"] == {"path": "/status", "port": 3000}
    assert main["securityContext"]["readOnlyRootFilesystem"] is True
    # Agents, policies and schema sync see an ordinary tool on its port.
    config = rendered.find("ConfigMap", "helper-config", "apps")["data"]["config.yaml"]
    assert "http://everything.apps.svc.cluster.local:3000" in config
    assert rendered.find("Service", "everything", "apps")["spec"]["ports"][0]["port"] == 3000


def test_a_stdio_sidecar_gets_its_own_home_in_the_agents_pod(render) -> None:
    rendered = render(lambda: LanguageCluster("c", document(deploymentMode="sidecar")))
    pod = rendered.find("Deployment", "helper", "apps")["spec"]["template"]["spec"]
    sidecar = main_container(pod, "everything")
    assert sidecar["command"] == ["mcp-proxy"]
    mounts = {m["mountPath"]: m["name"] for m in sidecar["volumeMounts"]}
    assert mounts["/home/mcp"] == "sidecar-0-bridge-home"
    assert mounts["/tmp"] == "sidecar-0-tmp"
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["sidecar-0-bridge-home"] == {"name": "sidecar-0-bridge-home", "emptyDir": {}}


@pytest.mark.parametrize("mode", ["service", "sidecar"])
def test_stdio_tool_pods_meet_the_restricted_standard(render, mode: str) -> None:
    rendered = render(lambda: LanguageCluster("c", document(deploymentMode=mode)))
    owner = "everything" if mode == "service" else "helper"
    template = rendered.find("Deployment", owner, "apps")["spec"]["template"]
    violations = {control: found for control, rule in RULES.items() if (found := rule(template))}
    assert violations == {}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"command": None}, "a stdio tool needs command"),
        ({"mcpPath": "/rpc"}, "mcpPath (the bridge serves /mcp)"),
        ({"healthPath": "/healthz"}, "healthPath (the bridge serves /status)"),
    ],
)
def test_a_stdio_tool_names_what_it_cannot_have(change: dict[str, Any], message: str) -> None:
    spec = {k: v for k, v in {**STDIO_TOOL, **change}.items() if v is not None}
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ToolSpec.model_validate(spec)


def test_an_http_tool_keeps_its_own_command() -> None:
    tool = ToolSpec.model_validate({"name": "t", "image": "x/y:1", "command": ["serve"]})
    assert tool.transport == "http"


# --- the real bridge on loopback (slow) ---------------------------------------------------------


def listing_over_stdio(env: dict[str, str]) -> list[dict[str, Any]]:
    """The official client, straight to the server over stdio."""
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    async def listing() -> list[dict[str, Any]]:
        params = StdioServerParameters(command=sys.executable, args=[str(STDIO_SERVER)], env=env)
        async with Client(params) as client:
            result = await client.list_tools()
        return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in result.tools]

    return asyncio.run(listing())


def comparable(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    keys = ("name", "description", "inputSchema", "outputSchema")
    return sorted(({k: t[k] for k in keys if k in t} for t in tools), key=lambda t: t["name"])


@pytest.fixture
def bridge() -> Iterator[str]:
    """mcp-proxy with the arguments the builder gives a stdio tool, on loopback."""
    if not MCP_PROXY.exists():
        pytest.skip("mcp-proxy is not installed (.ci/run installs it in .venv-mcp-proxy)")
    port = free_port()
    tool = ToolSpec.model_validate(
        {**STDIO_TOOL, "port": port, "command": [sys.executable, str(STDIO_SERVER)], "args": []}
    )
    # The pod binds every interface; a test binds loopback only.
    args = [a if a != "0.0.0.0" else "127.0.0.1" for a in stdio_bridge.bridge_args(tool)]
    env = {**os.environ, "STDIO_GREETING": "Hi"}
    process = subprocess.Popen(
        [str(MCP_PROXY), *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + HUNG_AFTER  # ends only a hung start
        while True:
            try:
                if httpx.get(f"{base}{stdio_bridge.BRIDGE_HEALTH_PATH}", timeout=1).is_success:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                stderr = process.stderr.read().decode() if process.stderr else ""
                pytest.fail(f"mcp-proxy {shlex.join(args)} did not start: {stderr[-2000:]}")
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.mark.slow
def test_the_bridge_serves_the_stdio_servers_tools_to_our_client_and_schema_sync(
    bridge: str,
) -> None:
    direct = comparable(listing_over_stdio({"STDIO_GREETING": "Hi"}))
    assert [t["name"] for t in direct] == ["add", "greet", "tag"]
    ours = fetch_tool_listing_sync(f"{bridge}/mcp", ClientOptions(timeout=10, deadline=30))
    assert comparable(ours.tools) == direct
    host = EngineHost(ToolSchemaSyncProvider())
    host.up(service_inputs(bridge, service="everything"))
    assert reveal(host.outputs["phase"]) == "Registered", reveal(host.outputs["last_error"])
    assert sorted(reveal(host.outputs["tool_names"])) == ["add", "greet", "tag"]
    assert comparable(reveal(host.outputs["tool_schemas"])) == direct


@pytest.mark.slow
def test_the_bridge_passes_the_containers_env_to_the_server(bridge: str) -> None:
    from langop_infra.mcp import Session

    async def greet() -> str:
        async with Session(f"{bridge}/mcp", ClientOptions(timeout=10, deadline=30)) as session:
            result = await session.call_tool("greet", {"name": "Ada"})
        assert result.is_error is False
        return " ".join(c.get("text", "") for c in result.content)

    assert asyncio.run(greet()) == "Hi, Ada!"
