"""Issue 51, second round, for programs of standalone components: HttpTool fields and
credentials as Outputs, a user's own Secret as a credential, A2A peers handed over as
LanguageAgent objects and a LanguageModel running its own gateway, each with
``namespace=ns.metadata.name``; compared with the same program written with plain values."""

from __future__ import annotations

import gc
import json
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

from langop_infra import (
    HttpTool,
    LanguageAgent,
    LanguageMemory,
    LanguageModel,
    LanguageTool,
    SpecError,
    external_service,
)
from langop_infra.offline._engine_values import UNKNOWN_MARKER
from langop_infra.offline._mock_engine import ProgramRun, run_program
from tests.test_secrets_audit import leaks, places_in, secret_holders

PIN = "@sha256:" + "a" * 64
IMAGE = "ghcr.io/acme/agent:1.0.0" + PIN
CANARY = "cnry-http-credential-51c3"
URL = "https://weather.example.com/v1"
SECRET_TYPE = "kubernetes:core/v1:Secret"
SKILL = {"id": "research", "name": "Research", "description": "Finds out", "tags": ["search"]}


def weather(namespace: Any, **fields: Any) -> HttpTool:
    return HttpTool(
        "weather",
        namespace=namespace,
        display_name="Weather",
        description="Weather by city",
        **{"endpoint": URL, **fields},
    )


def env_of(run: ProgramRun, name: str) -> dict[str, Any]:
    [deployment] = [
        m for m in run.manifests() if m["kind"] == "Deployment" and m["metadata"]["name"] == name
    ]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def manifest(run: ProgramRun, kind: str, name: str) -> dict[str, Any]:
    [found] = [m for m in run.manifests() if m["kind"] == kind and m["metadata"]["name"] == name]
    return found


def objects(run: ProgramRun) -> list[dict[str, Any]]:
    """The run's objects but the Namespace, in a fixed order (Outputs resolve in any)."""
    found = [m for m in run.manifests() if m["kind"] != "Namespace"]
    return sorted(found, key=lambda m: json.dumps([m["kind"], m["metadata"]], sort_keys=True))


def failing(program: Callable[[], None]) -> str:
    with pytest.raises(Exception) as caught:
        run_program(program)
    gc.collect()  # as tests/test_namespace_output.run_failing: futures finalized here
    return str(caught.value)


# --- HttpTool ---------------------------------------------------------------------------------


def test_an_http_tool_endpoint_given_as_an_output_reaches_the_tool_and_its_agents() -> None:
    def program(endpoint: Any) -> Callable[[], None]:
        def run() -> None:
            ns = k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
            tool = weather(ns.metadata.name, endpoint=endpoint)
            LanguageAgent("helper", image=IMAGE, namespace=ns.metadata.name, http_tools=[tool])

        return run

    given = run_program(program(pulumi.Output.from_input(URL).apply(str)))
    plain = run_program(program(URL))
    assert objects(given) == objects(plain)
    assert {"ConfigMap", "Deployment", "NetworkPolicy"} <= {m["kind"] for m in given.manifests()}
    tools = json.loads(env_of(given, "helper")["AGENT_WEBHOOK_TOOLS"])
    assert [(t["name"], t["url"]) for t in tools] == [("weather", URL)]
    document = json.loads(manifest(given, "ConfigMap", "weather.http-tool")["data"]["tool.json"])
    assert document["url"] == URL


def test_an_unknown_http_tool_endpoint_leaves_the_rest_of_the_agent_known() -> None:
    def program() -> None:
        svc = k8s.core.v1.Service("weather-api", metadata={"name": "weather-api"})
        endpoint = svc.spec.cluster_ip.apply(lambda ip: f"http://{ip}:8080/v1")
        LanguageAgent("helper", image=IMAGE, http_tools=[weather("default", endpoint=endpoint)])

    run = run_program(program, preview=True)
    env = env_of(run, "helper")
    assert env["AGENT_WEBHOOK_TOOLS"] == UNKNOWN_MARKER
    assert env["AGENT_NAME"] == "helper"
    assert env["AGENT_CONFIG_PATH"] == "/etc/agent/config.yaml"
    document = manifest(run, "ConfigMap", "weather.http-tool")["data"]["tool.json"]
    assert document == UNKNOWN_MARKER
    assert "placeholder" not in json.dumps(run.manifests(), default=str)


def test_an_http_tool_credential_given_as_a_secret_output_goes_only_into_its_secret() -> None:
    def program() -> None:
        ns = k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
        credential = {"type": "bearer", "value": pulumi.Output.secret(CANARY)}
        tool = weather(ns.metadata.name, authentication=credential)
        LanguageAgent("helper", image=IMAGE, namespace=ns.metadata.name, http_tools=[tool])

    run = run_program(program)
    assert env_of(run, "helper")["AGENT_WEBHOOK_WEATHER_AUTH"] == {
        "secretKeyRef": {"name": "weather.http-tool", "key": "credential"}
    }
    assert leaks(places_in(run), [CANARY]) == []
    holders = {h for text, hs in secret_holders(run).items() if CANARY in text for h in hs}
    assert {(t, n.rsplit("/", 1)[-1]) for t, n in holders} == {(SECRET_TYPE, "weather-credential")}
    secret = manifest(run, "Secret", "weather.http-tool")
    assert secret["metadata"]["namespace"] == "apps"


def test_an_http_tool_credential_a_pod_of_another_namespace_cannot_read_is_refused() -> None:
    def program() -> None:
        credential = {"type": "bearer", "value": pulumi.Output.secret(CANARY)}
        tool = weather("tools", authentication=credential)
        LanguageAgent("helper", image=IMAGE, namespace="apps", http_tools=[tool])

    run = ProgramRun()
    with pytest.raises(SpecError) as caught:
        run_program(program, into=run)
    [problem] = caught.value.problems
    assert problem.path == "http_tools[0]"
    assert "keeps its credential in a Secret of namespace 'tools'" in problem.message
    assert "LanguageAgent 'helper'" in str(caught.value)
    assert not [r for r in run.registrations if "helper" in r.name]


def test_an_http_tool_credential_in_the_users_own_secret_is_read_from_it() -> None:
    def program() -> None:
        token = k8s.core.v1.Secret(
            "token",
            metadata={"name": "weather-token", "namespace": "apps"},
            string_data={"token": pulumi.Output.secret(CANARY)},
        )
        credential = {"type": "bearer", "secretRef": {"name": token, "key": "token"}}
        tool = weather("apps", authentication=credential)
        LanguageAgent("helper", image=IMAGE, namespace="apps", http_tools=[tool])

    run = run_program(program)
    assert env_of(run, "helper")["AGENT_WEBHOOK_WEATHER_AUTH"] == {
        "secretKeyRef": {"name": "weather-token", "key": "token"}
    }
    assert leaks(places_in(run), [CANARY]) == []
    assert [m["metadata"]["name"] for m in run.manifests() if m["kind"] == "Secret"] == [
        "weather-token"
    ]


def test_an_http_tool_credential_given_two_ways_is_a_field_error() -> None:
    def program() -> None:
        credential = {
            "type": "bearer",
            "value": pulumi.Output.secret(CANARY),
            "secretRef": {"name": "other", "key": "k"},
        }
        weather("apps", authentication=credential)

    with pytest.raises(SpecError) as caught:
        run_program(program)
    assert [str(p) for p in caught.value.problems] == [
        "authentication: give the credential as value or as secretRef, not both; remove one"
    ]
    assert CANARY not in str(caught.value)


# --- A2A peers as objects ---------------------------------------------------------------------


def pair(namespace: Callable[[], Any], by_object: bool) -> Callable[[], None]:
    def program() -> None:
        space = namespace()
        researcher = LanguageAgent(
            "researcher",
            image=IMAGE,
            namespace=space,
            a2a={"description": "researches", "skills": [SKILL]},
        )
        peer = researcher if by_object else {"name": "researcher"}
        LanguageAgent("planner", image=IMAGE, namespace=space, agents=[peer])

    return program


def named_namespace() -> Any:
    return k8s.core.v1.Namespace("apps", metadata={"name": "apps"}).metadata.name


def test_a2a_peers_given_as_objects_in_an_output_namespace_as_by_name() -> None:
    """The pair with a Namespace Output and the peer as an object registers what the pair
    with ``namespace="apps"`` and the peer by name does, object for object."""
    given = run_program(pair(named_namespace, by_object=True))
    plain = run_program(pair(lambda: "apps", by_object=False))
    assert objects(given) == objects(plain)
    peers = json.loads(env_of(given, "planner")["A2A_PEERS"])
    assert [(p["name"], p["url"]) for p in peers] == [
        ("researcher", "http://researcher.apps.svc.cluster.local:8080/")
    ]
    syncs = [r for r in given.registrations if r.name.endswith("researcher-card")]
    assert [s.inputs["namespace"] for s in syncs] == ["apps"]
    assert "placeholder" not in json.dumps([r.inputs for r in given.registrations], default=str)


def test_a_peer_object_in_another_resolved_namespace_is_a_field_error() -> None:
    def program() -> None:
        other = k8s.core.v1.Namespace("other", metadata={"name": "other"})
        apps = k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
        researcher = LanguageAgent(
            "researcher",
            image=IMAGE,
            namespace=other.metadata.name,
            a2a={"description": "researches", "skills": [SKILL]},
        )
        LanguageAgent("planner", image=IMAGE, namespace=apps.metadata.name, agents=[researcher])

    message = failing(program)
    assert "invalid LanguageAgent 'planner'" in message
    assert "- agents[0]: LanguageAgent 'researcher' is in namespace 'other', the agent in " in (
        message
    )


# --- a LanguageModel with its own gateway -----------------------------------------------------

MODEL = {"provider": "openai", "model_name": "gpt-4o-mini", "gateway": True}
CLUSTER_MODEL = {"name": "gpt", "provider": "openai", "modelName": "gpt-4o-mini"}


def test_a_standalone_gateway_model_runs_the_gateway_a_cluster_would() -> None:
    """In an Output namespace it registers the gateway objects a LanguageCluster registers for
    the same model, and its agent calls that gateway."""
    from langop_infra import LanguageCluster

    def standalone() -> None:
        space = named_namespace()
        model = LanguageModel("gpt", namespace=space, **MODEL)
        LanguageAgent("helper", image=IMAGE, namespace=space, model=model)
        pulumi.export("endpoint", model.endpoint)

    def cluster() -> None:
        agent = {"name": "helper", "image": IMAGE, "model": "gpt"}
        LanguageCluster("apps", {"namespace": "apps", "models": [CLUSTER_MODEL], "agents": [agent]})

    given, expected = run_program(standalone), run_program(cluster)
    kinds = ("Deployment", "Service", "ConfigMap", "NetworkPolicy")
    for kind in kinds:
        name = "gateway-config" if kind == "ConfigMap" else "gateway"
        name = "gateway-ingress" if kind == "NetworkPolicy" else name
        assert manifest(given, kind, name) == manifest(expected, kind, name), kind
    endpoint = "http://gateway.apps.svc.cluster.local:8000"
    assert env_of(given, "helper")["MODEL_ENDPOINT"] == endpoint
    assert given.outputs["endpoint"] == endpoint


def test_a_gateway_model_of_another_resolved_namespace_is_a_field_error() -> None:
    def program() -> None:
        other = k8s.core.v1.Namespace("other", metadata={"name": "other"})
        model = LanguageModel("gpt", namespace=other.metadata.name, **MODEL)
        LanguageAgent("helper", image=IMAGE, namespace="apps", model=model)

    message = failing(program)
    assert "invalid LanguageAgent 'helper'" in message
    assert "- model: LanguageModel 'gpt' is in namespace 'other', the agent in 'apps'" in message


# --- addresses of in-cluster Services (issue 51 §4) -------------------------------------------

SEARCH = "http://search.tools.svc.cluster.local:8080/mcp"


def test_an_address_of_a_service_the_program_does_not_make_is_a_field_error() -> None:
    """Each kind of address a user writes, refused with its field and the fix, before any of
    the component's objects is registered."""
    cases: list[tuple[Callable[[], object], str]] = [
        (
            lambda: LanguageAgent(
                "helper", image=IMAGE, mcp_servers=[{"name": "search", "url": SEARCH}]
            ),
            "mcp_servers[0].url",
        ),
        (
            lambda: LanguageAgent(
                "helper",
                image=IMAGE,
                agents=[{"name": "far", "url": "http://far.tools.svc.cluster.local:8080/"}],
            ),
            "agents[0].url",
        ),
        (
            lambda: LanguageModel(
                "local",
                provider="ollama",
                model_name="llama3.2",
                endpoint="http://ollama.ai.svc.cluster.local:11434",
            ),
            "endpoint",
        ),
        (
            lambda: LanguageMemory(
                "notes", type="external", address={"value": "http://mem.tools.svc:8080"}
            ),
            "address.value",
        ),
    ]
    for build, field in cases:
        run = ProgramRun()
        with pytest.raises(SpecError) as caught:
            run_program(build, into=run)
        [problem] = caught.value.problems
        assert problem.path == field
        assert "which this program does not create, so pods would call nothing" in problem.message
        assert "langop_infra.external_service(" in problem.message
        assert not [r for r in run.registrations if r.type.startswith("kubernetes:")], field


def test_an_address_of_a_service_made_before_or_declared_is_accepted() -> None:
    def program() -> None:
        LanguageTool("search", image=IMAGE, namespace="tools")
        external_service("ollama", "ai")
        LanguageModel(
            "local",
            provider="ollama",
            model_name="llama3.2",
            endpoint="http://ollama.ai.svc.cluster.local:11434",
        )
        LanguageAgent("helper", image=IMAGE, mcp_servers=[{"name": "search", "url": SEARCH}])

    env = env_of(run_program(program), "helper")
    assert SEARCH in env["AGENT_MCP_SERVERS"]


def test_a_service_in_an_output_namespace_counts_by_its_name() -> None:
    def program() -> None:
        tools = k8s.core.v1.Namespace("tools", metadata={"name": "tools"})
        LanguageTool("search", image=IMAGE, namespace=tools.metadata.name)
        LanguageAgent("helper", image=IMAGE, mcp_servers=[{"name": "search", "url": SEARCH}])

    env = env_of(run_program(program), "helper")
    assert SEARCH in env["AGENT_MCP_SERVERS"]
