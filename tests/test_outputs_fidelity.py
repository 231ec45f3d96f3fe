"""A user's project feeding Outputs into components renders what `pulumi preview` knows:
each value judged on its own, errors of late values as field problems (the audit's cases)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pulumi
import yaml

from langop_infra.offline._engine_values import UNKNOWN_MARKER
from tests.support.user_project import make_project, run_cli

HEAD = """
import pulumi
import pulumi_kubernetes as k8s
from langop_infra import LanguageAgent, LanguageTool
ns = k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
svc = k8s.core.v1.Service("db", metadata={"namespace": "apps"}, spec={"ports": [{"port": 5432}]})
IMAGE = "ghcr.io/acme/memory-mcp:1.4.0@sha256:" + "a" * 64
"""


def render(tmp_path: Path, body: str) -> tuple[int, dict[tuple[str, str], Any], str]:
    code, out, err = run_cli(make_project(tmp_path / "p", HEAD + body), "render", "--stack", "dev")
    docs = [d for d in yaml.safe_load_all(out) if d] if code == 0 else []
    return code, {(d["kind"], d["metadata"].get("name", "")): d for d in docs}, err


def container(deployment: dict[str, Any]) -> dict[str, Any]:
    return deployment["spec"]["template"]["spec"]["containers"][0]


def test_replicas_from_a_known_output_is_used_and_gets_a_disruption_budget(
    tmp_path: Path,
) -> None:
    code, rendered, err = render(
        tmp_path,
        'LanguageTool("memory", image=IMAGE, namespace="apps", '
        "replicas=pulumi.Output.from_input(2))",
    )
    assert code == 0, err
    assert rendered[("Deployment", "memory")]["spec"]["replicas"] == 2
    budget = rendered[("PodDisruptionBudget", "memory")]
    assert budget["spec"] == {
        "maxUnavailable": 1,
        "selector": {"matchLabels": {"langop.io/tool": "memory"}},
    }


def test_replicas_from_an_unknown_output_renders_unknown_and_no_budget(tmp_path: Path) -> None:
    """No budget: at preview the engine cannot tell; `pulumi up` creates it if replicas > 1."""
    code, rendered, err = render(
        tmp_path,
        'LanguageTool("memory", image=IMAGE, namespace="apps", '
        "replicas=svc.spec.cluster_ip.apply(lambda ip: 3))",
    )
    assert code == 0, err
    memory = rendered[("Deployment", "memory")]
    assert memory["spec"]["replicas"] == UNKNOWN_MARKER
    assert container(memory)["image"].startswith("ghcr.io/acme/memory-mcp:1.4.0@sha256:")
    assert ("PodDisruptionBudget", "memory") not in rendered


def test_a_port_output_out_of_range_is_a_field_error(tmp_path: Path) -> None:
    code, _, err = render(
        tmp_path,
        'LanguageTool("memory", image=IMAGE, namespace="apps", port=pulumi.Output.from_input(0))',
    )
    assert code == 2
    assert "Traceback" not in err and "internal error" not in err
    assert err.startswith(
        "langop-infra render: error: invalid LanguageTool 'memory': 1 problem (built at "
    )
    assert "/p/__main__.py:8)\n  - port: must be at least 1, got 0; change the value\n" in err


def test_a_port_known_only_later_in_the_run_is_checked_the_same_way(tmp_path: Path) -> None:
    code, _, err = render(
        tmp_path,
        'LanguageTool("memory", image=IMAGE, namespace="apps", '
        "port=ns.metadata.name.apply(lambda n: 0))",
    )
    assert code == 2
    assert "Traceback" not in err and "Task exception" not in err
    assert "  - port: must be at least 1, got 0; change the value" in err


def test_each_env_value_is_judged_on_its_own(tmp_path: Path) -> None:
    code, rendered, err = render(
        tmp_path,
        'LanguageTool("memory", image=IMAGE, namespace="apps", '
        'env={"NS": ns.metadata.name, "IP": svc.spec.cluster_ip, "PLAIN": "x"})',
    )
    assert code == 0, err
    env = {e["name"]: e["value"] for e in container(rendered[("Deployment", "memory")])["env"]}
    assert env == {"PORT": "8080", "NS": "apps", "IP": UNKNOWN_MARKER, "PLAIN": "x"}


def test_an_mcp_server_url_output_leaves_the_rest_of_the_agent_known(tmp_path: Path) -> None:
    code, rendered, err = render(
        tmp_path,
        'LanguageAgent("helper", image="ghcr.io/acme/helper:2.0.0", namespace="apps", '
        'mcp_servers=[{"name": "db", '
        '"url": svc.spec.cluster_ip.apply(lambda ip: f"http://{ip}:5432/mcp")}])',
    )
    assert code == 0, err
    helper = rendered[("Deployment", "helper")]
    assert helper["spec"]["replicas"] == 1
    assert container(helper)["image"] == "ghcr.io/acme/helper:2.0.0"
    env = {e["name"]: e.get("value") for e in container(helper)["env"]}
    assert env["AGENT_MCP_SERVERS"] == UNKNOWN_MARKER
    assert (env["AGENT_NAME"], env["AGENT_WEBHOOK_TOOLS"]) == ("helper", "[]")
    assert "spec is known only at pulumi up" not in err
    assert rendered[("ConfigMap", "helper-config")]["data"] == {"config.yaml": UNKNOWN_MARKER}
    policy = rendered[("NetworkPolicy", "helper-ingress")]
    assert policy["spec"]["podSelector"] == {"matchLabels": {"langop.io/agent": "helper"}}
    unknown = [line for line in err.splitlines() if "is known only at `pulumi up`" in line]
    # Registration order follows when inputs resolve: compare as a set.
    assert {line.split(": ", 2)[2].split(" is known")[0] for line in unknown} == {
        "Service db: metadata.name",
        "ConfigMap apps/helper-config: data.config.yaml",
        "Deployment apps/helper: spec.template.metadata.annotations.langop.io/config-checksum",
        "Deployment apps/helper: spec.template.spec.containers[0].env[0].value",
    }
    assert len(unknown) == 4


def test_one_tool_for_a_list_of_tools_is_a_field_error(tmp_path: Path) -> None:
    code, _, err = render(
        tmp_path,
        'memory = LanguageTool("memory", image=IMAGE, namespace="apps")\n'
        'LanguageAgent("helper", image="ghcr.io/acme/helper:2.0.0", namespace="apps", '
        "tools=memory)",
    )
    assert code == 2
    assert "Traceback" not in err and "TypeError" not in err
    assert "invalid LanguageAgent 'helper': 1 problem (built at " in err
    assert "  - tools: expected a list of tools, got one LanguageTool; write tools=[memory]" in err


def test_replicas_from_an_output_under_testing_mocks_up(tmp_path: Path) -> None:
    """As `pulumi up` (langop_infra.testing.Mocks, preview=False)."""
    del tmp_path
    from langop_infra import LanguageTool
    from langop_infra.offline._mock_engine import run_program

    run = run_program(
        lambda: LanguageTool(
            "memory",
            image="ghcr.io/acme/memory-mcp:1.4.0",
            namespace="apps",
            replicas=pulumi.Output.from_input(2),
        ),
        preview=False,
    )
    kinds = {m["kind"]: m for m in run.manifests()}
    assert kinds["Deployment"]["spec"]["replicas"] == 2
    assert kinds["PodDisruptionBudget"]["spec"]["maxUnavailable"] == 1


def test_schema_sync_reaches_the_port_an_output_gives(tmp_path: Path) -> None:
    """The tool's own sync and endpoint use the real port, not the stand-in validation used."""
    from langop_infra import LanguageTool
    from langop_infra.offline._mock_engine import run_program

    del tmp_path

    def program() -> None:
        tool = LanguageTool(
            "memory",
            image="ghcr.io/acme/memory-mcp:1.4.0",
            namespace="apps",
            port=pulumi.Output.from_input(9000),
        )
        pulumi.export("endpoint", tool.endpoint)

    run = run_program(program, preview=False)
    [sync] = run.by_type("pulumi-python:dynamic:Resource")
    assert (sync.inputs["endpoint"], sync.inputs["port"]) == (
        "http://memory.apps.svc.cluster.local:9000",
        9000,
    )
    assert run.outputs["endpoint"] == "http://memory.apps.svc.cluster.local:9000"


def test_an_agent_refuses_a_tool_whose_port_is_an_output(tmp_path: Path) -> None:
    code, _, err = render(
        tmp_path,
        'memory = LanguageTool("memory", image=IMAGE, namespace="apps", '
        "port=pulumi.Output.from_input(9000))\n"
        'LanguageAgent("helper", image="ghcr.io/acme/helper:2.0.0", namespace="apps", '
        "tools=[memory])",
    )
    assert code == 2
    assert "invalid LanguageAgent 'helper': 1 problem (built at " in err
    assert (
        "  - tools[0]: LanguageTool 'memory' takes its port or mcpPath from an Output; an "
        "agent needs them when the program runs (its config and network policies): give that "
        "tool plain values" in err
    )


def test_replicas_from_an_output_under_the_public_mocks() -> None:
    """As a user's own test runs it: langop_infra.testing.Mocks, preview=False (`pulumi up`)."""
    from pulumi.runtime import settings

    from langop_infra import LanguageTool
    from langop_infra.testing import Mocks

    # A render before this test closed its event loop; a user's test process has one.
    asyncio.set_event_loop(asyncio.new_event_loop())
    mocks = Mocks()
    pulumi.runtime.set_mocks(mocks, preview=False)
    seen: list[Any] = []

    @pulumi.runtime.test
    def a_test() -> pulumi.Output:
        tool = LanguageTool(
            "memory",
            image="ghcr.io/acme/memory-mcp:1.4.0@sha256:" + "a" * 64,
            namespace="apps",
            replicas=pulumi.Output.from_input(2),
        )
        return tool.deployment.spec.apply(lambda spec: seen.append(spec.replicas))

    try:
        a_test()
        assert seen == [2]
        budget = mocks.find("kubernetes:policy/v1:PodDisruptionBudget", "memory")
        assert budget["spec"]["maxUnavailable"] == 1
    finally:
        # The next program run (the mock engine's) starts from no root, as it expects.
        settings.ROOT.set(None)
