"""LanguageCluster: one validation pass for the whole document, children built from it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from langop_infra import LanguageCluster, LanguageTool, SpecError
from langop_infra.components import _agent_plan as agent_module, tool as tool_module
from langop_infra.config.checks import (
    _namespace_checks as namespace_checks,
    _validation as validation,
)
from langop_infra.offline._mock_engine import ProgramRun, run_program

DOCUMENT: dict[str, Any] = {
    "namespace": "apps",
    "partOf": "shop",
    "defaults": {"defaultDeny": True},
    "secrets": {"search-token": {"token": "canary-cluster-7f"}},
    "tools": [
        {"name": "memory", "image": "ghcr.io/acme/memory:1"},
        {"name": "files", "image": "ghcr.io/acme/files:1", "deploymentMode": "sidecar"},
    ],
    "agents": [
        {
            "name": "helper",
            "image": "ghcr.io/acme/agent:2",
            "tools": [{"name": "memory"}, {"name": "files"}],
            "secretEnv": {"TOKEN": {"secretKeyRef": {"name": "search-token", "key": "token"}}},
        }
    ],
}


def counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[int]:
    calls: list[int] = []
    original = getattr(module, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapper)
    return calls


def test_the_document_is_validated_once_and_children_are_not_checked_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster_checks = counting(monkeypatch, validation, "cluster_problems")
    deploy_checks = counting(monkeypatch, namespace_checks, "deploy_problems")
    # The names the components bound at import: what a child re-checking itself would call.
    standalone_checks = counting(monkeypatch, tool_module, "deploy_problems")
    standalone_checks += counting(monkeypatch, agent_module, "deploy_problems")
    tool_parses = counting(monkeypatch, tool_module, "parse_tool")
    agent_parses = counting(monkeypatch, agent_module, "parse_agent")

    def program() -> None:
        checked = validation.check_cluster(copy.deepcopy(DOCUMENT))  # as the stack program does
        LanguageCluster("apps", checked)

    run_program(program)
    assert len(cluster_checks) == 1
    assert len(deploy_checks) == 3  # once per workload, inside that one pass
    assert standalone_checks == []  # no child re-ran its own admission checks
    assert tool_parses == agent_parses == []  # nor parsed its spec again


def test_objects_are_those_of_the_document() -> None:
    run = run_program(lambda: LanguageCluster("apps", copy.deepcopy(DOCUMENT)))
    kinds = {(m["kind"], m["metadata"]["name"]) for m in run.manifests()}
    assert {
        ("Namespace", "apps"),
        ("Secret", "search-token"),
        ("Deployment", "memory"),
        ("Service", "memory"),
        ("Deployment", "helper"),
        ("ConfigMap", "helper-config"),
        ("NetworkPolicy", "default-deny-ingress"),
    } <= kinds
    assert ("Deployment", "files") not in kinds  # a sidecar has no workload of its own
    [namespace] = [m for m in run.manifests() if m["kind"] == "Namespace"]
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    assert namespace["metadata"]["labels"]["app.kubernetes.io/part-of"] == "shop"


def test_outputs_are_the_endpoints_and_configs_by_name() -> None:
    def program() -> None:
        import pulumi

        cluster = LanguageCluster("apps", copy.deepcopy(DOCUMENT))
        pulumi.export("endpoints", cluster.tool_endpoints)
        pulumi.export("configs", cluster.agent_configs)

    outputs = run_program(program).outputs
    assert outputs["endpoints"] == {
        "memory": "http://memory.apps.svc.cluster.local:8080",
        "files": "http://localhost:8080",
    }
    assert "memory:" in outputs["configs"]["helper"]


def test_a_bad_document_registers_nothing_and_names_the_cluster() -> None:
    document = copy.deepcopy(DOCUMENT)
    document["agents"][0]["tools"].append({"name": "ghost"})
    run = ProgramRun()
    with pytest.raises(SpecError) as caught:
        run_program(lambda: LanguageCluster("apps", document), into=run)
    assert "invalid LanguageCluster 'apps'" in str(caught.value)
    assert [p.path for p in caught.value.problems] == ["agents[0].tools[2].name"]
    assert run.registrations == []


def test_agents_may_use_tools_of_another_namespace_given_as_external_tools() -> None:
    def program() -> None:
        shared = LanguageTool("search", image="ghcr.io/acme/search:1", namespace="shared")
        document = copy.deepcopy(DOCUMENT)
        document["agents"][0]["tools"].append({"name": "search", "namespace": "shared"})
        LanguageCluster("apps", document, external_tools=[shared])

    run = run_program(program)
    [helper] = [
        m
        for m in run.manifests()
        if m["kind"] == "Deployment" and m["metadata"]["name"] == "helper"
    ]
    env = {
        e["name"]: e.get("value")
        for e in helper["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert env["MCP_SERVERS"].endswith("http://search.shared.svc.cluster.local:8080")
    policies = [m for m in run.manifests() if m["kind"] == "NetworkPolicy"]
    assert any(p["metadata"]["namespace"] == "shared" for p in policies)


def test_a_tool_of_another_namespace_not_handed_over_is_refused() -> None:
    document = copy.deepcopy(DOCUMENT)
    document["agents"][0]["tools"].append({"name": "search", "namespace": "shared"})
    with pytest.raises(SpecError) as caught:
        run_program(lambda: LanguageCluster("apps", document))
    [problem] = caught.value.problems
    assert "pass its LanguageTool in external_tools" in problem.message


def test_a_checked_cluster_is_built_without_a_second_check_and_a_spec_is_checked() -> None:
    """The checked value, not a registry of checked specs, says what was validated: a
    ``ClusterSpec`` handed in (even one ``check_cluster`` returned) is checked again."""
    from langop_infra.config.checks._checked import CheckedCluster
    from langop_infra.config.cluster import ClusterSpec

    assert ClusterSpec.__private_attributes__ == {}
    checked = validation.check_cluster(copy.deepcopy(DOCUMENT))
    assert isinstance(checked, CheckedCluster) and checked.spec.namespace == DOCUMENT["namespace"]
    calls: list[object] = []
    original = validation.parse_cluster

    def counting(data: object, path: str = "") -> ClusterSpec:
        calls.append(data)
        return original(data, path)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(validation, "parse_cluster", counting)
        run_program(lambda: LanguageCluster("apps", checked))
        assert calls == []
        run_program(lambda: LanguageCluster("apps", checked.spec))
        assert calls == [checked.spec]
