"""AgentCardSync as ``pulumi up`` drives it, through the SDK's dynamic-provider servicer
(tests/support/provider_host.py): a real a2a-sdk card endpoint on loopback, reached directly
and through the API server's proxy (the stand-in of tests/support/apiserver.py, since no real
one runs here), its skills in state, a changed skill list in preview (issue 38)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from a2a.server.routes.agent_card_routes import create_agent_card_routes
from a2a.types import a2a_pb2
from google.protobuf import json_format
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route

from langop_infra.config.agent import AgentSpec
from langop_infra.manifests._a2a import agent_card
from langop_infra.sync.card_sync import AgentCardSyncProvider
from tests.support.apiserver import IN_CLUSTER_BIND, ApiServer, kubeconfig, serve_api
from tests.support.loopback import free_port, serve
from tests.support.provider_host import EngineHost, ProviderFailure, Secret

KUBE_TOKEN = "kube-token-canary-a2a-51c3"
CARD_URL = "http://writer.docs.svc.cluster.local:9000/.well-known/agent-card.json"


def skill(skill_id: str) -> dict[str, Any]:
    return {"id": skill_id, "name": skill_id.title(), "description": "Does it.", "tags": ["t"]}


def card_app(*skill_ids: str) -> Starlette:
    """The SDK's own agent-card route serving our rendered card."""
    agent = AgentSpec.model_validate(
        {
            "name": "writer",
            "image": "ghcr.io/acme/writer:1",
            "a2a": {"port": 9000, "skills": [skill(s) for s in skill_ids]},
        }
    )
    message = a2a_pb2.AgentCard()
    json_format.ParseDict(agent_card(agent, "docs"), message)
    return Starlette(routes=create_agent_card_routes(message))


@contextmanager
def serving(app: Any, port: int, host: str = "127.0.0.1") -> Iterator[str]:
    with serve(app, port, host=host) as url:
        yield url


def direct_inputs(base: str, **extra: Any) -> dict[str, Any]:
    return {
        "endpoint": base + "/.well-known/agent-card.json",
        "access": "direct",
        "namespace": "docs",
        "service": "writer",
        "port": 9000,
        "timeout": 5,
        "required": False,
        **extra,
    }


def test_skills_land_in_state_and_a_changed_list_shows_in_preview() -> None:
    host = EngineHost(AgentCardSyncProvider())
    port = free_port()
    with serving(card_app("write", "edit"), port) as base:
        inputs = direct_inputs(base)
        assert host.preview(inputs).op == "create"
        assert host.up(inputs) == "create"
        outs = host.plain_outputs()
        assert outs["phase"] == "Synced"
        assert outs["skill_ids"] == ["write", "edit"]
        assert outs["skills"][0] == {
            "id": "write",
            "name": "Write",
            "description": "Does it.",
            "tags": ["t"],
        }
        assert outs["card_name"] == "writer"
        assert host.preview(inputs).op == "same"
    with serving(card_app("write", "review"), port):
        assert host.preview(inputs).op == "update"
        assert host.up(inputs) == "update"
        outs = host.plain_outputs()
        assert outs["skill_ids"] == ["write", "review"]
        assert outs["skill_changes"] == "added: review; removed: edit"
        assert host.preview(inputs).op == "same"


def test_an_unreachable_peer_keeps_the_last_skills_unless_required() -> None:
    host = EngineHost(AgentCardSyncProvider())
    port = free_port()
    with serving(card_app("write"), port) as base:
        inputs = direct_inputs(base)
        host.up(inputs)
    host.refresh()  # the peer is gone: `pulumi refresh` records it, keeping its skills
    plain = host.plain_outputs()
    assert plain["phase"] == "Error"
    assert plain["skill_ids"] == ["write"]
    assert f"127.0.0.1:{port}" in plain["last_error"]
    other = EngineHost(AgentCardSyncProvider())
    with pytest.raises(ProviderFailure, match="card sync of writer failed"):
        other.up(direct_inputs(f"http://127.0.0.1:{free_port()}", required=True))


def test_not_a_card_is_an_error_not_a_guess() -> None:
    async def huge(_request: Any) -> Response:
        return Response("[" + "1," * 200_000 + "1]", media_type="application/json")

    async def listing(_request: Any) -> Response:
        return Response(json.dumps({"name": "x", "skills": "none"}), media_type="application/json")

    app = Starlette(
        routes=[
            Route("/big/.well-known/agent-card.json", huge),
            Route("/bad/.well-known/agent-card.json", listing),
        ]
    )
    with serve(app) as base:
        host = EngineHost(AgentCardSyncProvider())
        host.up(direct_inputs(base + "/big"))
        assert "larger than 262144 bytes" in host.plain_outputs()["last_error"]
        host = EngineHost(AgentCardSyncProvider())
        host.up(direct_inputs(base + "/bad"))
        assert host.plain_outputs()["last_error"] == "the agent card has no skills list"


def test_through_the_api_server_proxy_with_the_kubeconfig_kept_secret() -> None:
    with serve(card_app("write"), host=IN_CLUSTER_BIND) as upstream:
        api = ApiServer(KUBE_TOKEN, services={("docs", "writer", 9000): upstream})
        with serve_api(api) as api_url:
            inputs = {
                **direct_inputs("unused"),
                "endpoint": CARD_URL,
                "access": "auto",  # an in-cluster name: through the proxy
                "kube_context": "ctx",
                "kubeconfig": Secret(kubeconfig(api_url, KUBE_TOKEN)),
            }
            host = EngineHost(AgentCardSyncProvider())
            host.up(inputs)
            assert host.plain_outputs()["skill_ids"] == ["write"]
            assert KUBE_TOKEN not in host.state_text()
            assert api.calls and all(
                "/api/v1/namespaces/docs/services/writer:9000/proxy/.well-known/agent-card.json"
                in call
                for call in api.calls
            ), api.calls
            assert api.escapes() == []


def test_a_refused_proxy_request_names_no_credential() -> None:
    with serve(card_app("write"), host=IN_CLUSTER_BIND) as upstream:
        api = ApiServer(KUBE_TOKEN, services={("docs", "writer", 9000): upstream})
        with serve_api(api) as api_url:
            inputs = {
                **direct_inputs("unused"),
                "endpoint": CARD_URL,
                "access": "apiserver-proxy",
                "kube_context": "ctx",
                "kubeconfig": Secret(kubeconfig(api_url, "wrong-token-canary-9d1")),
            }
            host = EngineHost(AgentCardSyncProvider())
            host.up(inputs)
            outs = host.plain_outputs()
            assert outs["phase"] == "Error"
            assert "401" in outs["last_error"] or "Unauthorized" in outs["last_error"]
            assert "wrong-token-canary-9d1" not in outs["last_error"]
            assert "wrong-token-canary-9d1" not in host.state_text()
