"""``config/_managed_memory.py``: the cluster with its managed memories as tools, and that
cluster's paths mapped back to what the user wrote."""

from __future__ import annotations

from langop_infra.config._managed_memory import user_path, with_managed_memories
from langop_infra.config.cluster import ClusterSpec


def cluster() -> ClusterSpec:
    return ClusterSpec.model_validate(
        {
            "namespace": "apps",
            "tools": [{"name": "search", "image": "ghcr.io/acme/search:1"}],
            "memories": [
                {"name": "far", "type": "external", "address": {"value": "http://m.example/mcp"}},
                {"name": "notes", "type": "managed"},
                {"name": "log", "type": "managed"},
            ],
            "agents": [
                {"name": "a", "image": "ghcr.io/acme/a:1", "tools": [{"name": "search"}]},
                {"name": "b", "image": "ghcr.io/acme/b:1", "memory": {"name": "log"}},
            ],
        }
    )


def test_each_managed_memory_becomes_a_tool_its_agents_reference() -> None:
    spec = cluster()
    deployed = with_managed_memories(spec)
    assert [t.name for t in deployed.tools] == ["search", "notes", "log"]
    assert [r.name for r in deployed.agents[0].tools] == ["search"]
    assert [(r.name, r.namespace) for r in deployed.agents[1].tools] == [("log", "apps")]
    assert [t.name for t in spec.tools] == ["search"]  # the document is left as written


def test_paths_of_the_memories_tools_are_the_memories() -> None:
    spec = cluster()
    assert user_path(spec, "tools[0].image") == "tools[0].image"
    assert user_path(spec, "tools[1]") == "memories[1]"
    assert user_path(spec, "tools[2].image") == "memories[2].image"
    assert user_path(spec, "tools[2].schemaSync") == "memories[2]"
    assert user_path(spec, "tools[1].image.tag") == "memories[1]"


def test_paths_of_an_agents_added_reference_are_its_memory() -> None:
    spec = cluster()
    assert user_path(spec, "agents[1].tools[0]") == "agents[1].memory"
    assert user_path(spec, "agents[1].tools[0].name") == "agents[1].memory"
    assert user_path(spec, "agents[0].tools[0].name") == "agents[0].tools[0].name"
    assert user_path(spec, "agents[0].image") == "agents[0].image"
    assert user_path(spec, "agents[7].tools[0]") == "agents[7].tools[0]"


def test_other_paths_are_left_alone() -> None:
    spec = cluster()
    for path in ("", "namespace", "memories[0]", "defaults.egress", "models[0].name"):
        assert user_path(spec, path) == path
