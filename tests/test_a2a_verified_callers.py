"""Callers known by a signed token (issue 49 §1 b): Kubernetes service-account tokens checked
by the API server's TokenReview, and an OIDC issuer's JWTs checked against its JWKS, each
with the agent's audience, then held against the agent's allow-list.

No cluster here: the API server is a stand-in (below), HTTPS with a throwaway cluster CA,
answering TokenReview as ``kube-apiserver`` does; the issuer serves its discovery document
and keys generated in the test.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from langop_infra.agent._a2a_server import CARD_PATH, a2a_routes, build_app
from langop_infra.agent._inbound_auth import Callers, load_callers
from langop_infra.agent._loop import AgentLoop
from langop_infra.agent._metrics import RuntimeMetrics
from tests.support.cluster_pki import make_cluster_pki
from tests.support.loopback import serve
from tests.test_a2a_inbound_auth import CountingModel, NoTools, answer_of, send

AUDIENCE = "http://helper.team.svc.cluster.local:8080/"
OWN_TOKEN = "the-helper-pods-own-service-account-token"
PLANNER_SA = "system:serviceaccount:team:planner"
STRANGER_SA = "system:serviceaccount:other:stranger"


class ApiServer:
    """A stand-in for kube-apiserver's TokenReview (no cluster runs in tests): the reviewer
    must present its own token; a token is authenticated with the audiences it was issued
    for, and the answer's ``status.audiences`` is their intersection with the request's, as
    the API server's authenticator gives it."""

    def __init__(self) -> None:
        self.issued: dict[str, tuple[str, list[str]]] = {}
        self.reviews = 0

    def app(self) -> Starlette:
        async def review(request: Request) -> JSONResponse:
            if request.headers.get("authorization") != f"Bearer {OWN_TOKEN}":
                return JSONResponse({"kind": "Status", "code": 401}, status_code=401)
            self.reviews += 1
            body = await request.json()
            wanted: list[str] = body["spec"].get("audiences") or []
            user, audiences = self.issued.get(body["spec"]["token"], ("", []))
            both = [a for a in wanted if a in audiences]
            status: dict[str, Any] = {"authenticated": bool(user and both)}
            if status["authenticated"]:
                status |= {"user": {"username": user, "groups": []}, "audiences": both}
            else:
                status["error"] = "[invalid bearer token, token audiences are invalid]"
            return JSONResponse({**body, "status": status}, status_code=201)

        return Starlette(
            routes=[Route("/apis/authentication.k8s.io/v1/tokenreviews", review, methods=["POST"])]
        )


def agent(callers: Callers) -> tuple[Any, CountingModel]:
    model = CountingModel()
    loop = AgentLoop(model, NoTools(), RuntimeMetrics())
    routes = a2a_routes(None, "/", lambda: loop, "helper")
    return build_app(routes, callers=callers, public=frozenset({("GET", CARD_PATH)})), model


@pytest.fixture
def api_server(tmp_path: Path) -> Iterator[tuple[ApiServer, dict[str, str]]]:
    with running_api_server(tmp_path) as (server, env):
        yield (
            server,
            {
                **env,
                "A2A_TOKEN_VERIFY": "tokenreview",
                "A2A_TOKEN_AUDIENCE": AUDIENCE,
                "A2A_CALLER_PLANNER_IDENTITY": PLANNER_SA,
            },
        )


@contextmanager
def running_api_server(tmp_path: Path) -> Iterator[tuple[ApiServer, dict[str, str]]]:
    """The stand-in API server on HTTPS under a throwaway cluster CA, and the env a pod has
    to reach it: its address and the service-account folder (the pod's own token, the CA)."""
    pki = make_cluster_pki(tmp_path, ips=("127.0.0.1",))
    account = tmp_path / "serviceaccount"
    account.mkdir()
    (account / "token").write_text(OWN_TOKEN)
    (account / "ca.crt").write_bytes(pki.ca.read_bytes())
    server = ApiServer()
    with serve(server.app(), **pki.uvicorn()) as url:
        yield (
            server,
            {
                "KUBERNETES_SERVICE_HOST": "127.0.0.1",
                "KUBERNETES_SERVICE_PORT": url.rsplit(":", 1)[1],
                "A2A_SERVICE_ACCOUNT_DIR": str(account),
            },
        )


def test_service_account_tokens_are_reviewed_and_held_to_the_allow_list(
    api_server: tuple[ApiServer, dict[str, str]],
) -> None:
    server, env = api_server
    server.issued = {
        "planner.sa.token": (PLANNER_SA, [AUDIENCE]),
        "planner.other-audience.token": (PLANNER_SA, ["http://other.team.svc:8080/"]),
        "stranger.sa.token": (STRANGER_SA, [AUDIENCE]),
    }
    app, model = agent(load_callers(env))
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as client:

        def post(token: str) -> httpx.Response:
            return client.post("/", json=send(), headers={"Authorization": f"Bearer {token}"})

        forged = [post(f"forged.{i}.token") for i in range(20)]
        elsewhere = post("planner.other-audience.token")
        stranger = post("stranger.sa.token")
        refused_turns = model.turns
        planner = [post("planner.sa.token") for _ in range(3)]
    assert [r.status_code for r in forged] == [401] * 20
    assert elsewhere.status_code == 401  # valid, for another audience
    assert elsewhere.headers["www-authenticate"] == 'Bearer realm="a2a", error="invalid_token"'
    assert stranger.status_code == 403
    assert stranger.headers["www-authenticate"] == (
        'Bearer realm="a2a", error="insufficient_scope"'
    )
    assert stranger.json() == {
        "error": "your token is valid, and you are not among this agent's callers"
    }
    assert refused_turns == 0
    assert [answer_of(r.json()) for r in planner] == [("completed", "hi")] * 3
    assert model.turns == 3
    # 20 forged + 1 + 1 + the planner's first: its verdict is then reused
    assert server.reviews == 23


def test_an_unreachable_api_server_admits_no_one(tmp_path: Path) -> None:
    account = tmp_path / "sa"
    account.mkdir()
    (account / "token").write_text(OWN_TOKEN)
    env = {
        "KUBERNETES_SERVICE_HOST": "127.0.0.1",
        "KUBERNETES_SERVICE_PORT": "1",
        "A2A_SERVICE_ACCOUNT_DIR": str(account),
        "A2A_TOKEN_VERIFY": "tokenreview",
        "A2A_TOKEN_AUDIENCE": AUDIENCE,
        "A2A_CALLER_PLANNER_IDENTITY": PLANNER_SA,
    }
    app, model = agent(load_callers(env))
    with serve(app) as url:
        answer = httpx.post(
            url + "/", json=send(), headers={"Authorization": "Bearer planner.sa.token"}
        )
    assert answer.status_code == 401 and model.turns == 0


class Issuer:
    """An OIDC issuer: its discovery document and its JWKS (keys made in the test)."""

    def __init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.url = ""
        self.fetches = 0

    def app(self) -> Starlette:
        async def discovery(_request: Request) -> JSONResponse:
            return JSONResponse({"issuer": self.url, "jwks_uri": self.url + "/openid/v1/jwks"})

        async def keys(_request: Request) -> JSONResponse:
            self.fetches += 1
            public = jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key(), as_dict=True)
            return JSONResponse({"keys": [{**public, "kid": "k1", "alg": "RS256", "use": "sig"}]})

        return Starlette(
            routes=[
                Route("/.well-known/openid-configuration", discovery),
                Route("/openid/v1/jwks", keys),
            ]
        )

    def token(self, **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": self.url, "aud": AUDIENCE, "sub": PLANNER_SA, "iat": now, "exp": now + 600}
        return jwt.encode({**body, **claims}, self.key, algorithm="RS256", headers={"kid": "k1"})


def hs256(claims: dict[str, Any], secret: bytes) -> str:
    """A token signed with HS256 by hand (PyJWT refuses a public key as an HMAC secret):
    the key-confusion attack on a verifier that takes the algorithm the token names."""

    def part(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    header = part(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "k1"}).encode())
    body = part(json.dumps(claims).encode())
    signature = hmac.new(secret, f"{header}.{body}".encode(), hashlib.sha256).digest()
    return f"{header}.{body}.{part(signature)}"


def test_oidc_tokens_need_the_issuers_signature_audience_and_an_allowed_subject() -> None:
    issuer = Issuer()
    other = Issuer()  # same claims, another key
    with serve(issuer.app()) as url:
        issuer.url = other.url = url
        env = {
            "A2A_TOKEN_VERIFY": "oidc",
            "A2A_TOKEN_AUDIENCE": AUDIENCE,
            "A2A_OIDC_ISSUER": url,
            "A2A_CALLER_PLANNER_IDENTITY": PLANNER_SA,
        }
        app, model = agent(load_callers(env))
        public = issuer.key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        refused = {
            "another key": other.token(),
            "another audience": issuer.token(aud="http://other/"),
            "another issuer": issuer.token(iss="https://elsewhere"),
            "expired": issuer.token(exp=int(time.time()) - 3600),
            "no subject": issuer.token(sub=None),
            "hs256 with the public key": hs256(
                {"iss": url, "aud": AUDIENCE, "sub": PLANNER_SA, "exp": int(time.time()) + 60},
                public,
            ),
            "alg none": jwt.encode(
                {"iss": url, "aud": AUDIENCE, "sub": PLANNER_SA, "exp": int(time.time()) + 60},
                None,
                algorithm="none",
            ),
        }
        with serve(app) as agent_url, httpx.Client(base_url=agent_url, timeout=30) as client:

            def post(token: str) -> httpx.Response:
                auth = {"Authorization": f"Bearer {token}"}
                return client.post("/", json=send(), headers=auth)

            statuses = {why: post(token).status_code for why, token in refused.items()}
            stranger = post(issuer.token(sub=STRANGER_SA))
            refused_turns = model.turns
            planner = post(issuer.token())
    assert statuses == dict.fromkeys(refused, 401)
    assert stranger.status_code == 403
    assert refused_turns == 0
    assert planner.status_code == 200 and answer_of(planner.json()) == ("completed", "hi")
    assert issuer.fetches == 1  # keys fetched once; every token had their kid
