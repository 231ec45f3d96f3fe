"""The verified-caller check (agent/_token_verify.py) and the allow-list in the caller check
(agent/_inbound_auth.py), called directly. The API server and the issuer are answered
in-process by ``httpx.MockTransport`` (the loopback tests, tests/test_a2a_verified_callers.py,
run them over real HTTPS and HTTP); each answer here is shaped as theirs."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm

from langop_infra.agent import _token_verify as verify
from langop_infra.agent._inbound_auth import BearerAuth, load_callers
from tests.unit.agent.test_inbound_auth import app, call, headers_of, scope, seen

AUDIENCE = "http://helper.team.svc.cluster.local:8080/"
SA = "system:serviceaccount:team:planner"
ISSUER = "https://issuer.example"


def review_answer(status: dict[str, Any]) -> httpx.MockTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        assert request.url.path == verify.TOKEN_REVIEW_PATH
        assert request.headers["authorization"] == "Bearer own-token"
        assert body["spec"] == {"token": "caller.token.x", "audiences": [AUDIENCE]}
        assert body["kind"] == "TokenReview"
        assert body["apiVersion"] == "authentication.k8s.io/v1"
        return httpx.Response(201, json={**body, "status": status})

    return httpx.MockTransport(answer)


def reviewer(tmp_path: Path, transport: httpx.AsyncBaseTransport) -> verify.TokenReview:
    (tmp_path / "token").write_text(" own-token\n")
    client = httpx.AsyncClient(transport=transport)
    return verify.TokenReview("https://10.96.0.1:443/", AUDIENCE, tmp_path, client)


OK = {"authenticated": True, "user": {"username": SA}, "audiences": [AUDIENCE]}
OIDC_ENV = {"A2A_TOKEN_VERIFY": "oidc", "A2A_TOKEN_AUDIENCE": "a", "A2A_OIDC_ISSUER": ISSUER}


@pytest.fixture
def pod_env(tmp_path: Path) -> dict[str, str]:
    """A pod's env for TokenReview, its service-account directory (``tmp_path``) holding
    the pod's own token."""
    (tmp_path / "token").write_text("t")
    return {
        "A2A_TOKEN_VERIFY": "tokenreview",
        "A2A_TOKEN_AUDIENCE": "a",
        "KUBERNETES_SERVICE_HOST": "10.96.0.1",
        "A2A_SERVICE_ACCOUNT_DIR": str(tmp_path),
    }


@pytest.fixture
def pod_ca(tmp_path: Path, pod_env: dict[str, str]) -> dict[str, str]:
    """``pod_env`` with the cluster's CA (``ca.crt``, CN kubernetes) beside the token."""
    from tests.support.cluster_pki import make_cluster_pki

    pki = make_cluster_pki(tmp_path)
    (tmp_path / "ca.crt").write_bytes(pki.ca.read_bytes())
    return pod_env


@pytest.mark.parametrize(
    ("status", "identity"),
    [
        (OK, SA),
        ({**OK, "authenticated": False}, None),
        ({**OK, "authenticated": "true"}, None),
        ({**OK, "audiences": ["other"]}, None),
        ({**OK, "audiences": AUDIENCE}, None),
        ({k: v for k, v in OK.items() if k != "audiences"}, None),
        ({**OK, "user": {"username": 7}}, None),
        ({**OK, "user": "x"}, None),
        ({k: v for k, v in OK.items() if k != "user"}, None),
        ({k: v for k, v in OK.items() if k != "authenticated"}, None),
    ],
)
def test_a_review_yields_the_username_only_when_authenticated_for_our_audience(
    tmp_path: Path, status: dict[str, Any], identity: str | None
) -> None:
    found = asyncio.run(reviewer(tmp_path, review_answer(status)).identity("caller.token.x"))
    assert found == identity


@pytest.mark.parametrize(
    "content", [b"not json", b"[]", b'{"status": []}'], ids=["text", "list", "status-list"]
)
def test_a_malformed_review_is_no_one(tmp_path: Path, content: bytes) -> None:
    transport = httpx.MockTransport(lambda _r: httpx.Response(201, content=content))
    assert asyncio.run(reviewer(tmp_path, transport).identity("a.b.c")) is None


def test_reviews_are_reused_and_failures_are_not(tmp_path: Path) -> None:
    answers = [500, 201, 201]
    asked: list[int] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(1)
        code = answers.pop(0)
        return httpx.Response(code, json={"status": OK} if code == 201 else {})

    review = reviewer(tmp_path, httpx.MockTransport(answer))

    async def three() -> list[str | None]:
        return [await review.identity("a.b.c") for _ in range(3)]

    assert asyncio.run(three()) == [None, SA, SA]
    assert len(asked) == 2  # the 500 is asked again; the answer is then kept
    assert review.url == "https://10.96.0.1:443" + verify.TOKEN_REVIEW_PATH


def test_a_network_error_is_not_kept_as_a_verdict(tmp_path: Path) -> None:
    answers: list[httpx.Response | None] = [None, httpx.Response(201, json={"status": OK})]

    def answer(request: httpx.Request) -> httpx.Response:
        given = answers.pop(0)
        if given is None:
            raise httpx.ConnectError("refused", request=request)
        return given

    review = reviewer(tmp_path, httpx.MockTransport(answer))

    async def twice() -> list[str | None]:
        return [await review.identity("a.b.c"), await review.identity("a.b.c")]

    assert asyncio.run(twice()) == [None, SA]


def test_the_pods_ca_is_the_one_trusted(pod_ca: dict[str, str]) -> None:
    made = verify.load_verifier(pod_ca)
    assert isinstance(made, verify.TokenReview)
    capped = made._client._transport  # pyright: ignore[reportPrivateUsage]
    inner = capped._inner  # type: ignore[attr-defined]  # pyright: ignore
    context = inner._pool._ssl_context  # pyright: ignore
    assert [dict(item[0] for item in c["subject"]) for c in context.get_ca_certs()] == [
        {"commonName": "kubernetes"}
    ]


def test_an_unreadable_own_token_or_a_network_error_is_no_one(tmp_path: Path) -> None:
    def fail(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    assert asyncio.run(reviewer(tmp_path, httpx.MockTransport(fail)).identity("a.b.c")) is None
    missing = verify.TokenReview(
        "https://h", AUDIENCE, tmp_path / "none", httpx.AsyncClient(transport=review_answer(OK))
    )
    assert asyncio.run(missing.identity("caller.token.x")) is None


def test_verdicts_expire_and_are_bounded() -> None:
    verdicts = verify.Verdicts(seconds=3600, entries=2)
    first, second, third = (verdicts.digest(t) for t in ("a", "b", "c"))
    assert first != verdicts.digest("a ") and len(first) == 32
    verdicts.put(first, "A")
    verdicts.put(second, None)
    assert verdicts.get(first) == (True, "A") and verdicts.get(second) == (True, None)
    verdicts.put(third, "C")
    assert verdicts.get(first) == (False, None)  # the oldest went
    expired = verify.Verdicts(seconds=-1)
    expired.put(first, "A")
    assert expired.get(first) == (False, None)
    assert verify.Verdicts().digest("a") != verdicts.digest("a")  # keyed per instance


KEY = ec.generate_private_key(ec.SECP256R1())


class Answers(httpx.AsyncBaseTransport):
    """``httpx.MockTransport``'s handler, the body left unread: the verifier reads keys with
    ``aiter_raw``, as off the wire, which a read body refuses."""

    def __init__(self, handler: Any) -> None:
        self.handler = handler

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        given: httpx.Response = self.handler(request)
        stream = httpx.ByteStream(given.content)
        return httpx.Response(given.status_code, headers=given.headers, stream=stream)


def jwks_transport(fetches: list[str], kid: str = "k1") -> Answers:
    public = ECAlgorithm.to_jwk(KEY.public_key(), as_dict=True)

    def answer(request: httpx.Request) -> httpx.Response:
        fetches.append(request.url.path)
        if request.url.path == "/.well-known/openid-configuration":
            return httpx.Response(200, json={"issuer": ISSUER, "jwks_uri": f"{ISSUER}/keys"})
        return httpx.Response(200, json={"keys": [{**public, "kid": kid}]})

    return Answers(answer)


def signed(kid: str | None = "k1", **claims: Any) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "aud": AUDIENCE, "sub": SA, "exp": now + 60, **claims}
    headers = {"kid": kid} if kid else {}
    return jwt.encode({k: v for k, v in body.items() if v is not None}, KEY, "ES256", headers)


def tokens(transport: httpx.AsyncBaseTransport, jwks_url: str | None = None) -> verify.JwksTokens:
    return verify.JwksTokens(ISSUER, AUDIENCE, jwks_url, httpx.AsyncClient(transport=transport))


def test_a_jwt_of_the_issuer_yields_its_subject_and_keys_come_by_discovery() -> None:
    fetches: list[str] = []
    checker = tokens(jwks_transport(fetches))

    async def run() -> list[str | None]:
        return [await checker.identity(signed()), await checker.identity(signed(kid="k9"))]

    assert asyncio.run(run()) == [SA, None]
    assert fetches == ["/.well-known/openid-configuration", "/keys"]  # k9: not again so soon
    assert checker.jwks_url == f"{ISSUER}/keys"


# Tokens are made in the test, not at collection: mutmut runs a test minutes after it
# collected it, when a token made then has expired and every check would refuse it.
@pytest.mark.parametrize(
    "make",
    [
        lambda: signed(aud="other"),
        lambda: signed(iss="https://elsewhere"),
        lambda: signed(exp=int(time.time()) - 120),
        lambda: signed(sub=None),
        lambda: signed(sub=""),
        lambda: signed(exp=None),
        lambda: "not.a.jwt",
        lambda: "",
    ],
    ids=["audience", "issuer", "expired", "no-sub", "empty-sub", "no-exp", "not-jwt", "empty"],
)
def test_a_jwt_that_does_not_hold_is_no_one(make: Any) -> None:
    token = make()
    assert asyncio.run(tokens(jwks_transport([]), f"{ISSUER}/keys").identity(token)) is None


def test_a_token_without_kid_uses_the_only_key_and_skew_is_allowed() -> None:
    checker = tokens(jwks_transport([], kid=""), f"{ISSUER}/keys")
    late = signed(kid=None, exp=int(time.time()) - 10)
    assert asyncio.run(checker.identity(late)) == SA


def test_a_discovery_document_of_another_issuer_gives_no_keys() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"issuer": "https://evil", "jwks_uri": f"{ISSUER}/keys"})

    assert asyncio.run(tokens(Answers(answer)).identity(signed())) is None


def test_the_allow_list_admits_listed_identities_and_refuses_others_with_403() -> None:
    class Verifier:
        """A stand-in verifier: the unit under test is the allow-list, not the check."""

        async def identity(self, token: str) -> str | None:
            return {"good": SA, "stranger": "system:serviceaccount:x:y"}.get(token)

        async def aclose(self) -> None:
            return None

    env = {"A2A_CALLER_PLANNER_IDENTITY": f" {SA} ", "A2A_CALLER_PLANNER_TOKEN": "p" * 16}
    callers = load_callers(env | OIDC_ENV)
    assert callers.identities == {SA: "planner"}
    from dataclasses import replace

    auth = BearerAuth(app, replace(callers, verifier=Verifier()))
    seen.clear()
    admitted, _, _ = call(auth, scope(authorization="Bearer good"))
    forbidden, _, pulled = call(auth, scope(authorization="Bearer stranger"))
    invalid, _, _ = call(auth, scope(authorization="Bearer bad"))
    shared, _, _ = call(auth, scope(authorization="Bearer " + "p" * 16))
    assert admitted[0]["status"] == 200 and shared[0]["status"] == 200
    assert seen == [("planner", b""), ("planner", b"")]
    assert forbidden[0]["status"] == 403 and pulled == 0
    assert headers_of(forbidden[0])["www-authenticate"] == (
        'Bearer realm="a2a", error="insufficient_scope"'
    )
    assert json.loads(forbidden[1]["body"]) == {
        "error": "your token is valid, and you are not among this agent's callers"
    }
    assert invalid[0]["status"] == 401
    assert headers_of(invalid[0])["www-authenticate"] == 'Bearer realm="a2a", error="invalid_token"'


def test_a_tokenreview_verifier_is_made_from_the_pods_env(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("t")
    env = {
        "A2A_TOKEN_VERIFY": " TokenReview ",
        "A2A_TOKEN_AUDIENCE": f" {AUDIENCE} ",
        "KUBERNETES_SERVICE_HOST": "fd00::1",
        "KUBERNETES_SERVICE_PORT_HTTPS": "6443",
        "KUBERNETES_SERVICE_PORT": "1",
        "A2A_SERVICE_ACCOUNT_DIR": str(tmp_path),
    }
    made = verify.load_verifier(env)
    assert isinstance(made, verify.TokenReview)
    assert made.url == "https://[fd00::1]:6443" + verify.TOKEN_REVIEW_PATH
    assert made.audience == AUDIENCE and made.credentials == tmp_path
    oidc = verify.load_verifier(OIDC_ENV)
    assert isinstance(oidc, verify.JwksTokens)
    assert (oidc.issuer, oidc.audience, oidc.jwks_url) == (ISSUER, "a", None)
    assert verify.load_verifier({"A2A_TOKEN_AUDIENCE": "a"}) is None


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"A2A_CALLER_X_IDENTITY": SA},
            "A2A_CALLER_<CALLER>_IDENTITY names callers by a verified token, and "
            "A2A_TOKEN_VERIFY is unset: set it to tokenreview or oidc",
        ),
        (
            {"A2A_TOKEN_VERIFY": "jwt", "A2A_TOKEN_AUDIENCE": AUDIENCE},
            "A2A_TOKEN_VERIFY='jwt': use tokenreview (Kubernetes service-account tokens) or "
            "oidc (an issuer's JWTs)",
        ),
        (
            {"A2A_TOKEN_VERIFY": "oidc"},
            "A2A_TOKEN_AUDIENCE: a verified token must name this agent; set it",
        ),
        (
            {"A2A_TOKEN_VERIFY": "oidc", "A2A_TOKEN_AUDIENCE": AUDIENCE},
            "A2A_OIDC_ISSUER: the issuer's URL (https://...) is required",
        ),
        (
            {"A2A_TOKEN_VERIFY": "tokenreview", "A2A_TOKEN_AUDIENCE": AUDIENCE},
            "A2A_TOKEN_VERIFY=tokenreview: KUBERNETES_SERVICE_HOST is unset (not in a pod); "
            "the API server is where tokens are reviewed",
        ),
        (
            {"A2A_CALLER_X_IDENTITY": " "},
            "A2A_CALLER_X_IDENTITY: empty; give the caller's identity (its token's subject)",
        ),
    ],
)
def test_verification_settings_are_checked_at_start(env: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError) as raised:
        load_callers(env)
    assert str(raised.value) == message


def test_tokenreview_without_the_pods_own_token_says_so(tmp_path: Path) -> None:
    env = {
        "A2A_TOKEN_VERIFY": "tokenreview",
        "A2A_TOKEN_AUDIENCE": AUDIENCE,
        "KUBERNETES_SERVICE_HOST": "10.96.0.1",
        "A2A_SERVICE_ACCOUNT_DIR": str(tmp_path),
    }
    with pytest.raises(ValueError) as raised:
        load_callers(env)
    assert str(raised.value) == (
        f"A2A_TOKEN_VERIFY=tokenreview: no service-account token at {tmp_path}/token; "
        "set automountServiceAccountToken: true on the agent"
    )


def test_callers_by_identity_are_named_from_their_variables() -> None:
    env = {
        "A2A_CALLER_AUDIT_BOT_IDENTITY": "system:serviceaccount:x:audit",
        "A2A_CALLER__IDENTITY": "ignored",
        "A2A_CALLER_IDENTITY": "ignored too",
        "A2A_OIDC_JWKS_URL": f" {ISSUER}/keys ",
    } | OIDC_ENV
    callers = load_callers(env)
    assert callers.identities == {"system:serviceaccount:x:audit": "audit-bot"}
    assert isinstance(callers.verifier, verify.JwksTokens)
    assert callers.verifier.jwks_url == f"{ISSUER}/keys"


def test_clients_cap_what_they_read() -> None:
    client = verify._client(False)  # pyright: ignore[reportPrivateUsage]
    transport = client._transport  # pyright: ignore[reportPrivateUsage]
    assert isinstance(transport, verify.CappedTransport)
    assert transport._limit == verify.MAX_ANSWER_BYTES  # pyright: ignore[reportPrivateUsage]
    assert client.timeout == httpx.Timeout(10.0)


def test_failures_are_logged_by_kind_only(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, json={})

    def fail(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused caller-token", request=request)

    caplog.set_level("WARNING", logger="langop_infra.agent")
    asyncio.run(reviewer(tmp_path, httpx.MockTransport(refuse)).identity("caller.token.x"))
    asyncio.run(reviewer(tmp_path, httpx.MockTransport(fail)).identity("caller.token.x"))
    asyncio.run(tokens(Answers(refuse), f"{ISSUER}/keys").identity(signed()))
    assert [r.getMessage() for r in caplog.records] == [
        "TokenReview refused: HTTP 500",
        "TokenReview not possible: ConnectError",
        "the issuer's keys could not be read: HTTPStatusError",
    ]


def test_the_api_url_and_the_ca_come_from_the_pod(tmp_path: Path, pod_ca: dict[str, str]) -> None:
    made = verify.load_verifier(pod_ca)
    assert isinstance(made, verify.TokenReview)
    assert made.url == "https://10.96.0.1:443" + verify.TOKEN_REVIEW_PATH
    review = verify.TokenReview("https://h/", "a", tmp_path, httpx.AsyncClient())
    assert review.url == "https://h" + verify.TOKEN_REVIEW_PATH


def test_only_jwt_shaped_tokens_are_reviewed_and_each_has_its_own_verdict(tmp_path: Path) -> None:
    asked: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        token = json.loads(request.content)["spec"]["token"]
        asked.append(token)
        status = OK if token == "good.jwt.x" else {"authenticated": False}
        return httpx.Response(200, json={"status": status})  # 200 is an answer too

    review = reviewer(tmp_path, httpx.MockTransport(answer))

    async def run() -> list[str | None]:
        tokens = ["good.jwt.x", "bad.jwt.x", "good.jwt.x", "not-a-jwt", "a.b", "a.b.c.d", "a.b!.c"]
        return [await review.identity(t) for t in tokens]

    assert asyncio.run(run()) == [SA, None, SA, None, None, None, None]
    assert asked == ["good.jwt.x", "bad.jwt.x"]


def test_a_token_without_kid_needs_exactly_one_key() -> None:
    public = ECAlgorithm.to_jwk(KEY.public_key(), as_dict=True)

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"keys": [{**public, "kid": "a"}, {**public, "kid": "b"}]})

    checker = tokens(Answers(answer), f"{ISSUER}/keys")
    assert asyncio.run(checker.identity(signed(kid=None))) is None
    assert asyncio.run(checker.identity(signed(kid="b"))) == SA


def test_an_issuer_with_a_trailing_slash_is_discovered_below_it() -> None:
    fetched: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        fetched.append(str(request.url))
        return httpx.Response(200, json={"issuer": ISSUER + "/", "jwks_uri": f"{ISSUER}/keys"})

    checker = verify.JwksTokens(
        ISSUER + "/", AUDIENCE, None, httpx.AsyncClient(transport=Answers(answer))
    )
    asyncio.run(checker.identity(signed()))
    assert fetched[0] == f"{ISSUER}/.well-known/openid-configuration"


def test_tls_is_verified_without_a_ca_file_too(pod_env: dict[str, str]) -> None:
    import ssl

    for made in (verify.load_verifier(pod_env), verify.load_verifier(OIDC_ENV)):
        client = made._client  # type: ignore[union-attr]  # pyright: ignore
        context = client._transport._inner._pool._ssl_context  # pyright: ignore
        assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


def test_the_plain_service_port_and_an_http_issuer_are_taken(pod_env: dict[str, str]) -> None:
    made = verify.load_verifier(pod_env | {"KUBERNETES_SERVICE_PORT": " 8443 "})
    assert isinstance(made, verify.TokenReview)
    assert made.url == "https://10.96.0.1:8443" + verify.TOKEN_REVIEW_PATH
    local = "http://127.0.0.1:5556/dex"
    oidc = verify.load_verifier(OIDC_ENV | {"A2A_OIDC_ISSUER": f" {local} "})
    assert isinstance(oidc, verify.JwksTokens) and oidc.issuer == local
