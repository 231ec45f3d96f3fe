"""The capped reads (agent/_capped.py), called directly: bodies end past their cap, however
they are read, and a compressed body is refused. The answers come in chunks from an
in-process transport that leaves the body unread (tests/test_agent_bounds.py reads real
chunks over loopback)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest

from langop_infra.agent._capped import IDENTITY, BodyTooLarge, CappedTransport, read_capped

URL = "http://peer.example:8080/card?token=s3cret"


class Chunks(httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks, self.pulled, self.closed = chunks, 0, False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            self.pulled += 1
            yield chunk

    async def aclose(self) -> None:
        self.closed = True


class Answer(httpx.AsyncBaseTransport):
    """One answer of ``chunks`` with ``headers``; records the request."""

    def __init__(self, chunks: list[bytes], status: int = 200, **headers: str) -> None:
        self.stream = Chunks(chunks)
        self.status, self.headers = status, headers
        self.seen: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        headers = {k.replace("_", "-"): v for k, v in self.headers.items()}
        extensions = {"http_version": b"HTTP/1.1"}
        return httpx.Response(
            self.status, headers=headers, stream=self.stream, extensions=extensions
        )


def fetch(transport: httpx.AsyncBaseTransport) -> bytes:
    async def run() -> bytes:
        async with httpx.AsyncClient(transport=transport) as client:
            return (await client.get(URL)).content

    return asyncio.run(run())


def test_a_body_within_the_cap_is_read_whole_and_identity_is_asked_for() -> None:
    inner = Answer([b"a" * 5, b"b" * 5])
    assert fetch(CappedTransport(10, inner)) == b"a" * 5 + b"b" * 5
    assert inner.seen[0].headers["accept-encoding"] == "identity"
    assert IDENTITY == {"Accept-Encoding": "identity"}


def test_a_body_past_the_cap_ends_there() -> None:
    inner = Answer([b"a" * 6, b"b" * 5, b"c" * 5])
    with pytest.raises(BodyTooLarge) as raised:
        fetch(CappedTransport(10, inner))
    assert str(raised.value) == "the answer of peer.example is over 10 bytes"
    assert str(raised.value.request.url) == URL
    assert inner.stream.pulled == 2 and inner.stream.closed


@pytest.mark.parametrize("encoding", ["gzip", " GZIP ", "br"])
def test_a_compressed_body_is_refused_unread(encoding: str) -> None:
    inner = Answer([b"x"], content_encoding=encoding)
    with pytest.raises(BodyTooLarge) as raised:
        fetch(CappedTransport(10, inner))
    assert str(raised.value.request.url) == URL
    shown = encoding.strip().lower()
    assert str(raised.value) == (
        f"the answer of peer.example is compressed ({shown}) though `Accept-Encoding: "
        "identity` asked it not to be"
    )
    assert inner.stream.pulled == 0 and inner.stream.closed


@pytest.mark.parametrize("encoding", ["identity", "", " Identity "])
def test_identity_encodings_pass(encoding: str) -> None:
    assert fetch(CappedTransport(10, Answer([b"ok"], content_encoding=encoding))) == b"ok"


def test_the_status_and_headers_pass_through() -> None:
    async def run() -> httpx.Response:
        async with httpx.AsyncClient(
            transport=CappedTransport(10, Answer([b"no"], 404, x_a="1"))
        ) as c:
            response = await c.get(URL)
            await response.aread()
            return response

    response = asyncio.run(run())
    assert response.status_code == 404 and response.headers["x-a"] == "1"
    assert response.extensions["http_version"] == b"HTTP/1.1"


def test_read_capped_reads_to_the_cap_and_raises_past_it() -> None:
    async def read(inner: Answer, limit: int) -> httpx.Response:
        async with httpx.AsyncClient(transport=inner) as client:
            return await read_capped(client, URL, limit)

    answer = Answer([b"ab", b"cd"])
    whole = asyncio.run(read(answer, 4))
    assert whole.content == b"abcd" and whole.status_code == 200
    assert answer.seen[0].method == "GET"
    assert str(whole.request.url) == URL
    past = Answer([b"ab", b"cd", b"e"])
    with pytest.raises(BodyTooLarge) as raised:
        asyncio.run(read(past, 4))
    assert str(raised.value) == "http://peer.example:8080/card: over 4 bytes"  # no query
    assert str(raised.value.request.url) == URL
    assert past.stream.pulled == 3
    with pytest.raises(httpx.HTTPStatusError):
        asyncio.run(read(Answer([b"gone"], 410), 10))


def test_closing_the_capped_transport_closes_the_inner_one() -> None:
    closed: list[bool] = []

    class Inner(Answer):
        async def aclose(self) -> None:
            closed.append(True)

    asyncio.run(CappedTransport(1, Inner([])).aclose())
    assert closed == [True]
