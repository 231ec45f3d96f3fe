"""Models, personas, instructions and identity for agents: specs, the agent contract, the
Python API, rollouts, bad input (both ways) and secret canaries."""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from langop_infra import external_service
from langop_infra.components.agent import LanguageAgent
from langop_infra.components.cluster import LanguageCluster
from langop_infra.components.model import LanguageModel, LanguagePersona
from langop_infra.config._model import ModelSpec
from langop_infra.config.agent import AgentSpec
from langop_infra.config.checks._model_validation import fallback_cycles
from langop_infra.core.problems import SpecError
from langop_infra.manifests import _gateway_auth as gateway_auth
from langop_infra.netpol import IPAddress, Pod
from langop_infra.offline._mock_engine import ProgramRun, run_program
from langop_infra.offline._render import render_stack
from tests.test_bad_input import (
    PREFIX,
    api_problems,
    assert_cli_problem,
    render_cli,
    stack_text,
    write_stack,
)
from tests.test_network import network_of, workload_pods

REPO = Path(__file__).resolve().parents[1]
CANARY = "sk-CANARY-7f3c9e1a-never-print-me"
# The gateway's master key: for admins, never handed to an agent, never in plain text.
MASTER_CANARY = "sk-MASTER-CANARY-2d8e4b-admins-only"
GATEWAY_URL = "http://gateway.apps.svc.cluster.local:8000"

BASE: dict[str, Any] = {
    "namespace": "apps",
    "partOf": "shop",
    "externalServices": [{"name": "vllm", "namespace": "apps"}],
    "defaults": {
        "schemaSyncFrom": [{"cidr": "10.0.0.0/28"}],
        "modelGateway": {
            "masterKey": {"secretKeyRef": {"name": "gateway", "key": "master"}},
            "agentKeys": {"secretName": "gateway-agents"},
            "requireAuth": True,
        },
        "observability": {"otlpEndpoint": "http://otel.observability.svc.cluster.local:4318"},
    },
    "secrets": {
        "gateway": {"master": MASTER_CANARY},
        "gateway-agents": {"support": "support-gateway-key", "quick": "quick-gateway-key"},
        "anthropic": {"api-key": CANARY},
    },
    "models": [
        {
            "name": "claude",
            "provider": "anthropic",
            "modelName": "claude-sonnet-4-5",
            "apiKey": {"secretKeyRef": {"name": "anthropic"}},
            "fallbacks": ["local"],
        },
        {
            "name": "local",
            "provider": "openai-compatible",
            "modelName": "llama-3.1-8b",
            "endpoint": "http://vllm.apps.svc.cluster.local:8000/v1",
        },
        {
            "name": "direct-gpt",
            "provider": "openai",
            "modelName": "gpt-4o-mini",
            "gateway": False,
            "apiKey": {"secretKeyRef": {"name": "openai-key", "key": "token"}},
        },
    ],
    "personas": [{"name": "helper", "tone": "friendly", "expertise": "billing."}],
    "tools": [{"name": "search", "image": "ghcr.io/acme/search:1"}],
    "agents": [
        {
            "name": "support",
            "image": "ghcr.io/acme/support:1",
            "tools": [{"name": "search"}],
            "models": [{"name": "claude"}, {"name": "direct-gpt", "role": "fallback"}],
            "systemPrompt": "Answer billing questions.\nBe brief.",
            "persona": "helper",
        },
        {"name": "quick", "image": "ghcr.io/acme/quick:1", "model": "local"},
        {"name": "batch", "image": "ghcr.io/acme/batch:1"},
    ],
}


def cluster_doc(**changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(BASE)
    out.update(copy.deepcopy(changes))
    return out


def render_doc(render: Any, document: dict[str, Any]) -> Any:
    return render(lambda: LanguageCluster("c", document))


def env_of(rendered: Any, name: str) -> dict[str, Any]:
    deployment = rendered.find("Deployment", name, "apps")
    (container,) = [
        c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == name
    ]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def config_of(rendered: Any, agent: str) -> dict[str, Any]:
    return yaml.safe_load(rendered.find("ConfigMap", f"{agent}-config")["data"]["config.yaml"])


# --- specs ------------------------------------------------------------------------------------


def test_model_defaults_and_key_reference() -> None:
    model = ModelSpec.model_validate(
        {
            "name": "m",
            "provider": "openai",
            "modelName": "gpt-4o",
            "apiKey": {"secretKeyRef": {"name": "k"}},
        }
    )
    assert model.timeout == 300.0
    assert model.retry_policy.max_attempts == 3
    assert model.gateway is True
    assert (model.api_key.secret_key_ref.name, model.api_key.secret_key_ref.key) == (
        "k",
        "api-key",
    )


@pytest.mark.parametrize(
    ("fields", "path", "gist"),
    [
        ({"provider": "azure"}, "endpoint", "needs endpoint"),
        ({"provider": "ollama"}, "endpoint", "needs endpoint"),
        ({"provider": "custom", "endpoint": "http://x:1"}, "modelName", "<provider>/<model>"),
        ({"provider": "chatgpt"}, "provider", "'openai-compatible'"),
        ({"retryPolicy": {"maxAttempts": 11}}, "retryPolicy.maxAttempts", "at most"),
        ({"configuration": {"temperature": 2.5}}, "configuration.temperature", "at most 2"),
        ({"fallbacks": ["m"]}, "fallbacks", "lists itself"),
        ({"name": "Big_Model"}, "name", "DNS-1123"),
        ({"apiKey": CANARY}, "apiKey", "langop-infra:secrets"),
    ],
)
def test_model_field_errors_name_their_field(fields: dict, path: str, gist: str) -> None:
    data = {"name": "m", "provider": "openai", "modelName": "gpt-4o", **fields}
    found, _ = api_problems(cluster_doc(models=[data], agents=[]))
    assert any(gist in m for m in found.get(f"models[0].{path}", [])), found
    assert CANARY not in repr(found)


def test_instructions_limit_is_64_kib_in_bytes_and_system_prompt_is_an_alias() -> None:
    base = {"name": "a", "image": "x:1"}
    assert AgentSpec.model_validate({**base, "instructions": "é" * 32768}).instructions
    with pytest.raises(ValueError, match="65538 bytes"):
        AgentSpec.model_validate({**base, "instructions": "é" * 32769})
    assert AgentSpec.model_validate({**base, "systemPrompt": "hi"}).instructions == "hi"


def test_fallback_cycles_are_found_once_each() -> None:
    graph = {"a": ["b"], "b": ["c", "a"], "c": ["a"], "d": ["d2"], "d2": []}
    assert sorted(fallback_cycles(graph)) == [["a", "b", "a"], ["a", "b", "c", "a"]]


# --- the agent contract -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def base_render() -> Any:
    from tests.support.manifests import Rendered, validate_manifests

    rendered = Rendered(run_program(lambda: LanguageCluster("c", copy.deepcopy(BASE))))
    validate_manifests(rendered.manifests)
    return rendered


def test_agent_gets_identity_models_instructions_and_persona(base_render: Any) -> None:
    env = env_of(base_render, "support")
    assert env["AGENT_NAME"] == "support"
    assert env["AGENT_NAMESPACE"] == "apps"
    assert env["AGENT_CLUSTER_NAME"] == "apps"  # upstream: the cluster named after the namespace
    assert env["AGENT_UUID"] == str(
        uuid.uuid5(uuid.uuid5(uuid.NAMESPACE_DNS, "agents.langop.io"), "apps/support")
    )
    assert env["MODEL_ENDPOINT"] == f"{GATEWAY_URL},https://api.openai.com/v1"
    assert env["LLM_MODEL"] == "claude,gpt-4o-mini"
    assert env["MODEL_API_KEY"] == {"secretKeyRef": {"name": "gateway-agents", "key": "support"}}
    assert env["MODEL_DIRECT_GPT_API_KEY"] == {
        "secretKeyRef": {"name": "openai-key", "key": "token"}
    }
    assert env["AGENT_INSTRUCTIONS"] == "Answer billing questions.\nBe brief."
    assert env["AGENT_PERSONA"] == "Tone: friendly.\nExpertise: billing."
    assert env["OTEL_SERVICE_NAME"] == "agent-support"
    assert env["OTEL_RESOURCE_ATTRIBUTES"] == (
        "k8s.namespace.name=apps,k8s.deployment.name=support"
    )
    config = config_of(base_render, "support")
    assert config["agent"] == {"name": "support", "namespace": "apps"}
    assert config["models"] == {
        "claude": {
            "role": "primary",
            "provider": "anthropic",
            "model": "claude",
            "endpoint": GATEWAY_URL,
        },
        "direct-gpt": {
            "role": "fallback",
            "provider": "openai",
            "model": "gpt-4o-mini",
            "endpoint": "https://api.openai.com/v1",
            "apiKeyFromEnv": "MODEL_DIRECT_GPT_API_KEY",
        },
    }
    assert config["instructions"] == "Answer billing questions.\nBe brief."
    assert config["personas"] == [
        {"name": "helper", "tone": "friendly", "personality": "", "expertise": "billing."}
    ]


def test_ark_model_shorthand_and_an_agent_without_models(base_render: Any) -> None:
    quick = env_of(base_render, "quick")
    assert (quick["MODEL_ENDPOINT"], quick["LLM_MODEL"]) == (GATEWAY_URL, "local")
    assert config_of(base_render, "quick")["models"]["local"]["role"] == "primary"
    batch = env_of(base_render, "batch")
    assert batch["AGENT_NAME"] == "batch"
    assert not {"MODEL_ENDPOINT", "LLM_MODEL", "MODEL_API_KEY", "AGENT_PERSONA"} & set(batch)
    assert "models" not in config_of(base_render, "batch")


def test_gateway_serves_only_gateway_models_and_tools_get_otel(base_render: Any) -> None:
    config = yaml.safe_load(base_render.find("ConfigMap", "gateway-config")["data"]["config.yaml"])
    assert [m["model_name"] for m in config["model_list"]] == ["claude", "local"]
    assert config["router_settings"] == {"fallbacks": [{"claude": ["local"]}]}
    assert env_of(base_render, "search")["OTEL_SERVICE_NAME"] == "tool-search"
    assert env_of(base_render, "gateway")["OTEL_SERVICE_NAME"] == "gateway"
    assert base_render.run.outputs == {}


def test_only_agents_using_the_gateway_carry_its_access_label(base_render: Any) -> None:
    def labels(name: str) -> dict[str, str]:
        deployment = base_render.find("Deployment", name)
        return deployment["spec"]["template"]["metadata"]["labels"]

    assert labels("support")["access.langop.io/gateway"] == "true"
    assert labels("quick")["access.langop.io/gateway"] == "true"
    assert "access.langop.io/gateway" not in labels("batch")


def secret_refs(tree: object) -> set[tuple[str, str | None]]:
    """Every (Secret, key) a manifest fragment reads: env, envFrom and volumes."""
    found: set[tuple[str, str | None]] = set()
    if isinstance(tree, dict):
        if isinstance(ref := tree.get("secretKeyRef"), dict):
            found.add((ref["name"], ref["key"]))
        if isinstance(ref := tree.get("secretRef"), dict):
            found.add((ref["name"], None))
        if isinstance(ref := tree.get("secret"), dict) and "secretName" in ref:
            found.update((ref["secretName"], i["key"]) for i in ref.get("items", [{"key": None}]))
        for value in tree.values():
            found |= secret_refs(value)
    elif isinstance(tree, list):
        for value in tree:
            found |= secret_refs(value)
    return found


def test_each_agent_gets_its_own_gateway_key_and_never_the_master_key(base_render: Any) -> None:
    pods = {
        name: base_render.find("Deployment", name, "apps")["spec"]["template"]["spec"]
        for name in ("support", "quick", "batch")
    }
    assert secret_refs(pods["support"]) == {
        ("gateway-agents", "support"),
        ("openai-key", "token"),
    }
    assert secret_refs(pods["quick"]) == {("gateway-agents", "quick")}
    assert secret_refs(pods["batch"]) == set()
    assert env_of(base_render, "quick")["MODEL_API_KEY"] == {
        "secretKeyRef": {"name": "gateway-agents", "key": "quick"}
    }
    for name in pods:
        config = base_render.find("ConfigMap", f"{name}-config", "apps")
        assert MASTER_CANARY not in json.dumps(config)
    gateway_pod = base_render.find("Deployment", "gateway", "apps")["spec"]["template"]["spec"]
    assert secret_refs(gateway_pod) == {
        ("gateway", "master"),
        ("anthropic", "api-key"),
        ("gateway-agents", None),
    }


def test_the_gateway_loads_the_agent_auth_module_and_mounts_the_agents_keys(
    base_render: Any,
) -> None:
    config_map = base_render.find("ConfigMap", "gateway-config", "apps")
    config = yaml.safe_load(config_map["data"]["config.yaml"])
    assert config["general_settings"] == {
        "master_key": "os.environ/LITELLM_MASTER_KEY",
        "custom_auth": "langop_gateway_callers.user_api_key_auth",
    }
    assert config_map["data"]["langop_gateway_callers.py"] == (
        Path(gateway_auth.__file__).read_text(encoding="utf-8")
    )
    pod = base_render.find("Deployment", "gateway", "apps")["spec"]["template"]["spec"]
    [keys] = [v for v in pod["volumes"] if v["name"] == "agent-keys"]
    assert keys["secret"] == {"secretName": "gateway-agents", "optional": True}
    [container] = pod["containers"]
    assert {"name": "agent-keys", "mountPath": "/etc/litellm-agent-keys", "readOnly": True} in (
        container["volumeMounts"]
    )
    assert env_of(base_render, "gateway")["LANGOP_AGENT_KEYS_DIR"] == "/etc/litellm-agent-keys"


def test_user_env_overrides_an_injected_variable_with_a_warning(render: Any) -> None:
    document = cluster_doc()
    document["agents"][1]["env"] = {"LLM_MODEL": "my-model", "AGENT_NAME": "q"}
    rendered = render_doc(render, document)
    env = env_of(rendered, "quick")
    assert (env["LLM_MODEL"], env["AGENT_NAME"]) == ("my-model", "q")
    deployment = rendered.find("Deployment", "quick")
    names = [e["name"] for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]]
    assert names.count("LLM_MODEL") == 1
    assert [w for w in rendered.run.warnings if "no digest" not in w] == [
        "agent 'quick': env AGENT_NAME overrides the value langop-infra injects",
        "agent 'quick': env LLM_MODEL overrides the value langop-infra injects",
    ]


def test_render_prints_override_warnings_on_stderr(tmp_path: Path) -> None:
    document = cluster_doc()
    document["agents"][1]["env"] = {"LLM_MODEL": "my-model"}
    config = {f"{PREFIX}{k}": v for k, v in document.items()}
    code, out, err = render_cli(write_stack(tmp_path, stack_text(config)))
    assert code == 0, err
    assert not_about_digests(err) == (
        "langop-infra render: warning: agent 'quick': env LLM_MODEL overrides the value "
        "langop-infra injects\n"
    )
    assert "LLM_MODEL" in out


# --- rollouts ---------------------------------------------------------------------------------


def rollout_marks(rendered: Any) -> dict[str, dict[str, str]]:
    return {
        name: rendered.find("Deployment", name)["spec"]["template"]["metadata"]["annotations"]
        for name in ("gateway", "support", "quick", "batch")
    }


def test_a_model_change_rolls_the_gateway_and_its_agents_only(
    render: Any, base_render: Any
) -> None:
    before = rollout_marks(base_render)
    document = cluster_doc()
    document["models"][0]["configuration"] = {"temperature": 0.1}
    after = rollout_marks(render_doc(render, document))
    assert after["gateway"] != before["gateway"]
    assert after["support"] != before["support"]
    assert after["quick"] == before["quick"]
    assert after["batch"] == before["batch"]
    document = cluster_doc()
    document["models"][0]["apiKey"] = {"secretKeyRef": {"name": "anthropic", "key": "other"}}
    document["secrets"]["anthropic"]["other"] = "x"
    keyed = rollout_marks(render_doc(render, document))
    assert keyed["gateway"] != before["gateway"]
    assert keyed["support"] != before["support"]


# --- bad input, both ways ---------------------------------------------------------------------


def bad(edit: Any) -> dict[str, Any]:
    document = cluster_doc()
    edit(document)
    return document


BAD_CASES = [
    pytest.param(
        bad(lambda d: d["agents"][0]["models"].append({"name": "nope"})),
        "agents[0].models[2].name",
        "no model named 'nope'",
        id="unknown-model-reference",
    ),
    pytest.param(
        bad(lambda d: d["models"][1].update(fallbacks=["claude"])),
        "models[0].fallbacks",
        "fallback cycle claude -> local -> claude",
        id="fallback-cycle",
    ),
    pytest.param(
        bad(lambda d: d["models"][0].update(fallbacks=["ghost"])),
        "models[0].fallbacks[0]",
        "no model named 'ghost'",
        id="fallback-to-nothing",
    ),
    pytest.param(
        bad(lambda d: d["models"][0].update(apiKey=CANARY)),
        "models[0].apiKey",
        "plain-text key",
        id="plain-text-api-key",
    ),
    pytest.param(
        bad(lambda d: d["models"][1].pop("endpoint")),
        "models[1].endpoint",
        "needs endpoint",
        id="provider-without-endpoint",
    ),
    pytest.param(
        bad(lambda d: d["agents"][1].update(models=[{"name": "claude"}])),
        "agents[1].models",
        "not both",
        id="model-and-models",
    ),
    pytest.param(
        bad(lambda d: d["agents"][0].update(persona="pirate")),
        "agents[0].persona",
        "no persona named 'pirate'",
        id="unknown-persona",
    ),
    pytest.param(
        bad(lambda d: d["agents"][0].update(systemPrompt="x" * (64 * 1024 + 1))),
        "agents[0].systemPrompt",
        "over the limit of 65536",
        id="instructions-over-64-kib",
    ),
    pytest.param(
        bad(lambda d: d["defaults"]["modelGateway"].pop("masterKey")),
        "defaults.modelGateway.masterKey",
        "requireAuth",
        id="gateway-without-key-under-require-auth",
    ),
    pytest.param(
        bad(lambda d: d["defaults"]["modelGateway"].pop("agentKeys")),
        "defaults.modelGateway.agentKeys",
        "agents quick, support call the gateway, whose masterKey agents never get; set "
        "agentKeys: {secretName:",
        id="gateway-master-key-and-agents-without-agent-keys",
    ),
    pytest.param(
        bad(lambda d: [d["defaults"]["modelGateway"].pop(k) for k in ("masterKey", "requireAuth")]),
        "defaults.modelGateway.masterKey",
        "agentKeys needs a masterKey too: LiteLLM's proxy does not start without one",
        id="agent-keys-without-a-master-key",
    ),
    pytest.param(
        bad(lambda d: d["secrets"]["gateway-agents"].pop("quick")),
        "defaults.modelGateway.agentKeys.secretName",
        "secret 'gateway-agents' under secrets has no key 'quick' for agent 'quick'",
        id="agent-keys-secret-without-a-calling-agent",
    ),
]


@pytest.mark.parametrize(("document", "path", "gist"), BAD_CASES)
def test_python_api_refuses_before_registering(document: dict, path: str, gist: str) -> None:
    found, run = api_problems(document)
    assert any(gist in m for m in found.get(path, [])), found
    assert run.registrations == []
    assert CANARY not in repr(found) and MASTER_CANARY not in repr(found)


@pytest.mark.parametrize(("document", "path", "gist"), BAD_CASES)
def test_render_exits_2_naming_the_config_path(
    document: dict, path: str, gist: str, tmp_path: Path
) -> None:
    config = {f"{PREFIX}{k}": v for k, v in document.items()}
    code, out, err = render_cli(write_stack(tmp_path, stack_text(config)))
    assert_cli_problem(code, out, err, PREFIX + path, gist.replace("(", r"\("))
    assert CANARY not in err and MASTER_CANARY not in err


def test_base_document_renders(tmp_path: Path) -> None:
    config = {f"{PREFIX}{k}": v for k, v in cluster_doc().items()}
    code, out, err = render_cli(write_stack(tmp_path, stack_text(config)))
    assert (code, not_about_digests(err)) == (0, "")
    assert "kind: Deployment" in out


def not_about_digests(err: str) -> str:
    """stderr without the warnings for images given by tag (tests/test_image_pins.py): the
    base document's images, and the built-in gateway image, are tags."""
    return "".join(line for line in err.splitlines(True) if "has no digest" not in line)


# --- secrets never leak -----------------------------------------------------------------------


@pytest.mark.parametrize("canary", [CANARY, MASTER_CANARY], ids=["model-key", "master-key"])
def test_model_keys_appear_in_no_rendered_object_input_output_or_log(
    base_render: Any, canary: str
) -> None:
    """The canaries are a model API key and the gateway's master key under ``secrets``: only
    their Secrets may hold them, as secrets (the state's inputs included)."""
    assert canary not in repr(base_render.manifests)
    assert canary not in repr(base_render.run.outputs)
    assert not any(canary in line for line in base_render.run.logs)
    for registration in base_render.run.registrations:
        assert canary not in repr(registration.inputs) or registration.type.endswith("Secret")
    for name in ("anthropic", "gateway"):
        secret = base_render.find("Secret", name)
        assert canary not in repr(secret)


def test_render_stdout_and_stderr_never_hold_a_model_key(tmp_path: Path) -> None:
    config = {f"{PREFIX}{k}": v for k, v in cluster_doc().items()}
    code, out, err = render_cli(write_stack(tmp_path, stack_text(config)))
    assert code == 0
    for canary in (CANARY, MASTER_CANARY):
        assert canary not in out and canary not in err
    assert "os.environ/MODEL_CLAUDE_API_KEY" in out


# --- the Python API ---------------------------------------------------------------------------


def test_python_api_standalone_direct_model_agent_and_persona(render: Any) -> None:
    def program() -> None:
        model = LanguageModel(
            "gpt",
            provider="openai",
            model_name="gpt-4o-mini",
            gateway=False,
            api_key={"secretKeyRef": {"name": "openai"}},
            namespace="ai",
        )
        LanguageAgent(
            "helper",
            image="ghcr.io/acme/helper:1",
            namespace="ai",
            model=model,
            instructions="Be helpful.",
            persona=LanguagePersona(name="kind", tone="warm"),
        )

    rendered = render(program)
    deployment = rendered.find("Deployment", "helper", "ai")
    env = {
        e["name"]: e.get("value", e.get("valueFrom"))
        for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert env["MODEL_ENDPOINT"] == "https://api.openai.com/v1"
    assert env["LLM_MODEL"] == "gpt-4o-mini"
    assert env["MODEL_API_KEY"] == {"secretKeyRef": {"name": "openai", "key": "api-key"}}
    assert env["AGENT_PERSONA"] == "Tone: warm."
    assert env["AGENT_INSTRUCTIONS"] == "Be helpful."
    types = {r.type for r in rendered.run.registrations}
    assert "langop-infra:index:LanguageModel" in types


def test_python_api_model_by_name_built_earlier(render: Any) -> None:
    def program() -> None:
        external_service("ollama", "ai")  # runs already: see tests/test_standalone_outputs.py
        LanguageModel(
            "local",
            provider="ollama",
            model_name="llama3.2",
            endpoint="http://ollama.ai.svc.cluster.local:11434",
            gateway=False,
            namespace="ai",
        )
        LanguageAgent("helper", image="x/y:1", namespace="ai", models=[{"name": "local"}])

    env = env_of_ns(render(program), "helper", "ai")
    assert env["MODEL_ENDPOINT"] == "http://ollama.ai.svc.cluster.local:11434"
    assert "MODEL_API_KEY" not in env


def env_of_ns(rendered: Any, name: str, namespace: str) -> dict[str, Any]:
    deployment = rendered.find("Deployment", name, namespace)
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def test_a_second_standalone_gateway_model_in_one_namespace_is_refused() -> None:
    """Each standalone gateway model runs Service ``gateway``: two in one namespace would be
    one object; refused before anything of the second is registered."""

    def program() -> None:
        LanguageModel("m", provider="openai", model_name="gpt-4o", gateway=True)
        LanguageModel("n", provider="openai", model_name="gpt-4o-mini", gateway=True)

    run = ProgramRun()
    with pytest.raises(SpecError) as caught:
        run_program(program, into=run)
    assert [p.path for p in caught.value.problems] == ["gateway"]
    assert "LanguageModel 'n'" in str(caught.value)
    assert "LanguageModel 'm' runs the gateway of namespace 'default' already" in str(caught.value)
    assert not [r for r in run.registrations if r.name.endswith("n")]


def standalone_agent_on_a_gateway(gateway_defaults: dict[str, Any]) -> Any:
    """A LanguageCluster's gateway model handed to a standalone agent of its namespace."""

    def program() -> None:
        cluster = LanguageCluster(
            "team",
            {
                "namespace": "apps",
                "models": [{"name": "gpt", "provider": "openai", "model_name": "gpt-4o"}],
            },
        )
        LanguageAgent(
            "helper",
            image="ghcr.io/acme/helper:1",
            namespace="apps",
            model=cluster.models["gpt"],
            defaults={"modelGateway": gateway_defaults},
        )

    return program


def test_a_standalone_agent_is_refused_the_master_key_and_told_of_agent_keys() -> None:
    master = {"masterKey": {"secretKeyRef": {"name": "gateway", "key": "master"}}}
    run = ProgramRun()
    with pytest.raises(SpecError) as caught:
        run_program(standalone_agent_on_a_gateway(master), into=run)
    [problem] = caught.value.problems
    assert problem.path == "defaults.modelGateway.agentKeys"
    assert problem.message == (
        "agent helper calls the gateway, whose masterKey agents never get; set agentKeys: "
        "{secretName: <a Secret with one key per agent, named after it>}"
    )
    assert not [r for r in run.registrations if r.name.endswith("helper")]


def test_a_standalone_agent_gets_its_own_key_from_agent_keys() -> None:
    keys = {
        "masterKey": {"secretKeyRef": {"name": "gateway", "key": "master"}},
        "agentKeys": {"secretName": "gateway-agents"},
    }
    run = run_program(standalone_agent_on_a_gateway(keys))
    [deployment] = [r for r in run.manifests() if r["metadata"]["name"] == "helper"]
    assert secret_refs(deployment) == {("gateway-agents", "helper")}


def test_an_agent_naming_an_unknown_model_passes_it_on_with_a_warning() -> None:
    # ark's contract: a model id no LanguageModel serves reaches the agent as AGENT_MODEL.
    run = run_program(lambda: LanguageAgent("a", image="x/y:1", model="ghost"))
    [deployment] = [r for r in run.registrations if r.type == "kubernetes:apps/v1:Deployment"]
    env = {
        e["name"]: e.get("value")
        for e in deployment.inputs["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert env["AGENT_MODEL"] == "ghost"
    assert "MODEL_ENDPOINT" not in env
    assert any("'ghost'" in w and "no gateway serves it" in w for w in run.warnings)


def test_cluster_outputs_model_and_gateway_endpoints() -> None:
    def program() -> None:
        import pulumi

        cluster = LanguageCluster("c", copy.deepcopy(BASE))
        pulumi.export("models", cluster.model_endpoints)
        pulumi.export("gateway", cluster.gateway_endpoint)
        pulumi.export("claude", cluster.models["claude"].endpoint)

    outputs = run_program(program).outputs
    assert outputs["gateway"] == GATEWAY_URL
    assert outputs["claude"] == GATEWAY_URL
    assert outputs["models"] == {
        "claude": GATEWAY_URL,
        "local": GATEWAY_URL,
        "direct-gpt": "https://api.openai.com/v1",
    }


# --- reachability -----------------------------------------------------------------------------


def test_only_agents_with_models_reach_the_gateway_in_the_prod_stack() -> None:
    """Shipped prod stack (default-deny, restricted egress): the evaluator of
    langop_infra.netpol over the rendered NetworkPolicies."""
    manifests = render_stack(REPO, stack="prod").manifests()
    network = network_of(manifests)
    pods = workload_pods(manifests)
    gateway = pods.pop("gateway")
    assert {n: network.allows(p, gateway, 8000) for n, p in pods.items()} == {
        "researcher": True,
        "triage": False,
        "memory": False,
        "docs-search": False,
    }
    assert not network.allows(pods["researcher"], gateway, 8001)
    stranger = Pod("research", {"app": "debug"}, "debug")
    assert not network.allows(stranger, gateway, 8000)
    # The access label opens the gateway to pods of its own namespace only.
    elsewhere = Pod("other", dict(pods["researcher"].labels), "impostor")
    assert not network.allows(elsewhere, gateway, 8000)
    # The gateway's own egress: its models' egressTo and the collector, nothing else.
    assert network.allows(gateway, IPAddress("192.0.2.10"), 443)
    assert network.allows(gateway, IPAddress("198.18.0.7"), 443)
    assert not network.allows(gateway, IPAddress("203.0.113.9"), 443)
    collector = Pod("observability", {"app": "otel-collector"}, "otel")
    assert network.allows(gateway, collector, 4318)
    assert not network.allows(gateway, pods["memory"], 8080)


def test_open_egress_cluster_admits_exactly_the_agents_with_gateway_models(
    base_render: Any,
) -> None:
    network = network_of(base_render.manifests)
    pods = workload_pods(base_render.manifests)
    gateway = pods.pop("gateway")
    assert {n: network.allows(p, gateway, 8000) for n, p in pods.items()} == {
        "support": True,
        "quick": True,
        "batch": False,
        "search": False,
    }


def test_a_secure_value_under_models_is_refused_with_a_pointer_to_secrets(tmp_path: Path) -> None:
    text = stack_text(
        {
            f"{PREFIX}namespace": "apps",
            f"{PREFIX}models": [
                {
                    "name": "gpt",
                    "provider": "openai",
                    "modelName": "gpt-4o",
                    "apiKey": {"secure": "v1:ciphertext0AAABAQ"},
                }
            ],
        }
    )
    code, out, err = render_cli(write_stack(tmp_path, text))
    assert_cli_problem(code, out, err, f"{PREFIX}models[0].apiKey", "secure value")
    assert "ciphertext" not in err


def test_direct_models_only_deploy_no_gateway(render: Any) -> None:
    document = cluster_doc(
        models=[BASE["models"][2]],
        agents=[{"name": "solo", "image": "x/y:1", "model": "direct-gpt"}],
        defaults={},
    )
    rendered = render_doc(render, document)
    assert not [k for k in rendered.kinds() if k[0] != "Secret" and k[2].startswith("gateway")]
    env = env_of(rendered, "solo")
    assert env["MODEL_API_KEY"] == {"secretKeyRef": {"name": "openai-key", "key": "token"}}
    labels = rendered.find("Deployment", "solo")["spec"]["template"]["metadata"]["labels"]
    assert "access.langop.io/gateway" not in labels


def test_gateway_disabled_sends_every_model_direct(render: Any) -> None:
    document = cluster_doc(
        defaults={"modelGateway": {"enabled": False}},
        models=[BASE["models"][1]],
        agents=[BASE["agents"][1]],
    )
    rendered = render_doc(render, document)
    assert not [k for k in rendered.kinds() if k[0] != "Secret" and k[2].startswith("gateway")]
    env = env_of(rendered, "quick")
    assert (env["MODEL_ENDPOINT"], env["LLM_MODEL"]) == (
        "http://vllm.apps.svc.cluster.local:8000/v1",
        "llama-3.1-8b",
    )
