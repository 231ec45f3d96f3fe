"""Offline tests of this program: the Pulumi mock engine, no cluster (`python -m pytest`)."""

import runpy
from pathlib import Path

from langop_infra.offline.mock_engine import run_program
from langop_infra.testing.reachability import Network, Pod

HERE = Path(__file__).parent


def render() -> list[dict]:
    run = run_program(
        lambda: runpy.run_path(str(HERE / "__main__.py"), run_name="__main__"),
        project=Path(HERE).name,
        stack="dev",
        config={"langop-infra:namespace": "apps-dev"},
    )
    return run.manifests()


def pod(manifests: list[dict], name: str) -> Pod:
    [deployment] = [
        m for m in manifests if m["kind"] == "Deployment" and m["metadata"]["name"] == name
    ]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    return Pod(deployment["metadata"]["namespace"], labels)


def test_the_agent_may_reach_its_tool_and_nothing_else_may() -> None:
    manifests = render()
    network = Network([m for m in manifests if m["kind"] == "NetworkPolicy"])
    helper, memory = pod(manifests, "helper"), pod(manifests, "memory")
    assert network.allows(helper, memory, 8080)
    assert not network.allows(Pod("apps-dev", {"app": "other"}), memory, 8080)


def test_the_agent_is_told_where_its_tool_is() -> None:
    [deployment] = [
        m for m in render() if m["metadata"]["name"] == "helper" and m["kind"] == "Deployment"
    ]
    env = {
        e["name"]: e.get("value")
        for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert env["MCP_SERVERS"] == "http://memory.apps-dev.svc.cluster.local:8080"
