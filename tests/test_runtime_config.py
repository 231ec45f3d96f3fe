"""Stack side of the built-in runtime and ark's contract (#39 §1, §3): ``runtime: builtin``
selects the package's agent image and command; an agent with neither image nor runtime is
refused; ``system_prompt=`` is a keyword of the Python API; ``POD_NAME`` comes from
``metadata.name``; ``validate`` warns about an ark-style agent without ``systemPrompt``."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from langop_infra.components.agent import LanguageAgent
from langop_infra.config._builtin import BUILTIN_AGENT_COMMAND, BUILTIN_AGENT_IMAGE
from langop_infra.config.agent import AgentSpec
from langop_infra.config.checks._advice import agent_warnings
from tests.test_bad_input import PREFIX, render_cli, stack_text, write_stack
from tests.test_models import cluster_doc


def rendered_agent(tmp_path: Path, **agent: Any) -> dict[str, Any]:
    document = cluster_doc()
    document["agents"] = [{"name": "solo", **agent}]
    document["secrets"]["gateway-agents"] = {"solo": "solo-gateway-key"}  # its own key
    config = {f"{PREFIX}{k}": v for k, v in document.items()}
    code, out, err = render_cli(write_stack(tmp_path, stack_text(config)))
    assert code == 0, err
    objects = list(yaml.safe_load_all(out))
    return next(
        o for o in objects if o and o["kind"] == "Deployment" and o["metadata"]["name"] == "solo"
    )


def test_builtin_runtime_selects_the_packages_image_and_command(tmp_path: Path) -> None:
    deployment = rendered_agent(tmp_path, runtime="builtin", model="local")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == BUILTIN_AGENT_IMAGE
    assert container["command"] == ["python", "-m", "langop_infra.agent", "serve"]
    env = {e["name"]: e for e in container["env"]}
    assert env["POD_NAME"] == {
        "name": "POD_NAME",
        "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
    }


def test_a_builtin_agent_without_a_model_is_refused_with_the_fix(tmp_path: Path) -> None:
    document = cluster_doc()
    document["agents"] = [{"name": "solo", "runtime": "builtin"}]
    config = {f"{PREFIX}{k}": v for k, v in document.items()}
    code, out, err = render_cli(write_stack(tmp_path, stack_text(config)))
    assert (code, out) == (2, "")
    assert err.splitlines()[1].endswith(
        f"{PREFIX}agents[0].model: a runtime: builtin agent needs a model (without one it "
        "exits at start: no MODEL_ENDPOINT or LLM_MODEL); give it model: <one of models:>, or "
        "models: [{name: ...}]"
    )


def test_a_builtin_agent_card_may_claim_what_the_runtime_serves(tmp_path: Path) -> None:
    """Streaming and push notifications are both served (tests/test_agent_a2a_push.py), so
    the rendered card says so."""
    document = cluster_doc()
    skill = {"id": "s", "name": "S", "description": "D", "tags": ["t"]}
    a2a = {"streaming": True, "pushNotifications": True, "skills": [skill]}
    document["agents"] = [{"name": "solo", "runtime": "builtin", "model": "local", "a2a": a2a}]
    document["secrets"]["gateway-agents"] = {"solo": "solo-gateway-key"}  # its own key
    config = {f"{PREFIX}{k}": v for k, v in document.items()}
    code, out, err = render_cli(write_stack(tmp_path, stack_text(config)))
    assert code == 0, err
    (config_map,) = [
        o for o in yaml.safe_load_all(out) if o and o["metadata"]["name"] == "solo-a2a-card"
    ]
    card = json.loads(config_map["data"]["agent-card.json"])
    assert card["capabilities"] == {"streaming": True, "pushNotifications": True}


def test_builtin_runtime_keeps_a_given_image_and_command() -> None:
    agent = AgentSpec.model_validate(
        {
            "name": "a",
            "runtime": "builtin",
            "image": "registry.local/agent:2",
            "command": ["python", "-m", "langop_infra.agent", "serve", "--verbose"],
        }
    )
    assert agent.image == "registry.local/agent:2"
    assert agent.command == [*BUILTIN_AGENT_COMMAND, "--verbose"]


def test_an_agent_needs_an_image_or_the_builtin_runtime() -> None:
    with pytest.raises(ValueError, match="give image, or runtime: builtin"):
        AgentSpec.model_validate({"name": "a"})
    with pytest.raises(ValueError, match="runtime"):
        AgentSpec.model_validate({"name": "a", "runtime": "custom"})


def test_system_prompt_is_a_python_keyword(render: Any) -> None:
    def program() -> None:
        LanguageAgent(
            "helper",
            image="ghcr.io/acme/helper:1",
            namespace="ai",
            system_prompt="Be helpful.",
            mcp_servers=[{"name": "s", "url": "http://s"}],
        )

    deployment = render(program).find("Deployment", "helper", "ai")
    env = {
        e["name"]: e.get("value")
        for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert (env["AGENT_SYSTEM_PROMPT"], env["AGENT_INSTRUCTIONS"]) == ("Be helpful.",) * 2


def test_validate_warns_about_an_ark_agent_without_system_prompt() -> None:
    base: dict[str, Any] = {
        "name": "ark",
        "image": "x:1",
        "model": "llama3.2",
        "mcpServers": [{"name": "s", "url": "http://s"}],
    }
    warnings = [str(w) for w in agent_warnings(AgentSpec.model_validate(base), "agents[0]")]
    assert warnings == [
        "agents[0].systemPrompt: the agent uses ark's fields (model, mcpServers) but has no "
        "systemPrompt: ark's runtime requires AGENT_SYSTEM_PROMPT and exits without it; set "
        "systemPrompt (or instructions)"
    ]
    prompted = copy.deepcopy(base) | {"systemPrompt": "Search."}
    assert agent_warnings(AgentSpec.model_validate(prompted), "agents[0]") == []
    builtin = copy.deepcopy(base) | {"runtime": "builtin"}
    assert agent_warnings(AgentSpec.model_validate(builtin), "agents[0]") == []
    without_model = {k: v for k, v in base.items() if k != "model"}
    assert agent_warnings(AgentSpec.model_validate(without_model), "agents[0]") == []
