"""Offline tests of this program with Pulumi's own mocks, no cluster (`python -m pytest`).

`langop_infra.testing.Mocks` answers as the kubernetes provider would; each
`@pulumi.runtime.test` runs the program once and asserts on what it registered.
"""

import runpy
from pathlib import Path

import pulumi

from langop_infra.netpol import Network, Pod
from langop_infra.testing import Mocks

HERE = Path(__file__).parent
NAMESPACE = "apps-dev"  # this test's `langop-infra:namespace`

mocks = Mocks()
pulumi.runtime.set_mocks(mocks, project=HERE.name, stack="dev", preview=False)
pulumi.runtime.set_config("langop-infra:namespace", NAMESPACE)


def run_program() -> pulumi.Output:
    """Run `__main__.py`; an Output that resolves once the objects the tests read (the
    Deployments and NetworkPolicies) are registered."""
    program = runpy.run_path(str(HERE / "__main__.py"), run_name="__main__")
    agent, memory = program["agent"], program["memory"]
    read = [agent.deployment, memory.deployment, memory.network_policy, *agent.network_policies]
    return pulumi.Output.all(*[resource.id for resource in read])


def manifest(typ: str, name: str) -> dict:
    """What the program registered as `typ` named `name`, as a Kubernetes manifest."""
    found = mocks.find(typ, name)
    _, api, kind = typ.split(":")  # kubernetes:networking.k8s.io/v1:NetworkPolicy
    api_version = api.removeprefix("core/")
    return whole_numbers(
        {"apiVersion": api_version, "kind": kind, **{k: found[k] for k in ("metadata", "spec")}}
    )


def whole_numbers(value):
    """Numbers as Kubernetes has them: Pulumi's wire format makes every number a float."""
    if isinstance(value, dict):
        return {k: whole_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [whole_numbers(v) for v in value]
    return int(value) if isinstance(value, float) and value.is_integer() else value


def pod(name: str) -> Pod:
    template = manifest("kubernetes:apps/v1:Deployment", name)["spec"]["template"]
    return Pod(NAMESPACE, template["metadata"]["labels"])


@pulumi.runtime.test
def test_the_agent_may_reach_its_tool_and_nothing_else_may():
    def check(_):
        network = Network(
            [
                manifest("kubernetes:networking.k8s.io/v1:NetworkPolicy", name)
                for name in ("memory-ingress", "helper-ingress")
            ]
        )
        helper, memory = pod("helper"), pod("memory")
        assert network.allows(helper, memory, 8080)
        assert not network.allows(Pod(NAMESPACE, {"app": "other"}), memory, 8080)

    return run_program().apply(check)


@pulumi.runtime.test
def test_the_agent_is_told_where_its_tool_is():
    def check(_):
        spec = manifest("kubernetes:apps/v1:Deployment", "helper")["spec"]
        env = {e["name"]: e.get("value") for e in spec["template"]["spec"]["containers"][0]["env"]}
        assert env["MCP_SERVERS"] == f"http://memory.{NAMESPACE}.svc.cluster.local:8080"

    return run_program().apply(check)


@pulumi.runtime.test
def test_the_namespace_is_created():
    def check(_):
        found = mocks.find("kubernetes:core/v1:Namespace", NAMESPACE)
        assert found["metadata"]["name"] == NAMESPACE

    return run_program().apply(check)
