"""A model gateway in every namespace whose agents use it (issue 51 §4): an agent reaches
``gateway.<its namespace>``, so a stack whose agent sits in another namespace runs a gateway
there too, with the Secrets it and the agent read; a Python agent handed a LanguageCluster's
gateway model from another namespace is refused before anything is registered."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest
import yaml

from langop_infra import LanguageAgent, LanguageCluster, SpecError
from langop_infra.cli.main import main
from langop_infra.offline._mock_engine import ProgramRun, run_program
from tests.support.user_project import make_project, run_cli

IMAGE = "ghcr.io/acme/helper:1@sha256:" + "b" * 64
STACK = f"""
config:
  langop-infra:namespace: apps
  langop-infra:secrets:
    openai: {{key: sk-test}}
    gw: {{masterKey: mk-test}}
    gw-agents: {{helper: helper-key, home: home-key}}
  langop-infra:defaults:
    modelGateway:
      masterKey: {{secretKeyRef: {{name: gw, key: masterKey}}}}
      agentKeys: {{secretName: gw-agents}}
  langop-infra:models:
    - name: gpt
      provider: openai
      modelName: gpt-4o
      apiKey: {{secretKeyRef: {{name: openai, key: key}}}}
  langop-infra:agents:
    - name: helper
      image: {IMAGE}
      namespace: other
      model: gpt
    - name: home
      image: {IMAGE}
      model: gpt
"""


def stack_render(tmp_path: Path, stack: str = STACK) -> list[dict[str, Any]]:
    project = make_project(
        tmp_path / "p", "from langop_infra.program.stack import main\nmain()\n", stack
    )
    (project / "Pulumi.yaml").write_text("name: langop-infra\nruntime: python\n")
    code, out, err = run_cli(project, "render", "--stack", "dev")
    assert code == 0, err
    return [d for d in yaml.safe_load_all(out) if d]


def env_of(workload: dict[str, Any]) -> dict[str, Any]:
    [container] = workload["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e.get("value") or e.get("valueFrom") for e in container["env"]}


def test_an_agent_in_another_namespace_gets_a_gateway_there(tmp_path: Path) -> None:
    manifests = stack_render(tmp_path)
    placed = {(m["kind"], m["metadata"].get("namespace"), m["metadata"]["name"]) for m in manifests}
    for space in ("apps", "other"):
        assert {
            ("Deployment", space, "gateway"),
            ("Service", space, "gateway"),
            ("ConfigMap", space, "gateway-config"),
            ("NetworkPolicy", space, "gateway-ingress"),
            ("Secret", space, "gw"),  # the gateway's master key
            ("Secret", space, "gw-agents"),  # the agent's MODEL_API_KEY, the gateway's admits
            ("Secret", space, "openai"),  # the gateway's key for the provider
        } <= placed, space
    [helper] = [
        m for m in manifests if m["kind"] == "Deployment" and m["metadata"]["name"] == "helper"
    ]
    assert env_of(helper)["MODEL_ENDPOINT"] == "http://gateway.other.svc.cluster.local:8000"
    assert env_of(helper)["MODEL_API_KEY"] == {
        "secretKeyRef": {"key": "helper", "name": "gw-agents"}
    }


def test_no_gateway_where_no_agent_uses_one(tmp_path: Path) -> None:
    """A direct model gives the other namespace no gateway, only its key."""
    direct = STACK.replace(
        "      modelName: gpt-4o\n", "      modelName: gpt-4o\n      gateway: false\n"
    )
    manifests = stack_render(tmp_path, direct)
    placed = {(m["kind"], m["metadata"].get("namespace"), m["metadata"]["name"]) for m in manifests}
    assert not [p for p in placed if p[2] == "gateway"]
    assert ("Secret", "other", "openai") in placed
    assert ("Secret", "other", "gw") not in placed


def test_a_python_agent_given_another_namespaces_gateway_model_is_refused() -> None:
    run = ProgramRun()

    def program() -> None:
        cluster = LanguageCluster(
            "team",
            {
                "namespace": "apps",
                "models": [{"name": "gpt", "provider": "openai", "model_name": "gpt-4o"}],
            },
        )
        LanguageAgent("helper", image=IMAGE, namespace="other", model=cluster.models["gpt"])

    with pytest.raises(SpecError) as caught:
        run_program(program, into=run)
    [problem] = caught.value.problems
    assert problem.path == "model"
    assert problem.message == (
        "LanguageModel 'gpt' goes through the model gateway of namespace 'apps', and an agent "
        "calls the gateway of its own namespace ('other'), which nothing creates; declare the "
        "agent among that LanguageCluster's agents (with namespace: 'other' it gets a gateway "
        "there), put it in namespace 'apps', or use a model with gateway: false"
    )
    assert not [r for r in run.registrations if r.name.endswith("helper")]


def test_a_python_agent_in_the_gateways_namespace_uses_it() -> None:
    def program() -> None:
        cluster = LanguageCluster(
            "team",
            {
                "namespace": "apps",
                "models": [{"name": "gpt", "provider": "openai", "model_name": "gpt-4o"}],
            },
        )
        LanguageAgent("helper", image=IMAGE, namespace="apps", model=cluster.models["gpt"])

    run = run_program(program)
    [helper] = [
        m
        for m in run.manifests()
        if m["kind"] == "Deployment" and m["metadata"]["name"] == "helper"
    ]
    assert env_of(helper)["MODEL_ENDPOINT"] == "http://gateway.apps.svc.cluster.local:8000"


KAGENT = """
apiVersion: kagent.dev/v1alpha2
kind: ModelConfig
metadata: {name: gpt, namespace: apps}
spec: {provider: OpenAI, model: gpt-4o, apiKeySecret: openai}
---
apiVersion: kagent.dev/v1alpha2
kind: Agent
metadata: {name: helper, namespace: other}
spec:
  type: Declarative
  declarative: {modelConfig: gpt, systemMessage: hi}
"""


def test_import_says_an_agent_of_another_namespace_gets_its_own_gateway(tmp_path: Path) -> None:
    source = tmp_path / "kagent.yaml"
    source.write_text(KAGENT)
    code, _, err = run_cli_import(source)
    assert code == 0, err
    assert (
        "agents/helper: metadata.namespace: the agent stays in namespace other, where the stack "
        "runs a second model gateway for it"
    ) in err
    assert "nothing to do; to share the gateway of apps, move the agent there" in err


def run_cli_import(source: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["import", str(source), "--agent-image", IMAGE, "--namespace", "apps"])
    return code, out.getvalue(), err.getvalue()
