"""``namespace=ns.metadata.name``: a component's namespace given as an Output is what every
object it registers carries, resolved as Pulumi resolves it (issue 35 §1); never a stand-in.

Under Pulumi's mocks (``langop_mocks``, the plugin users' tests use) with ``preview`` off and
on, for a Namespace named explicitly and one the provider names; under the offline engine at
preview, an autonamed Namespace's name stays unknown in every object.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
import yaml

from langop_infra import (
    HttpTool,
    LanguageAgent,
    LanguageCluster,
    LanguageMemory,
    LanguageModel,
    LanguageTool,
    SpecError,
)
from langop_infra.offline._engine_values import is_unknown
from langop_infra.offline._mock_engine import ProgramRun, run_program
from langop_infra.testing import Mocks
from tests.support.user_project import make_project, run_cli

IMAGE = "ghcr.io/acme/memory-mcp:1.4.0"
NAMESPACE_TYPE = "kubernetes:core/v1:Namespace"
# Every kind of child a LanguageTool and a LanguageAgent can register.
TOOL_KINDS = {
    "Deployment",
    "Service",
    "ServiceAccount",
    "Secret",
    "NetworkPolicy",
    "PersistentVolumeClaim",
    "PodDisruptionBudget",
    "HorizontalPodAutoscaler",
}
AGENT_KINDS = {"ConfigMap"}


class ProviderMocks(Mocks):
    """langop-infra's Mocks, naming an autonamed Namespace as the kubernetes provider does at
    ``pulumi up`` (``<logical name>-<suffix>``)."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        if args.typ == NAMESPACE_TYPE and not (args.inputs.get("metadata") or {}).get("name"):
            inputs = {**args.inputs, "metadata": {"name": f"{args.name}-7f3k2"}}
            args = pulumi.runtime.MockResourceArgs(
                args.typ, args.name, inputs, args.provider, args.resource_id, args.custom
            )
        return super().new_resource(args)


@pytest.fixture(params=[False, True], ids=["up", "preview"])
def mocks(request: pytest.FixtureRequest) -> Iterator[ProviderMocks]:
    mocks = ProviderMocks()
    pulumi.runtime.set_mocks(mocks, project="shop", stack="dev", preview=request.param)
    yield mocks
    gc.collect()  # as in run_failing: failed Outputs' futures are finalized here, not later


def namespace(explicit: bool) -> tuple[k8s.core.v1.Namespace, str]:
    if explicit:
        return k8s.core.v1.Namespace("apps", metadata={"name": "shop-apps"}), "shop-apps"
    return k8s.core.v1.Namespace("apps"), "apps-7f3k2"


def full_tool(ns: Any) -> LanguageTool:
    """Tools with every child object between them: account, Secret, budget, egress policy
    (``memory``), a volume claim (``store``) and an autoscaler (``scaled``)."""
    LanguageTool("store", image=IMAGE, namespace=ns, persistence={"size": "1Gi"})
    LanguageTool("scaled", image=IMAGE, namespace=ns, autoscaling={"maxReplicas": 4})
    return LanguageTool(
        "memory",
        image=IMAGE,
        namespace=ns,
        service_account={"create": True},
        secret_env={"TOKEN": "s3cret-canary"},
        replicas=2,
        egress="restricted",
    )


def children(mocks: Mocks) -> list[pulumi.runtime.MockResourceArgs]:
    return [r for r in mocks.resources if r.typ != NAMESPACE_TYPE]


def kind(resource: pulumi.runtime.MockResourceArgs) -> str:
    return resource.typ.rsplit(":", 1)[-1]


def assert_placed(mocks: Mocks, expected: str, kinds: set[str]) -> None:
    """Every Kubernetes child is in ``expected``; the schema sync asks there; no stand-in."""
    objects = [r for r in children(mocks) if r.typ.startswith("kubernetes:")]
    assert kinds <= {kind(r) for r in objects}
    for r in objects:
        assert r.inputs["metadata"]["namespace"] == expected, (r.typ, r.name)
        labels = r.inputs["metadata"]["labels"]
        assert labels["app.kubernetes.io/part-of"] == expected, (r.typ, r.name)
    syncs = [r for r in children(mocks) if "service" in r.inputs and "endpoint" in r.inputs]
    for sync in syncs:
        assert sync.inputs["namespace"] == expected
        assert f".{expected}.svc.cluster.local" in sync.inputs["endpoint"]
    text = json.dumps([r.inputs for r in mocks.resources], default=str)
    assert "placeholder" not in text
    assert not [r.name for r in mocks.resources if "placeholder" in r.name]


@pytest.mark.parametrize("explicit", [True, False], ids=["named", "autonamed"])
@pulumi.runtime.test
def test_a_tool_in_an_output_namespace_places_every_object_there(
    mocks: ProviderMocks, explicit: bool
) -> None:
    ns, expected = namespace(explicit)
    tool = full_tool(ns.metadata.name)

    def check(values: list[Any]) -> None:
        assert values[0] == expected
        assert values[1] == f"http://memory.{expected}.svc.cluster.local:8080"
        assert_placed(mocks, expected, TOOL_KINDS)
        policy = mocks.find("kubernetes:networking.k8s.io/v1:NetworkPolicy", "memory-ingress")
        assert policy["metadata"]["name"] == "memory-ingress"

    return pulumi.Output.all(tool.namespace, tool.endpoint, tool.deployment.id).apply(check)


@pytest.mark.parametrize("explicit", [True, False], ids=["named", "autonamed"])
@pulumi.runtime.test
def test_an_agent_and_its_tool_in_an_output_namespace(mocks: ProviderMocks, explicit: bool) -> None:
    ns, expected = namespace(explicit)
    tool = LanguageTool("memory", image=IMAGE, namespace=ns.metadata.name)
    agent = LanguageAgent(
        "helper",
        image="ghcr.io/acme/helper:2.0.0",
        namespace=ns.metadata.name,
        tools=[tool],
        secret_env={"TOKEN": "s3cret-canary"},
        service_account={"create": True},
        egress="restricted",
        ports=[{"name": "http", "port": 8000}],
    )

    def check(values: list[Any]) -> None:
        assert values[0] == f"http://memory.{expected}.svc.cluster.local:8080"
        assert f"memory.{expected}.svc.cluster.local" in values[1]
        assert_placed(mocks, expected, {"Deployment", "Service", "Secret", "ConfigMap"})

    return pulumi.Output.all(agent.mcp_servers, agent.config_yaml, agent.deployment.id).apply(check)


def test_at_preview_an_unknown_namespace_stays_unknown_in_every_object() -> None:
    def program() -> None:
        ns = k8s.core.v1.Namespace("apps")
        full_tool(ns.metadata.name)

    run = run_program(program, preview=True)
    objects = [r for r in run.kubernetes() if r.type != NAMESPACE_TYPE]
    assert {r.type.rsplit(":", 1)[-1] for r in objects} >= TOOL_KINDS
    for r in objects:
        assert is_unknown(r.inputs["metadata"]["namespace"]), r.name
    assert "placeholder" not in json.dumps([r.inputs for r in run.registrations], default=str)


def run_failing(program: Callable[[], None]) -> str:
    with pytest.raises(Exception) as caught:
        run_program(program)
    # The failed run leaves futures whose exception nobody retrieved. Finalized by a later
    # collection, asyncio logs each traceback, and Python 3.11's traceback carets call
    # ast.parse: inside pytest's rewrite of a module imported then, that nested parse breaks
    # the interpreter's shared AST depth count ("AST constructor recursion depth mismatch").
    gc.collect()
    return str(caught.value)


def test_a_namespace_resolving_to_a_bad_name_is_a_field_error() -> None:
    def program() -> None:
        ns = k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
        LanguageTool("memory", image=IMAGE, namespace=ns.metadata.name.apply(lambda n: "Bad_NS"))

    message = run_failing(program)
    assert "invalid LanguageTool 'memory': 1 problem (built at " in message
    assert "test_namespace_output.py:" in message
    assert "- namespace: " in message and "Bad_NS" in message
    assert "placeholder" not in message


def test_a_secret_namespace_is_a_field_error() -> None:
    def program() -> None:
        LanguageTool("memory", image=IMAGE, namespace=pulumi.Output.secret("apps"))

    message = run_failing(program)
    assert "invalid LanguageTool 'memory'" in message
    assert "- namespace: is a secret Output, but this field is plain text" in message


def test_two_tools_of_one_name_meeting_in_a_resolved_namespace_is_a_field_error() -> None:
    def program() -> None:
        ns = k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
        LanguageTool("memory", image=IMAGE, namespace="apps")
        LanguageTool("again", {"name": "memory", "image": IMAGE, "namespace": ns.metadata.name})

    message = run_failing(program)
    assert "a LanguageTool named 'memory' already exists in namespace 'apps'" in message
    assert "test_namespace_output.py:" in message


USER_PROGRAM = """
import pulumi
import pulumi_kubernetes as k8s
from langop_infra import LanguageAgent, LanguageTool
IMAGE = "ghcr.io/acme/memory-mcp:1.4.0@sha256:" + "a" * 64
ns = k8s.core.v1.Namespace("apps", metadata={{"name": "apps"}})
memory = LanguageTool("memory", image=IMAGE, namespace={namespace}, secret_env={{"K": "v"}})
LanguageAgent(
    "helper",
    image="ghcr.io/acme/helper:2.0.0@sha256:" + "b" * 64,
    namespace={namespace},
    tools=[memory],
    egress="restricted",
)
pulumi.export("endpoint", memory.endpoint)
"""


def test_a_user_project_renders_the_same_with_the_namespace_as_an_output(tmp_path: Path) -> None:
    """A user's project outside the repository: ``namespace=ns.metadata.name`` renders what
    ``namespace="apps"`` does, object for object."""
    plain = make_project(tmp_path / "plain", USER_PROGRAM.format(namespace='"apps"'))
    given = make_project(tmp_path / "output", USER_PROGRAM.format(namespace="ns.metadata.name"))
    code, expected, err = run_cli(plain, "render", "--stack", "dev")
    assert code == 0, err
    code, rendered, err = run_cli(given, "render", "--stack", "dev")
    assert code == 0, err
    assert rendered == expected
    kinds = {d["kind"] for d in yaml.safe_load_all(rendered) if d}
    assert {"Deployment", "Service", "ConfigMap", "NetworkPolicy", "Secret"} <= kinds


def test_a_user_project_whose_namespace_resolves_badly_gets_a_field_error(tmp_path: Path) -> None:
    program = USER_PROGRAM.format(namespace='ns.metadata.name.apply(lambda n: "Apps_1")')
    project = make_project(tmp_path / "p", program.split("LanguageAgent(\n")[0])
    code, _, err = run_cli(project, "render", "--stack", "dev")
    assert code == 2, err
    assert "Traceback" not in err and "internal error" not in err
    assert "invalid LanguageTool 'memory'" in err
    assert f"(built at {project / '__main__.py'}:7)" in err
    assert "  - namespace: " in err and "Apps_1" in err
    assert "placeholder" not in err


def test_a_tool_in_an_output_namespace_must_resolve_to_its_agents() -> None:
    def program() -> None:
        ns = k8s.core.v1.Namespace("other", metadata={"name": "other"})
        tool = LanguageTool("memory", image=IMAGE, namespace=ns.metadata.name)
        LanguageAgent("helper", image=IMAGE, namespace="apps", tools=[tool])

    message = run_failing(program)
    assert "invalid LanguageAgent 'helper'" in message
    assert "test_namespace_output.py:" in message
    assert "- tools[0]: LanguageTool 'memory' is in namespace 'other', the agent in 'apps'" in (
        message
    )


def test_an_agent_in_an_output_namespace_says_what_it_cannot_find() -> None:
    """References by name, A2A peers and memory are found by namespace when the program
    runs: field errors, before anything is registered, never quoting a stand-in."""
    run = ProgramRun()

    def program() -> None:
        ns = k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
        LanguageTool("files", image=IMAGE, namespace="apps")
        LanguageAgent(
            "helper",
            image=IMAGE,
            namespace=ns.metadata.name,
            tools=[{"name": "files"}],
            agents=[{"name": "peer"}],
        )

    with pytest.raises(SpecError) as caught:
        run_program(program, into=run)
    problems = {p.path: p.message for p in caught.value.problems}
    assert set(problems) == {"tools[0]", "agents[0]"}
    assert "pass the LanguageTool object itself" in problems["tools[0]"]
    assert "pass the peer LanguageAgent objects themselves" in problems["agents[0]"]
    assert "placeholder" not in str(caught.value)
    assert not [r for r in run.registrations if "helper" in r.name]


def test_a_cluster_refuses_an_external_tool_in_an_output_namespace() -> None:
    def program() -> None:
        ns = k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
        tool = LanguageTool("memory", image=IMAGE, namespace=ns.metadata.name)
        LanguageCluster("team", {"namespace": "team"}, external_tools=[tool])

    with pytest.raises(SpecError) as caught:
        run_program(program)
    [problem] = caught.value.problems
    assert problem.path == "external_tools[0]"
    assert "takes its namespace from an Output" in problem.message


MODEL = {"provider": "openai-compatible", "model_name": "m", "endpoint": "http://vllm:8000/v1"}


def test_a_model_in_an_output_namespace_serves_an_agent_there() -> None:
    def program() -> None:
        ns = k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
        model = LanguageModel("llama", namespace=ns.metadata.name, **MODEL)
        LanguageAgent("helper", image=IMAGE, namespace=ns.metadata.name, model=model)

    run = run_program(program)
    [deployment] = [m for m in run.manifests() if m["kind"] == "Deployment"]
    assert deployment["metadata"]["namespace"] == "apps"
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["MODEL_ENDPOINT"] == "http://vllm:8000/v1"


@pytest.mark.parametrize(
    ("namespace", "expected"),
    [
        (lambda: pulumi.Output.from_input("apps").apply(lambda n: "Bad_NS"), "Bad_NS"),
        (lambda: pulumi.Output.secret("apps"), "is a secret Output"),
    ],
    ids=["bad-name", "secret"],
)
def test_a_model_namespace_is_checked_when_it_resolves(
    namespace: Callable[[], Any], expected: str
) -> None:
    message = run_failing(lambda: LanguageModel("llama", namespace=namespace(), **MODEL) and None)
    assert "invalid LanguageModel 'llama'" in message
    assert "test_namespace_output.py:" in message
    assert "- namespace: " in message and expected in message


HTTP_TOOL = {
    "description": "Look a ticket up.",
    "endpoint": "https://tickets.example.com/x",
    "display_name": "Ticket lookup",
    "version": "1",
}


@pytest.mark.parametrize("preview", [False, True], ids=["up", "preview"])
def test_an_http_tool_in_an_output_namespace(preview: bool) -> None:
    def program() -> None:
        ns = k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
        HttpTool("lookup", namespace=ns.metadata.name, **HTTP_TOOL)

    run = run_program(program, preview=preview)
    [config_map] = [m for m in run.manifests() if m["kind"] == "ConfigMap"]
    assert config_map["metadata"]["namespace"] == "apps"
    assert config_map["metadata"]["labels"]["app.kubernetes.io/part-of"] == "apps"


def object_key(manifest: dict[str, Any]) -> tuple[str, str, str]:
    meta = manifest["metadata"]
    return manifest["kind"], meta.get("namespace", ""), meta["name"]


def http_tool_program(tool_namespace: Callable[[Any], Any], agent_output: bool) -> Any:
    def program() -> None:
        ns = k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
        lookup = HttpTool("lookup", namespace=tool_namespace(ns), **HTTP_TOOL)
        namespace = ns.metadata.name if agent_output else "apps"
        LanguageAgent("helper", image=IMAGE, namespace=namespace, http_tools=[lookup])

    return program


@pytest.mark.parametrize("agent_output", [False, True], ids=["plain-agent", "output-agent"])
def test_an_agent_takes_an_http_tool_in_an_output_namespace(agent_output: bool) -> None:
    """Taken to be in the agent's namespace: rendered as with plain namespaces everywhere."""
    plain = run_program(http_tool_program(lambda ns: "apps", agent_output=False)).manifests()
    given = run_program(http_tool_program(lambda ns: ns.metadata.name, agent_output)).manifests()
    assert sorted(given, key=object_key) == sorted(plain, key=object_key)
    [config_map] = [m for m in given if m["metadata"]["name"] == "helper-config"]
    assert "lookup" in config_map["data"]["config.yaml"]


def test_an_http_tool_in_another_output_namespace_is_refused_as_it_resolves() -> None:
    program = http_tool_program(lambda ns: ns.metadata.name.apply(lambda _: "other"), False)
    message = run_failing(program)
    assert "LanguageAgent 'helper'" in message
    assert "- http_tools[0]: HttpTool 'lookup' is in namespace 'other', the agent in 'apps'" in (
        message
    )


def test_an_http_tool_namespace_is_checked_when_it_resolves() -> None:
    bad = pulumi.Output.from_input  # a name Kubernetes refuses, known only as it resolves
    message = run_failing(
        lambda: (
            HttpTool("lookup", namespace=bad("x").apply(lambda n: "Bad_NS"), **HTTP_TOOL) and None
        )
    )
    assert "invalid HttpTool 'lookup'" in message
    assert "test_namespace_output.py:" in message
    assert "- namespace: " in message and "Bad_NS" in message


def memory_program(agent_output: bool, memory_output: bool, kind: str = "managed") -> Any:
    def program() -> None:
        ns = k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
        memory_args: dict[str, Any] = {"type": kind}
        if kind == "external":
            memory_args["address"] = {"value": "https://memory.example.com/mcp"}
        memory = LanguageMemory(
            "mem", namespace=ns.metadata.name if memory_output else "apps", **memory_args
        )
        namespace = ns.metadata.name if agent_output else "apps"
        LanguageAgent("helper", image=IMAGE, namespace=namespace, memory=memory)

    return program


def placed_objects(run: ProgramRun) -> list[str]:
    return sorted(
        json.dumps(m, sort_keys=True) for m in run.manifests() if m["kind"] != "Namespace"
    )


@pytest.mark.parametrize("kind", ["managed", "external"])
@pytest.mark.parametrize(
    ("agent_output", "memory_output"), [(False, True), (True, True)], ids=["agent-plain", "both"]
)
def test_a_memory_in_an_output_namespace_serves_its_agent(
    agent_output: bool, memory_output: bool, kind: str
) -> None:
    """The memory handed over as the object: its tool and the agent's memory settings are
    what a plain namespace gives, object for object (before: a field error)."""
    expected = placed_objects(run_program(memory_program(False, False, kind)))
    found = placed_objects(run_program(memory_program(agent_output, memory_output, kind)))
    assert found == expected
    assert any('"MEMORY_DB_PATH"' in m for m in found) == (kind == "managed")


def test_an_agent_in_an_output_namespace_refuses_a_memory_with_a_plain_one() -> None:
    with pytest.raises(SpecError) as caught:
        run_program(memory_program(True, False))
    [problem] = caught.value.problems
    assert problem.path == "memory"
    assert "LanguageMemory 'mem' has a plain namespace" in problem.message


def test_a_memory_whose_namespace_resolves_elsewhere_than_its_agents_is_a_field_error() -> None:
    def program() -> None:
        other = k8s.core.v1.Namespace("other", metadata={"name": "other"})
        memory = LanguageMemory("mem", namespace=other.metadata.name)
        LanguageAgent("helper", image=IMAGE, namespace="apps", memory=memory)

    message = run_failing(program)
    assert "invalid LanguageAgent 'helper'" in message
    assert "LanguageTool 'mem' is in namespace 'other', the agent in 'apps'" in message


def test_a_memory_namespace_is_checked_when_it_resolves() -> None:
    bad = pulumi.Output.from_input("x").apply(lambda n: "Bad_NS")
    message = run_failing(
        lambda: (
            LanguageMemory(
                "mem",
                namespace=bad,
                type="external",
                address={"value": "https://m.example.com/mcp"},
            )
            and None
        )
    )
    assert "invalid LanguageMemory 'mem'" in message
    assert "- namespace: " in message and "Bad_NS" in message


def test_an_agent_with_a_card_a_workspace_and_a_sidecar_in_an_output_namespace() -> None:
    skill = {"id": "s", "name": "S", "description": "d", "tags": ["t"]}

    def program() -> None:
        ns = k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
        files = LanguageTool(
            "files", image=IMAGE, namespace=ns.metadata.name, deployment_mode="sidecar", port=8181
        )
        LanguageAgent(
            "helper",
            image=IMAGE,
            namespace=ns.metadata.name,
            tools=[files],
            a2a={"description": "helps", "skills": [skill]},
            workspace={"size": "1Gi", "initial_files": {"a.txt": "hi"}},
        )

    run = run_program(program)
    placed = {
        (m["kind"], m["metadata"]["name"]): m["metadata"]["namespace"]
        for m in run.manifests()
        if m["kind"] != "Namespace"
    }
    assert {
        ("ConfigMap", "helper-a2a-card"),
        ("ConfigMap", "helper-initial-files"),
        ("PersistentVolumeClaim", "helper-workspace"),
        ("NetworkPolicy", "helper-a2a-ingress"),
    } <= placed.keys()
    assert set(placed.values()) == {"apps"}
    [sync] = [r for r in run.registrations if r.name.endswith("files-schema")]
    assert sync.inputs["namespace"] == "apps"
    assert "placeholder" not in json.dumps([r.inputs for r in run.registrations], default=str)
