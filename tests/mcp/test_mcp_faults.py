"""Every failure ends within its bound, as its own error kind, with an actionable message."""

from __future__ import annotations

import logging
import sys
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from langop_infra.mcp import (
    ClientOptions,
    HTTPStatusError,
    InvalidInput,
    MalformedResponse,
    MCPError,
    MCPTimeout,
    ProtocolVersionError,
    ResponseTooLarge,
    ServerUnreachable,
    Session,
    TransportError,
    fetch_tool_listing,
    fetch_tool_listing_sync,
)

pytestmark = pytest.mark.anyio

HANG = 120  # seconds: a guard against a call that never ends, not a measure of one


async def listing_error(url: str | list[str], options: ClientOptions) -> MCPError:
    """The error fetch_tool_listing raises. Which error it is (a timeout names its bound)
    is what the tests judge; how long it took is never asserted."""
    with anyio.fail_after(HANG), pytest.raises(MCPError) as caught:
        await fetch_tool_listing(url, options)
    assert "\n" not in str(caught.value)
    return caught.value


async def test_refused_connection_is_retried_then_unreachable(free_port: int) -> None:
    url = f"http://127.0.0.1:{free_port}/mcp"
    options = ClientOptions(connect_retries=2, retry_backoff=0.05, timeout=2)
    error = await listing_error(url, options)
    assert isinstance(error, ServerUnreachable)
    assert error.kind == "unreachable"
    assert f"connection refused by http://127.0.0.1:{free_port}/mcp" in str(error)
    assert "tried 3 times" in str(error)
    assert "is the server running" in str(error)


async def test_time_running_out_while_refused_still_says_refused(free_port: int) -> None:
    url = f"http://127.0.0.1:{free_port}/mcp"
    options = ClientOptions(connect_retries=50, retry_backoff=0.1, deadline=0.5)
    error = await listing_error(url, options)
    assert isinstance(error, ServerUnreachable)
    assert error.kind == "unreachable"
    assert f"connection refused by {url} (tried" in str(error)
    assert "times in 0.5s" in str(error)


async def test_unknown_host_is_unreachable_without_retries() -> None:
    options = ClientOptions(connect_retries=3, retry_backoff=5, timeout=5)
    error = await listing_error("http://no-such-host.invalid/mcp", options)
    assert isinstance(error, ServerUnreachable)
    assert error.kind == "unreachable"
    assert "cannot resolve the host of http://no-such-host.invalid/mcp" in str(error)


async def test_server_that_never_answers_times_out(fault_server: tuple[str, Any]) -> None:
    base, _ = fault_server
    error = await listing_error(f"{base}/never", ClientOptions(timeout=0.5, deadline=20))
    assert isinstance(error, MCPTimeout)
    assert error.kind == "timeout"
    assert f"no answer to initialize from {base}/never within 0.5s" in str(error)
    assert "raise the timeout" in str(error)


async def test_500_with_html_body(fault_server: tuple[str, Any]) -> None:
    base, _ = fault_server
    error = await listing_error(f"{base}/html500", ClientOptions(timeout=5))
    assert isinstance(error, HTTPStatusError)
    assert (error.kind, error.status) == ("http-status", 500)
    message = str(error)
    assert f"{base}/html500 failed with HTTP 500 Internal Server Error on initialize" in message
    assert "Internal Server Error database & cache are down" in message
    assert "<" not in message and "color:red" not in message
    assert "check its logs" in message


async def test_401_says_credentials_and_quotes_www_authenticate(
    fault_server: tuple[str, Any],
) -> None:
    base, _ = fault_server
    error = await listing_error(f"{base}/auth", ClientOptions(timeout=5))
    assert isinstance(error, HTTPStatusError)
    assert error.kind == "http-status"
    assert error.status == 401
    assert error.www_authenticate == 'Bearer realm="tools", error="invalid_token"'
    assert "credentials are missing or wrong" in str(error)
    assert 'WWW-Authenticate: Bearer realm="tools", error="invalid_token"' in str(error)
    good = ClientOptions(timeout=5, headers={"Authorization": "Bearer right-token"})
    assert [t["name"] for t in (await fetch_tool_listing(f"{base}/auth", good)).tools] == ["only"]


async def test_malformed_json(fault_server: tuple[str, Any]) -> None:
    base, _ = fault_server
    error = await listing_error(f"{base}/malformed", ClientOptions(timeout=5))
    assert isinstance(error, MalformedResponse)
    assert error.kind == "malformed"
    assert f"{base}/malformed sent a body that is not JSON" in str(error)


async def test_response_to_another_request(fault_server: tuple[str, Any]) -> None:
    base, _ = fault_server
    error = await listing_error(f"{base}/wrong-id", ClientOptions(timeout=5))
    assert isinstance(error, MalformedResponse)
    assert error.kind == "malformed"
    assert "without a JSON-RPC response to it" in str(error)


async def test_sse_stream_that_never_sends_the_response_ends_at_the_deadline(
    fault_server: tuple[str, Any],
) -> None:
    base, _ = fault_server
    # Keep-alive comments arrive every 0.1 s, so no read timeout fires: only the deadline.
    error = await listing_error(f"{base}/sse-silent", ClientOptions(timeout=30, deadline=1))
    assert isinstance(error, MCPTimeout)
    assert error.kind == "timeout"
    assert "did not finish within the 1s deadline" in str(error)
    assert "raise the deadline" in str(error)


@pytest.mark.parametrize("path", ["huge", "huge-chunked", "huge-sse"])
async def test_response_over_the_size_cap(fault_server: tuple[str, Any], path: str) -> None:
    base, _ = fault_server
    error = await listing_error(f"{base}/{path}", ClientOptions(max_response_bytes=64_000))
    assert isinstance(error, ResponseTooLarge)
    assert (error.kind, error.limit) == ("too-large", 64_000)
    assert f"{base}/{path} sent more than 64000 bytes for tools/list" in str(error)
    assert "raise max_response_bytes" in str(error)
    # The same response fits the default cap: the cap, not the server, failed the call.
    assert (await fetch_tool_listing(f"{base}/{path}")).tools[0]["name"] == "only"


async def test_looping_cursor(fault_server: tuple[str, Any]) -> None:
    base, _ = fault_server
    error = await listing_error(f"{base}/loop-cursor", ClientOptions(timeout=5))
    assert isinstance(error, MalformedResponse)
    assert error.kind == "malformed"
    assert "sent tools/list cursor 'again' twice" in str(error)
    assert "pagination loops" in str(error)


async def test_page_cap(fault_server: tuple[str, Any]) -> None:
    base, _ = fault_server
    error = await listing_error(f"{base}/endless", ClientOptions(timeout=5, max_pages=5))
    assert isinstance(error, MalformedResponse)
    assert error.kind == "malformed"
    assert "kept paging tools/list past 5 pages" in str(error)


async def test_refused_protocol_version(fault_server: tuple[str, Any]) -> None:
    base, app = fault_server
    error = await listing_error(f"{base}/bad-version", ClientOptions(timeout=5))
    assert isinstance(error, ProtocolVersionError)
    assert error.kind == "protocol-version"
    assert "protocol version '1999-01-01'" in str(error)
    assert "2025-11-25" in str(error)
    sent = [r.message for r in app.requests if r.path == "/bad-version" and r.message]
    assert all(m.get("method") != "notifications/initialized" for m in sent)


async def test_cross_host_redirect_is_not_followed(fault_server: tuple[str, Any]) -> None:
    base, app = fault_server
    error = await listing_error(f"{base}/redirect-away", ClientOptions(timeout=5))
    assert isinstance(error, HTTPStatusError)
    assert error.kind == "http-status"
    assert error.status == 307
    assert "to http://localhost:" in str(error)
    assert "not followed because it leads to another host" in str(error)
    assert not [r for r in app.requests if r.headers.get("host", "").startswith("localhost")]


@pytest.mark.parametrize("transport", ["auto", "sse"])
async def test_scripted_legacy_server(fault_server: tuple[str, Any], transport: Any) -> None:
    base, _ = fault_server
    listing = await fetch_tool_listing(f"{base}/legacy", ClientOptions(transport=transport))
    assert (listing.transport, [t["name"] for t in listing.tools]) == ("sse", ["only"])


async def test_legacy_endpoint_on_another_host_is_refused(fault_server: tuple[str, Any]) -> None:
    base, app = fault_server
    options = ClientOptions(transport="sse", timeout=5)
    error = await listing_error(f"{base}/legacy?fault=evil-endpoint", options)
    assert isinstance(error, TransportError)
    assert error.kind == "transport"
    assert f"{base}/legacy announced a message endpoint on another host" in str(error)
    assert "?fault" not in str(error)  # queries can carry secrets: never shown
    assert not [r for r in app.requests if r.headers.get("host", "").startswith("localhost")]


async def test_a_legacy_endpoint_the_sdk_would_not_post_to_is_refused_at_once(
    fault_server: tuple[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """The same origin named with user info: the SDK's legacy client refuses any endpoint
    whose host and port are not written as the URL's are, and then waits for ever; ours
    says so instead of timing out on a missing endpoint event."""
    base, app = fault_server
    before, options = len(app.requests), ClientOptions(transport="sse", timeout=60)
    caplog.set_level(logging.DEBUG)
    error = await listing_error(f"{base}/legacy?fault=userinfo-endpoint", options)
    assert isinstance(error, TransportError)
    assert str(error) == (
        f"{base}/legacy announced its message endpoint as {base}/legacy-messages with user "
        "info, letter case or a port that the URL does not have; the MCP SDK's legacy client "
        "posts only to the host and port exactly as the URL writes them: the server should "
        "announce a relative path"
    )
    assert "hunter2" not in str(error) and "hunter2" not in caplog.text  # the SDK saw nothing
    assert [r.path for r in app.requests[before:]] == ["/legacy"]  # nothing posted


async def test_legacy_event_over_the_size_cap(fault_server: tuple[str, Any]) -> None:
    base, _ = fault_server
    options = ClientOptions(transport="sse", timeout=5, max_response_bytes=64_000)
    error = await listing_error(f"{base}/legacy?fault=huge", options)
    assert isinstance(error, ResponseTooLarge)
    assert error.kind == "too-large"
    assert "sent more than 64000 bytes for one event of the stream" in str(error)


async def test_legacy_stream_closing_before_the_response(fault_server: tuple[str, Any]) -> None:
    base, _ = fault_server
    error = await listing_error(f"{base}/legacy?fault=close", ClientOptions(timeout=5))
    assert isinstance(error, TransportError)
    assert error.kind == "transport"
    assert f"{base}/legacy closed the event stream" in str(error)


async def test_messages_never_show_credentials(free_port: int) -> None:
    url = f"http://agent:hunter2@127.0.0.1:{free_port}/mcp?token=s3cret"
    error = await listing_error(url, ClientOptions(connect_retries=0))
    assert f"http://127.0.0.1:{free_port}/mcp" in str(error)
    assert "hunter2" not in str(error) and "s3cret" not in str(error)


@pytest.mark.parametrize(
    ("target", "transport"),
    [
        ("ftp://example.com/mcp", "auto"),
        ("example.com:8080", "auto"),
        ("http://host:notaport/mcp", "auto"),
        ([], "auto"),
        ("python 'unterminated", "stdio"),
        ("http://127.0.0.1/mcp\x00", "auto"),
        (["python", "server.py"], "streamable-http"),
    ],
)
def test_invalid_targets(target: Any, transport: Any) -> None:
    with pytest.raises(InvalidInput) as caught:
        Session(target, ClientOptions(transport=transport))
    assert caught.value.kind == "invalid-input"


@pytest.mark.parametrize(
    "headers", [{"X-Token": "caf\u00e9"}, {"X": "a\r\nInjected: 1"}, {"A B": "c"}]
)
def test_headers_http_cannot_carry_are_refused_up_front(headers: dict[str, str]) -> None:
    with pytest.raises(InvalidInput, match="cannot be sent"):
        Session("http://127.0.0.1:1/mcp", ClientOptions(headers=headers))


async def test_arguments_that_are_not_json_are_refused(seed_url: str) -> None:
    async with Session(seed_url, ClientOptions(timeout=5)) as session:
        with pytest.raises(InvalidInput) as caught:
            await session.call_tool("remember", {"content": object()})
        assert "cannot send tools/call: its parameters are not JSON-serializable" in str(
            caught.value
        )
        # The session is still usable afterwards.
        assert (await session.call_tool("remember", {"content": "ok"})).is_error is False


def test_invalid_options_say_which() -> None:
    with pytest.raises(ValueError, match="timeout must be > 0 seconds"):
        ClientOptions(timeout=0)
    with pytest.raises(ValueError, match="transport must be one of"):
        ClientOptions(transport="websocket")  # type: ignore[arg-type]


async def test_stdio_command_not_found() -> None:
    error = await listing_error(["no-such-mcp-server-binary"], ClientOptions())
    assert isinstance(error, ServerUnreachable)
    assert error.kind == "unreachable"
    assert "cannot start stdio server `no-such-mcp-server-binary`" in str(error)
    assert "check the command and PATH" in str(error)


async def test_stdio_server_that_exits_quotes_its_stderr() -> None:
    command = [
        sys.executable,
        "-c",
        "import sys; print('boom: MEMORY_DSN is not set', file=sys.stderr); sys.exit(3)",
    ]
    # The exit is the event: the timeout only bounds a server that would never exit.
    error = await listing_error(command, ClientOptions(timeout=60))
    assert isinstance(error, TransportError)
    assert error.kind == "transport"
    assert "exited with code 3 before answering" in str(error)
    assert "its stderr ends with: boom: MEMORY_DSN is not set" in str(error)


@pytest.mark.slow
async def test_stdio_server_that_hangs_times_out_and_is_stopped() -> None:
    """The server prints, then hangs and ignores EOF. The test is about the timeout of a
    server that has started: when the client gave up before the server had printed (a busy
    machine's slow start, the event waited for), it tries again with the timeout doubled."""
    command = [
        sys.executable,
        "-c",
        "import sys, time; print('loading model', file=sys.stderr, flush=True); time.sleep(60)",
    ]
    for timeout in (0.5, 1, 2, 4, 8, 16):
        session = Session(command, ClientOptions(timeout=timeout))
        with pytest.raises(MCPTimeout) as caught:
            await session.initialize()
        process = session.transport._process  # type: ignore[union-attr]
        await session.aclose()
        assert process.returncode is not None  # terminated: it ignored EOF on stdin
        if "server stderr: loading model" in str(caught.value):
            break
    else:
        pytest.fail("the stdio server never printed before the client gave up")
    assert str(caught.value).startswith("no answer to initialize from ")
    assert f" within {timeout:g}s: " in str(caught.value)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    body=st.one_of(
        st.binary(max_size=200),
        st.text(max_size=200).map(str.encode),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=10),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.sampled_from(["id", "result", "error", "tools", "x"]), inner)
            ),
            max_leaves=8,
        ).map(lambda value: __import__("json").dumps(value).encode()),
    ),
    content_type=st.sampled_from(["application/json", "text/event-stream", "text/plain"]),
)
@pytest.mark.parametrize("path", ["garbage", "garbage-list"])
def test_garbage_answers_raise_only_mcp_errors(
    fault_server: tuple[str, Any], path: str, body: bytes, content_type: str
) -> None:
    base, app = fault_server
    app.garbage = (content_type, body)
    try:
        listing = fetch_tool_listing_sync(f"{base}/{path}", ClientOptions(timeout=2))
    except MCPError as error:
        assert error.kind in {"malformed", "transport", "jsonrpc", "protocol-version"}
        assert "\n" not in str(error)
    else:
        assert isinstance(listing.tools, list)
