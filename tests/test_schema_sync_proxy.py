"""Schema sync through the Kubernetes API server's proxy: paths that stay under the proxy
prefix, and sidecar tools reached through one ready agent pod.

The API server is a stand-in (``tests/support/apiserver.py``; no real one runs here); the
tools behind it are real official-SDK MCP servers on loopback. Lifecycles go through the
SDK's servicer (``tests/support/provider_host.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from langop_infra.config.checks._validation import parse_tool
from langop_infra.core.problems import SpecError
from langop_infra.sync._kube_proxy import ProxyError, kubeconfig_secrets, proxy_url, service_prefix
from langop_infra.sync.provider import ToolSchemaSyncProvider
from tests.faultservers import memory_server
from tests.support.apiserver import (
    IN_CLUSTER_BIND,
    ApiServer,
    Pod,
    kubeconfig,
    proxy_sync_inputs,
    serve_api,
)
from tests.support.loopback import serve
from tests.support.provider_host import EngineHost, Secret

TOKEN = "kube-token-canary-77c2"
AGENT = {"app.kubernetes.io/name": "helper", "app.kubernetes.io/component": "agent"}
PREFIX = "/api/v1/namespaces/apps/services/memory:8080/proxy"


@pytest.fixture
def cluster() -> Iterator[tuple[ApiServer, str]]:
    """A stand-in API server proxying to a real MCP server as service ``apps/memory`` and as
    the sidecar port of pod ``helper-1``; ``helper-0`` is not ready, ``other-0`` is another
    agent's pod."""
    with serve(memory_server().streamable_http_app(host=IN_CLUSTER_BIND)) as upstream:
        api = ApiServer(
            TOKEN,
            services={("apps", "memory", 8080): upstream},
            pods={
                "apps": [
                    Pod("helper-0", AGENT, ready=False),
                    Pod("helper-1", AGENT),
                    Pod("other-0", {"app.kubernetes.io/name": "other"}),
                ]
            },
            pod_backends={("apps", "helper-1", 8080): upstream},
        )
        with serve_api(api) as api_url:
            yield api, api_url


def proxy_inputs(api_url: str, **extra: Any) -> dict[str, Any]:
    return proxy_sync_inputs(kubeconfig(api_url, TOKEN), **extra)


def sidecar_inputs(api_url: str, **extra: Any) -> dict[str, Any]:
    """What LanguageTool/LanguageAgent pass for a sidecar tool (see docs/SCHEMA_SYNC.md)."""
    sidecar = {
        "endpoint": "http://localhost:8080",
        "access": "auto",
        "deployment_mode": "sidecar",
        "pod_selector": AGENT,
    }
    return proxy_inputs(api_url, **{**sidecar, **extra})


# -- paths ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/../../../../../../../api/v1/namespaces/kube-system/secrets",
        "/mcp/%2e%2e/%2E%2E/secrets",
        "/mcp/%2fsecrets",
        "//evil.example.com/mcp",
        "/mcp?watch=1",
        "/mcp#x",
        "/./mcp",
    ],
)
def test_proxy_url_refuses_paths_that_leave_the_prefix(path: str) -> None:
    with pytest.raises(ProxyError, match="mcp_path must not"):
        proxy_url("https://10.0.0.1:6443", PREFIX, path)


def test_proxy_url_keeps_the_api_server_path_prefix() -> None:
    # Rancher-style API servers live under a path; the URL must stay under that, too.
    host = "https://rancher.example.com/k8s/clusters/c-1/"
    url = proxy_url(host, service_prefix("apps", "memory", 8080), "/v1/mcp/")
    assert url == f"https://rancher.example.com/k8s/clusters/c-1{PREFIX}/v1/mcp/"


@pytest.mark.parametrize(
    ("namespace", "service", "port"),
    [("..", "memory", 8080), ("apps", "memory/../../secrets", 8080), ("apps", "memory", 0)],
)
def test_proxy_prefix_refuses_names_that_are_not_labels(
    namespace: str, service: str, port: int
) -> None:
    with pytest.raises(ProxyError, match=r"not a DNS label|not a port"):
        service_prefix(namespace, service, port)


def test_traversal_path_never_reaches_the_api_server(cluster: tuple[ApiServer, str]) -> None:
    """Even called without ``check`` (which refuses it first), the provider sends nothing."""
    api, api_url = cluster
    path = "/../../../../../../../api/v1/namespaces/kube-system/secrets"
    outs = ToolSchemaSyncProvider().create(proxy_inputs(api_url, mcp_path=path)).outs
    assert outs["phase"] == "Error"
    assert "mcp_path must not contain '.' or '..' segments" in outs["last_error"]
    assert api.calls == []


# -- service tools through the proxy ----------------------------------------------------------


def test_service_tool_syncs_through_the_service_proxy(cluster: tuple[ApiServer, str]) -> None:
    api, api_url = cluster
    host = EngineHost(ToolSchemaSyncProvider())
    inputs = proxy_inputs(api_url)
    host.up({**inputs, "kubeconfig": Secret(inputs["kubeconfig"])})
    assert host.plain_outputs()["phase"] == "Registered"
    assert f"POST {PREFIX}/mcp" in api.calls
    assert all(call.split()[1].startswith(PREFIX + "/") for call in api.calls)


# -- sidecar tools ----------------------------------------------------------------------------


def test_sidecar_tool_syncs_through_one_ready_agent_pod(cluster: tuple[ApiServer, str]) -> None:
    api, api_url = cluster
    host = EngineHost(ToolSchemaSyncProvider())
    inputs = sidecar_inputs(api_url)
    assert host.preview({**inputs, "kubeconfig": Secret(inputs["kubeconfig"])}).failures == []
    host.up({**inputs, "kubeconfig": Secret(inputs["kubeconfig"])})
    outs = host.plain_outputs()
    assert (outs["phase"], outs["last_error"]) == ("Registered", "")
    assert outs["tool_names"] == ["remember"]
    selector = "app.kubernetes.io%2Fcomponent%3Dagent%2Capp.kubernetes.io%2Fname%3Dhelper"
    assert f"GET /api/v1/namespaces/apps/pods?labelSelector={selector}" in api.calls
    assert "POST /api/v1/namespaces/apps/pods/helper-1:8080/proxy/mcp" in api.calls
    assert not any("helper-0" in call or "other-0" in call for call in api.calls)
    assert host.preview({**inputs, "kubeconfig": Secret(inputs["kubeconfig"])}).op == "same"
    assert host.refresh()["phase"] == "Registered"


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        (
            {"pod_selector": {"app.kubernetes.io/name": "nobody"}},
            "no ready pod in namespace apps matches app.kubernetes.io/name=nobody",
        ),
        ({"pod_selector": None}, "needs pod_selector (the labels of the agent pods"),
        ({"access": "direct"}, "listens on localhost inside its agent's pod"),
    ],
    ids=["no-ready-pod", "no-selector", "direct-access"],
)
def test_sidecar_that_cannot_be_synced_says_why(
    cluster: tuple[ApiServer, str], extra: dict[str, Any], reason: str
) -> None:
    _, api_url = cluster
    host = EngineHost(ToolSchemaSyncProvider())
    inputs = sidecar_inputs(api_url, **extra)
    host.up({**inputs, "kubeconfig": Secret(inputs["kubeconfig"])})
    outs = host.plain_outputs()
    assert outs["phase"] == "Error"
    assert reason in outs["last_error"]
    assert TOKEN not in host.state_text()


def test_sidecar_without_kubernetes_credentials_says_why(tmp_path: Any) -> None:
    outs = (
        ToolSchemaSyncProvider()
        .create(sidecar_inputs("https://127.0.0.1:9", kubeconfig=str(tmp_path / "missing")))
        .outs
    )
    assert outs["phase"] == "Error"
    assert "cannot load a kubeconfig for apiserver-proxy" in outs["last_error"]


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/../../../../api/v1/namespaces/kube-system/secrets", "'.' or '..' segments"),
        ("/mcp/%2E%2e/x", "encoded '.', '/' or '\\'"),
        ("/a//b", "'//'"),
        ("/mcp?token=x", "query string or fragment"),
        ("/mcp#frag", "query string or fragment"),
    ],
)
def test_tool_spec_refuses_a_path_that_could_leave_the_proxy(path: str, says: str) -> None:
    with pytest.raises(SpecError) as caught:
        parse_tool({"name": "memory", "image": "ghcr.io/acme/memory:1", "mcpPath": path})
    [problem] = caught.value.problems
    assert str(problem).startswith("mcpPath: must not")
    assert says in str(problem) and "write it as a plain path such as /mcp" in str(problem)
    assert "token=x" not in str(problem)


def test_tool_spec_normalises_percent_escapes_in_the_path() -> None:
    tool = parse_tool({"name": "memory", "image": "ghcr.io/acme/memory:1", "mcpPath": "/m%63p%3a"})
    assert tool.mcp_path == "/mcp%3A"


def test_direct_sync_refuses_a_traversal_path_by_name() -> None:
    props = {**proxy_inputs("https://127.0.0.1:9"), "access": "direct", "mcp_path": "/a/../b"}
    outs = ToolSchemaSyncProvider().create(props).outs
    assert outs["phase"] == "Error"
    assert outs["last_error"].startswith("schema sync mcp_path must not contain '.' or '..'")


def test_kubeconfig_credentials_are_known_for_redaction(tmp_path: Any) -> None:
    inline = kubeconfig("https://10.0.0.1:6443", TOKEN)
    path = tmp_path / "kubeconfig"
    path.write_text(inline)
    assert TOKEN in kubeconfig_secrets(inline)
    assert TOKEN in kubeconfig_secrets(str(path))
    assert kubeconfig_secrets(str(tmp_path / "missing")) == []
    assert "https://10.0.0.1:6443" not in kubeconfig_secrets(inline)  # only users: is secret
