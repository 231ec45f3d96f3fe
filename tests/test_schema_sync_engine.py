"""ToolSchemaSync as ``pulumi up`` drives it: through the SDK's dynamic-provider servicer.

Every test goes through :class:`tests.support.provider_host.EngineHost`, which calls the SDK's
own ``DynamicResourceProviderServicer`` with the requests the engine builds (structs, the
serialized provider, unknowns at preview, ``diff``/``read`` given the previous outputs,
secrets as the servicer's ``Configure`` answer says). The tools are real official-SDK MCP
servers on loopback; the Kubernetes API server is a stand-in (``tests/support/apiserver.py``),
since no real one runs here.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer

from langop_infra.sync.provider import SyncOutputs, ToolSchemaSync, ToolSchemaSyncProvider
from tests.faultservers import GOOD_TOKEN, guarded_memory_server, memory_server
from tests.mcp.conftest import load_server_module
from tests.support.apiserver import IN_CLUSTER_BIND, ApiServer, kubeconfig, serve_api
from tests.support.loopback import free_port, serve
from tests.support.provider_host import (
    COMPUTED,
    EngineHost,
    ProviderFailure,
    Secret,
    reveal,
    service_inputs,
    shown,
)

KUBE_TOKEN = "kube-token-canary-4e1d"
IN_CLUSTER = "http://memory.apps.svc.cluster.local:8080"


@dataclass
class Setup:
    """One way of reaching the tool: its inputs, the live server, how to stop it."""

    inputs: dict[str, Any]
    server: MCPServer
    stop: Callable[[], None]
    secrets: tuple[str, ...]  # must never show in state, previews or failures


@pytest.fixture
def plain_setup() -> Iterator[Setup]:
    server = memory_server()
    with ExitStack() as stack:
        base = stack.enter_context(serve(server.streamable_http_app()))
        yield Setup(service_inputs(base), server, stack.close, ())


@pytest.fixture
def headers_setup() -> Iterator[Setup]:
    port = free_port()
    server = guarded_memory_server(f"http://127.0.0.1:{port}")
    with ExitStack() as stack:
        base = stack.enter_context(serve(server.streamable_http_app(), port))
        headers = Secret({"Authorization": f"Bearer {GOOD_TOKEN}"})
        yield Setup(service_inputs(base, headers=headers), server, stack.close, (GOOD_TOKEN,))


@pytest.fixture
def kubeconfig_setup() -> Iterator[Setup]:
    server = memory_server()
    with ExitStack() as api_stack, ExitStack() as tool_stack:
        upstream = tool_stack.enter_context(serve(server.streamable_http_app(host=IN_CLUSTER_BIND)))
        api = ApiServer(KUBE_TOKEN, services={("apps", "memory", 8080): upstream})
        api_url = api_stack.enter_context(serve_api(api))
        inputs = service_inputs(
            IN_CLUSTER,
            access="apiserver-proxy",
            kube_context="ctx",
            kubeconfig=Secret(kubeconfig(api_url, KUBE_TOKEN)),
        )
        yield Setup(inputs, server, tool_stack.close, (KUBE_TOKEN,))


OAUTH_SECRET = "oauth-client-secret-canary-77b2"


@pytest.fixture
def oauth_setup() -> Iterator[Setup]:
    """The official SDK server demanding OAuth tokens, issued by a client-credentials
    stand-in authorization server (the SDK's own has no such grant; see oauth_servers)."""
    servers = load_server_module("oauth_servers")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    issuer = servers.StandInAuthorizationServer(f"{base}/as", "sync-client", OAUTH_SECRET)
    made: list[MCPServer] = []

    def tools(server: MCPServer) -> MCPServer:
        made.append(server)

        @server.tool()
        def remember(content: str) -> str:
            """Store information in long-term memory."""
            return "Stored."

        return server

    app = servers.client_credentials_server(base, issuer, ["tools"], tools)
    with ExitStack() as stack:
        stack.enter_context(serve(app, port))
        oauth = Secret(
            {
                "client_id": "sync-client",
                "client_secret": OAUTH_SECRET,
                "scopes": [],
                "issuer": issuer.base_url,
            }
        )
        yield Setup(service_inputs(base, oauth=oauth), made[0], stack.close, (OAUTH_SECRET,))


def add_recall(server: MCPServer) -> None:
    @server.tool()
    def recall(query: str) -> str:
        """Retrieve information from long-term memory."""
        return "nothing"


def run_lifecycle(setup: Setup, host: EngineHost) -> None:
    inputs = setup.inputs
    preview = host.preview({**inputs, "endpoint": COMPUTED})
    assert (preview.op, preview.failures) == ("create", [])

    assert host.up(inputs) == "create"
    created = host.plain_outputs()
    assert (created["phase"], created["last_error"]) == ("Registered", ""), created
    assert created["tool_names"] == ["remember"]

    assert host.preview(inputs).op == "same"  # nothing changed: no diff
    assert host.preview({**inputs, "endpoint": COMPUTED}).op == "update"  # unknown: a change

    add_recall(setup.server)
    assert host.preview(inputs).op == "update"  # the server's tools changed

    refreshed = host.refresh()
    assert reveal(refreshed["phase"]) == "Registered", reveal(refreshed["last_error"])
    assert reveal(refreshed["tool_names"]) == ["remember", "recall"]
    assert reveal(refreshed["registered_at"]) == created["registered_at"]
    assert host.preview(inputs).op == "same"  # the drift is recorded

    assert host.up({**inputs, "timeout": 6}) == "update"
    assert host.plain_outputs()["phase"] == "Registered"

    setup.stop()
    assert host.up({**inputs, "timeout": 3}) == "update"  # not fatal
    failed = host.plain_outputs()
    assert failed["phase"] == "Error" and failed["last_error"]
    assert failed["tool_names"] == ["remember", "recall"]  # the last good sync is kept

    with pytest.raises(ProviderFailure) as caught:
        host.up({**inputs, "timeout": 3, "required": True})
    assert "schema sync of memory failed: " in caught.value.details
    assert host.plain_outputs()["timeout"] == 3  # a failed update leaves the state as it was

    for secret in setup.secrets:
        for shown_text in (host.state_text(), caught.value.details, failed["last_error"]):
            assert secret not in shown_text
    host.destroy()
    assert host.calls[-1] == "Delete" and host.id == "" and host.outputs == {}


def test_lifecycle_of_a_plain_tool(plain_setup: Setup) -> None:
    run_lifecycle(plain_setup, EngineHost(ToolSchemaSyncProvider()))


@pytest.mark.slow
def test_lifecycle_of_a_tool_that_demands_a_token(headers_setup: Setup) -> None:
    host = EngineHost(ToolSchemaSyncProvider())
    run_lifecycle(headers_setup, host)


def test_lifecycle_with_oauth_client_credentials(oauth_setup: Setup) -> None:
    run_lifecycle(oauth_setup, EngineHost(ToolSchemaSyncProvider()))


def test_lifecycle_through_the_api_server_proxy(kubeconfig_setup: Setup) -> None:
    run_lifecycle(kubeconfig_setup, EngineHost(ToolSchemaSyncProvider()))


def test_lifecycle_with_secrets_wrapped_in_the_secret_signature(headers_setup: Setup) -> None:
    """A host that sends secrets wrapped (a provider accepting secrets) changes nothing."""
    host = EngineHost(ToolSchemaSyncProvider(), wrap_secrets=True)
    run_lifecycle(headers_setup, host)


def test_refresh_with_headers_stays_registered_and_keeps_them_secret(
    headers_setup: Setup,
) -> None:
    host = EngineHost(ToolSchemaSyncProvider())
    host.up(headers_setup.inputs)
    assert isinstance(host.outputs["headers"], Secret)
    for _ in range(2):
        refreshed = host.refresh()
        assert reveal(refreshed["phase"]) == "Registered", reveal(refreshed["last_error"])
        assert refreshed["headers"] == Secret({"Authorization": f"Bearer {GOOD_TOKEN}"})
    assert shown(host.outputs)["headers"] == "[secret]"
    assert GOOD_TOKEN not in host.state_text()


def test_refresh_uses_the_stack_kubeconfig_not_the_default_one(
    kubeconfig_setup: Setup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A default kubeconfig pointing nowhere: used by mistake, the refresh would fail.
    default = tmp_path / "default-kubeconfig"
    default.write_text(kubeconfig("https://127.0.0.1:9", "wrong"))
    monkeypatch.setenv("KUBECONFIG", str(default))
    host = EngineHost(ToolSchemaSyncProvider())
    host.up(kubeconfig_setup.inputs)
    refreshed = host.refresh()
    assert reveal(refreshed["phase"]) == "Registered", reveal(refreshed["last_error"])
    assert shown(refreshed)["kubeconfig"] == "[secret]"
    assert KUBE_TOKEN not in host.state_text()


def test_header_rotation_is_a_change_that_never_shows_the_value(plain_setup: Setup) -> None:
    host = EngineHost(ToolSchemaSyncProvider())
    first = {**plain_setup.inputs, "headers": Secret({"X-Token": "token-one-canary"})}
    rotated = {**first, "headers": Secret({"X-Token": "token-two-canary"})}
    host.up(first)
    assert host.preview(first).op == "same"
    preview = host.preview(rotated)
    assert preview.op == "update"
    assert shown(preview.checked)["headers"] == "[secret]"
    assert host.up(rotated) == "update"
    assert reveal(host.outputs["headers"]) == {"X-Token": "token-two-canary"}
    assert "canary" not in host.state_text()


def test_removing_headers_is_a_change(plain_setup: Setup) -> None:
    host = EngineHost(ToolSchemaSyncProvider())
    host.up({**plain_setup.inputs, "headers": Secret({"X-Token": "t0ken"})})
    assert host.preview(plain_setup.inputs).op == "update"


def test_check_refuses_a_traversal_path_before_anything_runs() -> None:
    host = EngineHost(ToolSchemaSyncProvider())
    bad = service_inputs(IN_CLUSTER, access="apiserver-proxy", mcp_path="/../../api/v1/secrets")
    preview = host.preview(bad)
    assert [name for name, _ in preview.failures] == ["mcp_path"]
    assert "'..' segments" in preview.failures[0][1]
    with pytest.raises(ProviderFailure, match="mcp_path"):
        host.up(bad)
    assert "Create" not in host.calls


def test_serialized_provider_is_under_a_kilobyte() -> None:
    host = EngineHost(ToolSchemaSyncProvider())
    assert len(host.serialized) < 1024
    assert len(base64.b64decode(host.serialized)) < 1024


def test_resource_declares_exactly_the_sync_outputs() -> None:
    declared = {
        name for name, hint in ToolSchemaSync.__annotations__.items() if "Output" in str(hint)
    }
    assert declared == set(SyncOutputs.names())
    assert set(SyncOutputs.LISTING) | {"phase", "last_error"} == set(SyncOutputs.names())
    assert set(SyncOutputs.EXPORTED) <= set(SyncOutputs.names())
    assert SyncOutputs.disabled().as_dict()["phase"] == "Disabled"


def test_a_refresh_that_finds_nothing_new_changes_no_output(plain_setup: Setup) -> None:
    """`pulumi refresh` of an unchanged tool reports no change (the real engine showed two:
    `required` read back as false and a new `last_synced_at`)."""
    host = EngineHost(ToolSchemaSyncProvider())
    inputs = {**plain_setup.inputs, "required": True}
    host.up(inputs)
    before = host.plain_outputs()
    host.refresh()
    assert host.plain_outputs() == before
    add_recall(plain_setup.server)
    host.refresh()
    after = host.plain_outputs()
    assert (after["required"], after["tool_names"]) == (True, ["remember", "recall"])
    assert after["schema_hash"] != before["schema_hash"]


def test_a_tool_still_down_is_no_change_and_one_back_up_is() -> None:
    """While a tool cannot be reached, preview shows no change (`--expect-no-changes` holds:
    the real engine showed a perpetual update); once it answers, `pulumi up` syncs it."""
    port = free_port()
    host = EngineHost(ToolSchemaSyncProvider())
    inputs = service_inputs(f"http://127.0.0.1:{port}")
    host.up(inputs)
    assert host.plain_outputs()["phase"] == "Error"
    assert host.preview(inputs).op == "same"
    with serve(memory_server().streamable_http_app(), port=port):
        assert host.preview(inputs).op == "update"
        assert host.up(inputs) == "update"
        assert host.plain_outputs()["phase"] == "Registered"
