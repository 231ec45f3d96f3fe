"""Stack side of language-operator's MCP client: ``mcpServers[]`` with ``transport: url``
and ``autoConnect``, as the
agent runtime reads them back; ``${VAR}`` that nothing in the pod sets draws a warning."""

from __future__ import annotations

import json

import yaml

from langop_infra.agent.runtime import load_agent_servers
from langop_infra.config.agent import AgentSpec
from langop_infra.config.checks._advice import agent_warnings
from langop_infra.offline._mock_engine import run_program
from langop_infra.program.stack import main
from tests.support.manifests import Rendered, validate_manifests

SERVERS = [
    {"name": "found", "url": "https://tools.example.com/.well-known/mcp", "transport": "url"},
    {"name": "lazy", "url": "https://lazy.example.com/mcp", "autoConnect": False},
    {"name": "plain", "url": "https://plain.example.com/mcp"},
]
AGENT = {"name": "helper", "image": "ghcr.io/acme/helper:1.0.0", "mcpServers": SERVERS}


def test_transport_and_auto_connect_reach_the_agent_config() -> None:
    values = {
        "langop-infra:namespace": "apps",
        "langop-infra:agents": json.dumps([AGENT]),
    }
    rendered = Rendered(run_program(main, config=values))
    validate_manifests(rendered.manifests)
    document = yaml.safe_load(rendered.find("ConfigMap", "helper-config")["data"]["config.yaml"])
    assert document["mcpServers"] == [
        {"name": "found", "url": SERVERS[0]["url"], "transport": "url"},
        {"name": "lazy", "url": SERVERS[1]["url"], "autoConnect": False},
        {"name": "plain", "url": SERVERS[2]["url"]},  # defaults leave no trace
    ]
    found, lazy, plain = load_agent_servers(document, env={}).servers
    assert (found.transport, found.auto_connect) == ("url", True)
    assert (lazy.transport, lazy.auto_connect) == ("http", False)
    assert (plain.transport, plain.auto_connect) == ("http", True)


def test_a_variable_nothing_sets_draws_a_warning() -> None:
    agent = AgentSpec.model_validate(
        {
            **AGENT,
            "env": {"REGION": "eu"},
            "secretEnv": {"TOKEN": {"secretKeyRef": {"name": "t", "key": "k"}}},
            "envFrom": [{"configMapRef": {"name": "extra"}, "prefix": "EXTRA_"}],
            "mcpServers": [
                {
                    "name": "s",
                    "url": "https://${REGION}.${MCP_HOST}.example.com/${PATH_PART:-mcp}",
                    "headers": [
                        {"name": "Authorization", "value": "Bearer ${TOKEN}"},
                        {"name": "X-Team", "value": "${TEAM_NAME}"},
                        {"name": "X-Extra", "value": "${EXTRA_FLAG}"},
                    ],
                }
            ],
        }
    )
    found = [str(w) for w in agent_warnings(agent, "agents[0]")]
    unset = [w for w in found if "is not set by" in w]
    assert unset == [
        "agents[0].mcpServers[0].url: ${MCP_HOST} is not set by the agent's env, secretEnv or "
        "envFrom, so the agent will skip this server; set MCP_HOST or write "
        "${MCP_HOST:-default}",
        "agents[0].mcpServers[0].headers[1].value: ${TEAM_NAME} is not set by the agent's env, "
        "secretEnv or envFrom, so the agent will skip this server; set TEAM_NAME or write "
        "${TEAM_NAME:-default}",
    ]
