"""Specs as plain data: defaults, both spellings, and every bad input of issues 2 and 3."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from langop_infra.config._fields import SecretSource, parse_duration
from langop_infra.config._pod import Resources, Security
from langop_infra.config.agent import McpServerSpec, WebhookToolSpec
from langop_infra.config.checks._validation import parse_agent, parse_cluster, parse_tool
from langop_infra.config.cluster import Defaults
from langop_infra.core.problems import SpecError

MINIMAL_TOOL = {"name": "web-search", "image": "ghcr.io/acme/web-search:1.0.0"}
MINIMAL_AGENT = {"name": "helper", "image": "ghcr.io/acme/agent:2.0.0"}


def problems_of(parse: Any, data: Any) -> dict[str, str]:
    """Parse, expect a SpecError, and return its problems as ``{path: message}``."""
    with pytest.raises(SpecError) as caught:
        parse(data)
    error = caught.value
    assert isinstance(error, ValueError)
    paths = [p.path for p in error.problems]
    assert len(paths) == len(set(paths)), f"a path is reported twice: {paths}"
    return {p.path: p.message for p in error.problems}


def only_problem(parse: Any, data: Any) -> tuple[str, str]:
    problems = problems_of(parse, data)
    assert len(problems) == 1, problems
    return next(iter(problems.items()))


# --- tool defaults and spellings -------------------------------------------------------------


def test_tool_defaults() -> None:
    tool = parse_tool(MINIMAL_TOOL)
    assert tool.type == "mcp"
    assert tool.deployment_mode == "service"
    assert tool.port == 8080
    assert tool.mcp_path == "/mcp"
    assert tool.health_path == "/health"
    assert tool.replicas == 1
    assert tool.namespace is None
    assert tool.env == {}
    assert tool.secret_env == {}
    assert tool.automount_service_account_token is False
    # Unset resources and security fall back to the cluster defaults below.
    assert tool.resources is None
    assert tool.security is None


def test_resource_defaults_are_bounded_and_schedulable() -> None:
    resources = Defaults().resources
    assert resources.model_dump() == {
        "requests": {"cpu": "50m", "memory": "64Mi"},
        "limits": {"cpu": "500m", "memory": "256Mi"},
    }
    assert Resources() == resources


def test_security_defaults_meet_the_restricted_standard() -> None:
    security = Defaults().security
    assert security.model_dump() == {
        "run_as_user": 10001,
        "run_as_group": 10001,
        "fs_group": 10001,
        "run_as_non_root": True,
        "allow_privilege_escalation": False,
        "read_only_root_filesystem": True,
        "seccomp_profile": "RuntimeDefault",
        "drop_capabilities": ["ALL"],
        "add_capabilities": [],
    }
    assert Security() == security


CAMEL = {
    "name": "files",
    "namespace": "tools",
    "image": "ghcr.io/acme/files:1",
    "deploymentMode": "sidecar",
    "port": 9000,
    "mcpPath": "/rpc",
    "healthPath": "/healthz",
    "imagePullPolicy": "Always",
    "serviceAccountName": "files-sa",
    "secretEnv": {"TOKEN": {"secretKeyRef": {"name": "files-creds", "key": "token"}}},
    "env": {"LOG_LEVEL": "debug"},
    "resources": {"requests": {"cpu": "100m"}, "limits": {"memory": "1Gi"}},
}
SNAKE = {
    "name": "files",
    "namespace": "tools",
    "image": "ghcr.io/acme/files:1",
    "deployment_mode": "sidecar",
    "port": 9000,
    "mcp_path": "/rpc",
    "health_path": "/healthz",
    "image_pull_policy": "Always",
    "service_account_name": "files-sa",
    "secret_env": {"TOKEN": {"secret_key_ref": {"name": "files-creds", "key": "token"}}},
    "env": {"LOG_LEVEL": "debug"},
    "resources": {"requests": {"cpu": "100m"}, "limits": {"memory": "1Gi"}},
}


@pytest.mark.parametrize("data", [CAMEL, SNAKE], ids=["camelCase", "snake_case"])
def test_tool_accepts_camel_and_snake_case(data: dict[str, Any]) -> None:
    tool = parse_tool(data)
    assert tool.deployment_mode == "sidecar"
    assert tool.port == 9000
    assert tool.mcp_path == "/rpc"
    assert tool.health_path == "/healthz"
    assert tool.image_pull_policy == "Always"
    assert tool.service_account_name == "files-sa"
    token = tool.secret_env["TOKEN"]
    assert isinstance(token, SecretSource)
    assert (token.secret_key_ref.name, token.secret_key_ref.key) == ("files-creds", "token")
    assert tool.resources is not None
    assert tool.resources.requests.cpu == "100m"
    assert tool.resources.limits.memory == "1Gi"


def test_camel_and_snake_case_give_the_same_spec() -> None:
    assert parse_tool(CAMEL) == parse_tool(SNAKE)


def test_agent_accepts_camel_and_snake_case() -> None:
    camel = parse_agent(
        {
            **MINIMAL_AGENT,
            "mcpServers": [{"name": "gh", "url": "https://mcp.example.com"}],
            "webhookTools": [
                {
                    "name": "ticket",
                    "url": "https://hooks.example.com/t",
                    "inputSchema": {"type": "object"},
                    "rateLimit": {"requestsPerMinute": 60, "burst": 5},
                }
            ],
        }
    )
    snake = parse_agent(
        {
            **MINIMAL_AGENT,
            "mcp_servers": [{"name": "gh", "url": "https://mcp.example.com"}],
            "webhook_tools": [
                {
                    "name": "ticket",
                    "url": "https://hooks.example.com/t",
                    "input_schema": {"type": "object"},
                    "rate_limit": {"requests_per_minute": 60, "burst": 5},
                }
            ],
        }
    )
    assert camel == snake
    assert camel.webhook_tools[0].rate_limit is not None
    assert camel.webhook_tools[0].rate_limit.requests_per_minute == 60


def test_agent_and_reference_defaults() -> None:
    agent = parse_agent({**MINIMAL_AGENT, "tools": [{"name": "search"}]})
    ref = agent.tools[0]
    assert (ref.name, ref.namespace, ref.enabled, ref.required) == ("search", None, True, False)
    assert agent.replicas == 1
    assert agent.workspace_path == "/workspace"
    webhook = WebhookToolSpec(name="t", url="https://hooks.example.com")
    assert webhook.method == "POST"
    assert webhook.timeout == 30.0
    assert webhook.authentication.type == "none"
    assert webhook.input_schema == {"type": "object"}


# --- bad tool input ---------------------------------------------------------------------------


def test_every_bad_tool_input_is_reported_at_once() -> None:
    problems = problems_of(
        parse_tool,
        {
            "name": "Web-Search",
            "namespace": "n" * 64,
            "image": "",
            "port": 70000,
            "type": "grpc",
            "deploymentMode": "daemon",
            "replicas": -1,
            "imagePullPolicey": "Always",
        },
    )
    assert set(problems) == {
        "name",
        "namespace",
        "image",
        "port",
        "type",
        "deploymentMode",
        "replicas",
        "imagePullPolicey",
    }


def test_spec_error_message_lists_every_problem_with_its_path() -> None:
    with pytest.raises(ValueError) as caught:
        parse_tool({"name": "Web", "image": ""})
    text = str(caught.value)
    assert text.splitlines()[0] == "invalid configuration: 2 problems"
    assert "  - name: 'Web' is not a valid name" in text
    assert "  - image: set a container image reference" in text


@pytest.mark.parametrize(
    ("fields", "path", "fragment"),
    [
        ({"image": ""}, "image", "set a container image reference such as"),
        ({"image": "   "}, "image", "set a container image reference such as"),
        ({"name": "Web-Search"}, "name", "lower-case letters, digits and '-'"),
        ({"name": "w" * 64}, "name", "at most 63"),
        ({"name": "-web"}, "name", "starting and ending with a letter or digit"),
        ({"port": 0}, "port", "at least 1"),
        ({"port": 70000}, "port", "at most 65535"),
        ({"type": "grpc"}, "type", "'mcp'"),
        ({"deploymentMode": "daemon"}, "deploymentMode", "'service', 'sidecar'"),
        ({"replicas": -1}, "replicas", "at least 0"),
        ({"mcpPath": "mcp"}, "mcpPath", "start it with '/'"),
        ({"imagePullPolicy": "Sometimes"}, "imagePullPolicy", "'Always', 'IfNotPresent'"),
    ],
)
def test_bad_tool_input_names_the_fix(fields: dict[str, Any], path: str, fragment: str) -> None:
    where, message = only_problem(parse_tool, {**MINIMAL_TOOL, **fields})
    assert where == path
    assert fragment in message


def test_name_of_63_characters_is_accepted() -> None:
    assert parse_tool({**MINIMAL_TOOL, "name": "w" * 63}).name == "w" * 63


def test_port_bounds_are_inclusive() -> None:
    assert parse_tool({**MINIMAL_TOOL, "port": 1}).port == 1
    assert parse_tool({**MINIMAL_TOOL, "port": 65535}).port == 65535


def test_missing_image_is_reported() -> None:
    assert only_problem(parse_tool, {"name": "web"}) == (
        "image",
        "required field is missing; add it",
    )


def test_unknown_field_suggests_the_close_one() -> None:
    assert only_problem(parse_tool, {**MINIMAL_TOOL, "imagePullPolicey": "Always"}) == (
        "imagePullPolicey",
        "unknown field; did you mean 'imagePullPolicy'?",
    )
    assert only_problem(parse_tool, {**MINIMAL_TOOL, "deploymentMod": "sidecar"}) == (
        "deploymentMod",
        "unknown field; did you mean 'deploymentMode'?",
    )
    # Both spellings are accepted, so either is a correct hint.
    path, message = only_problem(parse_tool, {**MINIMAL_TOOL, "healthpath": "/h"})
    assert path == "healthpath"
    assert message in (
        "unknown field; did you mean 'healthPath'?",
        "unknown field; did you mean 'health_path'?",
    )


def test_unknown_field_far_from_any_says_remove_it() -> None:
    assert only_problem(parse_tool, {**MINIMAL_TOOL, "colour": "blue"}) == (
        "colour",
        "unknown field; remove it or fix its spelling",
    )


def test_unknown_nested_field_has_its_full_path() -> None:
    path, message = only_problem(
        parse_tool, {**MINIMAL_TOOL, "resources": {"requests": {"cpus": "1"}}}
    )
    assert path == "resources.requests.cpus"
    assert message == "unknown field; did you mean 'cpu'?"


def test_field_given_in_both_spellings_is_not_called_a_typo_of_itself() -> None:
    path, message = only_problem(
        parse_tool, {**MINIMAL_TOOL, "deploymentMode": "sidecar", "deployment_mode": "service"}
    )
    assert f"did you mean {path!r}" not in message


def test_env_and_secret_env_overlap_is_rejected() -> None:
    problems = problems_of(
        parse_tool, {**MINIMAL_TOOL, "env": {"TOKEN": "a"}, "secretEnv": {"TOKEN": "b"}}
    )
    assert list(problems.values()) == ["TOKEN set in both env and secretEnv; keep one"]


def test_env_and_secret_env_overlap_names_the_key_path() -> None:
    problems = problems_of(
        parse_tool, {**MINIMAL_TOOL, "env": {"TOKEN": "a"}, "secretEnv": {"TOKEN": "b"}}
    )
    assert set(problems) == {"secretEnv.TOKEN"}


def test_bad_tool_in_a_cluster_has_the_full_path() -> None:
    problems = problems_of(
        parse_cluster,
        {"namespace": "ai", "tools": [MINIMAL_TOOL, {**MINIMAL_TOOL, "name": "b", "port": 0}]},
    )
    assert set(problems) == {"tools[1].port"}


# --- durations ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30s", 30.0),
        ("1m", 60.0),
        ("500ms", 0.5),
        ("1h", 3600.0),
        ("1.5m", 90.0),
        ("45", 45.0),
        (5, 5.0),
        (2.5, 2.5),
    ],
)
def test_durations(text: Any, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["30x", "soon", "-1s", True, None])
def test_bad_durations(text: Any) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


def test_durations_in_specs() -> None:
    assert McpServerSpec(name="m", url="https://x.example", timeout="500ms").timeout == 0.5
    assert WebhookToolSpec(name="t", url="https://x.example", timeout="1m").timeout == 60.0
    assert WebhookToolSpec(name="t", url="https://x.example", timeout=45).timeout == 45.0


# --- agent specs ------------------------------------------------------------------------------


class SearchInput(BaseModel):
    query: str
    limit: int = 10


def test_pydantic_model_class_as_input_schema_becomes_its_json_schema() -> None:
    tool = WebhookToolSpec(name="search", url="https://hooks.example.com", input_schema=SearchInput)
    assert tool.input_schema == {
        "title": "SearchInput",
        "type": "object",
        "properties": {
            "query": {"title": "Query", "type": "string"},
            "limit": {"title": "Limit", "type": "integer", "default": 10},
        },
        "required": ["query"],
    }


def test_input_schema_as_a_json_string_is_parsed() -> None:
    tool = WebhookToolSpec(
        name="search", url="https://hooks.example.com", input_schema='{"type": "object"}'
    )
    assert tool.input_schema == {"type": "object"}


@pytest.mark.parametrize(
    "name",
    [
        "MCP_SERVERS",
        "AGENT_MCP_SERVERS",
        "AGENT_WEBHOOK_TOOLS",
        "AGENT_CONFIG_PATH",
        "ARK_MCP_GH_HEADER_X",
        "AGENT_WEBHOOK_T_AUTH",
    ],
)
def test_reserved_agent_env_names_are_rejected(name: str) -> None:
    path, message = only_problem(parse_agent, {**MINIMAL_AGENT, "env": {name: "x"}})
    assert path == f"env.{name}"
    assert message == f"{name} is set by langop-infra for every agent; rename your variable"


def test_reserved_agent_env_names_are_rejected_in_secret_env() -> None:
    problems = problems_of(parse_agent, {**MINIMAL_AGENT, "secretEnv": {"MCP_SERVERS": "x"}})
    assert set(problems) == {"secretEnv.MCP_SERVERS"}


def test_agent_env_and_secret_env_overlap_is_rejected() -> None:
    problems = problems_of(
        parse_agent, {**MINIMAL_AGENT, "env": {"KEY": "a", "B": "b"}, "secretEnv": {"KEY": "c"}}
    )
    assert list(problems.values()) == ["KEY set in both env and secretEnv; keep one"]


def test_disabled_reference_to_an_unknown_tool_is_no_error() -> None:
    cluster = parse_cluster(
        {
            "namespace": "ai",
            "agents": [{**MINIMAL_AGENT, "tools": [{"name": "ghost", "enabled": False}]}],
        }
    )
    assert cluster.agents[0].tools[0].name == "ghost"


def cluster_with(agent: dict[str, Any], tools: list[dict[str, Any]] | None = None) -> dict:
    return {"namespace": "ai", "tools": tools or [], "agents": [{**MINIMAL_AGENT, **agent}]}


SEARCH = {"name": "search", "image": "ghcr.io/acme/search:1"}
FILES = {"name": "files", "image": "ghcr.io/acme/files:1", "deploymentMode": "sidecar"}
SHELL = {"name": "shell", "image": "ghcr.io/acme/shell:1", "deploymentMode": "sidecar"}
SERVER = {"name": "github", "url": "https://mcp.example.com/mcp"}
WEBHOOK = {"name": "ticket", "url": "https://hooks.example.com/ticket"}


@pytest.mark.parametrize(
    ("agent", "tools", "path", "fragment"),
    [
        pytest.param(
            {"tools": [{"name": "search"}, {"name": "ghost"}]},
            [SEARCH],
            "agents[0].tools[1].name",
            "no tool named 'ghost' in this cluster (known: search); declare it under tools",
            id="undeclared-tool",
        ),
        pytest.param(
            {"tools": [{"name": "search"}, {"name": "search"}]},
            [SEARCH],
            "agents[0].tools[1]",
            "duplicate tool reference 'search'; reference each tool once "
            "(first at agents[0].tools[0])",
            id="duplicate-tool-reference",
        ),
        pytest.param(
            {"mcpServers": [SERVER, {**SERVER, "url": "https://other.example.com"}]},
            [],
            "agents[0].mcpServers[1].name",
            "duplicate MCP server name 'github'; names must be unique per agent",
            id="duplicate-mcp-server",
        ),
        pytest.param(
            {
                "mcpServers": [
                    {
                        **SERVER,
                        "headers": [
                            {
                                "name": "Authorization",
                                "value": "literal",
                                "valueFrom": {"secretKeyRef": {"name": "gh", "key": "token"}},
                            }
                        ],
                    }
                ]
            },
            [],
            "agents[0].mcpServers[0].headers[0]",
            "header 'Authorization' needs exactly one of value, valueFrom, secret "
            "(found value and valueFrom)",
            id="two-header-sources",
        ),
        pytest.param(
            {"mcpServers": [{**SERVER, "headers": [{"name": "X Api Key", "value": "v"}]}]},
            [],
            "agents[0].mcpServers[0].headers[0].name",
            "'X Api Key' is not a valid HTTP header name",
            id="header-not-a-token",
        ),
        pytest.param(
            {"mcpServers": [{**SERVER, "url": "ftp://mcp.example.com"}]},
            [],
            "agents[0].mcpServers[0].url",
            "'ftp://mcp.example.com' is not an http(s) URL: write it as https://",
            id="url-not-http",
        ),
        pytest.param(
            {"webhookTools": [{"name": "ticket", "description": "no url"}]},
            [],
            "agents[0].webhookTools[0].url",
            "required field is missing; add it",
            id="webhook-without-url",
        ),
        pytest.param(
            {"webhookTools": [{**WEBHOOK, "inputSchema": {"type": "text"}}]},
            [],
            "agents[0].webhookTools[0].inputSchema",
            "inputSchema is not valid JSON Schema draft-07 at type",
            id="schema-not-draft-07",
        ),
        pytest.param(
            {"webhookTools": [{**WEBHOOK, "inputSchema": "{type: object"}]},
            [],
            "agents[0].webhookTools[0].inputSchema",
            "inputSchema is not valid JSON",
            id="schema-unparseable-json",
        ),
        pytest.param(
            {"webhookTools": [{**WEBHOOK, "rateLimit": {"requestsPerMinute": 0, "burst": 5}}]},
            [],
            "agents[0].webhookTools[0].rateLimit.requestsPerMinute",
            "at least 1",
            id="rate-limit-too-low",
        ),
        pytest.param(
            {"webhookTools": [{**WEBHOOK, "rateLimit": {"requestsPerMinute": 10001, "burst": 5}}]},
            [],
            "agents[0].webhookTools[0].rateLimit.requestsPerMinute",
            "at most 10000",
            id="rate-limit-too-high",
        ),
        pytest.param(
            {"webhookTools": [{**WEBHOOK, "rateLimit": {"requestsPerMinute": 60, "burst": 1001}}]},
            [],
            "agents[0].webhookTools[0].rateLimit.burst",
            "at most 1000",
            id="burst-too-high",
        ),
        pytest.param(
            {"webhookTools": [{**WEBHOOK, "timeout": "11m"}]},
            [],
            "agents[0].webhookTools[0].timeout",
            "must be between 1s and 600s, got 660s",
            id="webhook-timeout-too-long",
        ),
        pytest.param(
            {"webhookTools": [{**WEBHOOK, "timeout": "500ms"}]},
            [],
            "agents[0].webhookTools[0].timeout",
            "must be between 1s and 600s, got 0.5s",
            id="webhook-timeout-too-short",
        ),
        pytest.param(
            {"mcpServers": [{**SERVER, "timeout": "20m"}]},
            [],
            "agents[0].mcpServers[0].timeout",
            "must be between 0.1s and 600s, got 1200s",
            id="mcp-timeout-too-long",
        ),
        pytest.param(
            {"tools": [{"name": "files"}, {"name": "shell"}]},
            [FILES, SHELL],
            "agents[0].tools[1]",
            "sidecar 'shell' uses port 8080, as does sidecar 'files' in the same pod; "
            "change one port",
            id="sidecar-port-clash",
        ),
    ],
)
def test_bad_agent_input_has_its_path_and_message(
    agent: dict[str, Any], tools: list[dict[str, Any]], path: str, fragment: str
) -> None:
    where, message = only_problem(parse_cluster, cluster_with(agent, tools))
    assert where == path
    assert fragment in message


def test_webhook_auth_without_secret_ref_is_rejected() -> None:
    path, message = only_problem(
        parse_agent,
        {**MINIMAL_AGENT, "webhookTools": [{**WEBHOOK, "authentication": {"type": "bearer"}}]},
    )
    assert path == "webhookTools[0].authentication"
    assert message == "authentication type 'bearer' needs secretRef {name, key}"


def test_header_without_any_source_is_rejected() -> None:
    path, message = only_problem(
        parse_agent, {**MINIMAL_AGENT, "mcpServers": [{**SERVER, "headers": [{"name": "X"}]}]}
    )
    assert path == "mcpServers[0].headers[0]"
    assert message.endswith("(found none)")


def test_all_bad_agent_inputs_in_one_cluster_are_reported_together() -> None:
    document = {
        "namespace": "ai",
        "tools": [SEARCH, FILES, SHELL],
        "agents": [
            {
                **MINIMAL_AGENT,
                "name": "wiring",
                "tools": [
                    {"name": "ghost"},
                    {"name": "search"},
                    {"name": "search"},
                    {"name": "files"},
                    {"name": "shell"},
                ],
                "mcpServers": [SERVER, {**SERVER, "url": "https://other.example.com"}],
            },
            {
                **MINIMAL_AGENT,
                "name": "fields",
                "mcpServers": [
                    {
                        "name": "broken",
                        "url": "ftp://mcp.example.com",
                        "timeout": "20m",
                        "headers": [
                            {"name": "X Bad", "value": "v"},
                            {"name": "Authorization", "value": "v", "secret": "s"},
                        ],
                    }
                ],
                "webhookTools": [
                    {"name": "nourl"},
                    {**WEBHOOK, "inputSchema": {"type": "text"}},
                    {**WEBHOOK, "name": "json", "inputSchema": "{oops"},
                    {
                        **WEBHOOK,
                        "name": "limits",
                        "timeout": "0s",
                        "rateLimit": {"requestsPerMinute": 0, "burst": 1001},
                    },
                ],
            },
        ],
    }
    problems = problems_of(parse_cluster, document)
    assert set(problems) == {
        "agents[0].tools[0].name",
        "agents[0].tools[2]",
        "agents[0].tools[4]",
        "agents[0].mcpServers[1].name",
        "agents[1].mcpServers[0].url",
        "agents[1].mcpServers[0].timeout",
        "agents[1].mcpServers[0].headers[0].name",
        "agents[1].mcpServers[0].headers[1]",
        "agents[1].webhookTools[0].url",
        "agents[1].webhookTools[1].inputSchema",
        "agents[1].webhookTools[2].inputSchema",
        "agents[1].webhookTools[3].timeout",
        "agents[1].webhookTools[3].rateLimit.requestsPerMinute",
        "agents[1].webhookTools[3].rateLimit.burst",
    }


def test_field_errors_do_not_hide_reference_errors_of_the_same_agent() -> None:
    problems = problems_of(
        parse_cluster,
        cluster_with(
            {
                "tools": [{"name": "ghost"}, {"name": "search"}, {"name": "search"}],
                "mcpServers": [{**SERVER, "url": "ftp://mcp.example.com"}],
            },
            [SEARCH],
        ),
    )
    assert set(problems) == {
        "agents[0].mcpServers[0].url",
        "agents[0].tools[0].name",
        "agents[0].tools[2]",
    }


def test_invalid_tool_is_not_also_reported_as_undeclared() -> None:
    problems = problems_of(
        parse_cluster,
        cluster_with({"tools": [{"name": "search"}]}, [{**SEARCH, "port": 0}]),
    )
    assert set(problems) == {"tools[0].port"}


def test_duplicate_reference_with_explicit_own_namespace_is_rejected() -> None:
    problems = problems_of(
        parse_cluster,
        cluster_with(
            {"tools": [{"name": "search"}, {"name": "search", "namespace": "ai"}]}, [SEARCH]
        ),
    )
    assert set(problems) == {"agents[0].tools[1]"}


def test_duplicate_sidecar_reference_is_reported_once() -> None:
    problems = problems_of(
        parse_cluster, cluster_with({"tools": [{"name": "files"}, {"name": "files"}]}, [FILES])
    )
    assert list(problems.values()) == [
        "duplicate tool reference 'files'; reference each tool once (first at agents[0].tools[0])"
    ]


def test_same_tool_name_in_two_namespaces_is_rejected() -> None:
    problems = problems_of(
        parse_agent,
        {
            **MINIMAL_AGENT,
            "tools": [{"name": "search", "namespace": "a"}, {"name": "search", "namespace": "b"}],
        },
    )
    assert any(path.startswith("tools[1]") for path in problems)


def test_webhook_auth_env_name_clash_is_rejected() -> None:
    def webhook(name: str, secret: str) -> dict[str, Any]:
        return {
            "name": name,
            "url": "https://hooks.example.com",
            "authentication": {"type": "bearer", "secretRef": {"name": secret, "key": "token"}},
        }

    problems = problems_of(
        parse_agent,
        {
            **MINIMAL_AGENT,
            "webhookTools": [webhook("create-ticket", "one"), webhook("create_ticket", "two")],
        },
    )
    assert any(path.startswith("webhookTools[1]") for path in problems)


@pytest.mark.parametrize("key", ["access.langop.io/memory", "langop.io/tool"])
def test_labels_langop_infra_sets_are_reserved(key: str) -> None:
    """An access label opens a tool's ingress policy: only a reference may set it."""
    problems = problems_of(parse_agent, {**MINIMAL_AGENT, "labels": {key: "true"}})
    [(path, message)] = problems.items()
    assert path == f"labels.{key}"
    assert "reserved" in message and "reference the tool" in message


# --- integers, mount paths, annotation sizes, header secrets -----------------------------------


def _int_fields() -> list[tuple[type[BaseModel], str]]:
    from typing import get_args

    from langop_infra.config._fields import Spec

    found, stack = [], [Spec]
    while stack:
        model = stack.pop()
        stack.extend(model.__subclasses__())
        for name, info in model.model_fields.items():
            if int in (info.annotation, *get_args(info.annotation)):
                found.append((model, name))
    return found


def test_every_integer_field_of_every_spec_refuses_true_and_false() -> None:
    """YAML's ``true`` would otherwise be 1 (``port: true`` is port 1)."""
    from typing import Annotated

    from pydantic import TypeAdapter

    fields = _int_fields()
    assert {name for _, name in fields} >= {"port", "replicas", "run_as_user", "burst"}
    for model, name in fields:
        info = model.model_fields[name]
        adapter = TypeAdapter(Annotated[(info.annotation, *info.metadata)])
        for value in (True, False):
            with pytest.raises(ValueError, match="expected an integer, got true/false"):
                adapter.validate_python(value)
        assert adapter.validate_python(10) == 10, (model.__name__, name)


@pytest.mark.parametrize(
    ("given", "kept"), [("/data//x/", "/data/x"), ("/data", "/data"), ("//srv", "/srv")]
)
def test_a_mount_path_is_kept_with_slashes_collapsed(given: str, kept: str) -> None:
    tool = parse_tool({**MINIMAL_TOOL, "persistence": {"mountPath": given}})
    assert tool.persistence is not None and tool.persistence.mount_path == kept
    agent = parse_agent({**MINIMAL_AGENT, "workspacePath": given})
    assert agent.workspace_path == kept


@pytest.mark.parametrize("path", ["/tmp/../etc/agent", "/data/./x", "/..", "/data/.."])
def test_a_mount_path_with_dot_segments_is_refused(path: str) -> None:
    assert only_problem(parse_agent, {**MINIMAL_AGENT, "workspacePath": path}) == (
        "workspacePath",
        f"{path!r} has '.' or '..' segments; write the path plainly, e.g. /data",
    )


@pytest.mark.parametrize("path", ["/", "//", "///"])
def test_no_spelling_of_the_root_is_a_mount_path(path: str) -> None:
    _, message = only_problem(parse_agent, {**MINIMAL_AGENT, "workspacePath": path})
    assert message == "cannot mount over the container's root '/'; pick a folder"


def test_annotations_are_counted_in_bytes_as_kubernetes_does() -> None:
    from langop_infra.config._fields import ANNOTATIONS_LIMIT, OWN_ANNOTATIONS_RESERVE

    room = ANNOTATIONS_LIMIT - OWN_ANNOTATIONS_RESERVE
    key = "example.com/a"
    fits = {key: "x" * (room - len(key))}
    assert parse_tool({**MINIMAL_TOOL, "annotations": fits}).annotations == fits
    # "é" is two bytes in UTF-8: one character fewer than the room is one byte too many
    over = {key: "é" + "x" * (room - len(key) - 1)}
    path, message = only_problem(parse_tool, {**MINIMAL_TOOL, "annotations": over})
    assert path == "annotations"
    assert message.startswith(f"annotations take {room + 1} bytes (keys and values)")


def test_a_header_secret_with_a_line_break_is_refused_without_echoing_it() -> None:
    server = {
        "name": "s",
        "url": "https://s.example.com/mcp",
        "headers": [{"name": "Authorization", "secret": "Bearer canary\r\nX-Evil: 1"}],
    }
    path, message = only_problem(parse_agent, {**MINIMAL_AGENT, "mcpServers": [server]})
    assert path == "mcpServers[0].headers[0].secret"
    assert "CR, LF" in message and "canary" not in message
