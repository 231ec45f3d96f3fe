"""Components take ``pulumi.Output`` values: known values are checked before registration,
values that resolve later are checked when they resolve, with the field path."""

from __future__ import annotations

import asyncio
from typing import Any

import pulumi
import pytest

from langop_infra import LanguageAgent, LanguageTool, SpecError
from langop_infra.offline._mock_engine import ProgramRun, run_program

IMAGE = "ghcr.io/acme/memory:1.4.0"


def later(value: Any) -> pulumi.Output[Any]:
    """An Output resolved asynchronously, as a resource's output would be."""

    async def resolve() -> Any:
        await asyncio.sleep(0)
        return value

    return pulumi.Output.from_input(asyncio.ensure_future(resolve()))


def unknown() -> pulumi.Output[Any]:
    """A value not known at preview time (an Output of a resource not yet created)."""
    loop = asyncio.get_event_loop()
    value, known = loop.create_future(), loop.create_future()
    value.set_result(None)
    known.set_result(False)
    return pulumi.Output(set(), value, known)


def deployment(run: ProgramRun, name: str) -> dict[str, Any]:
    [found] = [
        m for m in run.manifests() if m["kind"] == "Deployment" and m["metadata"]["name"] == name
    ]
    return found


def test_image_from_an_output_reaches_the_container() -> None:
    run = run_program(lambda: LanguageTool("memory", image=later(IMAGE), namespace="apps"))
    [container] = deployment(run, "memory")["spec"]["template"]["spec"]["containers"]
    assert container["image"] == IMAGE


def test_port_and_env_from_outputs_are_used_everywhere() -> None:
    run = run_program(
        lambda: LanguageTool(
            "memory", image=IMAGE, port=later(9000), env={"MODE": later("fast")}, namespace="a"
        )
    )
    [container] = deployment(run, "memory")["spec"]["template"]["spec"]["containers"]
    assert container["ports"] == [{"name": "mcp", "containerPort": 9000, "protocol": "TCP"}]
    assert {"name": "MODE", "value": "fast"} in container["env"]
    [service] = [m for m in run.manifests() if m["kind"] == "Service"]
    assert service["spec"]["ports"][0]["port"] == 9000


def test_an_invalid_resolved_value_is_reported_with_its_path() -> None:
    """The engine reports the error of an apply wrapped in its own ValueError."""
    with pytest.raises(ValueError) as caught:
        run_program(lambda: LanguageTool("memory", image=later("UPPER CASE"), namespace="a"))
    message = str(caught.value)
    assert "invalid LanguageTool 'memory': 1 problem" in message
    assert "- image: " in message


def test_a_known_invalid_value_fails_before_anything_registers() -> None:
    run = ProgramRun()
    with pytest.raises(SpecError) as caught:
        run_program(
            lambda: LanguageTool("memory", image=later(IMAGE), port=0, namespace="a"), into=run
        )
    assert [p.path for p in caught.value.problems] == ["port"]
    assert "LanguageTool 'memory'" in str(caught.value)
    assert run.registrations == []


def test_a_structural_field_cannot_be_an_output() -> None:
    """``deployment_mode`` decides which objects exist. (``namespace`` may be an Output:
    tests/test_namespace_output.py.)"""
    run = ProgramRun()
    with pytest.raises(SpecError) as caught:
        run_program(
            lambda: LanguageTool(
                "memory", image=IMAGE, namespace="apps", deployment_mode=later("sidecar")
            ),
            into=run,
        )
    [problem] = caught.value.problems
    assert problem.path == "deployment_mode"
    assert "must be known when the program runs" in problem.message
    assert run.registrations == []


def test_an_unknown_value_at_preview_defers_its_checks() -> None:
    """At preview the image is unknown: the tool still registers, its Deployment spec is
    unknown, and nothing fails."""
    run = run_program(
        lambda: LanguageTool("memory", image=unknown(), namespace="apps"), preview=True
    )
    types = [r.type for r in run.registrations]
    assert "kubernetes:apps/v1:Deployment" in types
    assert "kubernetes:core/v1:Service" in types


def test_an_agent_takes_an_image_output_and_tools_built_earlier() -> None:
    def program() -> None:
        LanguageTool("memory", image=IMAGE, namespace="apps")
        LanguageAgent(
            "helper",
            image=later("ghcr.io/acme/agent:2"),
            namespace="apps",
            tools=[{"name": "memory"}],
        )

    run = run_program(program)
    pod = deployment(run, "helper")["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == "ghcr.io/acme/agent:2"
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert env["MCP_SERVERS"] == "http://memory.apps.svc.cluster.local:8080"


def test_standalone_components_warn_of_literal_credential_headers() -> None:
    """Valid but unwise: the warning reaches the engine's log (``pulumi up`` shows it)."""

    def program() -> None:
        LanguageTool(
            "memory",
            image=IMAGE,
            namespace="apps",
            schema_sync={"headers": [{"name": "Authorization", "value": "Bearer abc"}]},
            defaults={"schemaSyncFrom": [{"cidr": "10.0.0.0/28"}]},
        )
        LanguageAgent(
            "helper",
            image="ghcr.io/acme/agent:2",
            namespace="apps",
            mcp_servers=[
                {
                    "name": "s",
                    "url": "https://s.example.com/mcp",
                    "headers": [{"name": "X-Api-Key", "value": "k"}],
                }
            ],
        )

    warnings = [w for w in run_program(program).warnings if "no digest" not in w]
    assert len(warnings) == 2
    assert warnings[0].startswith(
        "LanguageTool 'memory': schema_sync.headers[0].value: Authorization is a credential"
    )
    assert warnings[1].startswith(
        "LanguageAgent 'helper': mcp_servers[0].headers[0].value: X-Api-Key is a credential"
    )
