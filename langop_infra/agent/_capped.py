"""Response bodies capped while they are read, for clients whose reading is not ours
(a2a-sdk reads a peer's answer in full): an httpx transport that ends the body past its cap.

Asks for no compression (``Accept-Encoding: identity``) and refuses a compressed body: the
cap counts the bytes on the wire, and a small gzip body can decode to gigabytes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import cast

import httpx

from langop_infra._errors import LangopError
from langop_infra.mcp._http import display_url

__all__ = ["BodyTooLarge", "CappedTransport", "read_capped"]

IDENTITY = {"Accept-Encoding": "identity"}


class BodyTooLarge(httpx.TransportError, LangopError):
    """A response body went past its cap (an ``httpx.HTTPError``, as callers expect)."""


class _CappedStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, limit: int, request: httpx.Request) -> None:
        self._inner, self._limit, self._request = inner, limit, request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        size = 0
        async for chunk in self._inner:
            size += len(chunk)
            if size > self._limit:
                raise BodyTooLarge(
                    f"the answer of {self._request.url.host} is over {self._limit} bytes",
                    request=self._request,
                )
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class CappedTransport(httpx.AsyncBaseTransport):
    """``inner`` (a real transport unless given), every response body at most ``limit``
    bytes, none compressed."""

    def __init__(self, limit: int, inner: httpx.AsyncBaseTransport | None = None) -> None:
        self._limit = limit
        self._inner = inner or httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        request.headers.update(IDENTITY)
        response = await self._inner.handle_async_request(request)
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        stream = response.stream
        if encoding not in ("", "identity"):
            if isinstance(stream, httpx.AsyncByteStream):
                await stream.aclose()
            raise BodyTooLarge(
                f"the answer of {request.url.host} is compressed ({encoding}) though "
                "`Accept-Encoding: identity` asked it not to be",
                request=request,
            )
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_CappedStream(cast("httpx.AsyncByteStream", stream), self._limit, request),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


async def read_capped(client: httpx.AsyncClient, url: str, limit: int) -> httpx.Response:
    """``GET url``, its body read no further than ``limit`` bytes (:class:`BodyTooLarge`
    past it), raising for an error status."""
    async with client.stream("GET", url) as response:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_raw():
            size += len(chunk)
            if size > limit:
                shown = display_url(url)
                raise BodyTooLarge(f"{shown}: over {limit} bytes", request=response.request)
            chunks.append(chunk)
        response.raise_for_status()
    return httpx.Response(response.status_code, content=b"".join(chunks), request=response.request)
