"""A stack with a scheduled agent, two A2A peers in different namespaces and a managed memory:
it renders, every object passes kubernetes-validate --strict, and the NetworkPolicies let each
caller reach exactly its callees and tools (issue 38)."""

from __future__ import annotations

import json
from typing import Any, cast

import pytest
import yaml

from langop_infra.components.cluster import LanguageCluster
from langop_infra.netpol import Network, Pod
from langop_infra.offline._mock_engine import run_program
from tests.support.manifests import validate_manifests

PIN = "@sha256:" + "a" * 64
WRITE = {"id": "write", "name": "Write", "description": "Writes prose.", "tags": ["writing"]}
SEARCH = {"name": "search", "image": "ghcr.io/acme/search:1" + PIN}


def document(egress: str = "restricted") -> dict[str, Any]:
    return {
        "namespace": "apps",
        "defaults": {"egress": egress},
        "tools": [SEARCH],
        "memories": [{"name": "notes", "type": "managed"}],
        "agents": [
            {
                "name": "planner",
                "image": "ghcr.io/acme/planner:1" + PIN,
                "tools": [{"name": "search"}],
                "memory": {"name": "notes"},
                "a2a": {
                    "skills": [
                        {
                            "id": "plan",
                            "name": "Plan",
                            "description": "Plans research.",
                            "tags": ["planning"],
                        }
                    ]
                },
                "agents": [{"name": "writer", "namespace": "docs"}],
            },
            {
                "name": "writer",
                "namespace": "docs",
                "image": "ghcr.io/acme/writer:1" + PIN,
                "a2a": {"port": 9000, "path": "/a2a", "skills": [WRITE]},
                # a cycle: peers may call each other
                "agents": [{"name": "planner", "namespace": "apps"}],
            },
            {
                "name": "nightly",
                "image": "ghcr.io/acme/nightly:1" + PIN,
                "schedule": {"cron": "0 2 * * *", "timeZone": "Europe/Paris", "input": "Digest"},
                "tools": [{"name": "search"}],
                "agents": [{"name": "planner"}],
            },
            {"name": "loner", "image": "ghcr.io/acme/loner:1" + PIN},
        ],
    }


@pytest.fixture(scope="module")
def rendered() -> list[dict[str, Any]]:
    return run_program(lambda: LanguageCluster("c", document())).manifests()


def find(manifests: list[dict[str, Any]], kind: str, name: str, ns: str) -> dict[str, Any]:
    found = [
        m
        for m in manifests
        if m["kind"] == kind
        and m["metadata"]["name"] == name
        and m["metadata"].get("namespace") == ns
    ]
    assert len(found) == 1, f"{kind} {ns}/{name}: {len(found)}"
    return found[0]


def config_of(manifests: list[dict[str, Any]], agent: str, ns: str) -> dict[str, Any]:
    return yaml.safe_load(
        find(manifests, "ConfigMap", f"{agent}-config", ns)["data"]["config.yaml"]
    )


def pods(manifests: list[dict[str, Any]]) -> dict[str, Pod]:
    """Every workload's pod, a scheduled agent's Job pod included."""
    out: dict[str, Pod] = {}
    for m in manifests:
        if m["kind"] == "Deployment":
            template = m["spec"]["template"]
        elif m["kind"] == "CronJob":
            template = m["spec"]["jobTemplate"]["spec"]["template"]
        else:
            continue
        name = m["metadata"]["name"]
        out[name] = Pod(m["metadata"]["namespace"], template["metadata"]["labels"], name)
    return out


def test_the_stack_renders_and_every_object_is_valid(rendered: list[dict[str, Any]]) -> None:
    validate_manifests(rendered)
    kinds = {
        (m["kind"], m["metadata"].get("namespace", ""), m["metadata"]["name"]) for m in rendered
    }
    assert ("CronJob", "apps", "nightly") in kinds
    assert ("Deployment", "apps", "nightly") not in kinds
    assert ("Service", "apps", "nightly") not in kinds
    assert ("Deployment", "apps", "notes") in kinds  # the managed memory's server
    assert [k for k in kinds if k[0] == "PersistentVolumeClaim"] == [
        ("PersistentVolumeClaim", "apps", "notes-data")
    ]
    assert ("ConfigMap", "apps", "planner-a2a-card") in kinds
    assert ("ConfigMap", "docs", "writer-a2a-card") in kinds
    assert ("ConfigMap", "apps", "loner-a2a-card") not in kinds


def test_the_scheduled_agent_runs_its_pod_as_a_cronjob(rendered: list[dict[str, Any]]) -> None:
    cron = find(rendered, "CronJob", "nightly", "apps")["spec"]
    assert cron["schedule"] == "0 2 * * *"
    assert cron["timeZone"] == "Europe/Paris"
    assert cron["concurrencyPolicy"] == "Forbid"
    pod = cron["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "OnFailure"
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert env["AGENT_MODE"] == "scheduled"
    assert env["AGENT_INPUT"] == "Digest"
    config = yaml.safe_load(
        find(rendered, "ConfigMap", "nightly-config", "apps")["data"]["config.yaml"]
    )
    assert config["schedule"] == {
        "cron": "0 2 * * *",
        "timeZone": "Europe/Paris",
        "input": "Digest",
    }


def test_peers_reach_the_pod_as_env_and_config(rendered: list[dict[str, Any]]) -> None:
    planner = find(rendered, "Deployment", "planner", "apps")["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in planner["containers"][0]["env"]}
    writer_url = "http://writer.docs.svc.cluster.local:9000"
    assert json.loads(env["A2A_PEERS"]) == [
        {
            "name": "writer",
            "url": writer_url + "/a2a",
            "cardUrl": writer_url + "/.well-known/agent-card.json",
        }
    ]
    assert env["A2A_PORT"] == "8080"
    assert env["A2A_PATH"] == "/"
    assert env["A2A_AGENT_CARD"] == "/etc/agent/a2a/agent-card.json"
    config = yaml.safe_load(
        find(rendered, "ConfigMap", "planner-config", "apps")["data"]["config.yaml"]
    )
    assert config["agents"] == {
        "writer": {
            "url": writer_url + "/a2a",
            "cardUrl": writer_url + "/.well-known/agent-card.json",
        }
    }
    # the card is mounted where A2A_AGENT_CARD says, beside config.yaml
    volume = next(v for v in planner["volumes"] if v["name"] == "config")
    sources = volume["projected"]["sources"]
    assert sources[1]["configMap"] == {
        "name": "planner-a2a-card",
        "items": [{"key": "agent-card.json", "path": "a2a/agent-card.json"}],
    }
    service = find(rendered, "Service", "writer", "docs")["spec"]
    assert service["ports"] == [
        {"name": "a2a", "port": 9000, "targetPort": "a2a", "protocol": "TCP"}
    ]


def test_managed_memory_is_a_tool_of_its_agent(rendered: list[dict[str, Any]]) -> None:
    planner = find(rendered, "Deployment", "planner", "apps")["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in planner["containers"][0]["env"]}
    notes = "http://notes.apps.svc.cluster.local:8080"
    assert env["MCP_SERVERS"].split(",") == ["http://search.apps.svc.cluster.local:8080", notes]
    assert env["AGENT_MEMORY_ENDPOINT"] == notes
    assert env["AGENT_MEMORY_TYPE"] == "managed"
    config = yaml.safe_load(
        find(rendered, "ConfigMap", "planner-config", "apps")["data"]["config.yaml"]
    )
    assert config["memory"] == {
        "name": "notes",
        "type": "managed",
        "endpoint": notes,
        "protocol": "mcp",
    }
    assert config["tools"]["notes"] == {"endpoint": notes, "protocol": "mcp"}


def test_a_shared_memory_says_so_in_config_yaml() -> None:
    """A memory is scoped to the conversation unless the agent's reference says shared."""
    shared = document()
    shared["agents"][0]["memory"] = {"name": "notes", "scope": "shared"}
    manifests = run_program(lambda: LanguageCluster("c", cast(Any, shared))).manifests()
    assert config_of(manifests, "planner", "apps")["memory"] == {
        "name": "notes",
        "type": "managed",
        "scope": "shared",
        "endpoint": "http://notes.apps.svc.cluster.local:8080",
        "protocol": "mcp",
    }


def test_require_approval_reaches_config_yaml() -> None:
    """A tool reference's requireApproval names the tools whose calls a person approves."""
    approving = document()
    approving["agents"][0]["tools"] = [{"name": "search", "requireApproval": ["delete"]}]
    manifests = run_program(lambda: LanguageCluster("c", cast(Any, approving))).manifests()
    tools = config_of(manifests, "planner", "apps")["tools"]
    assert tools["search"] == {
        "endpoint": "http://search.apps.svc.cluster.local:8080",
        "protocol": "mcp",
        "requireApproval": ["delete"],
    }


def test_each_caller_reaches_exactly_its_callees_and_tools(rendered: list[dict[str, Any]]) -> None:
    network = Network([m for m in rendered if m["kind"] == "NetworkPolicy"])
    by_name = pods(rendered)
    assert set(by_name) == {"search", "notes", "planner", "writer", "nightly", "loner"}
    ports = {"search": 8080, "notes": 8080, "planner": 8080, "writer": 9000}
    expected = {
        "planner": {"search", "notes", "writer"},
        "writer": {"planner"},
        "nightly": {"search", "planner"},
        "loner": set(),
        "search": set(),
        "notes": set(),
    }
    for source, pod in by_name.items():
        reached = {
            target
            for target, port in ports.items()
            if target != source and network.allows(pod, by_name[target], port)
        }
        assert reached == expected[source], source


def test_standalone_components_resolve_peers_and_memory_built_earlier() -> None:
    from langop_infra import LanguageAgent, LanguageMemory

    def program() -> None:
        LanguageMemory("notes", namespace="apps")
        LanguageAgent(
            "writer", namespace="docs", image="ghcr.io/acme/w:1" + PIN, a2a={"skills": [WRITE]}
        )
        LanguageAgent(
            "planner",
            namespace="apps",
            image="ghcr.io/acme/p:1" + PIN,
            memory={"name": "notes"},
            agents=[{"name": "writer", "namespace": "docs"}],
        )

    manifests = run_program(program).manifests()
    validate_manifests(manifests)
    planner = find(manifests, "Deployment", "planner", "apps")["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in planner["containers"][0]["env"]}
    assert env["AGENT_MEMORY_ENDPOINT"] == "http://notes.apps.svc.cluster.local:8080"
    assert env["MCP_SERVERS"] == "http://notes.apps.svc.cluster.local:8080"
    assert json.loads(env["A2A_PEERS"])[0]["url"] == "http://writer.docs.svc.cluster.local:8080/"
    network = Network([m for m in manifests if m["kind"] == "NetworkPolicy"])
    by_name = pods(manifests)
    assert network.allows(by_name["planner"], by_name["writer"], 8080)
    assert network.allows(by_name["planner"], by_name["notes"], 8080)
    assert not network.allows(by_name["writer"], by_name["planner"], 8080)


def test_a_standalone_agent_naming_an_agent_without_a2a_is_refused() -> None:
    from langop_infra import LanguageAgent
    from langop_infra.core.problems import SpecError

    def program() -> None:
        LanguageAgent("writer", namespace="docs", image="ghcr.io/acme/w:1" + PIN)
        LanguageAgent(
            "planner",
            namespace="apps",
            image="ghcr.io/acme/p:1" + PIN,
            agents=[{"name": "writer", "namespace": "docs"}],
        )

    with pytest.raises(SpecError) as caught:
        run_program(program)
    (problem,) = caught.value.problems
    assert problem.path == "agents[0].name"
    assert "does not serve A2A" in problem.message
