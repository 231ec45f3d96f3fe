"""The agent contract as plain data: endpoints, env var names, config.yaml (no Pulumi)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from langop_infra.config.agent import AgentSpec
from langop_infra.config.checks._validation import parse_agent, parse_tool
from langop_infra.core import _yaml_io as yaml_io
from langop_infra.manifests import _contract as contract
from langop_infra.manifests._contract import ToolTarget

# The issue-3 scenario: two service tools (one never ready), one sidecar tool, one disabled
# reference, an external MCP server with a literal and a Secret header, a webhook tool with
# bearer auth. Readiness is not an input of the contract: "fetch" runs 0 replicas.
SCENARIO = {
    "name": "helper",
    "namespace": "ai",
    "image": "ghcr.io/acme/agent:2.0.0",
    "tools": [
        {"name": "search", "required": True},
        {"name": "fetch"},
        {"name": "files"},
        {"name": "ghost", "enabled": False},
    ],
    "mcpServers": [
        {
            "name": "github",
            "url": "https://mcp.github.example.com/mcp",
            "timeout": "45s",
            "headers": [
                {"name": "X-Org", "value": "acme"},
                {
                    "name": "Authorization",
                    "valueFrom": {"secretKeyRef": {"name": "github-mcp", "key": "token"}},
                },
            ],
        }
    ],
    "webhookTools": [
        {
            "name": "create-ticket",
            "description": "Open a support ticket",
            "url": "https://hooks.example.com/tickets",
            "method": "PUT",
            "inputSchema": {
                "type": "object",
                "properties": {"title": {"type": "string"}},
                "required": ["title"],
            },
            "timeout": "1m",
            "authentication": {
                "type": "bearer",
                "secretRef": {"name": "ticket-api", "key": "token"},
            },
            "rateLimit": {"requestsPerMinute": 30, "burst": 5},
        },
        {"name": "retired", "url": "https://hooks.example.com/old", "enabled": False},
    ],
}
TARGETS = [
    ToolTarget("search", "ai", 8080, required=True),
    ToolTarget("fetch", "ai", 9000),
    ToolTarget("files", "ai", 8090, deployment_mode="sidecar"),
]
EXPECTED_CONFIG = {
    "tools": {
        # required: the built-in runtime's /readyz waits for it
        "search": {
            "endpoint": "http://search.ai.svc.cluster.local:8080",
            "protocol": "mcp",
            "required": True,
        },
        "fetch": {"endpoint": "http://fetch.ai.svc.cluster.local:9000", "protocol": "mcp"},
        "files": {"endpoint": "http://localhost:8090", "protocol": "mcp"},
    },
    "mcpServers": [
        {
            "name": "github",
            "url": "https://mcp.github.example.com/mcp",
            "timeoutSeconds": 45,
            "headers": [
                {"name": "X-Org", "value": "acme"},
                {"name": "Authorization", "valueFromEnv": "ARK_MCP_GITHUB_HEADER_AUTHORIZATION"},
            ],
        }
    ],
    "webhookTools": [
        {
            "name": "create-ticket",
            "description": "Open a support ticket",
            "url": "https://hooks.example.com/tickets",
            "method": "PUT",
            # A JSON string, as ark's runtime reads it; compact when given as an object.
            "inputSchema": '{"type":"object","properties":{"title":{"type":"string"}},'
            '"required":["title"]}',
            "timeoutSeconds": 60,
            "authentication": {
                "type": "bearer",
                "headerName": "Authorization",
                "valueFromEnv": "AGENT_WEBHOOK_CREATE_TICKET_AUTH",
            },
            "rateLimit": {"requestsPerMinute": 30, "burst": 5},
        }
    ],
}


def scenario() -> AgentSpec:
    return parse_agent(SCENARIO)


def test_tool_endpoint_service_and_sidecar() -> None:
    assert (
        contract.tool_endpoint("web-search", "tools", 8080)
        == "http://web-search.tools.svc.cluster.local:8080"
    )
    assert (
        contract.tool_endpoint("web-search", "tools", 9000, "service")
        == "http://web-search.tools.svc.cluster.local:9000"
    )
    assert contract.tool_endpoint("web-search", "tools", 8090, "sidecar") == (
        "http://localhost:8090"
    )


def test_tool_target_of_a_spec() -> None:
    spec = parse_tool(
        {"name": "fetch", "image": "i", "port": 9000, "mcpPath": "/rpc", "namespace": "web"}
    )
    target = ToolTarget.of(spec, "ignored", required=True)
    assert target == ToolTarget("fetch", "web", 9000, "/rpc", "service", True)
    assert target.endpoint == "http://fetch.web.svc.cluster.local:9000"
    assert target.mcp_url == "http://fetch.web.svc.cluster.local:9000/rpc"
    fallback = ToolTarget.of(parse_tool({"name": "fetch", "image": "i"}), "ai")
    assert fallback.namespace == "ai"
    sidecar = ToolTarget.of(
        parse_tool({"name": "files", "image": "i", "deploymentMode": "sidecar", "port": 7000}),
        "ai",
    )
    assert sidecar.mcp_url == "http://localhost:7000/mcp"


def test_header_env_name() -> None:
    assert (
        contract.header_env_name("web-search", "X-Api.Key") == "ARK_MCP_WEB_SEARCH_HEADER_X_API_KEY"
    )
    assert contract.header_env_name("gh", "authorization") == "ARK_MCP_GH_HEADER_AUTHORIZATION"


def test_webhook_auth_env_name() -> None:
    assert contract.webhook_auth_env_name("create-ticket") == "AGENT_WEBHOOK_CREATE_TICKET_AUTH"


def test_mcp_servers_env_keeps_declaration_order() -> None:
    targets = [
        ToolTarget("zeta", "ai", 8080),
        ToolTarget("alpha", "other", 9000),
        ToolTarget("mid", "ai", 8090, deployment_mode="sidecar"),
    ]
    assert contract.mcp_servers_env(targets) == (
        "http://zeta.ai.svc.cluster.local:8080,"
        "http://alpha.other.svc.cluster.local:9000,"
        "http://localhost:8090"
    )
    assert contract.mcp_servers_env([]) == ""


def test_agent_config_for_an_agent_with_tools_servers_and_webhooks() -> None:
    assert contract.agent_config(scenario(), TARGETS) == EXPECTED_CONFIG


def test_agent_config_of_an_agent_without_tools_leaves_tools_out() -> None:
    agent = parse_agent({"name": "bare", "image": "i"})
    assert contract.agent_config(agent, []) == {}
    names = [var.name for var in contract.agent_env(agent, [])[0]]
    assert "MCP_SERVERS" not in names


def test_mcp_path_key_only_when_not_default() -> None:
    agent = parse_agent({"name": "a", "image": "i"})
    doc = contract.agent_config(
        agent,
        [
            ToolTarget("plain", "ai", 8080, mcp_path="/mcp"),
            ToolTarget("custom", "ai", 8080, mcp_path="/rpc/v1"),
        ],
    )
    assert doc["tools"] == {
        "plain": {"endpoint": "http://plain.ai.svc.cluster.local:8080", "protocol": "mcp"},
        "custom": {
            "endpoint": "http://custom.ai.svc.cluster.local:8080",
            "protocol": "mcp",
            "mcpPath": "/rpc/v1",
        },
    }


def test_agent_mcp_servers() -> None:
    assert contract.agent_mcp_servers(scenario()) == [
        {"name": "github", "url": "https://mcp.github.example.com/mcp"}
    ]


def test_agent_env_names_values_and_secret_refs() -> None:
    agent = parse_agent(
        {
            **SCENARIO,
            "env": {"LOG_LEVEL": "info"},
            "secretEnv": {
                "OPENAI_API_KEY": "sk-canary",
                "DB_PASSWORD": {"secretKeyRef": {"name": "db", "key": "password"}},
            },
            "mcpServers": [
                {
                    **SCENARIO["mcpServers"][0],
                    "headers": [
                        *SCENARIO["mcpServers"][0]["headers"],
                        {"name": "X-Api-Key", "secret": "header-canary"},
                    ],
                }
            ],
        }
    )
    env, owned = contract.agent_env(agent, TARGETS)
    manifests = [var.manifest() for var in env]
    by_name = {m["name"]: m for m in manifests}
    assert [m["name"] for m in manifests] == [
        "LOG_LEVEL",
        "OPENAI_API_KEY",
        "DB_PASSWORD",
        "MCP_SERVERS",
        "AGENT_MCP_SERVERS",
        "AGENT_WEBHOOK_TOOLS",
        "AGENT_CONFIG_PATH",
        "ARK_MCP_GITHUB_HEADER_X_ORG",
        "ARK_MCP_GITHUB_HEADER_AUTHORIZATION",
        "ARK_MCP_GITHUB_HEADER_X_API_KEY",
        "AGENT_WEBHOOK_CREATE_TICKET_AUTH",
    ]
    assert by_name["LOG_LEVEL"] == {"name": "LOG_LEVEL", "value": "info"}
    assert by_name["MCP_SERVERS"]["value"] == (
        "http://search.ai.svc.cluster.local:8080,"
        "http://fetch.ai.svc.cluster.local:9000,"
        "http://localhost:8090"
    )
    assert json.loads(by_name["AGENT_MCP_SERVERS"]["value"]) == [
        {"name": "github", "url": "https://mcp.github.example.com/mcp"}
    ]
    assert json.loads(by_name["AGENT_WEBHOOK_TOOLS"]["value"]) == EXPECTED_CONFIG["webhookTools"]
    assert by_name["AGENT_CONFIG_PATH"]["value"] == "/etc/agent/config.yaml"
    assert by_name["ARK_MCP_GITHUB_HEADER_X_ORG"] == {
        "name": "ARK_MCP_GITHUB_HEADER_X_ORG",
        "value": "acme",
    }

    def ref(name: str) -> dict:
        return by_name[name]["valueFrom"]["secretKeyRef"]

    assert ref("OPENAI_API_KEY") == {"name": "helper-env", "key": "OPENAI_API_KEY"}
    assert ref("DB_PASSWORD") == {"name": "db", "key": "password"}
    assert ref("ARK_MCP_GITHUB_HEADER_AUTHORIZATION") == {"name": "github-mcp", "key": "token"}
    assert ref("ARK_MCP_GITHUB_HEADER_X_API_KEY") == {
        "name": "helper-env",
        "key": "ARK_MCP_GITHUB_HEADER_X_API_KEY",
    }
    assert ref("AGENT_WEBHOOK_CREATE_TICKET_AUTH") == {"name": "ticket-api", "key": "token"}
    # Only the literal secrets go into the agent's own Secret, keyed by env var name.
    assert owned == {
        "OPENAI_API_KEY": "sk-canary",
        "ARK_MCP_GITHUB_HEADER_X_API_KEY": "header-canary",
    }
    # No secret value is ever a literal env value.
    literals = " ".join(m.get("value") or "" for m in manifests)
    assert "sk-canary" not in literals
    assert "header-canary" not in literals
    assert "header-canary" not in contract.config_yaml(contract.agent_config(agent, TARGETS))
    assert contract.secret_names_used(env) == ["db", "github-mcp", "helper-env", "ticket-api"]


def test_disabled_webhook_tool_is_absent_everywhere() -> None:
    env, _ = contract.agent_env(scenario(), TARGETS)
    text = json.dumps([v.manifest() for v in env])
    assert "retired" not in text
    assert "hooks.example.com/old" not in text
    assert [t["name"] for t in contract.agent_config(scenario(), TARGETS)["webhookTools"]] == [
        "create-ticket"
    ]


def test_workload_env_of_a_tool() -> None:
    env, owned = contract.workload_env(
        "web",
        {"A": "1"},
        {
            "B": "canary",
            "C": parse_tool(
                {
                    "name": "x",
                    "image": "i",
                    "secretEnv": {"C": {"secretKeyRef": {"name": "s", "key": "k"}}},
                }
            ).secret_env["C"],
        },
    )
    assert [v.manifest() for v in env] == [
        {"name": "A", "value": "1"},
        {"name": "B", "valueFrom": {"secretKeyRef": {"name": "web-env", "key": "B"}}},
        {"name": "C", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
    ]
    assert owned == {"B": "canary"}


def test_config_yaml_is_stable_and_ordered() -> None:
    document = contract.agent_config(scenario(), TARGETS)
    first = contract.config_yaml(document)
    assert first == contract.config_yaml(contract.agent_config(scenario(), TARGETS))
    assert yaml.safe_load(first) == EXPECTED_CONFIG
    # Declaration order, not alphabetical: tools first, then search before fetch.
    assert first.startswith(
        "tools:\n"
        "  search:\n"
        "    endpoint: http://search.ai.svc.cluster.local:8080\n"
        "    protocol: mcp\n"
        "    required: true\n"
        "  fetch:\n"
    )
    assert first.index("mcpServers:") < first.index("webhookTools:")


def test_config_yaml_exact_text() -> None:
    doc = {"tools": {"b": {"endpoint": "http://localhost:1", "protocol": "mcp"}}, "a": [1]}
    assert contract.config_yaml(doc) == (
        "tools:\n  b:\n    endpoint: http://localhost:1\n    protocol: mcp\na:\n- 1\n"
    )


def test_labels() -> None:
    tool = parse_tool({"name": "search", "image": "i", "labels": {"team": "ml"}})
    assert contract.tool_labels(tool, "shop") == {
        "team": "ml",
        "app.kubernetes.io/name": "i",  # the image's name; no tag, so no version
        "app.kubernetes.io/instance": "search",
        "app.kubernetes.io/component": "tool",
        "app.kubernetes.io/part-of": "shop",
        "app.kubernetes.io/managed-by": "langop-infra",
        "langop.io/tool": "search",
    }
    agent = parse_agent({"name": "helper", "image": "i"})
    targets = [
        ToolTarget("search", "ai"),
        ToolTarget("remote", "other"),
        ToolTarget("files", "ai", deployment_mode="sidecar"),
    ]
    assert contract.agent_labels(agent, "shop", targets, "ai") == {
        "app.kubernetes.io/name": "i",
        "app.kubernetes.io/instance": "helper",
        "app.kubernetes.io/component": "agent",
        "app.kubernetes.io/part-of": "shop",
        "app.kubernetes.io/managed-by": "langop-infra",
        "langop.io/agent": "helper",
        "access.langop.io/search": "true",
    }


@pytest.mark.parametrize(
    ("image", "name", "version"),
    [
        ("ghcr.io/acme/memory-mcp:1.4.0", "memory-mcp", "1.4.0"),
        ("ghcr.io/acme/memory-mcp:main@sha256:" + "a" * 64, "memory-mcp", "main"),
        ("registry.local:5000/team/files", "files", ""),
        ("ghcr.io/berriai/litellm-non_root:main-stable", "litellm-non_root", "main-stable"),
    ],
)
def test_the_application_name_and_version_come_from_the_image(
    image: str, name: str, version: str
) -> None:
    assert contract.image_name_and_version(image) == (name, version)
    labels = contract.recommended_labels("memory", "tool", "shop", image)
    assert labels["app.kubernetes.io/name"] == name
    assert labels["app.kubernetes.io/instance"] == "memory"
    assert labels.get("app.kubernetes.io/version", "") == version


def test_without_an_image_the_name_is_the_component_kind() -> None:
    labels = contract.recommended_labels("research", "cluster", "research")
    assert labels["app.kubernetes.io/name"] == "language-cluster"
    assert "app.kubernetes.io/version" not in labels


def test_checksum_changes_with_content() -> None:
    assert contract.checksum("a") == contract.checksum("a")
    assert contract.checksum("a") != contract.checksum("b")
    assert contract.checksum("ab", "c") != contract.checksum("a", "bc")


def test_yaml_bytes_do_not_depend_on_libyaml() -> None:
    """The config checksum hashes config.yaml's bytes: both PyYAML dumpers must agree."""
    if not getattr(yaml, "__with_libyaml__", False):
        pytest.skip("PyYAML was built without libyaml")
    agent = parse_agent(
        {
            "name": "helper",
            "image": "i:1",
            "webhookTools": [
                {
                    "name": "long",
                    "url": "https://x.example.com/" + "p" * 1500,
                    "description": "word " * 200 + "\u2028 and \u0085",
                }
            ],
        }
    )
    document = contract.agent_config(agent, [])
    ours = contract.config_yaml(document)
    assert yaml_io.DUMPER is yaml.CSafeDumper and yaml_io.LOADER is yaml.CSafeLoader
    theirs = yaml.dump(
        document,
        Dumper=yaml.SafeDumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=yaml_io.NO_FOLD,
    )
    assert ours == theirs
    assert yaml.safe_load(ours) == document


def test_a_render_has_the_recommended_labels_and_no_empty_annotations() -> None:
    """Every object of the dev stack: name, instance, component, part-of and managed-by (and
    version wherever the image has a tag); no ``annotations: {}`` anywhere."""
    from tests.support.user_project import run_cli

    code, out, _ = run_cli(Path(__file__).resolve().parents[1], "render", "--stack", "dev")
    assert code == 0
    assert "annotations: {}" not in out
    for document in (d for d in yaml.safe_load_all(out) if d):
        labels = document["metadata"]["labels"]
        for key in ("name", "instance", "component", "part-of", "managed-by"):
            assert f"app.kubernetes.io/{key}" in labels, (document["kind"], key)
        assert labels["app.kubernetes.io/managed-by"] == "langop-infra"
