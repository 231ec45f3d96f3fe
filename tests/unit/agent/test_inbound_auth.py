"""The A2A caller check (agent/_inbound_auth.py) and the request body cap
(agent/_body_limit.py), called as ASGI apps: each refusal's status, headers and body, what
reaches the app, and how many bytes were read."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from langop_infra.agent._body_limit import BodyLimit
from langop_infra.agent._inbound_auth import MIN_TOKEN, BearerAuth, Callers, load_callers

PLANNER = "p" * 15 + "-planner-token"
AUDITOR = "a" * 15 + "-auditor-token"
ENV = {"A2A_CALLER_PLANNER_TOKEN": PLANNER, "A2A_CALLER_AUDIT_BOT_TOKEN": f"  {AUDITOR}\n"}


def call(
    middleware: Any, scope: dict[str, Any], bodies: list[bytes] | None = None
) -> tuple[list[dict[str, Any]], list[Any], int]:
    """Run ``middleware`` once: what it sent, what the app saw, and how many receives."""
    sent: list[dict[str, Any]] = []
    parts = list(bodies or [b""])
    pulled = 0

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        pulled += 1
        if not parts:
            return {"type": "http.disconnect"}
        body = parts.pop(0)
        return {"type": "http.request", "body": body, "more_body": bool(parts)}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(middleware(scope, receive, send))
    return sent, seen, pulled


seen: list[Any] = []


async def app(scope: Any, receive: Any, send: Any) -> None:
    message = await receive()
    user = scope.get("user")
    if user is not None:  # what a2a-sdk reads as the request's authenticated user
        assert user.is_authenticated and scope["auth"].scopes == ["a2a"]
    seen.append((user.display_name if user else None, message.get("body")))
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


def scope(method: str = "POST", path: str = "/", **headers: str) -> dict[str, Any]:
    return {
        "type": "http",
        "method": method,
        "path": path,
        "headers": [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()],
    }


@pytest.fixture(autouse=True)
def fresh() -> None:
    seen.clear()


def headers_of(message: dict[str, Any]) -> dict[str, str]:
    return {k.decode(): v.decode() for k, v in message["headers"]}


def test_callers_are_read_from_their_variables() -> None:
    # A2A_ACCESS sorts before the callers, and the two names that name no caller between
    noise = {"A2A_ACCESS": "authenticated", "A2A_CALLER_TOKEN": "x" * 20, "A2A_CALLER__TOKEN": ""}
    callers = load_callers({**ENV, **noise, "OTHER_TOKEN": "y" * 20})
    assert callers.access == "authenticated" and not callers.open
    assert sorted(callers.digests) == ["audit-bot", "planner"]
    assert callers.caller(PLANNER) == "planner" and callers.caller(AUDITOR) == "audit-bot"
    assert callers.caller(AUDITOR + " ") is None and callers.caller(PLANNER[:-1]) is None
    assert load_callers({"A2A_ACCESS": " Open "}).open
    assert load_callers({"A2A_ACCESS": ""}).access == "authenticated"
    assert load_callers({"A2A_CALLER_X_TOKEN": "z" * MIN_TOKEN}).caller("z" * MIN_TOKEN) == "x"


def test_a_short_token_or_an_unknown_mode_is_refused_by_name() -> None:
    with pytest.raises(ValueError) as short:
        load_callers({"A2A_CALLER_X_TOKEN": "z" * (MIN_TOKEN - 1)})
    assert str(short.value) == (
        "A2A_CALLER_X_TOKEN: a caller's token needs at least 16 characters; make one with "
        "`openssl rand -hex 32` and keep it in a Secret"
    )
    with pytest.raises(ValueError) as mode:
        load_callers({"A2A_ACCESS": "everyone"})
    assert str(mode.value) == (
        "A2A_ACCESS='everyone': use authenticated (callers with tokens) or open (anyone who "
        "reaches the port)"
    )


def test_digests_are_keyed_per_process() -> None:
    one, two = load_callers(ENV), load_callers(ENV)
    assert one.digests["planner"] != two.digests["planner"]
    assert Callers().caller(PLANNER) is None  # no callers: nobody


def test_no_token_is_401_with_a_challenge_and_the_app_is_not_called() -> None:
    sent, _, pulled = call(BearerAuth(app, load_callers(ENV)), scope())
    start, body = sent
    assert start["status"] == 401 and pulled == 0 and seen == []
    assert headers_of(start) == {
        "www-authenticate": 'Bearer realm="a2a"',
        "content-type": "application/json",
        "content-length": str(len(body["body"])),
    }
    assert json.loads(body["body"]) == {
        "error": "this agent answers authenticated callers only: send Authorization: "
        "Bearer <your caller token>"
    }


@pytest.mark.parametrize(
    "value", [f"Bearer {PLANNER}x", f"Basic {PLANNER}", "Bearer", "Bearer   ", PLANNER]
)
def test_a_wrong_token_is_invalid_token(value: str) -> None:
    sent, _, _ = call(BearerAuth(app, load_callers(ENV)), scope(authorization=value))
    assert sent[0]["status"] == 401 and seen == []
    assert headers_of(sent[0])["www-authenticate"] == 'Bearer realm="a2a", error="invalid_token"'


def test_a_callers_token_reaches_the_app_with_its_name() -> None:
    auth = BearerAuth(app, load_callers(ENV))
    sent, _, _ = call(auth, scope(authorization=f"bearer   {AUDITOR} "), [b"hello"])
    assert sent[0]["status"] == 200 and seen == [("audit-bot", b"hello")]


def test_public_paths_and_open_access_pass_without_a_token() -> None:
    public = frozenset({("GET", "/card")})
    call(BearerAuth(app, load_callers(ENV), public), scope("GET", "/card"))
    refused, _, _ = call(BearerAuth(app, load_callers(ENV), public), scope("POST", "/card"))
    call(BearerAuth(app, load_callers({"A2A_ACCESS": "open"})), scope())
    assert refused[0]["status"] == 401
    assert seen == [(None, b""), (None, b"")]
    other: list[str] = []

    async def lifespan_app(scope: Any, receive: Any, send: Any) -> None:
        other.append(scope["type"])

    asyncio.run(BearerAuth(lifespan_app, load_callers(ENV))({"type": "lifespan"}, None, None))  # type: ignore[arg-type]
    assert other == ["lifespan"]


def test_a_declared_length_over_the_cap_is_refused_unread() -> None:
    sent, _, pulled = call(BodyLimit(app, 10), scope(content_length="11"), [b"x" * 11])
    assert (sent[0]["status"], pulled, seen) == (413, 0, [])
    assert headers_of(sent[0])["connection"] == "close"
    assert json.loads(sent[1]["body"]) == {
        "error": "the request body is over 10 bytes (A2A_MAX_REQUEST_BYTES)"
    }
    bad, _, _ = call(BodyLimit(app, 10), scope(content_length="1e3"))
    assert bad[0]["status"] == 413


def test_a_streamed_body_is_read_up_to_the_cap_only() -> None:
    sent, _, pulled = call(BodyLimit(app, 10), scope(), [b"xxxx", b"xxxx", b"xxx", b"x" * 99])
    assert (sent[0]["status"], pulled, seen) == (413, 3, [])


def test_a_body_at_the_cap_reaches_the_app_whole_once() -> None:
    sent, _, _ = call(BodyLimit(app, 10), scope(content_length="10"), [b"xxxxx", b"yyyyy"])
    assert sent[0]["status"] == 200 and seen == [(None, b"xxxxxyyyyy")]


def test_a_disconnect_while_reading_ends_quietly() -> None:
    async def disconnected() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    asyncio.run(BodyLimit(app, 10)(scope(), disconnected, send))
    assert (sent, seen) == ([], [])


def test_the_replayed_receive_passes_on_what_comes_next() -> None:
    later: list[Any] = []

    async def reader(scope: Any, receive: Any, send: Any) -> None:
        later.append(await receive())
        later.append(await receive())

    call(BodyLimit(reader, 10), scope(), [b"ab"])
    assert later == [
        {"type": "http.request", "body": b"ab", "more_body": False},
        {"type": "http.disconnect"},
    ]


def test_refusals_are_whole_asgi_responses() -> None:
    """The message types, every header and the body: what a server needs to answer."""
    refused, _, _ = call(BearerAuth(app, load_callers(ENV)), scope())
    too_big, _, _ = call(BodyLimit(app, 1), scope(), [b"xx"])
    for start, body in (refused, too_big):
        assert (start["type"], body["type"]) == ("http.response.start", "http.response.body")
    assert headers_of(too_big[0]) == {
        "content-type": "application/json",
        "connection": "close",
        "content-length": str(len(too_big[1]["body"])),
    }


def test_other_scopes_and_bodiless_messages_pass_through_the_cap() -> None:
    kinds: list[Any] = []

    async def lifespan_app(scope: Any, receive: Any, send: Any) -> None:
        kinds.append(scope)

    asyncio.run(BodyLimit(lifespan_app, 1)({"type": "lifespan"}, None, None))  # type: ignore[arg-type]
    assert kinds == [{"type": "lifespan"}]

    async def bodiless() -> dict[str, Any]:
        return {"type": "http.request"}

    async def drop(_message: Any) -> None:
        pass

    asyncio.run(BodyLimit(app, 10)(scope(), bodiless, drop))
    assert seen == [(None, b"")]
