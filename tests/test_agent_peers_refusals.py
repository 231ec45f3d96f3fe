"""What A2A peers, schedules and memories refuse: each a field error naming the conflict
and the fix, before anything is registered (issue 38)."""

from __future__ import annotations

from typing import Any

import pytest

from langop_infra.config.checks._validation import parse_cluster
from langop_infra.core.problems import SpecError

PIN = "@sha256:" + "a" * 64
A2A = {"skills": [{"id": "s", "name": "S", "description": "Does s.", "tags": ["s"]}]}
SCHEDULE = {"cron": "*/15 * * * *", "input": "Check the queue"}


def agent(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "image": f"ghcr.io/acme/{name}:1" + PIN, **fields}


def problems(*agents: dict[str, Any], **cluster: Any) -> dict[str, str]:
    with pytest.raises(SpecError) as caught:
        parse_cluster({"namespace": "apps", "agents": list(agents), **cluster})
    return {p.path: p.message for p in caught.value.problems}


def test_an_agent_calling_itself_is_refused() -> None:
    found = problems(agent("a", a2a=A2A, agents=[{"name": "a"}]))
    assert list(found) == ["agents[0].agents[0].name"]
    assert "references itself" in found["agents[0].agents[0].name"]
    # by its own namespace written out, too
    found = problems(agent("a", a2a=A2A, agents=[{"name": "a", "namespace": "apps"}]))
    assert "references itself" in found["agents[0].agents[0].name"]


def test_a_peer_without_a2a_is_refused_with_the_fix() -> None:
    found = problems(
        agent("a", agents=[{"name": "b", "namespace": "other"}]), agent("b", namespace="other")
    )
    message = found["agents[0].agents[0].name"]
    assert "agent 'b' in namespace 'other' does not serve A2A" in message
    assert "add a2a" in message


def test_a_missing_peer_is_refused() -> None:
    found = problems(agent("a", agents=[{"name": "ghost"}]))
    assert "no agent 'ghost' in namespace 'apps'" in found["agents[0].agents[0].name"]


def test_a_cycle_between_two_peers_is_allowed() -> None:
    cluster = parse_cluster(
        {
            "namespace": "apps",
            "agents": [
                agent("a", a2a=A2A, agents=[{"name": "b"}]),
                agent("b", a2a=A2A, agents=[{"name": "a"}]),
            ],
        }
    )
    assert [p.name for p in cluster.agents[0].agents] == ["b"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("replicas", 2),
        ("autoscaling", {"maxReplicas": 3}),
        ("a2a", A2A),
        ("ports", [{"name": "http", "port": 8000}]),
    ],
)
def test_scheduled_mode_refuses_what_only_a_deployment_has(field: str, value: Any) -> None:
    found = problems(agent("nightly", schedule=SCHEDULE, **{field: value}))
    assert list(found) == ["agents[0].schedule"]
    message = found["agents[0].schedule"]
    assert f"schedule conflicts with {field}" in message
    assert f"remove {field}" in message


@pytest.mark.parametrize(
    ("schedule", "words"),
    [
        ({"cron": "0 6 * *", "input": "x"}, "not a 5-field cron expression"),
        ({"cron": "@daily", "input": "x"}, "not a 5-field cron expression"),
        ({"cron": "61 * * * *", "input": "x"}, "not a valid cron expression"),
        ({"cron": "0 6 * * *", "timeZone": "Mars/Olympus", "input": "x"}, "not an IANA time zone"),
        ({"cron": "0 6 * * *", "timeZone": "../../etc/passwd", "input": "x"}, "not an IANA"),
    ],
)
def test_a_bad_cron_or_time_zone_is_refused(schedule: dict[str, Any], words: str) -> None:
    found = problems(agent("nightly", schedule=schedule))
    assert any(words in m for m in found.values()), found
    assert all(p.startswith("agents[0].schedule.") for p in found)


def test_the_a2a_port_may_not_take_a_declared_port() -> None:
    found = problems(agent("a", ports=[{"name": "http", "port": 8080}], a2a=A2A))
    assert "a2a conflicts with ports entry 'http' (8080)" in found["agents[0].a2a"]


def test_memory_references_and_names() -> None:
    found = problems(
        agent("a", memory={"name": "notes"}),
        tools=[{"name": "kb", "image": "ghcr.io/acme/kb:1" + PIN}],
        memories=[
            {"name": "kb"},
            {"name": "kb", "type": "external", "address": {"value": "https://m.example.com/mcp"}},
        ],
    )
    assert "no memory 'notes' in namespace 'apps'" in found["agents[0].memory.name"]
    assert "runs as a LanguageTool of that name" in found["memories[0].name"]
    assert "duplicate memory name 'kb'" in found["memories[1].name"]
    found = problems(agent("scribe"), memories=[{"name": "scribe"}])
    assert "and agents has one in namespace 'apps'" in found["memories[0].name"]


def test_an_external_memory_needs_its_address_and_no_managed_fields() -> None:
    found = problems(
        memories=[
            {"name": "m", "type": "external"},
            {
                "name": "n",
                "type": "external",
                "address": {"value": "https://n.example.com/mcp"},
                "size": "2Gi",
            },
        ]
    )
    assert "needs address" in found["memories[0]"]
    assert "size are for type managed" in found["memories[1]"]


def test_a_schedule_from_an_output_is_refused_before_registration() -> None:
    """Schedule, A2A, peers and memory decide which objects exist: never an Output."""
    import pulumi

    from langop_infra import LanguageAgent
    from langop_infra.offline._mock_engine import run_program

    def program() -> None:
        schedule = {"cron": pulumi.Output.from_input("0 1 * * *"), "input": "x"}
        LanguageAgent("a", image="ghcr.io/acme/a:1" + PIN, schedule=schedule)

    with pytest.raises(SpecError) as caught:
        run_program(program)
    (problem,) = caught.value.problems
    assert problem.path == "schedule.cron"
    assert "must be known when the program runs" in problem.message
