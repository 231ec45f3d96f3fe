"""Agents reach the gateway with keys of their own, never the master key (issue 49 §6).

A stack with a master key and ``agentKeys`` is rendered through LanguageCluster; the real
LiteLLM proxy (from ``.venv-litellm``; these tests skip without it) then runs with the
gateway's rendered ConfigMap files (``config.yaml`` and the ``custom_auth`` module) and
container env, the agents' Secret laid out as the kubelet mounts it, in front of the fake
OpenAI server (tests/fake_openai.py: no real provider is reachable here). Each agent's key
is the value its own rendered ``MODEL_API_KEY`` reference names.

The one addition to the rendered config is an observer (tests/support/litellm_observer.py):
a LiteLLM success callback that writes whom each call's standard logging payload (what
LiteLLM's spend tracking and logging integrations receive) names, so the tests can read whom
LiteLLM charged each call to.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from langop_infra.components.cluster import LanguageCluster
from langop_infra.manifests import _gateway as gateway
from langop_infra.offline._mock_engine import run_program
from tests.fake_openai import FakeOpenAI
from tests.support import litellm_proxy
from tests.support.loopback import serve
from tests.support.manifests import Rendered
from tests.support.secret_mount import write_secret_mount
from tests.test_models import secret_refs

MASTER_KEY = "sk-master-key-for-admins-only-5b1e"
KEYS = {
    "writer": "writer-own-gateway-key-0c9d2f",
    "reviewer": "reviewer-own-gateway-key-7a41e3",
    "retired": "retired-own-gateway-key-91b6aa",
}
AGENTS = tuple(KEYS)
ROTATED = "reviewer-rotated-gateway-key-3d0e51"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not litellm_proxy.LITELLM.exists(), reason=litellm_proxy.MISSING),
]

OBSERVER = Path(__file__).parent / "support" / "litellm_observer.py"


def stack(fake_url: str) -> dict[str, Any]:
    return {
        "namespace": "apps",
        "defaults": {
            "modelGateway": {
                "masterKey": {"secretKeyRef": {"name": "gateway", "key": "master"}},
                "agentKeys": {"secretName": "gateway-agents"},
                "requireAuth": True,
            }
        },
        "secrets": {"gateway": {"master": MASTER_KEY}, "gateway-agents": dict(KEYS)},
        "models": [
            {
                "name": "steady",
                "provider": "openai-compatible",
                "modelName": "steady-model",
                "endpoint": f"{fake_url}/v1",
                "retryPolicy": {"maxAttempts": 0},
            }
        ],
        "agents": [
            {"name": name, "image": f"ghcr.io/acme/{name}:1", "model": "steady"} for name in AGENTS
        ],
    }


def resolve(ref: dict[str, str], secrets: dict[str, dict[str, str]]) -> str:
    return secrets[ref["name"]][ref["key"]]


@dataclass
class Gateway:
    url: str
    fake: FakeOpenAI
    rendered: Rendered
    keys_dir: Path
    observed: Path
    secrets: dict[str, dict[str, str]]
    log: Path

    def agent_key(self, agent: str) -> str:
        """The value the agent's rendered ``MODEL_API_KEY`` reference names."""
        [env] = [
            e["valueFrom"]["secretKeyRef"]
            for e in self.container(agent)["env"]
            if e["name"] == "MODEL_API_KEY"
        ]
        return resolve(env, self.secrets)

    def container(self, name: str) -> dict[str, Any]:
        deployment = self.rendered.find("Deployment", name, "apps")
        [container] = deployment["spec"]["template"]["spec"]["containers"]
        return container

    def calls(self) -> list[dict[str, Any]]:
        if not self.observed.exists():
            return []
        return [json.loads(line) for line in self.observed.read_text().splitlines()]


@dataclass
class GatewayPod:
    """What the gateway's pod gets from the kubelet, laid out in the test's folder."""

    container: dict[str, Any]
    config: Path
    env: dict[str, str]
    keys_dir: Path


def lay_out_pod(root: Path, rendered: Rendered, secrets: dict[str, dict[str, str]]) -> GatewayPod:
    """The gateway's pod as LiteLLM runs in it: the ConfigMap's files in the config folder,
    the agents' Secret as the kubelet mounts it, the env with its Secret references set."""
    config_map = rendered.find("ConfigMap", "gateway-config", "apps")
    pod = rendered.find("Deployment", "gateway", "apps")["spec"]["template"]["spec"]
    [config_volume] = [v for v in pod["volumes"] if v["name"] == "config"]
    config_dir = root / "etc-litellm"
    config_dir.mkdir()
    for item in config_volume["configMap"]["items"]:
        (config_dir / item["path"]).write_text(config_map["data"][item["key"]])
    (config_dir / "langop_observer.py").write_text(OBSERVER.read_text())
    config = yaml.safe_load((config_dir / gateway.CONFIG_FILE).read_text())
    config["litellm_settings"] = {"callbacks": ["langop_observer.observer"]}
    (config_dir / gateway.CONFIG_FILE).write_text(yaml.safe_dump(config))
    [keys_volume] = [v for v in pod["volumes"] if v["name"] == gateway.AGENT_KEYS_VOLUME]
    keys_dir = root / "agent-keys"
    secret = secrets[keys_volume["secret"]["secretName"]]
    write_secret_mount(keys_dir, {k: v.encode() for k, v in secret.items()})
    [container] = pod["containers"]
    env = litellm_proxy.base_env(root)
    for var in container["env"]:
        if "valueFrom" in var:
            env[var["name"]] = resolve(var["valueFrom"]["secretKeyRef"], secrets)
        else:
            value = var["value"].replace(gateway.DATA_DIR, str(root / "var-lib-litellm"))
            env[var["name"]] = value.replace(gateway.AGENT_KEYS_DIR, str(keys_dir))
    env["OBSERVED_CALLS"] = str(root / "calls.jsonl")
    return GatewayPod(container, config_dir / gateway.CONFIG_FILE, env, keys_dir)


@contextmanager
def running_gateway(root: Path) -> Iterator[Gateway]:
    fake = FakeOpenAI()
    with serve(fake.app()) as fake_url:
        document = stack(fake_url)
        rendered = Rendered(run_program(lambda: LanguageCluster("c", document)))
        secrets = document["secrets"]
        pod = lay_out_pod(root, rendered, secrets)
        with litellm_proxy.running(root, pod.container, pod.config, pod.env) as url:
            observed = root / "calls.jsonl"
            yield Gateway(url, fake, rendered, pod.keys_dir, observed, secrets, root / "proxy.log")


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    with running_gateway(tmp_path_factory.mktemp("gateway-agent-keys")) as gateway_:
        yield gateway_


def chat(url: str, key: str | None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}".strip()} if key is not None else {}
    return httpx.post(
        f"{url}/v1/chat/completions",
        json={"model": "steady", "messages": [{"role": "user", "content": "hi"}]},
        headers=headers,
        timeout=60,
    )


def test_no_agent_is_given_the_master_key(proxy: Gateway) -> None:
    for agent in AGENTS:
        pod = proxy.rendered.find("Deployment", agent, "apps")["spec"]["template"]["spec"]
        assert secret_refs(pod) == {("gateway-agents", agent)}
        objects = [m for m in proxy.rendered.manifests if m["metadata"]["name"].startswith(agent)]
        assert MASTER_KEY not in json.dumps(objects)
        assert proxy.agent_key(agent) == KEYS[agent]


def test_each_agent_is_admitted_with_its_own_key_and_charged_by_name(proxy: Gateway) -> None:
    for agent in ("writer", "reviewer"):
        before = len(proxy.calls())
        response = chat(proxy.url, proxy.agent_key(agent))
        assert response.status_code == 200, response.text
        assert response.json()["choices"][0]["message"]["content"] == "hello from steady-model"
        wait_for_calls(proxy, before + 1)
        assert proxy.calls()[before:] == [{"user_id": agent, "model": "steady"}]


def wait_for_calls(proxy: Gateway, count: int) -> None:
    """LiteLLM logs a success after it answers; poll until the observer wrote it."""
    for _ in range(200):
        if len(proxy.calls()) >= count:
            return
        httpx.get(proxy.url + gateway.LIVENESS_PATH, timeout=5)
    pytest.fail(f"LiteLLM logged {len(proxy.calls())} calls, expected {count}")


@pytest.mark.parametrize(
    "key",
    [
        None,
        "",
        "sk-wrong",
        KEYS["writer"][:-1],
        KEYS["writer"] + "0",
        KEYS["writer"].upper(),
        f"{KEYS['writer']},{KEYS['reviewer']}",
    ],
    ids=["absent", "empty", "wrong", "prefix", "longer", "upper", "two-keys"],
)
def test_any_other_key_gets_401_and_reaches_no_model(proxy: Gateway, key: str | None) -> None:
    before = len(proxy.fake.requests)
    response = chat(proxy.url, key)
    assert response.status_code == 401, response.text
    assert response.json()["error"]["type"] == "auth_error"
    assert proxy.fake.requests[before:] == []
    for secret in (MASTER_KEY, *KEYS.values()):
        assert secret not in response.text


def test_an_agent_key_opens_model_routes_only_and_the_master_key_all(proxy: Gateway) -> None:
    agent = httpx.get(
        f"{proxy.url}/model/info",
        headers={"Authorization": f"Bearer {proxy.agent_key('writer')}"},
        timeout=30,
    )
    assert agent.status_code == 403, agent.text
    assert "agent 'writer' may call model routes only" in agent.text
    admin = httpx.get(
        f"{proxy.url}/model/info", headers={"Authorization": f"Bearer {MASTER_KEY}"}, timeout=30
    )
    assert admin.status_code == 200, admin.text
    assert [m["model_name"] for m in admin.json()["data"]] == ["steady"]
    listed = httpx.get(
        f"{proxy.url}/v1/models",
        headers={"Authorization": f"Bearer {proxy.agent_key('writer')}"},
        timeout=30,
    )
    assert listed.status_code == 200, listed.text
    assert [m["id"] for m in listed.json()["data"]] == ["steady"]


def test_the_master_key_still_serves_admins_as_the_proxy_admin(proxy: Gateway) -> None:
    before = len(proxy.calls())
    response = chat(proxy.url, MASTER_KEY)
    assert response.status_code == 200, response.text
    wait_for_calls(proxy, before + 1)
    assert proxy.calls()[before:] == [{"user_id": "litellm-proxy-admin", "model": "steady"}]


def test_a_revoked_or_rotated_key_gets_401_without_a_restart(proxy: Gateway) -> None:
    """The kubelet updates the mount when the Secret changes; the next call sees it."""
    assert chat(proxy.url, KEYS["retired"]).status_code == 200
    assert chat(proxy.url, KEYS["reviewer"]).status_code == 200
    write_secret_mount(
        proxy.keys_dir, {"writer": KEYS["writer"].encode(), "reviewer": ROTATED.encode()}
    )
    try:
        before = len(proxy.fake.requests)
        assert chat(proxy.url, KEYS["retired"]).status_code == 401
        assert chat(proxy.url, KEYS["reviewer"]).status_code == 401
        assert proxy.fake.requests[before:] == []
        assert chat(proxy.url, ROTATED).status_code == 200
        assert chat(proxy.url, KEYS["writer"]).status_code == 200
    finally:
        write_secret_mount(proxy.keys_dir, {k: v.encode() for k, v in KEYS.items()})


def test_the_gateways_log_holds_no_key(proxy: Gateway) -> None:
    """Refusals, admissions and the master key's calls are logged; no key's value is."""
    assert chat(proxy.url, "sk-a-wrong-key-for-the-log").status_code == 401
    assert chat(proxy.url, proxy.agent_key("writer")).status_code == 200
    assert chat(proxy.url, MASTER_KEY).status_code == 200
    log = proxy.log.read_text()
    assert "Authentication Error: send the agent's own gateway key" in log
    for secret in (MASTER_KEY, ROTATED, "sk-a-wrong-key-for-the-log", *KEYS.values()):
        assert secret not in log
