"""``graph`` and ``outputs`` on a program with values known only at `pulumi up` (issue 51 §3):
unknown parts show as unknown, never a crash, and an unknown that cannot change a verdict
leaves it as the known render's."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from langop_infra import LanguageAgent, LanguageTool
from langop_infra.cli._graph import WORLD, Edge, reachability_edges
from langop_infra.cli._outputs import agent_env_names
from langop_infra.offline._engine_values import UNKNOWN_MARKER
from langop_infra.offline._mock_engine import run_program
from tests.support.user_project import make_project, run_cli

IMAGE = "ghcr.io/acme/memory-mcp:1.4.0@sha256:" + "a" * 64
AGENT_IMAGE = "ghcr.io/acme/helper:2.0.0@sha256:" + "b" * 64

# What the issue met: a `random`-style label and a sidecar tool whose namespace is an Output.
PROGRAM = f"""
import pulumi
import pulumi_kubernetes as k8s
from langop_infra import LanguageAgent, LanguageTool

class RandomPet(pulumi.CustomResource):
    result: pulumi.Output[str]

    def __init__(self, name):
        super().__init__("random:index/randomPet:RandomPet", name, {{"result": None}})

pet = RandomPet("pet")
ns = k8s.core.v1.Namespace("apps", metadata={{"name": "apps"}})
files = LanguageTool("files", image="{IMAGE}", namespace=ns.metadata.name,
                     deployment_mode="sidecar", port=8181)
memory = LanguageTool("memory", image="{IMAGE}", namespace=ns.metadata.name)
helper = LanguageAgent("helper", image="{AGENT_IMAGE}", namespace=ns.metadata.name,
                       tools=[files, memory], labels={{"team": pet.result}})
pulumi.export("agents", {{"helper": {{"mcpServers": helper.mcp_servers}}}})
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("user") / "shop", PROGRAM)


def test_graph_of_a_program_with_unknowns_shows_them_and_exits_0(project: Path) -> None:
    code, out, err = run_cli(project, "graph", "--stack", "dev", "-o", "json")
    assert code == 0, err
    assert "Traceback" not in err and "internal error" not in err
    edges = [Edge(**e) for e in json.loads(out)]
    assert "helper" in {e.agent for e in edges}
    # The agent's policies, unknown, may open its namespace: never claimed world-open.
    assert not [e for e in edges if e.agent == WORLD and e.allowed]
    # Only a label is unknown, and no policy selects on it: every verdict stays known (the
    # agent's policies no longer turn unknown as a whole, tests/test_unknown_stays_local.py).
    assert [e for e in edges if e.allowed is None] == []
    assert {(e.agent, e.kind, e.target, e.allowed) for e in edges if e.agent == "helper"} >= {
        ("helper", "tool", "apps/memory", True),
        ("helper", "sidecar", "files", True),
    }
    code, text, err = run_cli(project, "graph", "--stack", "dev")
    assert code == 0, err
    assert "  unknown: " not in text


def test_outputs_of_a_program_with_unknowns_exits_0(project: Path) -> None:
    code, out, err = run_cli(project, "outputs", "--stack", "dev", "-o", "json")
    assert code == 0, err
    assert "Traceback" not in err
    helper = json.loads(out)["agents"]["helper"]
    assert helper["mcpServers"] == "http://localhost:8181,http://memory.apps.svc.cluster.local:8080"
    envs = helper["envNames"]
    assert envs == UNKNOWN_MARKER or ("MCP_SERVERS" in envs and "AGENT_NAME" in envs), envs


def known_program() -> None:
    memory = LanguageTool("memory", image=IMAGE, namespace="apps")
    files = LanguageTool("files", image=IMAGE, namespace="apps", deployment_mode="sidecar")
    LanguageTool("other", image=IMAGE, namespace="apps")
    LanguageAgent(
        "helper",
        image=AGENT_IMAGE,
        namespace="apps",
        tools=[memory, files],
        mcp_servers=[{"name": "docs", "url": "https://docs.example.com/mcp"}],
    )


@pytest.fixture(scope="module")
def known() -> list[dict[str, Any]]:
    return run_program(known_program, project="shop").manifests()


def find(manifests: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    [found] = [m for m in manifests if m["kind"] == kind and m["metadata"]["name"] == name]
    return found


def agent_pod_labels(manifests: list[dict[str, Any]]) -> dict[str, Any]:
    return find(manifests, "Deployment", "helper")["spec"]["template"]["metadata"]["labels"]


def verdicts(edges: list[Edge]) -> dict[tuple[str, str, str], bool | None]:
    return {(e.agent, e.kind, e.target): e.allowed for e in edges}


def test_the_known_render_has_the_edges_the_cases_change(known: list[dict[str, Any]]) -> None:
    found = verdicts(reachability_edges(known))
    assert found[("helper", "tool", "apps/memory")] is True
    assert found[("helper", "tool", "apps/other")] is False
    assert found[("helper", "sidecar", "files")] is True
    assert found[("helper", "external", "mcp docs (docs.example.com)")] is True


def test_an_unknown_label_no_selector_reads_changes_no_verdict(known: list[dict[str, Any]]) -> None:
    manifests = copy.deepcopy(known)
    agent_pod_labels(manifests)["team"] = UNKNOWN_MARKER
    assert reachability_edges(manifests) == reachability_edges(known)


def test_an_unknown_access_label_makes_that_edge_unknown(known: list[dict[str, Any]]) -> None:
    manifests = copy.deepcopy(known)
    labels = agent_pod_labels(manifests)
    assert labels["access.langop.io/memory"] == "true"
    labels["access.langop.io/memory"] = UNKNOWN_MARKER
    found = verdicts(reachability_edges(manifests))
    assert found[("helper", "tool", "apps/memory")] is None
    assert found[("helper", "tool", "apps/other")] is False  # no value admits it


def test_a_policy_whose_spec_is_unknown_makes_its_namespace_unknown(
    known: list[dict[str, Any]],
) -> None:
    manifests = copy.deepcopy(known)
    find(manifests, "NetworkPolicy", "other-ingress")["spec"] = UNKNOWN_MARKER
    edges = reachability_edges(manifests)
    assert {e.allowed for e in edges if e.kind == "tool"} == {None}
    assert verdicts(edges)[("helper", "sidecar", "files")] is True


def test_an_unknown_pod_spec_gives_one_unknown_edge(known: list[dict[str, Any]]) -> None:
    manifests = copy.deepcopy(known)
    find(manifests, "Deployment", "helper")["spec"] = UNKNOWN_MARKER
    find(manifests, "ConfigMap", "helper-config")["data"] = UNKNOWN_MARKER
    [edge] = reachability_edges(manifests)
    assert edge == Edge(
        "helper",
        "unknown",
        UNKNOWN_MARKER,
        None,
        None,
        "its pod spec is known only at `pulumi up`",
        "apps",
    )
    assert agent_env_names(manifests) == {"helper": UNKNOWN_MARKER}


def test_a_target_whose_pod_spec_is_unknown(known: list[dict[str, Any]]) -> None:
    manifests = copy.deepcopy(known)
    find(manifests, "Deployment", "other")["spec"] = UNKNOWN_MARKER
    [edge] = [e for e in reachability_edges(manifests) if e.target == "apps/other"]
    assert (edge.port, edge.allowed) == (None, None)


def test_an_unknown_config_yaml_gives_an_unknown_external_edge(
    known: list[dict[str, Any]],
) -> None:
    manifests = copy.deepcopy(known)
    find(manifests, "ConfigMap", "helper-config")["data"]["config.yaml"] = UNKNOWN_MARKER
    [edge] = [e for e in reachability_edges(manifests) if e.kind == "external"]
    assert (edge.target, edge.allowed) == (UNKNOWN_MARKER, None)
    assert edge.detail == "its config.yaml is known only at `pulumi up`"


def test_an_unknown_namespace_is_one_namespace(known: list[dict[str, Any]]) -> None:
    """Built from one Output, objects in an unknown namespace share it: the verdicts are the
    known render's, the targets name the namespace unknown."""

    def unknown_namespace(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: unknown_namespace(v) for k, v in value.items()}
        if isinstance(value, list):
            return [unknown_namespace(v) for v in value]
        return UNKNOWN_MARKER if value == "apps" else value

    manifests = unknown_namespace(known)
    assert find(manifests, "NetworkPolicy", "memory-ingress")["metadata"]["namespace"] == (
        UNKNOWN_MARKER
    )
    expected = [
        Edge(**{**e.__dict__, "target": e.target.replace("apps", UNKNOWN_MARKER)})
        for e in reachability_edges(known)
    ]
    found = reachability_edges(manifests)
    assert [(e.target, e.allowed) for e in found] == [(e.target, e.allowed) for e in expected]
    assert ("helper", "tool", f"{UNKNOWN_MARKER}/memory") in verdicts(found)


def test_a_workload_env_known_only_at_up_lists_its_names(known: list[dict[str, Any]]) -> None:
    manifests = copy.deepcopy(known)
    deployment = find(manifests, "Deployment", "helper")
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    names = [e["name"] for e in container["env"]]
    container["env"][0]["value"] = UNKNOWN_MARKER
    assert agent_env_names(manifests)["helper"] == names
    container["env"] = UNKNOWN_MARKER
    assert agent_env_names(manifests)["helper"] == UNKNOWN_MARKER
