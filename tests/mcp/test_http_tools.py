"""HTTP tools called through the agent's registry, against a loopback stand-in API and OAuth
token endpoint (``Recorder``, under uvicorn) that records every request: each auth type, the
OAuth token's encoding, cache and replacement, the rate limit, the timeout, schema validation,
the response cap, the per-tool counts."""

from __future__ import annotations

import asyncio
import base64
import hmac
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from langop_infra.agent.http_tools import HttpToolCaller, HttpToolEntry, TokenBucket
from langop_infra.agent.runtime import AgentServers, connect_tool_registry, load_agent_servers
from tests.support.client_auth import basic_credentials
from tests.support.loopback import serve

pytestmark = pytest.mark.anyio

SECRET = "canary-s3cret-8d1f"
# RFC 6749 §2.3.1 form-encodes these before base64: each character below is one a client
# that skips that step (httpx's auth=) sends wrongly.
OAUTH_ID = "agent client:7"
OAUTH_SECRET = "s3cr%2Bt+/x:y ü€ 100%"


@dataclass
class Seen:
    method: str
    path: str
    query: list[tuple[str, str]]
    headers: dict[str, str]
    body: bytes


class Recorder:
    """A loopback HTTP API that records each request; ``/token`` is an OAuth token endpoint.

    A stand-in, not a real component: HTTP tools are any team's own APIs, and the official
    MCP SDK's authorization server has no client credentials grant (see
    tests/mcp/servers/oauth_servers.py), so no real token endpoint for this grant runs here.
    Written from RFC 6749 and the SDK's client authentication
    (mcp/server/auth/middleware/client_auth.py), and no kinder: ``/token`` takes
    ``client_secret_basic`` only, decodes the id and secret as both RFC 6749 §2.3.1 and the
    SDK do and refuses a header the two would read differently
    (tests/support/client_auth.py), refuses a body ``client_id`` other than the header's, a
    second authentication method, another grant type or a scope outside ``scopes``, with
    RFC 6749 §5.2 error bodies. ``/echo`` checks a ``Bearer`` Authorization: only a live token
    it issued (or one of ``static_tokens``) passes, else 401 ``invalid_token``, as a resource
    server does once a token is revoked or expired. Not done: other auth methods, refresh
    tokens, token introspection, TLS.
    """

    client_id = OAUTH_ID
    client_secret = OAUTH_SECRET
    scopes = frozenset({"payments", "refunds"})
    static_tokens = frozenset({SECRET, "ready-access-token"})

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.requests: list[Seen] = []
        self.tokens_issued = 0
        self.token_lifetime = 3600
        self.live: dict[str, float] = {}  # issued token -> when it expires (monotonic)
        self.honour_tokens = True  # False: /echo refuses every issued token

    async def record(self, request: Request) -> Seen:
        seen = Seen(
            request.method,
            request.url.path,
            list(request.query_params.multi_items()),
            {k.lower(): v for k, v in request.headers.items()},
            await request.body(),
        )
        self.requests.append(seen)
        return seen

    async def echo(self, request: Request) -> Response:
        seen = await self.record(request)
        scheme, _, token = seen.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and not self._valid(token):
            return JSONResponse(
                {"error": "invalid_token"},
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
            )
        body = json.loads(seen.body) if seen.body else None
        return JSONResponse({"method": seen.method, "query": seen.query, "body": body})

    def _valid(self, token: str) -> bool:
        if token in self.static_tokens:
            return True
        expires = self.live.get(token)
        return self.honour_tokens and expires is not None and time.monotonic() < expires

    async def slow(self, request: Request) -> Response:
        await self.record(request)
        await asyncio.sleep(1.0)
        return JSONResponse({"late": True})

    async def big(self, request: Request) -> Response:
        await self.record(request)
        return Response(b"x" * 50_000, media_type="text/plain")

    async def broken(self, request: Request) -> Response:
        await self.record(request)
        return JSONResponse({"error": "database down"}, status_code=503)

    async def token(self, request: Request) -> Response:
        seen = await self.record(request)
        form = dict(parse_qsl(seen.body.decode(), keep_blank_values=True))
        header = seen.headers.get("authorization", "")
        if "client_secret" in form and header:
            return _oauth_error("invalid_request", "more than one client authentication")
        try:
            client_id, secret = basic_credentials(header)
        except ValueError as exc:
            return _oauth_error("invalid_client", str(exc), 401)
        if form.get("client_id", client_id) != client_id:
            return _oauth_error("invalid_client", "client_id differs from the header's", 401)
        if not (
            hmac.compare_digest(client_id.encode(), self.client_id.encode())
            and hmac.compare_digest(secret.encode(), self.client_secret.encode())
        ):
            return _oauth_error("invalid_client", "unknown client or wrong secret", 401)
        if "grant_type" not in form:
            return _oauth_error("invalid_request", "grant_type is missing")
        if form["grant_type"] != "client_credentials":
            return _oauth_error("unsupported_grant_type", form["grant_type"])
        if not set(form.get("scope", "").split()) <= self.scopes:
            return _oauth_error("invalid_scope", "not a scope of this client")
        self.tokens_issued += 1
        access = f"issued-{self.tokens_issued}"
        self.live[access] = time.monotonic() + self.token_lifetime
        return JSONResponse(
            {"access_token": access, "token_type": "Bearer", "expires_in": self.token_lifetime},
            headers={"Cache-Control": "no-store"},
        )

    def app(self) -> Starlette:
        methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]
        return Starlette(
            routes=[
                Route("/echo", self.echo, methods=methods),
                Route("/slow", self.slow, methods=methods),
                Route("/big", self.big, methods=methods),
                Route("/broken", self.broken, methods=methods),
                Route("/token", self.token, methods=["POST"]),
            ]
        )


def _oauth_error(error: str, description: str, status: int = 400) -> JSONResponse:
    """An RFC 6749 §5.2 error; 401 comes with the Basic challenge the client failed."""
    headers = {"WWW-Authenticate": 'Basic realm="token"'} if status == 401 else {}
    return JSONResponse(
        {"error": error, "error_description": description}, status_code=status, headers=headers
    )


@pytest.fixture(scope="module")
def api() -> Iterator[tuple[str, Recorder]]:
    recorder = Recorder()
    with serve(recorder.app()) as base:
        yield base, recorder


@pytest.fixture
def recorder(api: tuple[str, Recorder]) -> Recorder:
    api[1].reset()
    return api[1]


PAYMENT_SCHEMA = {
    "type": "object",
    "properties": {
        "amount": {"type": "number"},
        "currency": {"type": "string", "enum": ["EUR", "USD", "GBP"], "default": "EUR"},
        "recipient": {"type": "string"},
    },
    "required": ["amount", "recipient"],
}


def tool(base: str, name: str = "payment", path: str = "/echo", **fields: Any) -> HttpToolEntry:
    return HttpToolEntry(name=name, url=f"{base}{path}", **fields)


async def test_post_sends_a_json_body_with_a_bearer_token(
    api: tuple[str, Recorder], recorder: Recorder
) -> None:
    entry = tool(api[0], auth_type="bearer", credential=SECRET, input_schema=PAYMENT_SCHEMA)
    async with await connect_tool_registry(AgentServers([], http_tools=[entry])) as registry:
        result = await registry.call_tool("payment", {"amount": 1250, "recipient": "acct-7"})
    assert result.is_error is False
    assert result.structured_content == {
        "method": "POST",
        "query": [],
        "body": {"amount": 1250, "recipient": "acct-7"},
    }
    [seen] = recorder.requests
    assert seen.headers["authorization"] == f"Bearer {SECRET}"
    assert seen.headers["content-type"] == "application/json"


async def test_get_and_delete_send_the_query_and_custom_headers(
    api: tuple[str, Recorder], recorder: Recorder
) -> None:
    caller = HttpToolCaller(
        [
            tool(
                api[0],
                "lookup",
                method="GET",
                auth_type="apiKey",
                header_name="X-Api-Key",
                credential=SECRET,
            ),
            tool(
                api[0],
                "remove",
                method="DELETE",
                auth_type="bearer",
                header_name="X-Upstream-Auth",
                credential=SECRET,
            ),
        ]
    )
    looked = await caller.call(
        "lookup", {"q": "café", "limit": 5, "exact": True, "tags": ["a", "b"], "filter": {"x": 1}}
    )
    removed = await caller.call("remove", {"id": "42"})
    await caller.aclose()
    assert not looked.is_error and not removed.is_error
    lookup, remove = recorder.requests
    assert (lookup.method, lookup.body) == ("GET", b"")
    assert lookup.query == [
        ("q", "café"),
        ("limit", "5"),
        ("exact", "true"),
        ("tags", "a"),
        ("tags", "b"),
        ("filter", '{"x":1}'),
    ]
    assert lookup.headers["x-api-key"] == SECRET  # apiKey: the raw value
    assert "authorization" not in lookup.headers
    assert (remove.method, remove.query) == ("DELETE", [("id", "42")])
    assert remove.headers["x-upstream-auth"] == f"Bearer {SECRET}"


async def test_basic_sends_user_password_base64(
    api: tuple[str, Recorder], recorder: Recorder
) -> None:
    caller = HttpToolCaller(
        [
            tool(api[0], "ok", auth_type="basic", credential="svc-user:pa:ss", credential_env="B"),
            tool(api[0], "bad", auth_type="basic", credential=SECRET, credential_env="AGENT_B"),
        ]
    )
    ok = await caller.call("ok", {})
    bad = await caller.call("bad", {})
    await caller.aclose()
    assert ok.is_error is False
    assert (
        recorder.requests[0].headers["authorization"]
        == "Basic " + base64.b64encode(b"svc-user:pa:ss").decode()
    )
    assert bad.is_error is True
    assert bad.content[0]["text"] == (
        "tool bad: basic authentication: the value of AGENT_B must be user:password"
    )
    assert len(recorder.requests) == 1  # the bad one never left


def oauth_settings(base: str, secret: str = OAUTH_SECRET, **more: str) -> str:
    return json.dumps(
        {"tokenUrl": f"{base}/token", "clientId": OAUTH_ID, "clientSecret": secret, **more}
    )


async def test_oauth2_client_credentials_token_is_cached_until_expiry(
    api: tuple[str, Recorder], recorder: Recorder
) -> None:
    settings = oauth_settings(api[0], scope="payments")
    caller = HttpToolCaller([tool(api[0], "pay", auth_type="oauth2", credential=settings)])
    results = await asyncio.gather(*(caller.call("pay", {}) for _ in range(3)))
    assert [r.is_error for r in results] == [False] * 3
    assert recorder.tokens_issued == 1 and caller.token_fetches == 1  # one token, shared
    calls = [r for r in recorder.requests if r.path == "/echo"]
    assert {r.headers["authorization"] for r in calls} == {"Bearer issued-1"}
    token_request = next(r for r in recorder.requests if r.path == "/token")
    assert dict(parse_qsl(token_request.body.decode())) == {
        "grant_type": "client_credentials",
        "client_id": OAUTH_ID,
        "scope": "payments",
    }
    # the id and secret, every special character intact (the endpoint decodes both ways)
    assert basic_credentials(token_request.headers["authorization"]) == (OAUTH_ID, OAUTH_SECRET)

    recorder.token_lifetime = 10  # shorter than the renewal margin: renewed on every call
    caller._keeper._tokens.clear()
    await caller.call("pay", {})
    await caller.call("pay", {})
    assert recorder.tokens_issued == 3
    assert recorder.requests[-1].headers["authorization"] == "Bearer issued-3"
    await caller.aclose()


async def test_the_token_endpoint_refuses_credentials_that_are_not_form_encoded(
    api: tuple[str, Recorder], recorder: Recorder
) -> None:
    """The witness that the endpoint above can fail: HTTP Basic as httpx's ``auth=`` sends it
    (no form-encoding, the agent's old way) is refused, as the SDK's server refuses it."""
    async with httpx.AsyncClient() as client:
        answer = await client.post(
            f"{api[0]}/token",
            data={"grant_type": "client_credentials"},
            auth=(OAUTH_ID, OAUTH_SECRET),
        )
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"] == 'Basic realm="token"'
    assert answer.json()["error"] == "invalid_client"
    assert recorder.tokens_issued == 0


async def test_a_refused_token_is_replaced_once_then_the_401_is_the_answer(
    api: tuple[str, Recorder], recorder: Recorder
) -> None:
    caller = HttpToolCaller(
        [tool(api[0], "pay", auth_type="oauth2", credential=oauth_settings(api[0]))]
    )
    assert (await caller.call("pay", {})).is_error is False
    recorder.live.clear()  # the authorization server revoked issued-1 before its expiry
    # three calls at once: each is refused once, and they share one fresh token
    again = await asyncio.gather(*(caller.call("pay", {}) for _ in range(3)))
    assert [r.is_error for r in again] == [False] * 3
    assert recorder.tokens_issued == 2 and caller.token_fetches == 2
    sent = [r.headers["authorization"] for r in recorder.requests if r.path == "/echo"]
    assert sent == ["Bearer issued-1"] * 4 + ["Bearer issued-2"] * 3

    recorder.honour_tokens = False  # the tool refuses every token: one retry, no loop
    recorder.requests.clear()
    refused = await caller.call("pay", {})
    await caller.aclose()
    assert refused.is_error is True
    assert refused.content[0]["text"] == (
        'tool pay: HTTP 401 Unauthorized: {"error":"invalid_token"}'
    )
    assert [r.path for r in recorder.requests] == ["/echo", "/token", "/echo"]
    assert caller.token_fetches == 3


async def test_a_token_refused_more_than_a_thousand_times_is_still_replaced() -> None:
    """Each replacement waits its backoff (a clock of the test's own, moved past it): the
    1,025th is no OverflowError, and the wait stays at its cap for good."""
    from langop_infra.agent._http_tool_auth import (
        REPLACE_BACKOFF_MAX_SECONDS,
        Token,
        TokenKeeper,
        replace_backoff,
    )

    now = [0.0]
    keeper = TokenKeeper(clock=lambda: now[0])
    issued: list[str] = []

    async def fetch() -> Token:
        issued.append(f"t{len(issued) + 1}")
        return Token(issued[-1], expires=float("inf"))

    token = await keeper.token("pay", fetch)
    for _ in range(1100):
        now[0] += REPLACE_BACKOFF_MAX_SECONDS
        replaced = await keeper.replace("pay", token, fetch)
        assert replaced is not None and replaced != token
        token = replaced
    assert len(issued) == 1101
    assert await keeper.replace("pay", token, fetch) is None  # within the backoff
    waits = [replace_backoff(n) for n in (1, 2, 3, 9, 10, 1024, 1025, 10**6)]
    assert waits == [1.0, 2.0, 4.0, 256.0, 300.0, 300.0, 300.0, 300.0]


async def test_oauth2_failures_and_a_ready_token(
    api: tuple[str, Recorder], recorder: Recorder
) -> None:
    caller = HttpToolCaller(
        [
            tool(
                api[0],
                "wrong",
                auth_type="oauth2",
                credential=oauth_settings(api[0], SECRET),
                credential_env="AGENT_O",
            ),
            tool(
                api[0],
                "scope",
                auth_type="oauth2",
                credential=oauth_settings(api[0], scope="payments admin"),
            ),
            tool(
                api[0],
                "partial",
                auth_type="oauth2",
                credential='{"clientId": "x"}',
                credential_env="AGENT_P",
            ),
            tool(api[0], "ready", auth_type="oauth2", credential="ready-access-token"),
        ]
    )
    wrong_result = await caller.call("wrong", {})
    scope = await caller.call("scope", {})
    partial = await caller.call("partial", {})
    ready = await caller.call("ready", {})
    await caller.aclose()
    assert wrong_result.content[0]["text"] == (
        "tool wrong: oauth2: the token endpoint answered HTTP 401 (invalid_client) without "
        "an access_token"
    )
    assert scope.content[0]["text"] == (
        "tool scope: oauth2: the token endpoint answered HTTP 400 (invalid_scope) without "
        "an access_token"
    )
    assert partial.content[0]["text"] == (
        "tool partial: oauth2: the JSON in AGENT_P lacks tokenUrl, clientSecret"
    )
    assert ready.is_error is False
    assert recorder.requests[-1].headers["authorization"] == "Bearer ready-access-token"


async def test_arguments_are_checked_against_the_input_schema_before_sending(
    api: tuple[str, Recorder], recorder: Recorder
) -> None:
    caller = HttpToolCaller([tool(api[0], input_schema=PAYMENT_SCHEMA)])
    result = await caller.call("payment", {"amount": "ten", "currency": "JPY"})
    await caller.aclose()
    assert result.is_error is True
    assert result.content[0]["text"] == (
        "tool payment: invalid arguments: (root): 'recipient' is a required property; "
        "amount: 'ten' is not of type 'number'; currency: 'JPY' is not one of "
        "['EUR', 'USD', 'GBP']"
    )
    assert recorder.requests == []


async def test_the_rate_limit_waits_for_a_token_then_refuses(
    api: tuple[str, Recorder], recorder: Recorder
) -> None:
    waits = tool(api[0], "waits", requests_per_minute=600, burst=1, timeout=5)  # 1 per 0.1 s
    # One token every 10 s: however slow the machine, the third call cannot get one in 0.5 s.
    refuses = tool(api[0], "refuses", requests_per_minute=6, burst=2, timeout=0.5)
    caller = HttpToolCaller([waits, refuses])
    # The bucket's clock stands still: the second call finds no token and reserves the next
    # one, 0.1 s ahead (its wait), which leaves the bucket one token in debt.
    caller._buckets["waits"] = TokenBucket(per_minute=600, burst=1, clock=lambda: 100.0)
    first, second = await caller.call("waits", {}), await caller.call("waits", {})
    assert not first.is_error and not second.is_error
    assert caller._buckets["waits"].tokens == pytest.approx(-1.0)  # the second waited

    results = [await caller.call("refuses", {}) for _ in range(3)]
    await caller.aclose()
    assert [r.is_error for r in results] == [False, False, True]
    assert results[2].content[0]["text"] == (
        "tool refuses: rate limit of 6 requests a minute (burst 2) reached; no request slot "
        "within its 0.5s timeout: try again later"
    )
    assert len(recorder.requests) == 4


def test_token_bucket_refills_at_its_rate() -> None:
    now = [100.0]
    bucket = TokenBucket(per_minute=120, burst=2, clock=lambda: now[0])  # 2 a second
    assert [bucket.reserve(0), bucket.reserve(0), bucket.reserve(0)] == [0.0, 0.0, None]
    assert bucket.reserve(0.5) == pytest.approx(0.5)  # reserved: the next one is 1 s away
    assert bucket.reserve(0.9) is None
    now[0] += 10
    assert bucket.reserve(0) == 0.0 and bucket.tokens == pytest.approx(1.0)  # capped at burst


async def test_timeout_size_cap_and_http_errors_are_error_results(
    api: tuple[str, Recorder], recorder: Recorder
) -> None:
    caller = HttpToolCaller(
        [
            tool(api[0], "slow", "/slow", timeout=0.2),
            tool(api[0], "big", "/big"),
            tool(api[0], "broken", "/broken"),
        ],
        max_response_bytes=10_000,
    )
    slow = await caller.call("slow", {})  # its answer would come, late: the timeout cut it
    big, broken = await caller.call("big", {}), await caller.call("broken", {})
    await caller.aclose()
    assert slow.content[0]["text"] == "tool slow: no answer within its 0.2s timeout"
    assert big.content[0]["text"] == (
        "tool big: the response is larger than 10000 bytes; ask for less (filters, paging)"
    )
    assert broken.content[0]["text"] == (
        'tool broken: HTTP 503 Service Unavailable: {"error":"database down"}'
    )
    assert all(r.is_error for r in (slow, big, broken))


async def test_unreachable_endpoint_is_an_error_result() -> None:
    caller = HttpToolCaller([HttpToolEntry(name="gone", url="http://127.0.0.1:9/x")])
    result = await caller.call("gone", {})
    await caller.aclose()
    assert result.is_error is True
    assert result.content[0]["text"].startswith("tool gone: request failed: ConnectError")


async def test_config_yaml_tools_and_counts_through_the_registry(
    api: tuple[str, Recorder], recorder: Recorder
) -> None:
    document = {
        "webhookTools": [
            {
                "name": "create_payment",
                "description": "Create a new payment transaction",
                "url": f"{api[0]}/echo",
                "method": "POST",
                "inputSchema": PAYMENT_SCHEMA,
                "timeoutSeconds": 30,
                "authentication": {
                    "type": "bearer",
                    "headerName": "Authorization",
                    "valueFromEnv": "AGENT_WEBHOOK_CREATE_PAYMENT_AUTH",
                },
                "rateLimit": {"requestsPerMinute": 100, "burst": 20},
            },
            {
                "name": "no_secret",
                "url": f"{api[0]}/echo",
                "authentication": {
                    "type": "apiKey",
                    "valueFromEnv": "AGENT_WEBHOOK_NO_SECRET_AUTH",
                },
            },
            {"name": "bad_schema", "url": f"{api[0]}/echo", "inputSchema": {"type": "thing"}},
        ]
    }
    servers = load_agent_servers(document, env={"AGENT_WEBHOOK_CREATE_PAYMENT_AUTH": SECRET})
    assert [(f.name, f.kind) for f in servers.failures] == [
        ("no_secret", "config"),
        ("bad_schema", "config"),
    ]
    assert servers.failures[0].message == (
        "webhookTools[1].authentication: the credential's env var AGENT_WEBHOOK_NO_SECRET_AUTH "
        "is not set"
    )
    [entry] = servers.http_tools
    assert (entry.requests_per_minute, entry.burst, entry.timeout) == (100, 20, 30.0)
    assert SECRET not in repr(entry)
    async with await connect_tool_registry(servers, naming="mcp") as registry:
        assert set(registry.tools) == {"http:create_payment"}
        [definition] = registry.definitions()
        assert definition["inputSchema"] == PAYMENT_SCHEMA
        ok = await registry.call_tool("http:create_payment", {"amount": 1, "recipient": "r"})
        bad = await registry.call_tool("http:create_payment", {"amount": 1})
        again = await registry.call_tool("http:create_payment", {"amount": 2, "recipient": "r"})
        counts = registry.counts["http:create_payment"]
    assert (ok.is_error, bad.is_error, again.is_error) == (False, True, False)
    assert (counts.invocations, counts.errors) == (3, 1)
    assert recorder.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    for result in (ok, bad, again):
        assert SECRET not in json.dumps(result.content)
    assert all(SECRET not in str(f) for f in servers.failures)
