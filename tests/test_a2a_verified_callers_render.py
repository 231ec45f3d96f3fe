"""Callers by identity in the stack (issue 49 §1 b): ``a2a.callers[].identity`` and
``a2a.tokenVerification`` render the allow-list and the verifier's env, the card names the
schemes the runtime then enforces, and the rendered env, run, admits the listed service
account and no one else."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import httpx
import pytest

from langop_infra.agent._inbound_auth import load_callers
from langop_infra.components.cluster import LanguageCluster
from langop_infra.config.checks._validation import parse_cluster
from langop_infra.core.problems import SpecError
from langop_infra.offline._mock_engine import run_program
from tests.support.a2a_stack import SKILL, a2a_stack, builtin_agent
from tests.support.loopback import serve
from tests.test_a2a_callers_render import card_of, env_of
from tests.test_a2a_verified_callers import PLANNER_SA, agent, running_api_server, send

REVIEWER_URL = "http://reviewer.apps.svc.cluster.local:8080/"
ISSUER = "https://issuer.example.com"


def document() -> dict[str, Any]:
    return a2a_stack(
        builtin_agent(
            "reviewer",
            automountServiceAccountToken=True,
            a2a={
                "skills": [SKILL],
                "callers": [{"name": "planner", "identity": PLANNER_SA}],
                "tokenVerification": {"method": "tokenReview"},
            },
        ),
        builtin_agent(
            "gate",
            a2a={
                "skills": [SKILL],
                "callers": [{"name": "ci", "identity": "repo:org/app:ref:main"}],
                "tokenVerification": {
                    "method": "oidc",
                    "issuer": ISSUER,
                    "audience": "langop-gate",
                },
            },
        ),
        token_secret=False,
    )


def render(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The manifests of ``doc`` as one LanguageCluster."""
    return run_program(lambda: LanguageCluster("c", cast("Any", doc))).manifests()


@pytest.fixture(scope="module")
def rendered() -> list[dict[str, Any]]:
    return render(document())


def test_the_allow_list_and_the_verifier_reach_the_pod(rendered: list[dict[str, Any]]) -> None:
    reviewer, gate = env_of(rendered, "reviewer"), env_of(rendered, "gate")
    assert {k: v for k, v in reviewer.items() if k.startswith(("A2A_CALLER", "A2A_TOKEN"))} == {
        "A2A_CALLER_PLANNER_IDENTITY": PLANNER_SA,
        "A2A_TOKEN_VERIFY": "tokenreview",
        "A2A_TOKEN_AUDIENCE": REVIEWER_URL,
    }
    assert {
        k: v for k, v in gate.items() if k.startswith(("A2A_CALLER", "A2A_TOKEN", "A2A_OIDC"))
    } == {
        "A2A_CALLER_CI_IDENTITY": "repo:org/app:ref:main",
        "A2A_TOKEN_VERIFY": "oidc",
        "A2A_TOKEN_AUDIENCE": "langop-gate",
        "A2A_OIDC_ISSUER": ISSUER,
    }


def test_the_card_names_the_verified_token_schemes(rendered: list[dict[str, Any]]) -> None:
    reviewer, gate = card_of(rendered, "reviewer"), card_of(rendered, "gate")
    assert reviewer["securitySchemes"] == {
        "serviceAccountToken": {
            "httpAuthSecurityScheme": {
                "scheme": "Bearer",
                "bearerFormat": "JWT",
                "description": f"A Kubernetes service-account token for audience {REVIEWER_URL} "
                "(a projected serviceAccountToken volume), of a listed service account",
            }
        }
    }
    assert reviewer["securityRequirements"] == [{"schemes": {"serviceAccountToken": {"list": []}}}]
    assert gate["securitySchemes"] == {
        "oidc": {
            "openIdConnectSecurityScheme": {
                "openIdConnectUrl": f"{ISSUER}/.well-known/openid-configuration",
                "description": "A JWT of this issuer for audience langop-gate, from a listed "
                "subject",
            }
        }
    }


def test_the_cards_are_valid_a2a_cards(rendered: list[dict[str, Any]]) -> None:
    from google.protobuf import json_format

    from langop_infra.agent._a2a_sdk import AgentCard

    for name in ("reviewer", "gate"):
        parsed = json_format.ParseDict(card_of(rendered, name), AgentCard())
        assert list(parsed.security_schemes) == list(card_of(rendered, name)["securitySchemes"])


def test_the_rendered_env_admits_the_listed_service_account_only(
    rendered: list[dict[str, Any]], tmp_path: Path
) -> None:
    env = {k: v for k, v in env_of(rendered, "reviewer").items() if isinstance(v, str)}
    with running_api_server(tmp_path) as (server, reach):
        server.issued = {
            "planner.sa.token": (PLANNER_SA, [REVIEWER_URL]),
            "other.sa.token": ("system:serviceaccount:apps:other", [REVIEWER_URL]),
        }
        app, model = agent(load_callers(env | reach))
        with serve(app) as url, httpx.Client(base_url=url, timeout=30) as client:
            statuses = [
                client.post(
                    "/", json=send(), headers={"Authorization": f"Bearer {who}"}
                ).status_code
                for who in ("other.sa.token", "nobody", "planner.sa.token")
            ]
    assert statuses == [403, 401, 200] and model.turns == 1


@pytest.mark.parametrize(
    ("change", "path", "message"),
    [
        (
            lambda a: a["a2a"].pop("tokenVerification"),
            "agents[0].a2a",
            "callers given by identity need tokenVerification: {method: tokenReview} "
            "(Kubernetes service accounts) or {method: oidc, issuer: <url>}",
        ),
        (
            lambda a: a.pop("automountServiceAccountToken"),
            "agents[0].a2a.tokenVerification.method",
            "tokenReview asks the API server with the agent's own service-account token; set "
            "automountServiceAccountToken: true (and bind the agent's ServiceAccount to the "
            "ClusterRole system:auth-delegator), or use method: oidc",
        ),
        (
            lambda a: a["a2a"]["callers"][0].update(
                {"tokenFrom": {"secretKeyRef": {"name": "t", "key": "k"}}}
            ),
            "agents[0].a2a.callers[0]",
            "caller 'planner': give tokenFrom (a bearer token from a Secret) or identity (the "
            "subject of a verified token), one of them",
        ),
        (
            lambda a: a["a2a"]["tokenVerification"].update({"method": "oidc"}),
            "agents[0].a2a.tokenVerification",
            "oidc needs issuer: the issuer's URL",
        ),
    ],
)
def test_mistakes_are_named_at_their_field(change: Any, path: str, message: str) -> None:
    doc = document()
    change(doc["agents"][0])
    with pytest.raises(SpecError) as caught:
        parse_cluster(doc)
    found = {(p.path, p.message) for p in caught.value.problems}
    assert (path, message) in found


def caller_document() -> dict[str, Any]:
    """``planner`` runs as ServiceAccount ``planner`` and calls ``reviewer``, which lists
    it by that account's identity."""
    doc = document()
    reviewer = doc["agents"][0]
    reviewer["a2a"]["callers"] = [
        {"name": "planner", "identity": "system:serviceaccount:apps:planner"}
    ]
    doc["agents"].append(
        builtin_agent("planner", serviceAccount={"create": True}, agents=[{"name": "reviewer"}])
    )
    return doc


def test_a_caller_listed_by_identity_sends_its_projected_token() -> None:
    from langop_infra.config.checks._advice import cluster_warnings

    manifests = render(caller_document())
    (deployment,) = [
        m for m in manifests if m["kind"] == "Deployment" and m["metadata"]["name"] == "planner"
    ]
    pod = deployment["spec"]["template"]["spec"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == "a2a-peer-tokens"]
    assert volume["projected"]["sources"] == [
        {
            "serviceAccountToken": {
                "audience": REVIEWER_URL,
                "expirationSeconds": 3600,
                "path": "reviewer/token",
            }
        }
    ]
    (main,) = [c for c in pod["containers"] if c["name"] == "planner"]
    assert {
        "name": "a2a-peer-tokens",
        "mountPath": "/var/run/secrets/langop.io/a2a",
        "readOnly": True,
    } in main["volumeMounts"]
    env = env_of(manifests, "planner")
    assert env["A2A_PEER_REVIEWER_TOKEN_FILE"] == "/var/run/secrets/langop.io/a2a/reviewer/token"
    assert "A2A_PEER_REVIEWER_TOKEN" not in env
    warned = [
        w
        for w in cluster_warnings(parse_cluster(caller_document()))
        if w.kind == "langop_a2a_unadmitted"
    ]
    assert warned == []
    other = caller_document()
    other["agents"][2]["serviceAccount"] = {"create": False, "name": "robot"}
    (warning,) = [
        w for w in cluster_warnings(parse_cluster(other)) if w.kind == "langop_a2a_unadmitted"
    ]
    assert warning.path == "agents[2].agents[0].name"
    assert warning.message == (
        "agent 'reviewer' admits 'planner' as 'system:serviceaccount:apps:planner', and "
        "'planner' sends the token of 'system:serviceaccount:apps:robot' (its ServiceAccount): "
        "its messages would get 403. List identity 'system:serviceaccount:apps:robot', or run "
        "'planner' as that ServiceAccount"
    )


def test_the_projected_token_is_read_at_each_call_and_admits_the_caller(tmp_path: Path) -> None:
    """The kubelet writes the projected token and renews it; the caller reads the file at
    each request, and the callee reviews what it gets."""
    import asyncio
    import json

    from langop_infra.agent._a2a_client import PeerClient
    from langop_infra.agent._settings import load_peers

    manifests = render(caller_document())
    projected = tmp_path / "projected-token"
    planner = "system:serviceaccount:apps:planner"
    callee = {k: v for k, v in env_of(manifests, "reviewer").items() if isinstance(v, str)}
    caller = {k: v for k, v in env_of(manifests, "planner").items() if isinstance(v, str)}
    with running_api_server(tmp_path) as (server, reach):
        server.issued = {
            "first.sa.token": (planner, [REVIEWER_URL]),
            "renewed.sa.token": (planner, [REVIEWER_URL]),
        }
        app, model = agent(load_callers(callee | reach))
        with serve(app) as url:
            peers = load_peers(
                {
                    **caller,
                    "A2A_PEERS": json.dumps([{"name": "reviewer", "url": url + "/"}]),
                    "A2A_PEER_REVIEWER_TOKEN_FILE": str(projected),
                }
            )
            client = PeerClient(peers, timeout=30)

            async def calls() -> list[str]:
                replies = []
                for token in ("first.sa.token", "renewed.sa.token", "revoked.sa.token"):
                    projected.write_text(token + "\n")
                    try:
                        replies.append((await client.send("reviewer", "check")).text)
                    except Exception as exc:  # the refusal, as the peer tool sees it
                        replies.append(type(exc).__name__)
                await client.aclose()
                return replies

            replies = asyncio.run(calls())
    assert replies == ["hi", "hi", "A2AClientError"]  # the revoked token: refused, no turn
    assert model.turns == 2 and server.reviews == 3
