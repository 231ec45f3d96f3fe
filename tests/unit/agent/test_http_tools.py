"""``langop_infra.agent.http_tools``: reading webhookTools, the token bucket, and the caller
against a real Starlette app through httpx's in-process ``ASGITransport`` (the same app the
agent would reach over TCP; tests/mcp/test_http_tools.py drives it over loopback)."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from langop_infra.agent import http_tools as h
from langop_infra.agent._http_tool_auth import oauth_settings

# --- load_http_tools --------------------------------------------------------------------------


def test_load_reads_every_field_and_takes_the_credential_from_env() -> None:
    document = {
        "webhookTools": [
            {
                "name": "weather",
                "url": "https://w.example/api",
                "method": "get",
                "description": "the weather",
                "inputSchema": '{"type": "object", "required": ["city"]}',
                "timeoutSeconds": 5,
                "authentication": {"type": "apiKey", "headerName": "X-Key", "valueFromEnv": "K"},
                "rateLimit": {"requestsPerMinute": 30, "burst": 2},
            }
        ]
    }
    tools, failures = h.load_http_tools(document, {"K": "k3y-v4lue"})
    assert failures == []
    assert tools == [
        h.HttpToolEntry(
            name="weather",
            url="https://w.example/api",
            method="GET",
            description="the weather",
            input_schema={"type": "object", "required": ["city"]},
            timeout=5.0,
            auth_type="apiKey",
            header_name="X-Key",
            credential_env="K",
            credential="k3y-v4lue",
            requests_per_minute=30,
            burst=2,
        )
    ]
    assert "k3y-v4lue" not in repr(tools[0])
    assert tools[0].definition() == {
        "name": "weather",
        "description": "the weather",
        "inputSchema": {"type": "object", "required": ["city"]},
    }


def test_load_defaults() -> None:
    (tool,), failures = h.load_http_tools({"webhookTools": [{"name": "t", "url": "http://x"}]}, {})
    assert failures == []
    assert tool == h.HttpToolEntry(name="t", url="http://x")
    assert (tool.method, tool.timeout, tool.auth_type, tool.header_name) == (
        "POST",
        30.0,
        "none",
        "Authorization",
    )
    assert tool.credential is None
    assert tool.definition()["inputSchema"] == {"type": "object"}
    assert h.load_http_tools({}, {}) == ([], [])


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"url": "http://x"}, "webhookTools[0]: needs a name and a url"),
        ({"name": "t"}, "webhookTools[0]: needs a name and a url"),
        (
            {"name": "t", "url": "http://x", "method": "TRACE"},
            "webhookTools[0].method: must be one of GET, POST, PUT, PATCH, DELETE",
        ),
        (
            {"name": "t", "url": "http://x", "inputSchema": "{not json"},
            "webhookTools[0].inputSchema: not a JSON object",
        ),
        (
            {"name": "t", "url": "http://x", "inputSchema": "[1]"},
            "webhookTools[0].inputSchema: not a JSON object",
        ),
        (
            {"name": "t", "url": "http://x", "inputSchema": {"type": 5}},
            "webhookTools[0].inputSchema: not valid JSON Schema draft-07: "
            "5 is not valid under any of the given schemas",
        ),
        (
            {"name": "t", "url": "http://x", "authentication": {"type": "magic"}},
            "webhookTools[0].authentication.type: "
            "must be one of none, bearer, basic, apiKey, oauth2",
        ),
        (
            {"name": "t", "url": "http://x", "authentication": {"type": "bearer"}},
            "webhookTools[0].authentication: the credential's env var (none) is not set",
        ),
        (
            {
                "name": "t",
                "url": "http://x",
                "authentication": {"type": "bearer", "valueFromEnv": "NOPE"},
            },
            "webhookTools[0].authentication: the credential's env var NOPE is not set",
        ),
        (
            {"name": "t", "url": "http://x", "timeoutSeconds": 0},
            "webhookTools[0].timeoutSeconds: must be a positive number of seconds",
        ),
        (
            {"name": "t", "url": "http://x", "timeoutSeconds": True},
            "webhookTools[0].timeoutSeconds: must be a positive number of seconds",
        ),
        (
            {"name": "t", "url": "http://x", "timeoutSeconds": "5"},
            "webhookTools[0].timeoutSeconds: must be a positive number of seconds",
        ),
    ],
)
def test_an_unusable_entry_is_reported_by_name_and_the_others_stay(
    entry: dict[str, Any], problem: str
) -> None:
    good = {"name": "ok", "url": "http://ok"}
    tools, failures = h.load_http_tools({"webhookTools": [entry, good]}, {})
    assert [t.name for t in tools] == ["ok"]
    assert failures == [(entry.get("name") or "webhookTools[0]", problem)]


def test_webhook_tools_that_is_no_list_or_holds_no_object() -> None:
    assert h.load_http_tools({"webhookTools": {"a": 1}}, {}) == (
        [],
        [("webhookTools", "webhookTools: must be a list")],
    )
    assert h.load_http_tools({"webhookTools": ["x"]}, {}) == (
        [],
        [("webhookTools[0]", "webhookTools[0]: needs a name and a url")],
    )


# --- TokenBucket ------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_token_bucket_spends_its_burst_then_waits_for_the_rate() -> None:
    clock = Clock()
    bucket = h.TokenBucket(60, 2, clock=clock)  # one token a second
    assert bucket.reserve(0) == 0.0
    assert bucket.reserve(0) == 0.0
    assert bucket.reserve(0.5) is None  # a full second away: nothing is taken
    assert bucket.reserve(1.0) == pytest.approx(1.0)
    assert bucket.reserve(5.0) == pytest.approx(2.0)  # reserved behind the previous one
    clock.now += 10
    assert bucket.tokens == pytest.approx(-2.0)
    assert bucket.reserve(0) == 0.0
    assert bucket.tokens == pytest.approx(1.0)  # refilled to its capacity of 2, one taken


def test_token_bucket_rate_is_per_minute() -> None:
    clock = Clock()
    bucket = h.TokenBucket(30, 1, clock=clock)
    assert bucket.rate == 0.5
    assert (bucket.capacity, bucket.tokens) == (1.0, 1.0)
    assert bucket.reserve(0) == 0.0
    assert bucket.reserve(10) == pytest.approx(2.0)


# --- helpers ----------------------------------------------------------------------------------


def test_query_renders_scalars_lists_and_objects() -> None:
    assert h._query(
        {"b": True, "f": False, "l": ["a", 1, {"x": 1}], "o": {"k": [1, 2]}, "n": None, "i": 3}
    ) == {"b": "true", "f": "false", "l": ["a", "1", '{"x": 1}'], "o": '{"k":[1,2]}', "i": 3}


def test_json_object_only_for_json_objects() -> None:
    assert h._json_object('{"a": 1}', "application/json") == {"a": 1}
    assert h._json_object('{"a": 1}', "text/plain") is None
    assert h._json_object("[1]", "application/json") is None
    assert h._json_object("nope", "application/json") is None


def test_oauth_settings() -> None:
    assert oauth_settings(' {"tokenUrl": "u"}') == {"tokenUrl": "u"}
    assert oauth_settings("ready-token") is None
    assert oauth_settings("{broken") is None


def test_fetches_tokens_only_for_oauth2_with_settings() -> None:
    settings = json.dumps({"tokenUrl": "u", "clientId": "c", "clientSecret": "s"})
    assert h._fetches_tokens(h.HttpToolEntry("t", "u", auth_type="oauth2", credential=settings))
    assert not h._fetches_tokens(h.HttpToolEntry("t", "u", auth_type="oauth2", credential="tok"))
    assert not h._fetches_tokens(h.HttpToolEntry("t", "u", auth_type="bearer", credential=settings))


def test_invalid_arguments_names_paths_and_stops_at_five() -> None:
    schema = {
        "type": "object",
        "properties": {f"p{i}": {"type": "integer"} for i in range(7)}
        | {"o": {"type": "object", "properties": {"x": {"type": "string"}}}},
    }
    tool = h.HttpToolEntry("t", "u", input_schema=schema)
    assert h._invalid_arguments(tool, {"o": {"x": 1}}) == "o/x: 1 is not of type 'string'"
    assert h._invalid_arguments(tool, {}) == ""
    many = h._invalid_arguments(tool, {f"p{i}": "s" for i in range(7)})
    assert many.count(": 's' is not of type 'integer'") == 5
    assert h._invalid_arguments(h.HttpToolEntry("t", "u", input_schema={"type": "object"}), []) == (  # type: ignore[arg-type]
        "(root): [] is not of type 'object'"
    )


def test_error_result() -> None:
    result = h.error_result("boom")
    assert result.is_error is True
    assert result.content == [{"type": "text", "text": "boom"}]


# --- the caller -------------------------------------------------------------------------------


class Upstream:
    """A Starlette app that records what it was sent and answers as told."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.token_requests: list[dict[str, Any]] = []
        self.refuse_tokens: set[str] = set()
        self.issued = 0
        self.app = Starlette(
            routes=[
                Route("/tool", self.tool, methods=["GET", "POST", "PUT", "PATCH", "DELETE"]),
                Route("/text", self.text, methods=["POST"]),
                Route("/fail", self.fail, methods=["POST"]),
                Route("/big", self.big, methods=["POST"]),
                Route("/token", self.token, methods=["POST"]),
                Route("/badtoken", self.badtoken, methods=["POST"]),
                Route("/slow", self.slow, methods=["POST"]),
                Route("/chunks", self.chunks, methods=["POST"]),
                Route("/latin1", self.latin1, methods=["POST"]),
                Route("/broken-utf8", self.broken_utf8, methods=["POST"]),
                Route("/untyped", self.untyped, methods=["POST"]),
                Route("/token-lifetime", self.token_lifetime, methods=["POST"]),
                Route("/token-empty", self.token_empty, methods=["POST"]),
                Route("/token-down", self.token_down, methods=["POST"]),
            ]
        )
        self.lifetime: Any = 20  # below the 30 s margin: each token is renewed at once
        self.challenge = False  # a 401 says invalid_token (RFC 6750)
        self.app.add_route("/echo", self.echo, methods=["POST"])

    async def tool(self, request: Request) -> Response:
        body = (await request.body()).decode()
        self.seen.append(
            {
                "method": request.method,
                "query": str(request.url.query),
                "body": body,
                "headers": dict(request.headers),
            }
        )
        auth = request.headers.get("authorization", "")
        if auth.removeprefix("Bearer ") in self.refuse_tokens:
            challenge = (
                {"www-authenticate": 'Bearer error="invalid_token"'} if self.challenge else {}
            )
            return PlainTextResponse("expired", status_code=401, headers=challenge)
        return JSONResponse({"ok": True, "method": request.method})

    async def text(self, request: Request) -> Response:
        return PlainTextResponse("plain answer")

    async def fail(self, request: Request) -> Response:
        return PlainTextResponse("x" * 3000, status_code=503)

    async def big(self, request: Request) -> Response:
        return PlainTextResponse("y" * 200)

    async def echo(self, request: Request) -> Response:
        """Answers with what it was sent: the credential, as some servers do in errors."""
        body = (await request.body()).decode()
        return PlainTextResponse(f"{request.headers.get('authorization', '')} {body}")

    async def slow(self, request: Request) -> Response:
        await asyncio.sleep(0.6)  # always after the 0.2 s timeout of the test that calls it
        return PlainTextResponse("late")

    async def chunks(self, request: Request) -> Response:
        async def parts() -> Any:
            for part in (b"a" * 60, b"b" * 60, b"c" * 60):
                yield part

        return StreamingResponse(parts(), media_type="text/plain")

    async def latin1(self, request: Request) -> Response:
        return Response(b"caf\xe9", media_type="text/plain; charset=latin-1")

    async def broken_utf8(self, request: Request) -> Response:
        return Response(b"ok \xff", media_type="text/plain; charset=utf-8")

    async def untyped(self, request: Request) -> Response:
        return Response(b'{"a": 1}')

    async def token_lifetime(self, request: Request) -> Response:
        self.token_requests.append({"accept": request.headers.get("accept")})
        self.issued += 1
        answer: dict[str, Any] = {"access_token": f"tok-{self.issued}"}
        if self.lifetime is not None:
            answer["expires_in"] = self.lifetime
        return JSONResponse(answer)

    async def token_empty(self, request: Request) -> Response:
        return JSONResponse({})

    async def token_down(self, request: Request) -> Response:
        return PlainTextResponse("down", status_code=500)

    async def token(self, request: Request) -> Response:
        form = dict((await request.form()).items())
        self.token_requests.append({"form": form, "auth": request.headers.get("authorization")})
        self.issued += 1
        return JSONResponse({"access_token": f"tok-{self.issued}", "expires_in": 3600})

    async def badtoken(self, request: Request) -> Response:
        return JSONResponse({"error": "invalid_client"}, status_code=401)


def run(
    upstream: Upstream, tools: list[h.HttpToolEntry], calls: list[tuple[str, Any]], **kw: Any
) -> list[Any]:
    async def go() -> list[Any]:
        caller = h.HttpToolCaller(tools, transport=httpx.ASGITransport(app=upstream.app), **kw)
        try:
            return [await caller.call(name, args) for name, args in calls]
        finally:
            await caller.aclose()

    return asyncio.run(go())


def text_of(result: Any) -> str:
    return result.content[0]["text"]


def test_post_sends_json_and_reads_structured_content() -> None:
    up = Upstream()
    (result,) = run(up, [h.HttpToolEntry("t", "http://127.0.0.1/tool")], [("t", {"a": 1})])
    assert result.is_error is False
    assert result.structured_content == {"ok": True, "method": "POST"}
    assert json.loads(up.seen[0]["body"]) == {"a": 1}
    assert up.seen[0]["headers"]["accept"] == "application/json"
    assert "authorization" not in up.seen[0]["headers"]


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_get_and_delete_send_a_query(method: str) -> None:
    up = Upstream()
    run(
        up,
        [h.HttpToolEntry("t", "http://127.0.0.1/tool", method=method)],
        [("t", {"q": "x y", "n": 2})],
    )
    assert up.seen[0]["query"] == "q=x+y&n=2"
    assert up.seen[0]["body"] == ""


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
def test_put_and_patch_send_a_body(method: str) -> None:
    up = Upstream()
    run(up, [h.HttpToolEntry("t", "http://127.0.0.1/tool", method=method)], [("t", {"q": 1})])
    assert (up.seen[0]["query"], json.loads(up.seen[0]["body"])) == ("", {"q": 1})


def test_text_answers_have_no_structured_content() -> None:
    (result,) = run(Upstream(), [h.HttpToolEntry("t", "http://127.0.0.1/text")], [("t", None)])
    assert (text_of(result), result.structured_content, result.is_error) == (
        "plain answer",
        None,
        False,
    )


@pytest.mark.parametrize(
    ("auth_type", "credential", "header", "sent"),
    [
        ("bearer", "abcd", "authorization", "Bearer abcd"),
        ("apiKey", "k3y", "authorization", "k3y"),
        ("basic", "user:pw", "authorization", "Basic " + base64.b64encode(b"user:pw").decode()),
        ("oauth2", "ready-token", "authorization", "Bearer ready-token"),
    ],
)
def test_credentials_by_type(auth_type: str, credential: str, header: str, sent: str) -> None:
    up = Upstream()
    tool = h.HttpToolEntry("t", "http://127.0.0.1/tool", auth_type=auth_type, credential=credential)
    (result,) = run(up, [tool], [("t", {})])
    assert result.is_error is False
    assert up.seen[0]["headers"][header] == sent


def test_a_custom_header_name_carries_bearer_and_api_keys() -> None:
    up = Upstream()
    tools = [
        h.HttpToolEntry(
            "b",
            "http://127.0.0.1/tool",
            auth_type="bearer",
            header_name="X-Auth",
            credential="abcd",
        ),
        h.HttpToolEntry(
            "k", "http://127.0.0.1/tool", auth_type="apiKey", header_name="X-Key", credential="k3y"
        ),
    ]
    run(up, tools, [("b", {}), ("k", {})])
    assert up.seen[0]["headers"]["x-auth"] == "Bearer abcd"
    assert up.seen[1]["headers"]["x-key"] == "k3y"


def test_basic_without_a_colon_is_an_error_naming_the_variable() -> None:
    tool = h.HttpToolEntry(
        "t", "http://127.0.0.1/tool", auth_type="basic", credential_env="CRED", credential="nocolon"
    )
    (result,) = run(Upstream(), [tool], [("t", {})])
    assert result.is_error
    assert (
        text_of(result) == "tool t: basic authentication: the value of CRED must be user:password"
    )


def test_oauth2_fetches_one_token_and_caches_it() -> None:
    """(How a token the tool refuses is replaced is TokenKeeper's: tests/mcp/test_http_tools.py.)"""
    up = Upstream()
    settings = json.dumps(
        {
            "tokenUrl": "http://127.0.0.1/token",
            "clientId": "c i",
            "clientSecret": "s&c",
            "scope": "read",
        }
    )
    tool = h.HttpToolEntry("t", "http://127.0.0.1/tool", auth_type="oauth2", credential=settings)

    async def go() -> tuple[list[Any], int]:
        caller = h.HttpToolCaller([tool], transport=httpx.ASGITransport(app=up.app))
        results = [await caller.call("t", {}), await caller.call("t", {})]
        await caller.aclose()
        return results, caller.token_fetches

    results, fetches = asyncio.run(go())
    assert [r.is_error for r in results] == [False, False]
    assert fetches == 1
    assert [s["headers"]["authorization"] for s in up.seen] == ["Bearer tok-1", "Bearer tok-1"]
    assert up.token_requests[0]["form"] == {
        "grant_type": "client_credentials",
        "client_id": "c i",
        "scope": "read",
    }
    assert up.token_requests[0]["auth"] == "Basic " + base64.b64encode(b"c%20i:s%26c").decode()


def test_oauth2_settings_missing_fields_and_a_refusing_token_endpoint() -> None:
    partial = h.HttpToolEntry(
        "p",
        "http://127.0.0.1/tool",
        auth_type="oauth2",
        credential_env="OA",
        credential='{"tokenUrl": "http://127.0.0.1/token"}',
    )
    refused = h.HttpToolEntry(
        "r",
        "http://127.0.0.1/tool",
        auth_type="oauth2",
        credential=json.dumps(
            {"tokenUrl": "http://127.0.0.1/badtoken", "clientId": "c", "clientSecret": "s"}
        ),
    )
    first, second = run(Upstream(), [partial, refused], [("p", {}), ("r", {})])
    assert text_of(first) == "tool p: oauth2: the JSON in OA lacks clientId, clientSecret"
    assert text_of(second) == (
        "tool r: oauth2: the token endpoint answered HTTP 401 (invalid_client) "
        "without an access_token"
    )


def test_unknown_tool_invalid_arguments_and_http_errors_are_results() -> None:
    schema = {"type": "object", "required": ["city"]}
    tools = [
        h.HttpToolEntry("t", "http://127.0.0.1/tool", input_schema=schema),
        h.HttpToolEntry("f", "http://127.0.0.1/fail"),
    ]
    unknown, invalid, failed = run(Upstream(), tools, [("nope", {}), ("t", {}), ("f", {})])
    assert text_of(unknown) == "no HTTP tool named 'nope'"
    assert text_of(invalid) == "tool t: invalid arguments: (root): 'city' is a required property"
    assert text_of(failed) == "tool f: HTTP 503 Service Unavailable: " + "x" * 2000
    assert unknown.is_error and invalid.is_error and failed.is_error


def test_a_response_over_the_cap_is_refused() -> None:
    (result,) = run(
        Upstream(),
        [h.HttpToolEntry("t", "http://127.0.0.1/big")],
        [("t", {})],
        max_response_bytes=199,
    )
    assert text_of(result) == (
        "tool t: the response is larger than 199 bytes; ask for less (filters, paging)"
    )
    (fits,) = run(
        Upstream(),
        [h.HttpToolEntry("t", "http://127.0.0.1/big")],
        [("t", {})],
        max_response_bytes=200,
    )
    assert text_of(fits) == "y" * 200


def test_a_connection_failure_is_a_result() -> None:
    async def go() -> Any:
        caller = h.HttpToolCaller([h.HttpToolEntry("t", "http://127.0.0.1:9/x", timeout=5)])
        try:
            return await caller.call("t", {})
        finally:
            await caller.aclose()

    result = asyncio.run(go())
    assert result.is_error
    assert text_of(result).startswith("tool t: request failed: ConnectError: ")


def test_the_rate_limit_refuses_a_call_it_cannot_serve_within_the_timeout() -> None:
    tool = h.HttpToolEntry("t", "http://127.0.0.1/tool", timeout=1, requests_per_minute=1, burst=1)
    first, second = run(Upstream(), [tool], [("t", {}), ("t", {})])
    assert first.is_error is False
    assert text_of(second) == (
        "tool t: rate limit of 1 requests a minute (burst 1) reached; no request slot within "
        "its 1s timeout: try again later"
    )


# --- what the mutation run showed untested ----------------------------------------------------


def test_a_timeout_under_a_second_is_accepted() -> None:
    entry = {"name": "t", "url": "http://x", "timeoutSeconds": 0.5}
    (tool,), failures = h.load_http_tools({"webhookTools": [entry]}, {})
    assert (tool.timeout, failures) == (0.5, [])


def test_a_rate_limit_without_burst_allows_one_call_at_a_time() -> None:
    tool = h.HttpToolEntry("t", "http://127.0.0.1/tool", timeout=1, requests_per_minute=1)
    first, second = run(Upstream(), [tool], [("t", {}), ("t", {})])
    assert first.is_error is False
    assert text_of(second).startswith("tool t: rate limit of 1 requests a minute (burst None)")


def test_token_bucket_with_a_part_token_over_one_does_not_wait() -> None:
    clock = Clock()
    bucket = h.TokenBucket(60, 2, clock=clock)
    assert [bucket.reserve(0), bucket.reserve(0)] == [0.0, 0.0]
    clock.now += 1.5
    assert bucket.reserve(0) == 0.0


def test_a_bearer_credential_that_looks_like_json_is_sent_as_it_is() -> None:
    up = Upstream()
    credential = '{"tokenUrl": "http://127.0.0.1/token", "clientId": "c", "clientSecret": "s"}'
    tool = h.HttpToolEntry("t", "http://127.0.0.1/tool", auth_type="bearer", credential=credential)
    (result,) = run(up, [tool], [("t", {})])
    assert result.is_error is False
    assert up.seen[0]["headers"]["authorization"] == f"Bearer {credential}"
    assert up.token_requests == []


def test_get_carries_the_credential_too() -> None:
    up = Upstream()
    tool = h.HttpToolEntry(
        "t", "http://127.0.0.1/tool", method="GET", auth_type="bearer", credential="abcd"
    )
    run(up, [tool], [("t", {"q": 1})])
    assert up.seen[0]["headers"]["authorization"] == "Bearer abcd"
    assert up.seen[0]["headers"]["accept"] == "application/json"


def oauth_tool(url: str) -> h.HttpToolEntry:
    settings = json.dumps({"tokenUrl": url, "clientId": "c", "clientSecret": "s"})
    return h.HttpToolEntry("t", "http://127.0.0.1/tool", auth_type="oauth2", credential=settings)


def fetches(up: Upstream, tool: h.HttpToolEntry, calls: int) -> int:
    async def go() -> int:
        caller = h.HttpToolCaller([tool], transport=httpx.ASGITransport(app=up.app))
        for _ in range(calls):
            assert (await caller.call("t", {})).is_error is False
        await caller.aclose()
        return caller.token_fetches

    return asyncio.run(go())


def test_a_token_living_less_than_the_margin_is_renewed_for_every_call() -> None:
    up = Upstream()
    assert fetches(up, oauth_tool("http://127.0.0.1/token-lifetime"), 2) == 2
    assert up.token_requests[0]["accept"] == "application/json"


def test_a_token_without_expires_in_is_kept_for_an_hour() -> None:
    up = Upstream()
    up.lifetime = None
    assert fetches(up, oauth_tool("http://127.0.0.1/token-lifetime"), 2) == 1
    up.lifetime = "soon"  # not a number: an hour too
    assert fetches(up, oauth_tool("http://127.0.0.1/token-lifetime"), 2) == 1


def test_a_token_answer_without_an_access_token_is_an_error() -> None:
    (empty,) = run(Upstream(), [oauth_tool("http://127.0.0.1/token-empty")], [("t", {})])
    (down,) = run(Upstream(), [oauth_tool("http://127.0.0.1/token-down")], [("t", {})])
    assert text_of(empty) == (
        "tool t: oauth2: the token endpoint answered HTTP 200 without an access_token"
    )
    assert text_of(down) == (
        "tool t: oauth2: the token endpoint answered HTTP 500 without an access_token"
    )


def test_a_body_in_chunks_is_joined_and_capped_in_total() -> None:
    tool = h.HttpToolEntry("t", "http://127.0.0.1/chunks")
    (whole,) = run(Upstream(), [tool], [("t", {})])
    assert whole.content == [{"type": "text", "text": "a" * 60 + "b" * 60 + "c" * 60}]
    (capped,) = run(Upstream(), [tool], [("t", {})], max_response_bytes=100)
    assert text_of(capped) == (
        "tool t: the response is larger than 100 bytes; ask for less (filters, paging)"
    )


def test_the_body_is_read_in_its_declared_charset_and_bad_bytes_replaced() -> None:
    tools = [
        h.HttpToolEntry("a", "http://127.0.0.1/latin1"),
        h.HttpToolEntry("b", "http://127.0.0.1/broken-utf8"),
    ]
    latin, broken = run(Upstream(), tools, [("a", {}), ("b", {})])
    assert text_of(latin) == "café"
    assert text_of(broken) == "ok \ufffd"


def test_an_answer_without_a_content_type_has_no_structured_content() -> None:
    (result,) = run(Upstream(), [h.HttpToolEntry("t", "http://127.0.0.1/untyped")], [("t", {})])
    assert (result.is_error, result.structured_content) == (False, None)
    assert result.content == [{"type": "text", "text": '{"a": 1}'}]


def test_a_tool_slower_than_its_timeout_is_an_error() -> None:
    (result,) = run(
        Upstream(), [h.HttpToolEntry("t", "http://127.0.0.1/slow", timeout=0.2)], [("t", {})]
    )
    assert result.is_error
    assert result.content == [{"type": "text", "text": "tool t: no answer within its 0.2s timeout"}]


def oauth_on(url: str, method: str = "POST") -> h.HttpToolEntry:
    settings = json.dumps(
        {"tokenUrl": "http://127.0.0.1/token", "clientId": "c", "clientSecret": "client-s3cret"}
    )
    return h.HttpToolEntry("t", url, method=method, auth_type="oauth2", credential=settings)


def twice_refusing_the_first_token(up: Upstream, tool: h.HttpToolEntry) -> list[Any]:
    async def go() -> list[Any]:
        caller = h.HttpToolCaller([tool], transport=httpx.ASGITransport(app=up.app))
        first = await caller.call("t", {"q": 1})
        up.refuse_tokens.add("tok-1")
        second = await caller.call("t", {"q": 1})
        await caller.aclose()
        return [first, second]

    return asyncio.run(go())


def test_a_refused_token_is_replaced_and_an_idempotent_call_sent_again() -> None:
    up = Upstream()
    first, second = twice_refusing_the_first_token(up, oauth_on("http://127.0.0.1/tool", "GET"))
    assert (first.is_error, second.is_error) == (False, False)
    assert [(s["headers"]["authorization"], s["query"]) for s in up.seen] == [
        ("Bearer tok-1", "q=1"),
        ("Bearer tok-1", "q=1"),
        ("Bearer tok-2", "q=1"),
    ]


def test_a_post_is_sent_again_only_when_the_challenge_says_invalid_token() -> None:
    up = Upstream()
    _, refused = twice_refusing_the_first_token(up, oauth_on("http://127.0.0.1/tool"))
    assert text_of(refused) == "tool t: HTTP 401 Unauthorized: expired"
    assert len(up.seen) == 2
    up = Upstream()
    up.challenge = True
    _, again = twice_refusing_the_first_token(up, oauth_on("http://127.0.0.1/tool"))
    assert again.is_error is False
    assert [json.loads(s["body"]) for s in up.seen] == [{"q": 1}] * 3
    assert up.seen[-1]["headers"]["authorization"] == "Bearer tok-2"


@pytest.mark.parametrize(
    ("auth_type", "credential", "kept"),
    [
        ("bearer", "bearer-t0ken-1", "Bearer [secret] {}"),
        ("apiKey", "api-k3y-value", "[secret] {}"),
        ("basic", "user:pa55word-x", "Basic [secret] {}"),
    ],
)
def test_what_a_tool_echoes_of_its_credential_is_replaced(
    auth_type: str, credential: str, kept: str
) -> None:
    tool = h.HttpToolEntry("t", "http://127.0.0.1/echo", auth_type=auth_type, credential=credential)
    (result,) = run(Upstream(), [tool], [("t", {})])
    assert result.is_error is False
    assert text_of(result) == kept
    assert credential not in text_of(result)


def test_an_oauth_client_secret_echoed_is_replaced_too() -> None:
    tool = oauth_on("http://127.0.0.1/echo")
    (result,) = run(Upstream(), [tool], [("t", {"note": "client-s3cret"})])
    assert text_of(result) == 'Bearer [secret] {"note":"[secret]"}'  # the token too


def test_an_argument_may_not_override_the_query_of_the_configured_url() -> None:
    tool = h.HttpToolEntry("t", "http://127.0.0.1/tool?apikey=k&v=1", method="GET")
    up = Upstream()
    (result,) = run(up, [tool], [("t", {"apikey": "other", "q": 2})])
    assert text_of(result) == (
        "tool t: invalid arguments: apikey: set by the tool's URL; arguments cannot override them"
    )
    assert up.seen == []
    (fine,) = run(up, [tool], [("t", {"q": 2})])
    assert fine.is_error is False
    assert up.seen[0]["query"] == "apikey=k&v=1&q=2"


# --- what a call may send of its secrets, and the entry's own messages (mutation survivors) ----


def test_sent_secrets_of_a_basic_credential_hold_the_whole_password() -> None:
    tool = h.HttpToolEntry("t", "u", auth_type="basic", credential="user:pa:ss")
    assert h._sent_secrets(tool) == ["user:pa:ss", "pa:ss"]


def test_sent_secrets_hold_a_routed_query_credential_also_decoded() -> None:
    assert h._sent_secrets(h.HttpToolEntry("t", "u", url_secrets=("a%2Bb c",))) == [
        "a%2Bb c",
        "a+b c",
    ]
    assert h._sent_secrets(h.HttpToolEntry("t", "u")) == []


def test_sent_secrets_of_an_oauth_document_without_a_client_secret_are_the_document() -> None:
    document = json.dumps({"clientId": "c", "tokenUrl": "https://a/t"})
    tool = h.HttpToolEntry("t", "u", auth_type="oauth2", credential=document)
    assert h._sent_secrets(tool) == [document]


def test_load_names_an_undeclared_url_variable_with_the_tools_words() -> None:
    spec = {"name": "t", "url": "https://x/?k=${NOPE}", "env": {"A": "1"}}
    assert h.load_http_tools({"webhookTools": [spec]}, {}) == (
        [],
        [
            (
                "t",
                "webhookTools[0].url: ${NOPE} is not declared in this tool's env; a URL expands "
                "only the variables its entry declares (env: {NOPE: ...})",
            )
        ],
    )


def test_load_keeps_a_routed_query_credential_for_the_scrubber() -> None:
    spec = {"name": "t", "url": "https://x/?apikey=${Q}", "env": {"Q": "${SECRET_Q}"}}
    (tool,), failures = h.load_http_tools({"webhookTools": [spec]}, {"SECRET_Q": "s3cr3t"})
    assert failures == []
    assert (tool.url, tool.url_secrets) == ("https://x/?apikey=s3cr3t", ("s3cr3t",))


def test_load_says_where_a_credential_and_a_rate_limit_are_unusable() -> None:
    auth = {"type": "bearer", "valueFromEnv": "TOK"}
    spec = {"name": "t", "url": "https://x/", "authentication": auth}
    assert h.load_http_tools({"webhookTools": [spec]}, {"TOK": "ab\x01cd"})[1] == [
        (
            "t",
            "webhookTools[0].authentication: the value of TOK holds a control character (a line "
            "break or other byte below 0x20) that no HTTP header may carry; recreate the Secret "
            "without it (only a trailing newline is trimmed)",
        )
    ]
    limited = {"name": "t", "url": "https://x/", "rateLimit": {"requestsPerMinute": 0}}
    assert h.load_http_tools({"webhookTools": [limited]}, {})[1] == [
        (
            "t",
            "webhookTools[0].rateLimit.requestsPerMinute: must be a whole number of at least 1 "
            "(remove rateLimit for no limit)",
        )
    ]


def test_messages_list_every_clash_and_every_invalid_argument() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}}
    tool = h.HttpToolEntry("t", "https://x/?a=1&b=2", method="GET", input_schema=schema)
    assert h._query_overrides(tool, {"a": 1, "b": 2}) == (
        "a, b: set by the tool's URL; arguments cannot override them"
    )
    assert h._invalid_arguments(tool, {"x": "s", "y": "t"}) == (
        "x: 's' is not of type 'integer'; y: 't' is not of type 'integer'"
    )
