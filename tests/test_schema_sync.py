"""ToolSchemaSync through the SDK's servicer against real official-SDK MCP servers (the
lifecycles are in test_schema_sync_engine.py), the access decision, and the wiring."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from mcp.server.mcpserver import MCPServer

from langop_infra.components.agent import LanguageAgent
from langop_infra.components.tool import LanguageTool
from langop_infra.offline._mock_engine import DYNAMIC_TYPE, ProgramRun, run_program
from langop_infra.sync._compare import schema_hash
from langop_infra.sync._kube_proxy import ProxyError
from langop_infra.sync.provider import ToolSchemaSyncProvider, resolve_access, sync_target
from tests.support.apiserver import IN_CLUSTER_BIND, ApiServer, kubeconfig_file, serve_api
from tests.support.loopback import serve
from tests.support.provider_host import EngineHost, ProviderFailure, service_inputs


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


def test_create_records_full_schemas_and_hash(memory: tuple[MCPServer, str]) -> None:
    _, base = memory
    host = EngineHost(ToolSchemaSyncProvider())
    host.up(service_inputs(base))
    outs = host.plain_outputs()
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
    assert host.id == "apps/memory"


def test_stopped_server_error_names_the_refusal_and_keeps_the_last_sync() -> None:
    server = memory_server()
    host = EngineHost(ToolSchemaSyncProvider())
    with serve(server.streamable_http_app()) as base:
        host.up(service_inputs(base))
        good = host.plain_outputs()
    host.up(service_inputs(base, timeout=4))
    failed = host.plain_outputs()
    assert failed["phase"] == "Error"
    assert "refused" in failed["last_error"] and base in failed["last_error"]
    assert "\n" not in failed["last_error"]
    kept = ("tool_names", "schema_hash", "registered_at", "last_synced_at")
    assert {k: failed[k] for k in kept} == {k: good[k] for k in kept}
    # The SDK's servicer drops null-valued keys inside objects when it hands the provider
    # the previous outputs, so the kept schemas lose `"default": null` (docs/SCHEMA_SYNC.md).
    tags = good["tool_schemas"][0]["inputSchema"]["properties"]["tags"]
    assert tags["default"] is None
    tags.pop("default")
    assert failed["tool_schemas"] == good["tool_schemas"]


def test_check_reports_bad_inputs_without_quoting_them() -> None:
    host = EngineHost(ToolSchemaSyncProvider())
    bad = service_inputs("ftp://x", access="tunnel", timeout=-1, pod_selector={"app": 1})
    preview = host.preview(bad)
    assert sorted(name for name, _ in preview.failures) == [
        "access",
        "endpoint",
        "pod_selector",
        "timeout",
    ]
    assert "ftp://x" not in str(preview.failures)


def test_apiserver_proxy_with_a_kubeconfig_file_and_a_wrong_token(tmp_path: Path) -> None:
    app = memory_server().streamable_http_app(host=IN_CLUSTER_BIND)
    with serve(app) as upstream:
        api = ApiServer("s3cr3t-token", services={("apps", "memory", 8080): upstream})
        with serve_api(api) as api_url:
            _proxy_with_a_file_and_a_wrong_token(api, api_url, tmp_path)


def _proxy_with_a_file_and_a_wrong_token(api: ApiServer, api_url: str, tmp_path: Path) -> None:
    """Registered with the right token; a 401 (the token not echoed) with a wrong one."""
    props = service_inputs(
        "http://memory.apps.svc.cluster.local:8080",
        access="apiserver-proxy",
        kubeconfig=kubeconfig_file(tmp_path, api_url, "s3cr3t-token"),
        kube_context="ctx",
    )
    host = EngineHost(ToolSchemaSyncProvider())
    host.up(props)
    outs = host.plain_outputs()
    assert outs["phase"] == "Registered", outs["last_error"]
    assert "POST /api/v1/namespaces/apps/services/memory:8080/proxy/mcp" in api.calls

    wrong = tmp_path / "wrong"
    wrong.write_text(Path(props["kubeconfig"]).read_text().replace("s3cr3t-token", "nope"))
    host.up({**props, "kubeconfig": str(wrong)})
    failed = host.plain_outputs()
    assert failed["phase"] == "Error"
    assert "401" in failed["last_error"] and "nope" not in failed["last_error"]


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
    with_creds = service_inputs(in_cluster, access="auto", kubeconfig=str(kubeconfig))
    assert resolve_access(with_creds) == "apiserver-proxy"
    url, headers, _ = sync_target(with_creds)
    assert url == "https://10.0.0.1:6443/api/v1/namespaces/apps/services/memory:8080/proxy/mcp"
    assert headers["authorization"] == "Bearer t"
    no_creds = service_inputs(in_cluster, access="auto", kubeconfig=str(tmp_path / "missing"))
    with pytest.raises(ProxyError, match="is in-cluster, so it needs the API server proxy"):
        resolve_access(no_creds)
    assert resolve_access(service_inputs("http://127.0.0.1:9", access="auto")) == "direct"
    overridden = service_inputs(in_cluster, access="auto", sync_url="https://tools.example.com/mcp")
    assert resolve_access(overridden) == "direct"
    assert sync_target(overridden)[0] == "https://tools.example.com/mcp"


def test_auto_access_without_credentials_is_an_error_naming_the_cause_and_fix(
    tmp_path: Path,
) -> None:
    """No silent fall back to a direct call that would fail on DNS: phase Error, and the
    reason names the missing kubeconfig, where to set it, and the direct escape."""
    missing = str(tmp_path / "missing")
    host = EngineHost(ToolSchemaSyncProvider())
    host.up(
        service_inputs(
            "http://memory.apps.svc.cluster.local:8080", access="auto", kubeconfig=missing
        )
    )
    outs = host.plain_outputs()
    assert outs["phase"] == "Error"
    reason = outs["last_error"]
    assert "memory.apps.svc.cluster.local is in-cluster" in reason
    assert "cannot load a kubeconfig" in reason
    assert "kubernetes:kubeconfig" in reason and "schemaSync.access: direct" in reason
    assert "Name or service not known" not in reason and "ConnectError" not in reason


def test_auto_access_without_the_kubernetes_package_names_the_package_and_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # None in sys.modules makes `import kubernetes` raise ImportError, as in a venv without it.
    monkeypatch.setitem(__import__("sys").modules, "kubernetes", None)
    host = EngineHost(ToolSchemaSyncProvider())
    host.up(service_inputs("http://memory.apps.svc.cluster.local:8080", access="auto"))
    outs = host.plain_outputs()
    assert outs["phase"] == "Error"
    assert "the kubernetes package is missing" in outs["last_error"]
    assert "pip install -r requirements.txt" in outs["last_error"]
    with pytest.raises(ProviderFailure, match="kubernetes package is missing"):
        inputs = service_inputs("http://memory.apps.svc.cluster.local:8080", access="auto")
        host.up({**inputs, "required": True})


def dynamic(run: ProgramRun) -> list:
    return [r for r in run.registrations if r.type == DYNAMIC_TYPE]


def test_sync_resource_is_a_child_of_its_tool_after_deployment_and_service() -> None:
    def program() -> None:
        LanguageTool("memory", image="ghcr.io/acme/memory:1", namespace="apps")
        LanguageAgent(
            "helper",
            image="ghcr.io/acme/helper:1",
            namespace="apps",
            tools=[{"name": "memory", "required": True}],
        )
        LanguageAgent(
            "casual",
            image="ghcr.io/acme/helper:1",
            namespace="apps",
            tools=[{"name": "memory"}],
        )

    run = run_program(program)
    [sync] = dynamic(run)
    by_type = {(r.type, r.name): r for r in run.registrations}
    tool = by_type[("langop-infra:index:LanguageTool", "memory")]
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


def test_oauth_client_secret_reaches_the_sync_as_a_secret_only() -> None:
    """``schemaSync.auth``: the client secret comes from ``secrets`` and rides as a secret."""
    from langop_infra import LanguageCluster

    document = {
        "namespace": "apps",
        "secrets": {"sync-oauth": {"secret": "oauth-canary-9d1"}},
        "tools": [
            {
                "name": "memory",
                "image": "m:1",
                "schemaSync": {
                    "access": "direct",  # auth never passes the API server proxy
                    "auth": {
                        "clientId": "sync-client",
                        "clientSecret": {"secretKeyRef": {"name": "sync-oauth", "key": "secret"}},
                        "scopes": ["tools:read"],
                        "issuer": "https://auth.example.com",
                    },
                },
            }
        ],
    }
    run = run_program(lambda: LanguageCluster("apps", document))
    [sync] = dynamic(run)
    assert sync.inputs["oauth"]["value"] == {
        "client_id": "sync-client",
        "client_secret": "oauth-canary-9d1",
        "scopes": ["tools:read"],
        "issuer": "https://auth.example.com",
    }
    others = {k: v for k, v in sync.inputs.items() if k != "oauth"}
    assert "oauth-canary-9d1" not in json.dumps(others, default=str)
    assert "oauth-canary-9d1" not in json.dumps(run.manifests(), default=str)


def test_oauth_on_a_standalone_tool_is_refused_before_registration() -> None:
    from langop_infra import SpecError

    with pytest.raises(SpecError) as caught:
        run_program(
            lambda: LanguageTool(
                "memory",
                image="m:1",
                schema_sync={
                    "access": "direct",  # auth never passes the API server proxy
                    "auth": {
                        "clientId": "c",
                        "clientSecret": {"secretKeyRef": {"name": "oauth", "key": "secret"}},
                        "issuer": "https://auth.example.com",
                    },
                },
            )
        )
    [problem] = caught.value.problems
    assert problem.path == "schemaSync.auth.clientSecret"
    assert "not declared under secrets" in problem.message


def test_sync_limits_and_protocol_reach_the_client(memory: tuple[MCPServer, str]) -> None:
    """``schemaSync.protocol`` picks the revision; ``maxTools`` caps the listing."""
    server, base = memory

    @server.tool()
    def recall(query: str) -> str:
        """Retrieve information from long-term memory."""
        return "nothing"

    host = EngineHost(ToolSchemaSyncProvider())
    host.up(service_inputs(base, limits={"protocol": "2025-11-25", "max_tools": 10}))
    outs = host.plain_outputs()
    assert (outs["phase"], outs["protocol_version"]) == ("Registered", "2025-11-25")
    host.up(service_inputs(base, limits={"protocol": "auto", "max_tools": 1}))
    capped = host.plain_outputs()
    assert capped["phase"] == "Error"
    assert "listed more than 1 tools; raise max_tools" in capped["last_error"]


def test_tool_spec_limits_become_sync_inputs() -> None:
    def program() -> None:
        LanguageTool(
            "memory",
            image="m:1",
            namespace="apps",
            schema_sync={"protocol": "2026-07-28", "maxBytes": "1Mi", "maxTools": 50},
        )

    [sync] = dynamic(run_program(program))
    assert sync.inputs["limits"] == {
        "protocol": "2026-07-28",
        "max_tools": 50,
        "max_pages": 100,
        "max_total_bytes": 1024 * 1024,
    }
