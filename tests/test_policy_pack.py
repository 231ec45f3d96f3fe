"""The CrossGuard policy pack, judged through pulumi-policy's own Analyzer servicer.

The servicer is the object ``pulumi preview --policy-pack`` talks to over gRPC; these tests
hand it the ``ConfigureAnalyzerRequest`` and ``AnalyzeStackRequest`` protobuf messages the
engine sends, built from programs run under the mock engine: the shipped stacks, one stack
file per policy that trips exactly that policy, and a program of plain ``pulumi_kubernetes``
objects with no langop-infra component in it.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pulumi_policy.policy
import pytest
import yaml
from google.protobuf import json_format
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

from langop_infra.offline._mock_engine import ProgramRun, run_program
from langop_infra.offline._render import render_stack
from langop_infra.policy.offline import Violation, analyze, check, servicer, stack_request
from langop_infra.policy.pack import policies

REPO = Path(__file__).resolve().parents[1]
DIGEST = "@sha256:" + "0" * 64
SECURE_CONTEXT = {
    "runAsNonRoot": True,
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}


@cache
def shipped(stack: str) -> ProgramRun:
    # With a rollout key, as `langop-infra check` renders: the pods' secret digests known.
    return render_stack(REPO, stack=stack, rollout_key="ab" * 32)


def dev_config() -> dict[str, Any]:
    return yaml.safe_load((REPO / "stacks" / "Pulumi.dev.yaml").read_text())


def render_variant(tmp_path: Path, change: Any) -> ProgramRun:
    """The dev stack with ``change(config)`` applied, memory's sync required so the advisory
    policy stays quiet, rendered as stack ``variant``."""
    document = copy.deepcopy(dev_config())
    config = document["config"]
    config["langop-infra:tools"][0]["schemaSync"] = {"required": True}
    change(config)
    path = tmp_path / "Pulumi.variant.yaml"
    path.write_text(yaml.safe_dump(document))
    return render_stack(REPO, stack="variant", config_file=path)


def tripped(violations: list[Violation]) -> set[tuple[str, str]]:
    return {(v.policy, v.level) for v in violations}


def test_the_servicer_is_where_the_offline_check_expects_it() -> None:
    """``langop-infra check`` relies on pulumi-policy's private servicer class."""
    analyzer = pulumi_policy.policy._PolicyAnalyzerServicer
    for method in ("AnalyzeStack", "Configure", "GetAnalyzerInfo"):
        assert callable(getattr(analyzer, method))


def test_the_pack_describes_its_policies_to_the_engine() -> None:
    info = servicer().GetAnalyzerInfo(None, None)
    by_name = {p.name: p for p in info.policies}
    assert list(by_name) == [p.name for p in policies()]
    assert set(by_name) == {
        "langop-agent-egress",
        "langop-no-literal-credentials",
        "langop-images-pinned",
        "langop-restricted-pods",
        "langop-network-policies-closed",
        "langop-pods-selected",
        "langop-endpoints",
        "langop-schema-sync",
    }
    assert all(p.description for p in info.policies)
    levels = {p.name: p.enforcementLevel for p in info.policies}
    assert levels["langop-schema-sync"] == pulumi.runtime.proto.ADVISORY
    assert levels["langop-restricted-pods"] == pulumi.runtime.proto.MANDATORY
    schema = json_format.MessageToDict(by_name["langop-images-pinned"].configSchema.properties)
    assert schema["stacks"]["type"] == "array"


@pytest.mark.parametrize(
    ("stack", "expected"),
    [
        ("dev", {("langop-schema-sync", "advisory")}),
        ("staging", {("langop-schema-sync", "advisory")}),
        ("prod", set()),
    ],
)
def test_the_shipped_stacks_trip_only_the_documented_advisory(
    stack: str, expected: set[tuple[str, str]]
) -> None:
    violations = check(shipped(stack), stack)
    assert tripped(violations) == expected
    for v in violations:
        assert v.message == (
            f"an agent waits for tool research-{stack}/memory, but its schema sync is not "
            "required; set schemaSync.required: true"
        )


def test_egress_left_open_trips_in_a_restricted_stack(tmp_path: Path) -> None:
    run = render_variant(tmp_path, lambda config: None)
    assert check(run, "variant") == []
    violations = check(run, "prod")
    assert tripped(violations) == {("langop-agent-egress", "mandatory")}
    assert sorted(v.message for v in violations) == [
        f"agent research-dev/{agent} is selected by no NetworkPolicy that limits its egress; "
        "set egress: restricted"
        for agent in ("morning-digest", "researcher", "triage")
    ]
    assert {v.resource for v in violations} == {
        "kubernetes:batch/v1:CronJob: research-dev/morning-digest",
        "kubernetes:apps/v1:Deployment: research-dev/researcher",
        "kubernetes:apps/v1:Deployment: research-dev/triage",
    }


def test_a_literal_credential_trips(tmp_path: Path) -> None:
    def change(config: dict[str, Any]) -> None:
        server = config["langop-infra:agents"][0]["mcpServers"][0]
        server["headers"][0] = {"name": "Authorization", "value": "Bearer abc"}
        config["langop-infra:tools"][1]["env"]["GITHUB_TOKEN"] = "ghp-plain"

    violations = check(render_variant(tmp_path, change), "variant")
    assert tripped(violations) == {("langop-no-literal-credentials", "mandatory")}
    assert sorted(v.message for v in violations) == [
        "ConfigMap research-dev/researcher-config: config.yaml .mcpServers[0].headers[0] "
        "(Authorization) is a credential header with a literal value; send it from a Secret "
        "(valueFrom.secretKeyRef)",
        "research-dev/docs-search: container docs-search env GITHUB_TOKEN is a literal "
        "credential; use valueFrom.secretKeyRef",
        "research-dev/researcher: container researcher env "
        "ARK_MCP_WEB_SEARCH_HEADER_AUTHORIZATION is a literal credential; use "
        "valueFrom.secretKeyRef",
    ]


def test_an_image_without_a_digest_trips_in_the_stacks_configured(tmp_path: Path) -> None:
    def change(config: dict[str, Any]) -> None:
        config["langop-infra:tools"][1]["image"] = "ghcr.io/acme/docs-search-mcp:1.0"

    run = render_variant(tmp_path, change)
    assert check(run, "variant") == []
    configured = {"langop-images-pinned": {"enforcementLevel": "mandatory", "stacks": ["variant"]}}
    violations = check(run, "variant", configured)
    assert tripped(violations) == {("langop-images-pinned", "mandatory")}
    assert [v.message for v in violations] == [
        "research-dev/docs-search: container docs-search runs 'ghcr.io/acme/docs-search-mcp:1.0', "
        "which is not pinned by digest; use <image>@sha256:<digest>"
    ]


def test_a_tool_without_schema_sync_trips_the_advisory(tmp_path: Path) -> None:
    def change(config: dict[str, Any]) -> None:
        config["langop-infra:tools"][1]["schemaSync"] = {"enabled": False}

    violations = check(render_variant(tmp_path, change), "variant")
    assert [(v.policy, v.level, v.message) for v in violations] == [
        ("langop-schema-sync", "advisory", "tool research-dev/docs-search has no schema sync")
    ]


def test_configuration_can_disable_a_policy() -> None:
    assert check(shipped("dev"), "dev", {"langop-schema-sync": "disabled"}) == []
    with pytest.raises(ValueError, match="no policy named 'langop-nope'"):
        check(shipped("dev"), "dev", {"langop-nope": "mandatory"})
    with pytest.raises(ValueError, match="enforcementLevel 'loud' is not one of"):
        check(shipped("dev"), "dev", {"langop-schema-sync": "loud"})


# --- a program of plain pulumi_kubernetes objects: no langop-infra component ------------------


def _deployment(name: str, labels: dict[str, str], env: dict[str, str], **pod: Any) -> None:
    container = {
        "name": name,
        "image": f"ghcr.io/acme/{name}:1{DIGEST}",
        "ports": [{"containerPort": 8080}],
        "env": [{"name": k, "value": v} for k, v in env.items()],
        "securityContext": pod.pop("context", SECURE_CONTEXT),
    }
    k8s.apps.v1.Deployment(
        name,
        metadata={"name": name, "namespace": "plain"},
        spec={
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name, **labels}},
                "spec": {"containers": [container], **pod},
            },
        },
    )


def plain_program(*, privileged: bool = False, policy: bool = True) -> None:
    agent = {"app.kubernetes.io/component": "agent"}
    tool = {"app.kubernetes.io/component": "tool"}
    _deployment("helper", agent, {"MCP_SERVERS": "http://search.plain.svc.cluster.local:8080"})
    _deployment("search", tool, {})
    context = {**SECURE_CONTEXT, "privileged": True, "allowPrivilegeEscalation": True}
    _deployment("admin", tool, {}, **({"context": context} if privileged else {}))
    for name in ("search", "admin"):
        k8s.core.v1.Service(
            name,
            metadata={"name": name, "namespace": "plain"},
            spec={"selector": {"app": name}, "ports": [{"port": 8080}]},
        )
    if policy:  # selects every pod and admits everything: complete, but not least privilege
        k8s.networking.v1.NetworkPolicy(
            "allow-all",
            metadata={"name": "allow-all", "namespace": "plain"},
            spec={"podSelector": {}, "ingress": [{}], "policyTypes": ["Ingress"]},
        )


def test_a_plain_kubernetes_program_is_judged() -> None:
    violations = check(run_program(plain_program), "dev")
    assert [(v.policy, v.message) for v in violations] == [
        (
            "langop-agent-egress",
            "agent plain/helper may reach plain/admin on port 8080, which it does not declare",
        ),
        ("langop-schema-sync", "tool plain/admin has no schema sync"),
        ("langop-schema-sync", "tool plain/search has no schema sync"),
    ]


def test_a_privileged_container_and_an_unselected_pod_trip() -> None:
    violations = check(run_program(lambda: plain_program(privileged=True, policy=False)), "dev")
    found = [(v.policy, v.message) for v in violations if v.policy != "langop-schema-sync"]
    assert found == [
        (
            "langop-agent-egress",
            "agent plain/helper may reach plain/admin on port 8080, which it does not declare",
        ),
        ("langop-restricted-pods", "pod of plain/admin: Privileged Containers: admin: privileged"),
        (
            "langop-restricted-pods",
            "pod of plain/admin: Privilege Escalation: admin: allowPrivilegeEscalation is True",
        ),
        ("langop-pods-selected", "pod of plain/admin is selected by no NetworkPolicy"),
        ("langop-pods-selected", "pod of plain/helper is selected by no NetworkPolicy"),
        ("langop-pods-selected", "pod of plain/search is selected by no NetworkPolicy"),
    ]


def test_the_request_carries_what_the_engine_sends() -> None:
    request = stack_request(run_program(plain_program))
    by_name = {r.name: r for r in request.resources}
    assert by_name["helper"].type == "kubernetes:apps/v1:Deployment"
    assert by_name["helper"].properties["metadata"]["namespace"] == "plain"
    assert by_name["helper"].urn.endswith("::helper")


# --- the command ----------------------------------------------------------------------------


def langop_infra(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "langop_infra", *args], cwd=cwd, capture_output=True, text=True
    )


@pytest.mark.slow
def test_check_prints_like_preview_and_exits_by_level(tmp_path: Path) -> None:
    done = langop_infra("check", "--stack", "dev")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:3] == [
        "Policies:",
        "    langop-infra",
        "        - [advisory]  langop-schema-sync  "
        "(pulumi-python:dynamic:Resource: research-dev/memory-schema)",
    ]
    config = tmp_path / "policy.json"
    config.write_text(json.dumps({"langop-schema-sync": "mandatory"}))
    done = langop_infra("check", "--stack", "dev", "--policy-config", str(config), "-o", "json")
    assert done.returncode == 1
    assert done.stderr == "langop-infra check: 1 mandatory violation(s)\n"
    [row] = json.loads(done.stdout)
    assert (row["policy"], row["level"]) == ("langop-schema-sync", "mandatory")
    config.write_text(json.dumps({"langop-nope": "mandatory"}))
    done = langop_infra("check", "--stack", "dev", "--policy-config", str(config))
    assert done.returncode == 2
    assert "no policy named 'langop-nope'" in done.stderr


def test_agents_alike_share_a_verdict_and_agents_unlike_do_not() -> None:
    """Verdicts are shared between agents that ingress peers cannot tell apart, and only
    between them: a label an ingress rule looks at separates two agents."""

    def program() -> None:
        agent = {"app.kubernetes.io/component": "agent"}
        _deployment("a1", {**agent, "team": "x", "access": "admin"}, {})
        _deployment("a2", {**agent, "team": "y", "access": "admin"}, {})
        _deployment("a3", {**agent, "team": "x"}, {})
        _deployment("admin", {}, {})
        k8s.networking.v1.NetworkPolicy(
            "admin-ingress",
            metadata={"name": "admin-ingress", "namespace": "plain"},
            spec={
                "podSelector": {"matchLabels": {"app": "admin"}},
                "ingress": [{"from": [{"podSelector": {"matchLabels": {"access": "admin"}}}]}],
                "policyTypes": ["Ingress"],
            },
        )
        k8s.networking.v1.NetworkPolicy(
            "agents",
            metadata={"name": "agents", "namespace": "plain"},
            spec={"podSelector": {"matchLabels": agent}, "ingress": []},
        )

    violations = check(run_program(program), "dev")
    assert [v.message for v in violations if v.policy == "langop-agent-egress"] == [
        "agent plain/a1 may reach plain/admin on port 8080, which it does not declare",
        "agent plain/a2 may reach plain/admin on port 8080, which it does not declare",
    ]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_check_and_the_servicer_agree(stack: str, tmp_path: Path) -> None:
    """``check`` skips only the protobuf round trip: the servicer, fed the engine's messages,
    gives the same violations for the shipped stacks and for plain Kubernetes programs."""
    for run in (shipped(stack), run_program(lambda: plain_program(privileged=True))):
        config = {"langop-images-pinned": {"enforcementLevel": "mandatory", "stacks": [stack]}}
        assert check(run, stack, config) == analyze(run, stack, config)


@pytest.mark.slow
def test_the_check_benchmark_reports_its_figures(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    script = REPO / "benchmarks" / "check_speed.py"
    done = subprocess.run(
        [sys.executable, str(script), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    assert (figures["tools"], figures["agents"]) == (10, 20)
    assert figures["render_cpu_s"] > 0 and figures["check_cpu_s"] > 0
    assert figures["ratio"] == figures["check_cpu_s"] / figures["render_cpu_s"]
    assert "check / render" in done.stdout


def test_an_unknown_value_at_preview_does_not_switch_a_policy_off(tmp_path: Path) -> None:
    """A first deploy's preview has every pod's secret digest unknown. pulumi-policy reads the
    engine's props through a proxy that raises on an unknown, and the whole stack policy then
    became "can't run during preview" (advisory): the real engine showed the pack let the dev
    stack through as prod. The servicer now gives the same mandatory violations as ``check``."""
    run = render_variant(tmp_path, lambda config: None)  # no rollout key: digests unknown
    wire = stack_request(run)
    assert UNKNOWN_STRING_VALUE in str(wire)
    through_engine = analyze(run, "prod")
    assert not [v for v in through_engine if "can't run policy" in v.message]
    assert tripped(through_engine) == {("langop-agent-egress", "mandatory")}
    assert sorted(through_engine, key=repr) == sorted(check(run, "prod"), key=repr)
