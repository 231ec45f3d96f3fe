"""The model gateway's LiteLLM config, read by the real LiteLLM library, and its Kubernetes
objects checked against the official schemas and the restricted Pod Security Standard.

LiteLLM runs from its own virtualenv ``.venv-litellm`` (created by .ci/run; its pins clash with
this environment's and it weighs about 300 MB): ``tests/support/litellm_router.py`` builds the
Router there and reports what it made of the config. Those tests skip without it.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from langop_infra.config._model import ModelGatewayDefaults, ModelSpec
from langop_infra.config._pod import Security
from langop_infra.manifests import _gateway as gateway
from tests.fake_openai import FakeOpenAI
from tests.support.loopback import serve
from tests.support.manifests import validate_manifests
from tests.test_pod_security import RULES, resources_bounded

REPO = Path(__file__).resolve().parents[1]
LITELLM_PYTHON = REPO / ".venv-litellm" / "bin" / "python"
ROUTER_SCRIPT = REPO / "tests" / "support" / "litellm_router.py"
needs_litellm = pytest.mark.skipif(
    not LITELLM_PYTHON.exists(),
    reason="LiteLLM is not installed in .venv-litellm; .ci/run creates it",
)


def models(*docs: dict[str, Any]) -> list[ModelSpec]:
    return [ModelSpec.model_validate(d) for d in docs]


EVERY_PROVIDER = models(
    {
        "name": "fast",
        "provider": "openai-compatible",
        "modelName": "llama-3.1-8b",
        "endpoint": "http://vllm.models.svc.cluster.local:8000/v1",
        "fallbacks": ["smart", "gpt"],
        "timeout": "30s",
        "retryPolicy": {"maxAttempts": 0},
        "rateLimits": {"requestsPerMinute": 120, "tokensPerMinute": 90000},
        "configuration": {"temperature": 0.2, "maxTokens": 512, "stopSequences": ["END"]},
    },
    {
        "name": "smart",
        "provider": "anthropic",
        "modelName": "claude-sonnet-4-5",
        "apiKey": {"secretKeyRef": {"name": "anthropic"}},
        "timeout": "2m",
        "retryPolicy": {"maxAttempts": 5},
    },
    {
        "name": "gpt",
        "provider": "openai",
        "modelName": "gpt-4o-mini",
        "apiKey": {"secretKeyRef": {"name": "openai", "key": "token"}},
    },
    {
        "name": "azure-gpt",
        "provider": "azure",
        "modelName": "gpt-4o-deployment",
        "endpoint": "https://acme.openai.azure.com",
        "apiKey": {"secretKeyRef": {"name": "azure"}},
    },
    {
        "name": "claude-aws",
        "provider": "bedrock",
        "modelName": "anthropic.claude-3-5-sonnet-20240620-v1:0",
        "apiKey": {"secretKeyRef": {"name": "bedrock"}},
    },
    {
        "name": "gemini",
        "provider": "vertex",
        "modelName": "gemini-1.5-pro",
        "apiKey": {"secretKeyRef": {"name": "gcp", "key": "service-account.json"}},
    },
    {
        "name": "local",
        "provider": "ollama",
        "modelName": "llama3.2",
        "endpoint": "http://ollama.models.svc.cluster.local:11434",
    },
    {
        "name": "vllm",
        "provider": "custom",
        "modelName": "hosted_vllm/qwen2.5-7b",
        "endpoint": "http://vllm.models.svc.cluster.local:8000/v1",
    },
)
# What LiteLLM's own provider resolution must make of each entry.
EXPECTED_PROVIDER = {
    "fast": ("openai", "llama-3.1-8b"),
    "smart": ("anthropic", "claude-sonnet-4-5"),
    "gpt": ("openai", "gpt-4o-mini"),
    "azure-gpt": ("azure", "gpt-4o-deployment"),
    "claude-aws": ("bedrock", "anthropic.claude-3-5-sonnet-20240620-v1:0"),
    "gemini": ("vertex_ai", "gemini-1.5-pro"),
    "local": ("ollama_chat", "llama3.2"),
    "vllm": ("hosted_vllm", "qwen2.5-7b"),
}


def litellm_router(
    config: dict[str, Any],
    env: dict[str, str],
    router: dict[str, Any] | None = None,
    completion: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What LiteLLM's Router, built the way the proxy builds one from config.yaml, makes of
    ``config`` with ``env`` set; with ``completion``, also the text of that completion."""
    request = {"config": config, "router": router or {}, "completion": completion}
    done = subprocess.run(
        [str(LITELLM_PYTHON), str(ROUTER_SCRIPT)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **env},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def key_env() -> dict[str, str]:
    """Test values for every ``os.environ/`` reference; LiteLLM resolves them itself."""
    values = {gateway.api_key_env_name(m.name): f"test-key-{m.name}" for m in EVERY_PROVIDER}
    values[gateway.MASTER_KEY_ENV] = "sk-test-master"
    return values


@pytest.fixture(scope="module")
def every_provider(key_env: dict[str, str]) -> dict[str, Any]:
    """The Router's view of every provider's model, with the keys in its environment."""
    return litellm_router(gateway.gateway_config(EVERY_PROVIDER, master_key=True), key_env)


@pytest.mark.slow
@needs_litellm
def test_litellm_router_sees_the_models_fallbacks_retries_and_timeouts(
    every_provider: dict[str, Any],
) -> None:
    router = every_provider
    assert router["model_names"] == [m.name for m in EVERY_PROVIDER]
    assert router["fallbacks"] == [{"fast": ["smart", "gpt"]}]
    seen = router["deployments"]
    assert {n: p["timeout"] for n, p in seen.items()} == {
        "fast": 30.0,
        "smart": 120.0,
        **{n: 300.0 for n in ("gpt", "azure-gpt", "claude-aws", "gemini", "local", "vllm")},
    }
    assert {n: p["max_retries"] for n, p in seen.items()} == dict.fromkeys(seen, 0)
    assert {n: p["num_retries"] for n, p in seen.items()} == {
        "fast": 0,
        "smart": 5,
        **{n: 3 for n in ("gpt", "azure-gpt", "claude-aws", "gemini", "local", "vllm")},
    }
    assert (seen["fast"]["rpm"], seen["fast"]["tpm"]) == (120, 90000)
    assert seen["fast"]["api_base"] == "http://vllm.models.svc.cluster.local:8000/v1"
    assert seen["azure-gpt"]["api_base"] == "https://acme.openai.azure.com"
    for name, (provider, model) in EXPECTED_PROVIDER.items():
        assert router["providers"][name] == [model, provider], name


@pytest.mark.slow
@needs_litellm
def test_keys_reach_litellm_only_through_env_references(
    key_env: dict[str, str], every_provider: dict[str, Any]
) -> None:
    config = gateway.gateway_config(EVERY_PROVIDER, master_key=True)
    text = gateway.gateway_config_yaml(EVERY_PROVIDER, master_key=True)
    for value in key_env.values():
        assert value not in text
    assert config["general_settings"] == {"master_key": "os.environ/LITELLM_MASTER_KEY"}
    seen = every_provider["deployments"]
    assert seen["smart"]["api_key"] == "test-key-smart"
    assert seen["gpt"]["api_key"] == "test-key-gpt"
    assert seen["gemini"]["vertex_credentials"] == "test-key-gemini"
    assert "api_key" not in seen["local"]


def test_request_defaults_are_litellm_params() -> None:
    params = gateway.litellm_params(EVERY_PROVIDER[0])
    assert params["temperature"] == 0.2
    assert params["max_tokens"] == 512
    assert params["stop"] == ["END"]
    assert "top_p" not in params


@pytest.mark.slow
@needs_litellm
def test_litellm_router_falls_back_to_the_next_model() -> None:
    """A completion through LiteLLM's Router: the primary fails, the fallback answers."""
    fake = FakeOpenAI(failing={"broken-model"})
    with serve(fake.app()) as url:
        config = gateway.gateway_config(
            models(
                {
                    "name": "primary",
                    "provider": "openai-compatible",
                    "modelName": "broken-model",
                    "endpoint": f"{url}/v1",
                    "retryPolicy": {"maxAttempts": 0},
                    "fallbacks": ["steady"],
                },
                {
                    "name": "steady",
                    "provider": "openai-compatible",
                    "modelName": "steady-model",
                    "endpoint": f"{url}/v1",
                    "apiKey": {"secretKeyRef": {"name": "steady"}},
                    "retryPolicy": {"maxAttempts": 0},
                },
            ),
            master_key=False,
        )
        router = litellm_router(
            config,
            {"MODEL_STEADY_API_KEY": "test-key-steady"},
            router={"num_retries": 0},
            completion={"model": "primary", "messages": [{"role": "user", "content": "hi"}]},
        )
    assert router["completion"] == "hello from steady-model"
    assert fake.models_asked() == ["broken-model", "steady-model"]
    assert fake.requests[1]["authorization"] == "Bearer test-key-steady"


# --- Kubernetes objects ------------------------------------------------------------------------

GATEWAY = ModelGatewayDefaults.model_validate(
    {
        "image": "ghcr.io/berriai/litellm-non_root@sha256:" + "ab" * 32,
        "masterKey": {"secretKeyRef": {"name": "gateway-master", "key": "key"}},
        "requireAuth": True,
    }
)


def objects(**kwargs: Any) -> list[dict[str, Any]]:
    return gateway.gateway_objects(
        EVERY_PROVIDER,
        kwargs.pop("gateway_defaults", GATEWAY),
        namespace="apps",
        part_of="shop",
        security=Security(),
        **kwargs,
    )


def by_kind(manifests: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {m["kind"]: m for m in manifests}


def test_gateway_objects_pass_strict_kubernetes_validation() -> None:
    manifests = objects(image_pull_policy="IfNotPresent")
    validate_manifests(copy.deepcopy(manifests))
    assert [(m["kind"], m["metadata"]["name"]) for m in manifests] == [
        ("ConfigMap", "gateway-config"),
        ("Deployment", "gateway"),
        ("Service", "gateway"),
    ]
    service = by_kind(manifests)["Service"]["spec"]
    assert service["type"] == "ClusterIP"
    assert service["ports"] == [
        {"name": "http", "port": 8000, "targetPort": "http", "protocol": "TCP"}
    ]


def test_gateway_pod_meets_the_restricted_standard_with_bounds_and_probes() -> None:
    template = by_kind(objects())["Deployment"]["spec"]["template"]
    violations = {name: rule(template) for name, rule in RULES.items()}
    assert violations == {name: [] for name in RULES}
    assert resources_bounded(template) == []
    (container,) = template["spec"]["containers"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert template["spec"]["automountServiceAccountToken"] is False
    assert container["livenessProbe"]["httpGet"] == {"path": "/health/liveliness", "port": 8000}
    assert container["readinessProbe"]["httpGet"] == {"path": "/health/readiness", "port": 8000}
    assert container["startupProbe"]["httpGet"]["path"] == "/health/liveliness"
    writable = {m["mountPath"] for m in container["volumeMounts"] if not m.get("readOnly")}
    assert writable == {"/tmp", "/var/lib/litellm"}
    volumes = {v["name"]: v for v in template["spec"]["volumes"]}
    assert all(
        "emptyDir" in volumes[m["name"]] for m in container["volumeMounts"] if not m.get("readOnly")
    )
    assert container["args"] == ["--config", "/etc/litellm/config.yaml", "--port", "8000"]


def test_gateway_keys_come_only_from_secret_key_refs() -> None:
    manifests = objects()
    env = by_kind(manifests)["Deployment"]["spec"]["template"]["spec"]["containers"][0]["env"]
    secret_env = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in env if "valueFrom" in e}
    assert secret_env == {
        "LITELLM_MASTER_KEY": {"name": "gateway-master", "key": "key"},
        "MODEL_SMART_API_KEY": {"name": "anthropic", "key": "api-key"},
        "MODEL_GPT_API_KEY": {"name": "openai", "key": "token"},
        "MODEL_AZURE_GPT_API_KEY": {"name": "azure", "key": "api-key"},
        "MODEL_CLAUDE_AWS_API_KEY": {"name": "bedrock", "key": "api-key"},
        "MODEL_GEMINI_API_KEY": {"name": "gcp", "key": "service-account.json"},
    }
    literal = {e["name"]: e["value"] for e in env if "value" in e}
    assert not any("KEY" in name for name in literal)
    config = by_kind(manifests)["ConfigMap"]["data"]["config.yaml"]
    assert "os.environ/MODEL_SMART_API_KEY" in config


def test_a_config_or_key_change_rolls_the_gateway() -> None:
    def rollout(manifests: list[dict[str, Any]]) -> str:
        meta = by_kind(manifests)["Deployment"]["spec"]["template"]["metadata"]
        return meta["annotations"][gateway.CONFIG_CHECKSUM_ANNOTATION]

    base = rollout(objects())
    assert rollout(objects()) == base
    changed = GATEWAY.model_copy(
        update={
            "master_key": GATEWAY.master_key.model_copy(
                update={
                    "secret_key_ref": GATEWAY.master_key.secret_key_ref.model_copy(
                        update={"key": "other"}
                    )
                }
            )
        }
    )
    assert rollout(objects(gateway_defaults=changed)) != base
    hotter = [
        m.model_copy(
            update={"configuration": m.configuration.model_copy(update={"temperature": 1.0})}
        )
        if m.name == "fast"
        else m
        for m in EVERY_PROVIDER
    ]
    manifests = gateway.gateway_objects(
        hotter, GATEWAY, namespace="apps", part_of="shop", security=Security()
    )
    assert rollout(manifests) != base
