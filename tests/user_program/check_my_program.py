"""Unit tests of a program built on langop-infra, as a user writes them (docs/python-api.md,
"Testing your own program"). Only the public API is imported. Run in its own pytest process by
tests/test_user_program.py: set_mocks configures the whole process."""

import pulumi
import pytest
import yaml

from langop_infra.testing import Mocks

MEMORY_TOOLS = [{"name": "remember", "inputSchema": {"type": "object"}}]
mocks = Mocks(schemas={"memory": MEMORY_TOOLS})
pulumi.runtime.set_mocks(mocks, preview=False)

from langop_infra import LanguageAgent, LanguageTool, SpecError  # noqa: E402  (after set_mocks)


def build_program() -> tuple[LanguageTool, LanguageAgent]:
    """What the program under test builds: one tool and an agent that uses it."""
    memory = LanguageTool("memory", image="ghcr.io/acme/memory-mcp:1.4.0", namespace="apps")
    helper = LanguageAgent(
        "helper",
        image="ghcr.io/acme/helper:2.0.0",
        namespace="apps",
        tools=[{"name": "memory", "required": True}],
        env={"LOG_LEVEL": "debug"},
    )
    return memory, helper


@pulumi.runtime.test
def test_the_agent_gets_the_tool_endpoint_in_its_env():
    _, helper = build_program()

    def check(spec):
        container = spec.template.spec.containers[0]
        env = {e.name: e.value for e in container.env}
        assert env["MCP_SERVERS"] == "http://memory.apps.svc.cluster.local:8080"
        assert env["LOG_LEVEL"] == "debug"
        assert env["AGENT_NAME"] == "helper"

    return helper.deployment.spec.apply(check)


@pulumi.runtime.test
def test_config_yaml_names_the_tool_and_the_sync_registered():
    memory, helper = build_program()  # the same names again: a new test is a new program

    def check(args):
        config_yaml, phase, names = args
        config = yaml.safe_load(config_yaml)
        assert config["tools"] == {
            "memory": {
                "endpoint": "http://memory.apps.svc.cluster.local:8080",
                "protocol": "mcp",
                "required": True,
            }
        }
        assert (phase, names) == ("Registered", ["remember"])

    return pulumi.Output.all(helper.config_yaml, memory.phase, memory.tool_names).apply(check)


@pulumi.runtime.test
def test_the_config_map_holds_the_same_config_yaml():
    _, helper = build_program()

    def check(args):
        data, config_yaml = args
        assert data["config.yaml"] == config_yaml

    return pulumi.Output.all(helper.config_map.data, helper.config_yaml).apply(check)


@pulumi.runtime.test
def test_a_second_tool_of_the_same_name_in_one_program_is_refused():
    build_program()
    with pytest.raises(SpecError, match="a LanguageTool named 'memory' already exists"):
        LanguageTool("memory", image="ghcr.io/acme/memory-mcp:1.4.1", namespace="apps")


@pulumi.runtime.test
def test_objects_get_the_ids_the_kubernetes_provider_gives():
    memory, helper = build_program()

    def check(args):
        deployment_id, service_id, sync_id = args
        assert (deployment_id, service_id, sync_id) == ("apps/helper", "apps/memory", "apps/memory")
        # An object no attribute exposes: its inputs, from the latest registration.
        policy = mocks.find("kubernetes:networking.k8s.io/v1:NetworkPolicy", "memory-ingress")
        assert policy["spec"]["podSelector"] == {"matchLabels": {"langop.io/tool": "memory"}}

    ids = (helper.deployment.id, memory.service.id, memory.schema_sync.id)
    return pulumi.Output.all(*ids).apply(check)
