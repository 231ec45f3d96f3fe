"""``tools[].overrides``: the agent's registry offers a tool under another name and
description (ToolHive's ``toolsOverride``) and maps calls back; schema sync and the tool's
objects see the original; a clash or a name an LLM API refuses is refused."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import yaml

from langop_infra.agent.runtime import connect_tool_registry, load_agent_servers
from langop_infra.components.cluster import LanguageCluster
from langop_infra.config.checks._validation import parse_cluster
from langop_infra.core.problems import SpecError
from langop_infra.mcp import ClientOptions
from langop_infra.offline._mock_engine import run_program
from tests.support.loopback import serve
from tests.support.manifests import Rendered
from tests.test_tool_scoping import two_tool_server

UNSAFE = "does not match the allowed pattern ^[a-zA-Z0-9_-]{1,64}$"
FAST = ClientOptions(timeout=5, deadline=10, connect_retries=0)
RENAME = {"remember": {"name": "store_note", "description": "Keep a note for later."}}


def cluster(ref: dict[str, Any]) -> dict[str, Any]:
    return {
        "namespace": "apps",
        "tools": [{"name": "memory", "image": "ghcr.io/acme/memory:1"}],
        "agents": [
            {
                "name": "helper",
                "image": "ghcr.io/acme/helper:1",
                "tools": [{"name": "memory", **ref}],
            }
        ],
    }


def problems(ref: dict[str, Any]) -> list[str]:
    with pytest.raises(SpecError) as caught:
        parse_cluster(cluster(ref))
    return [str(p) for p in caught.value.problems]


def test_config_yaml_carries_the_overrides() -> None:
    rendered = Rendered(run_program(lambda: LanguageCluster("c", cluster({"overrides": RENAME}))))
    config_map = rendered.find("ConfigMap", "helper-config", "apps")
    tools = yaml.safe_load(config_map["data"]["config.yaml"])["tools"]
    assert tools["memory"]["overrides"] == RENAME


def test_the_tools_own_objects_do_not_change() -> None:
    def objects(ref: dict[str, Any]) -> list[Any]:
        run = Rendered(run_program(lambda: LanguageCluster("c", cluster(ref))))
        found = [m for m in run.manifests if m["metadata"]["name"].startswith("memory")]
        # The objects, not the order the engine happened to register them in.
        return sorted(found, key=lambda m: (m["kind"], m["metadata"]["name"]))

    assert objects({"overrides": RENAME}) == objects({})


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ({"overrides": {"remember": {"name": "store note"}}}, UNSAFE),
        ({"overrides": {"remember": {"name": "x" * 65}}}, UNSAFE),
        (
            {"overrides": {"remember": {"name": "keep"}, "recall": {"name": "keep"}}},
            "'recall' and 'remember' would both be offered as 'keep'",
        ),
        (
            {"allowedTools": ["recall"], "overrides": {"remember": {"name": "keep"}}},
            "['remember'] are overridden but not in allowedTools",
        ),
        (
            {"allowedTools": ["recall", "remember"], "overrides": {"remember": {"name": "recall"}}},
            "'remember' would be offered as 'recall', which another tool is",
        ),
    ],
)
def test_a_clash_or_an_unsafe_name_is_refused(ref: dict[str, Any], expected: str) -> None:
    [message] = problems(ref)
    assert message.startswith("agents[0].tools[0]")
    assert expected in message


def registry_view(overrides: dict[str, Any]) -> tuple[dict[str, str], Any, list[str]]:
    async def connect(base: str) -> tuple[dict[str, str], Any, list[str]]:
        document = {
            "tools": {"memory": {"endpoint": base, "protocol": "mcp", "overrides": overrides}}
        }
        async with await connect_tool_registry(
            load_agent_servers(document, env={}), FAST
        ) as registry:
            described = {n: t.definition.get("description", "") for n, t in registry.tools.items()}
            call = await registry.call_tool("memory__store_note", {"content": "x"})
            return described, call, registry.warnings

    with serve(two_tool_server().streamable_http_app()) as base:
        return asyncio.run(connect(base))


def test_the_registry_offers_the_new_name_and_maps_calls_back() -> None:
    described, call, _ = registry_view(RENAME)
    assert described == {
        "memory__store_note": "Keep a note for later.",
        "memory__recall": "Retrieve information from long-term memory.",
    }
    assert not call.is_error
    assert call.content[0]["text"] == "Stored."  # remember answered


def test_at_run_time_a_name_another_tool_has_keeps_the_original() -> None:
    described, call, warnings = registry_view({"remember": {"name": "recall"}})
    assert sorted(described) == ["memory__recall", "memory__remember"]
    assert described["memory__recall"] == "Retrieve information from long-term memory."
    assert call.is_error  # no memory__store_note
    assert any("cannot be offered as 'recall'" in w for w in warnings)
