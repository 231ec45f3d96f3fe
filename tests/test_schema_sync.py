"""ToolSchemaSync: the provider against real official-SDK MCP servers, and its wiring."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dill
import httpx
import pytest
import yaml
from mcp.server.mcpserver import MCPServer
from starlette.requests import Request
from starlette.responses import Response

from langop_infra.agent import LanguageAgent
from langop_infra.offline.mock_engine import DYNAMIC_TYPE, ProgramRun, run_program
from langop_infra.schema_compare import schema_hash
from langop_infra.schema_sync import (
    UNKNOWN,
    ToolSchemaSyncProvider,
    resolve_access,
    sync_target,
)
from langop_infra.tool import LanguageTool
from tests.loopback import free_port, serve


def memory_server() -> MCPServer:
    server = MCPServer("memory")

    @server.tool()
    def remember(content: str, tags: list[str] | None = None) -> str:
        """Store information in long-term memory."""
        return "Stored."

    return server


@pytest.fixture
def memory() -> Iterator[tuple[MCPServer, str]]:
    server = memory_server()
    with serve(server.streamable_http_app()) as base:
        yield server, base


def inputs(base: str, **extra: Any) -> dict[str, Any]:
    return {
        "endpoint": base,
        "mcp_path": "/mcp",
        "access": "direct",
        "namespace": "apps",
        "service": "memory",
        "port": 8080,
        "timeout": 5,
        "required": False,
        **extra,
    }


def test_create_records_full_schemas_and_hash(memory: tuple[MCPServer, str]) -> None:
    _, base = memory
    outs = ToolSchemaSyncProvider().create(inputs(base)).outs
    assert outs["phase"] == "Registered"
    assert outs["tool_names"] == ["remember"]
    [tool] = outs["tool_schemas"]
    assert tool["description"] == "Store information in long-term memory."
    assert tool["inputSchema"]["required"] == ["content"]
    assert set(tool["inputSchema"]["properties"]) == {"content", "tags"}
    assert outs["schema_hash"] == schema_hash(outs["tool_schemas"])
    assert len(outs["schema_hash"]) == 64
    assert outs["server_info"]["name"] == "memory"
    assert outs["protocol_version"] == "2026-07-28"  # the SDK server speaks both eras
    assert outs["last_error"] == ""
    assert outs["registered_at"] and outs["registered_at"] == outs["last_synced_at"]
    assert "headers" not in outs


def test_credentials_never_come_back_as_outputs(memory: tuple[MCPServer, str]) -> None:
    _, base = memory
    props = inputs(base, headers={"X-Token": "canary-h"}, kubeconfig="apiVersion: v1 canary-k")
    outs = ToolSchemaSyncProvider().create(props).outs
    assert outs["phase"] == "Registered"
    assert "headers" not in outs and "kubeconfig" not in outs
    assert "canary" not in json.dumps(outs)


def test_schema_change_shows_in_diff_and_read(memory: tuple[MCPServer, str]) -> None:
    server, base = memory
    provider = ToolSchemaSyncProvider()
    props = inputs(base)
    outs = provider.create(props).outs
    assert provider.diff("apps/memory", outs, props).changes is False

    @server.tool()
    def recall(query: str) -> str:
        """Retrieve information from long-term memory."""
        return "nothing"

    assert provider.diff("apps/memory", outs, props).changes is True
    refreshed = provider.read("apps/memory", {**props, **outs}).outs
    assert refreshed["tool_names"] == ["remember", "recall"]
    assert refreshed["schema_hash"] != outs["schema_hash"]
    assert refreshed["registered_at"] == outs["registered_at"]


def test_input_change_is_a_diff_without_contacting_the_tool() -> None:
    provider = ToolSchemaSyncProvider()
    olds = {**inputs("http://127.0.0.1:9"), "schema_hash": "x", "phase": "Registered"}
    news = inputs("http://127.0.0.1:9", timeout=7)
    assert provider.diff("apps/memory", olds, news).changes is True


def test_stopped_server_gives_error_phase_and_keeps_last_schemas() -> None:
    server = memory_server()
    provider = ToolSchemaSyncProvider()
    with serve(server.streamable_http_app()) as base:
        props = inputs(base)
        good = provider.create(props).outs
    failed = provider.update("apps/memory", {**props, **good}, props).outs
    assert failed["phase"] == "Error"
    assert "refused" in failed["last_error"] and base in failed["last_error"]
    assert "\n" not in failed["last_error"]
    assert failed["tool_schemas"] == good["tool_schemas"]
    assert failed["schema_hash"] == good["schema_hash"]
    assert failed["last_synced_at"] == good["last_synced_at"]


def test_required_sync_failure_raises_with_the_reason() -> None:
    port = free_port()
    with pytest.raises(RuntimeError, match=r"schema sync of memory failed: .*refused"):
        ToolSchemaSyncProvider().create(inputs(f"http://127.0.0.1:{port}", required=True))


def test_preview_time_unknowns_are_a_change_and_pass_check() -> None:
    provider = ToolSchemaSyncProvider()
    news = inputs(UNKNOWN)
    assert provider.check({}, news).failures == []
    olds = {**inputs("http://127.0.0.1:9"), "schema_hash": "x"}
    assert provider.diff("apps/memory", olds, news).changes is True


def test_check_reports_bad_inputs() -> None:
    failures = (
        ToolSchemaSyncProvider().check({}, inputs("ftp://x", access="tunnel", timeout=-1)).failures
    )
    assert sorted(f.property for f in failures) == ["access", "endpoint", "timeout"]


def test_provider_pickles_small_and_round_trips() -> None:
    data = dill.dumps(ToolSchemaSyncProvider(), protocol=dill.HIGHEST_PROTOCOL, recurse=True)
    assert len(data) < 2048
    assert isinstance(dill.loads(data), ToolSchemaSyncProvider)


def apiserver_proxy(upstream: str, token: str, calls: list[str]):
    """A loopback STAND-IN for the Kubernetes API server's service proxy (no real API server
    runs here): it checks the bearer token and forwards the proxy path to a real MCP server."""
    prefix = "/api/v1/namespaces/apps/services/memory:8080/proxy"

    async def app(scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        calls.append(f"{request.method} {request.url.path}")
        if request.headers.get("authorization") != f"Bearer {token}":
            await Response("Unauthorized", status_code=401)(scope, receive, send)
            return
        if not request.url.path.startswith(prefix):
            await Response("not found", status_code=404)(scope, receive, send)
            return
        forward = {
            k: v
            for k, v in request.headers.items()
            if k.lower() in ("content-type", "accept", "mcp-session-id", "mcp-protocol-version")
        }
        async with httpx.AsyncClient() as client:
            reply = await client.request(
                request.method,
                upstream + request.url.path.removeprefix(prefix),
                content=await request.body(),
                headers=forward,
            )
        headers = {
            k: v
            for k, v in reply.headers.items()
            if k.lower() in ("content-type", "mcp-session-id")
        }
        await Response(reply.content, status_code=reply.status_code, headers=headers)(
            scope, receive, send
        )

    return app


def test_apiserver_proxy_access_uses_kubeconfig_credentials(
    memory: tuple[MCPServer, str], tmp_path: Path
) -> None:
    _, upstream = memory
    calls: list[str] = []
    with serve(apiserver_proxy(upstream, "s3cr3t-token", calls)) as api:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "c", "cluster": {"server": api}}],
                    "users": [{"name": "u", "user": {"token": "s3cr3t-token"}}],
                    "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
                    "current-context": "ctx",
                }
            )
        )
        props = inputs(
            "http://memory.apps.svc.cluster.local:8080",
            access="apiserver-proxy",
            kubeconfig=str(kubeconfig),
            kube_context="ctx",
        )
        outs = ToolSchemaSyncProvider().create(props).outs
        assert outs["phase"] == "Registered", outs["last_error"]
        assert outs["tool_names"] == ["remember"]
        assert "POST /api/v1/namespaces/apps/services/memory:8080/proxy/mcp" in calls

        wrong = tmp_path / "wrong"
        wrong.write_text(kubeconfig.read_text().replace("s3cr3t-token", "nope"))
        failed = ToolSchemaSyncProvider().create({**props, "kubeconfig": str(wrong)}).outs
        assert failed["phase"] == "Error"
        assert "401" in failed["last_error"]


def test_auto_access_picks_the_proxy_only_for_in_cluster_names_with_credentials(
    tmp_path: Path,
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": "https://10.0.0.1:6443"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "ctx",
            }
        )
    )
    in_cluster = "http://memory.apps.svc.cluster.local:8080"
    with_creds = inputs(in_cluster, access="auto", kubeconfig=str(kubeconfig))
    assert resolve_access(with_creds) == "apiserver-proxy"
    url, headers, _ = sync_target(with_creds)
    assert url == "https://10.0.0.1:6443/api/v1/namespaces/apps/services/memory:8080/proxy/mcp"
    assert headers["authorization"] == "Bearer t"
    no_creds = inputs(in_cluster, access="auto", kubeconfig=str(tmp_path / "missing"))
    assert resolve_access(no_creds) == "direct"
    assert resolve_access(inputs("http://127.0.0.1:9", access="auto")) == "direct"
    overridden = inputs(in_cluster, access="auto", sync_url="https://tools.example.com/mcp")
    assert resolve_access(overridden) == "direct"
    assert sync_target(overridden)[0] == "https://tools.example.com/mcp"


def dynamic(run: ProgramRun) -> list:
    return [r for r in run.registrations if r.type == DYNAMIC_TYPE]


def test_sync_resource_is_a_child_of_its_tool_after_deployment_and_service() -> None:
    def program() -> None:
        tool = LanguageTool("memory", image="ghcr.io/acme/memory:1", namespace="apps")
        LanguageAgent(
            "helper",
            image="ghcr.io/acme/helper:1",
            namespace="apps",
            tools=[{"name": "memory", "required": True}],
            tool_index={("apps", "memory"): tool},
        )
        LanguageAgent(
            "casual",
            image="ghcr.io/acme/helper:1",
            namespace="apps",
            tools=[{"name": "memory"}],
            tool_index={("apps", "memory"): tool},
        )

    run = run_program(program)
    [sync] = dynamic(run)
    by_type = {(r.type, r.name): r for r in run.registrations}
    tool = by_type[("langop:index:LanguageTool", "memory")]
    deployment = by_type[("kubernetes:apps/v1:Deployment", "apps/memory")]
    service = by_type[("kubernetes:core/v1:Service", "apps/memory")]
    assert sync.parent == tool.urn
    assert {deployment.urn, service.urn} <= set(sync.dependencies)
    assert sync.inputs["endpoint"] == "http://memory.apps.svc.cluster.local:8080"
    assert sync.inputs["access"] == "auto"
    helper = by_type[("kubernetes:apps/v1:Deployment", "apps/helper")]
    casual = by_type[("kubernetes:apps/v1:Deployment", "apps/casual")]
    assert sync.urn in helper.dependencies
    assert sync.urn not in casual.dependencies
    assert deployment.urn not in casual.dependencies


def test_sync_disabled_and_sidecar_tools_register_no_sync() -> None:
    def program() -> None:
        import pulumi

        off = LanguageTool("memory", image="m:1", namespace="apps", schema_sync={"enabled": False})
        side = LanguageTool("files", image="f:1", namespace="apps", deployment_mode="sidecar")
        pulumi.export("phases", [off.phase, side.phase])

    run = run_program(program)
    assert dynamic(run) == []
    assert run.outputs["phases"] == ["Disabled", "Disabled"]


def test_sync_headers_stay_secret_in_the_engine() -> None:
    def program() -> None:
        LanguageTool(
            "memory",
            image="m:1",
            namespace="apps",
            schema_sync={"headers": [{"name": "Authorization", "secret": "Bearer canary-123"}]},
        )

    [sync] = dynamic(run_program(program))
    assert sync.inputs["headers"]["value"] == {"Authorization": "Bearer canary-123"}
    assert "canary-123" not in json.dumps(
        {k: v for k, v in sync.inputs.items() if k != "headers"}, default=str
    )
