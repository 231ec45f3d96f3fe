"""The edges of the stack config (#36 §5): what validate refuses or warns about before
anything is deployed."""

from __future__ import annotations

from typing import Any

import pytest

from langop_infra.config.checks._validation import parse_cluster
from langop_infra.core.problems import SpecError

AUTH = {
    "clientId": "deployer",
    "issuer": "https://auth.example.com",
    "clientSecret": {"secretKeyRef": {"name": "sync-oauth", "key": "secret"}},
}


def cluster(**sync: Any) -> dict[str, Any]:
    return {
        "namespace": "research",
        "secrets": {"sync-oauth": {"secret": "s3cret-canary"}},
        "tools": [
            {
                "name": "memory",
                "image": "ghcr.io/acme/memory:1",
                "schemaSync": {"auth": AUTH, **sync},
            }
        ],
    }


@pytest.mark.parametrize("sync", [{}, {"access": "auto"}, {"access": "apiserver-proxy"}])
def test_sync_auth_through_the_api_server_proxy_is_refused_and_says_why(
    sync: dict[str, Any],
) -> None:
    with pytest.raises(SpecError) as caught:
        parse_cluster(cluster(**sync))
    [problem] = [p for p in caught.value.problems if p.path == "tools[0].schemaSync.auth"]
    assert "syncs through the API server proxy" in problem.message
    assert "Authorization header carries the kubeconfig's credential" in problem.message
    assert "schemaSync.access: direct" in problem.message
    assert "s3cret-canary" not in str(caught.value)


@pytest.mark.parametrize(
    "sync",
    [{"access": "direct"}, {"access": "auto", "syncUrl": "https://memory.example.com/mcp"}],
)
def test_sync_auth_on_a_direct_path_is_fine(sync: dict[str, Any]) -> None:
    assert parse_cluster(cluster(**sync)).tools[0].schema_sync.auth is not None


def test_a_stack_url_variable_is_declared_for_the_agent_that_expands_it() -> None:
    """The stack's own ``${VAR}`` in an MCP server URL still works: config.yaml declares it
    in the entry's env, the only place the agent takes URL variables from."""
    from langop_infra.agent.runtime import load_agent_servers
    from langop_infra.config.checks._validation import parse_agent
    from langop_infra.manifests._contract import agent_config

    agent = parse_agent(
        {
            "name": "helper",
            "image": "ghcr.io/acme/helper:1",
            "env": {"TEAM_HOST": "tools.example.com"},
            "mcpServers": [{"name": "team", "url": "https://${TEAM_HOST}/mcp?region=${R:-eu}"}],
        }
    )
    document = agent_config(agent, [])
    assert document["mcpServers"][0]["env"] == {"R": "${R:-eu}", "TEAM_HOST": "${TEAM_HOST}"}
    loaded = load_agent_servers(document, env={"TEAM_HOST": "tools.example.com"})
    assert [s.url for s in loaded.servers] == ["https://tools.example.com/mcp?region=eu"]


def risky_cluster() -> dict[str, Any]:
    return {
        "namespace": "research",
        "models": [
            {
                "name": "local",
                "provider": "openai-compatible",
                "modelName": "llama",
                "endpoint": "http://169.254.169.254/latest/v1?api_key=sk-canary-1",
            }
        ],
        "agents": [
            {
                "name": "helper",
                "image": "ghcr.io/acme/helper:1",
                "mcpServers": [
                    {"name": "k8s", "url": "https://kubernetes.default.svc/api/v1/mcp"},
                    {"name": "q", "url": "https://tools.example.com/mcp?token=tok-canary-2&x=1"},
                ],
                "webhookTools": [
                    {
                        "name": "weather",
                        "url": "https://api.example.com/w?appid=1&key=key-canary-3",
                        "description": "Weather",
                    },
                    {"name": "meta", "url": "http://[fe80::1]/x", "description": "Link-local"},
                ],
            }
        ],
    }


def test_validate_warns_on_query_credentials_and_risky_hosts_without_quoting_values() -> None:
    from langop_infra.config.checks._advice import cluster_warnings

    warnings = {
        (w.path, w.kind): w.message for w in cluster_warnings(parse_cluster(risky_cluster()))
    }
    query = {path for path, kind in warnings if kind == "langop_query_credential"}
    risky = {path for path, kind in warnings if kind == "langop_risky_endpoint"}
    assert query == {
        "models[0].endpoint",
        "agents[0].mcpServers[1].url",
        "agents[0].webhookTools[0].url",
    }
    assert risky == {
        "models[0].endpoint",
        "agents[0].mcpServers[0].url",
        "agents[0].webhookTools[1].url",
    }
    text = " ".join(warnings.values())
    assert "canary" not in text
    assert "apiKey: {secretKeyRef" in warnings[("models[0].endpoint", "langop_query_credential")]
    assert "metadata service" in warnings[("models[0].endpoint", "langop_risky_endpoint")]
    assert "API server" in warnings[("agents[0].mcpServers[0].url", "langop_risky_endpoint")]


def test_peers_and_memories_are_judged_on_the_address_they_name() -> None:
    """Issue 49 §6: A2A peer URLs and memory addresses were never looked at, and a
    numeric or mapped form of the metadata address passed (14 silent of 21)."""
    from langop_infra.config.checks._advice import cluster_warnings

    cluster = {
        "namespace": "research",
        "memories": [
            {
                "name": "notes",
                "type": "external",
                "address": {"value": "http://[::ffff:169.254.169.254]/mcp?key=mem-canary-1"},
            }
        ],
        "agents": [
            {
                "name": "helper",
                "image": "ghcr.io/acme/helper:1",
                "agents": [
                    {"name": "far", "url": "http://0xa9fea9fe/rpc"},
                    {
                        "name": "near",
                        "url": "https://peer.example.com/rpc",
                        "cardUrl": "http://localhost:10250/card",
                    },
                ],
                "mcpServers": [{"name": "side", "url": "http://localhost:8080/mcp"}],
            }
        ],
    }
    found = cluster_warnings(parse_cluster(cluster))
    warnings = {(w.path, w.kind): w.message for w in found if w.kind != "langop_unpinned_image"}
    assert sorted(warnings) == [
        ("agents[0].agents[0].url", "langop_risky_endpoint"),
        ("agents[0].agents[1].cardUrl", "langop_risky_endpoint"),
        ("memories[0].address.value", "langop_query_credential"),
        ("memories[0].address.value", "langop_risky_endpoint"),
    ]
    assert "169.254.169.254" in warnings[("agents[0].agents[0].url", "langop_risky_endpoint")]
    assert "the kubelet's API" in warnings[("agents[0].agents[1].cardUrl", "langop_risky_endpoint")]
    assert (
        "address.value reaches AGENT_MEMORY_ENDPOINT as written"
        in warnings[("memories[0].address.value", "langop_query_credential")]
    )
    assert "canary" not in " ".join(warnings.values())


def test_the_api_server_is_known_by_its_address_too() -> None:
    """Issue 49 §6: the API server by its ClusterIP or on its port passed silently; its
    names only were known. The first address of ``defaults.serviceCidr`` is the cluster's
    own ClusterIP; without it, where common distributions put theirs."""
    from langop_infra.config.checks._advice import cluster_warnings

    urls = {
        "kubeadm": "https://10.96.0.1/api/v1/namespaces",
        "hex": "https://0x0a600001/api",
        "mapped": "https://[::ffff:10.96.0.1]:443/api",
        "own": "https://10.8.0.1/api",
        "domain": "https://kubernetes.default.svc.corp.example/api",
        "port": "https://203.0.113.5:6443/api",
        "elsewhere": "https://10.8.0.2/mcp",
    }
    cluster = {
        "namespace": "research",
        "defaults": {"serviceCidr": "10.8.0.0/16"},
        "agents": [
            {
                "name": "helper",
                "image": "ghcr.io/acme/helper:1",
                "mcpServers": [{"name": name, "url": url} for name, url in urls.items()],
            }
        ],
    }
    found = cluster_warnings(parse_cluster(cluster))
    said = {
        w.path.split("[")[2].split("]")[0]: w.message.split(";")[0]
        for w in found
        if w.kind == "langop_risky_endpoint"
    }
    assert said == {
        "0": "10.96.0.1 is the Kubernetes API server's ClusterIP in kubeadm, kind and minikube "
        "clusters",
        "1": "0x0a600001 (10.96.0.1) is the Kubernetes API server's ClusterIP in kubeadm, kind "
        "and minikube clusters",
        "2": "::ffff:10.96.0.1 (10.96.0.1) is the Kubernetes API server's ClusterIP in kubeadm, "
        "kind and minikube clusters",
        "3": "10.8.0.1 is the Kubernetes API server's ClusterIP (defaults.serviceCidr 10.8.0.0/16)",
        "4": "kubernetes.default.svc.corp.example is the Kubernetes API server",
        "5": "203.0.113.5:6443 is the Kubernetes API server's port",
    }
