"""The real LiteLLM proxy, started from the gateway's generated ConfigMap and container env,
on 127.0.0.1 in front of a fake OpenAI-compatible server (tests/fake_openai.py: no real
provider is reachable here).

LiteLLM's proxy extras clash with this environment's pins, so it runs from its own virtualenv
``.venv-litellm`` (built by ``.ci/side-envs .venv-litellm``), started by
tests/support/litellm_proxy.py; these tests skip without it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from langop_infra.config._model import ModelGatewayDefaults, ModelSpec
from langop_infra.config._pod import Security
from langop_infra.manifests import _gateway as gateway
from tests.fake_openai import FakeOpenAI
from tests.support import litellm_proxy
from tests.support.loopback import serve

MASTER_KEY = "sk-test-master-key"
STEADY_KEY = "test-key-steady"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not litellm_proxy.LITELLM.exists(), reason=litellm_proxy.MISSING),
]


def gateway_manifests(fake_url: str) -> dict[str, dict[str, Any]]:
    models = [
        ModelSpec.model_validate(d)
        for d in (
            {
                "name": "primary",
                "provider": "openai-compatible",
                "modelName": "broken-model",
                "endpoint": f"{fake_url}/v1",
                "retryPolicy": {"maxAttempts": 0},
                "fallbacks": ["steady"],
            },
            {
                "name": "flaky",
                "provider": "openai-compatible",
                "modelName": "always-broken",
                "endpoint": f"{fake_url}/v1",
                "retryPolicy": {"maxAttempts": 2},
            },
            {
                "name": "steady",
                "provider": "openai-compatible",
                "modelName": "steady-model",
                "endpoint": f"{fake_url}/v1",
                "apiKey": {"secretKeyRef": {"name": "steady"}},
                "retryPolicy": {"maxAttempts": 0},
            },
        )
    ]
    defaults = ModelGatewayDefaults.model_validate(
        {"masterKey": {"secretKeyRef": {"name": "gateway", "key": "master"}}, "requireAuth": True}
    )
    manifests = gateway.gateway_objects(
        models, defaults, namespace="apps", part_of="apps", security=Security()
    )
    return {m["kind"]: m for m in manifests}


def container_env(container: dict[str, Any], data_dir: Path) -> dict[str, str]:
    """The container's env as the kubelet would set it: Secret refs get test values, and the
    writable mounts point into the test's own directory."""
    secrets = {("gateway", "master"): MASTER_KEY, ("steady", "api-key"): STEADY_KEY}
    env = {}
    for var in container["env"]:
        if "value" in var:
            env[var["name"]] = var["value"].replace(gateway.DATA_DIR, str(data_dir))
        else:
            ref = var["valueFrom"]["secretKeyRef"]
            env[var["name"]] = secrets[(ref["name"], ref["key"])]
    return env


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, FakeOpenAI]]:
    root = tmp_path_factory.mktemp("gateway")
    fake = FakeOpenAI(failing={"broken-model", "always-broken"})
    with serve(fake.app()) as fake_url:
        objects = gateway_manifests(fake_url)
        config = root / "config.yaml"
        config.write_text(objects["ConfigMap"]["data"]["config.yaml"])
        (container,) = objects["Deployment"]["spec"]["template"]["spec"]["containers"]
        env = {**litellm_proxy.base_env(root), **container_env(container, root / "var-lib-litellm")}
        with litellm_proxy.running(root, container, config, env) as url:
            yield url, fake


def chat(url: str, model: str, key: str | None = MASTER_KEY) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.post(
        f"{url}/v1/chat/completions",
        json={"model": model, "messages": [{"role": "user", "content": "hi"}]},
        headers=headers,
        timeout=60,
    )


@pytest.mark.slow
def test_probe_paths_answer(proxy: tuple[str, FakeOpenAI]) -> None:
    url, _ = proxy
    assert httpx.get(url + gateway.LIVENESS_PATH, timeout=5).status_code == 200
    assert httpx.get(url + gateway.READINESS_PATH, timeout=5).status_code == 200


def test_a_completion_reaches_the_server_with_the_model_and_key(
    proxy: tuple[str, FakeOpenAI],
) -> None:
    url, fake = proxy
    before = len(fake.requests)
    response = chat(url, "steady")
    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["message"]["content"] == "hello from steady-model"
    (request,) = fake.requests[before:]
    assert request["model"] == "steady-model"
    assert request["authorization"] == f"Bearer {STEADY_KEY}"


def test_the_gateway_falls_back_when_the_primary_fails(proxy: tuple[str, FakeOpenAI]) -> None:
    url, fake = proxy
    before = len(fake.requests)
    response = chat(url, "primary")
    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["message"]["content"] == "hello from steady-model"
    assert fake.models_asked()[before:] == ["broken-model", "steady-model"]


def test_the_gateway_refuses_calls_without_the_master_key(proxy: tuple[str, FakeOpenAI]) -> None:
    """LiteLLM 1.106 answers a missing key with 500 ("No api key passed in.") and another key
    with 400 (virtual keys need its database, which the gateway does not use): either way,
    nothing reaches the model."""
    url, fake = proxy
    before = len(fake.requests)
    assert chat(url, "steady", key=None).status_code in (401, 500)
    assert chat(url, "steady", key="sk-wrong").status_code in (400, 401)
    assert fake.requests[before:] == []


@pytest.mark.slow
def test_the_gateway_retries_as_often_as_the_retry_policy_says(
    proxy: tuple[str, FakeOpenAI],
) -> None:
    url, fake = proxy
    before = len(fake.requests)
    assert chat(url, "flaky").status_code >= 500
    assert fake.models_asked()[before:] == ["always-broken"] * 3
