"""NetworkPolicies admit callers per port (issue 49 §1): an A2A callee's callers reach its
A2A port and not its health port; ``metricsFrom`` (Prometheus) reaches the health port
(``/metrics``) and not the A2A port, so a policy that admits a scraper admits no
``message/send``. Judged by the NetworkPolicy evaluator over the rendered policies."""

from __future__ import annotations

from typing import Any, cast

import pytest

from langop_infra.components.cluster import LanguageCluster
from langop_infra.config.checks._validation import parse_cluster
from langop_infra.core.problems import SpecError
from langop_infra.manifests._contract import agent_selector
from langop_infra.netpol import Network, Pod
from langop_infra.offline._mock_engine import run_program
from tests.support.a2a_stack import SKILL, a2a_stack, builtin_agent, token

PROMETHEUS = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}
A2A_PORT, HEALTH_PORT = 8080, 9090


def document() -> dict[str, Any]:
    return a2a_stack(
        builtin_agent(
            "reviewer",
            metricsFrom=[PROMETHEUS],
            a2a={
                "skills": [SKILL],
                "callers": [{"name": "planner", "tokenFrom": token("planner")}],
            },
        ),
        builtin_agent("planner", agents=[{"name": "reviewer"}]),
    )


def test_callers_reach_the_a2a_port_and_scrapers_the_health_port_only() -> None:
    run = run_program(lambda: LanguageCluster("c", cast("Any", document())))
    manifests = run.manifests()
    network = Network(
        [m for m in manifests if m["kind"] == "NetworkPolicy"],
        {"monitoring": {}, "apps": {}},
    )
    (planner_pod,) = [
        m["spec"]["template"]["metadata"]["labels"]
        for m in manifests
        if m["kind"] == "Deployment" and m["metadata"]["name"] == "planner"
    ]
    reviewer = Pod("apps", agent_selector("reviewer"), "reviewer")
    planner = Pod("apps", planner_pod, "planner")
    prometheus = Pod("monitoring", {"app": "prometheus"}, "prometheus")
    verdicts = {
        (source.name, port): network.allows(source, reviewer, port)
        for source in (planner, prometheus)
        for port in (A2A_PORT, HEALTH_PORT)
    }
    assert verdicts == {
        ("planner", A2A_PORT): True,
        ("planner", HEALTH_PORT): False,
        ("prometheus", A2A_PORT): False,
        ("prometheus", HEALTH_PORT): True,
    }


@pytest.mark.parametrize(
    "change",
    [
        {"runtime": "image", "image": "ghcr.io/acme/agent:1"},
        {"schedule": {"cron": "0 * * * *", "input": "go"}},
    ],
)
def test_metrics_from_is_for_the_builtin_runtime_serving(change: dict[str, Any]) -> None:
    doc = document()
    doc["agents"][1].update(change, metricsFrom=[PROMETHEUS], agents=[])
    with pytest.raises(SpecError) as caught:
        parse_cluster(doc)
    assert [(p.path, p.message) for p in caught.value.problems] == [
        (
            "agents[1].metricsFrom",
            "metricsFrom admits peers to the built-in runtime's health port, which this agent "
            "does not serve (runtime: image, or a schedule); publish the image's port in ports "
            "and admit them with allowFrom, or remove metricsFrom",
        )
    ]
