"""Content-Encoding decoded lazily, in bounded pieces, so a size cap holds on decoded bytes.

httpx decodes a compressed chunk in one call: a 64 KiB gzip chunk may become 64 MiB before
any cap sees it, and ``Content-Encoding: gzip, gzip`` turns 1,833 bytes into 1 GiB. Every
client of ours installs :func:`bound_decoding` as a response hook: it takes the encoding
over from httpx and decodes layer by layer with ``max_length``, never more than
:data:`PIECE` bytes at a time, and only as fast as the reader asks. A reader that stops at
its cap therefore stops the decompression too.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator
from typing import cast

import httpx

PIECE = 64 * 1024  # the most one decompression step may produce
ACCEPT_ENCODING = "gzip, deflate"  # what we ask for: exactly what we decode
ENCODING = "langop.content_encoding"  # response.extensions key: what the server sent
_MAX_LAYERS = 3
_WBITS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}


class _Layer:
    """One layer of gzip or deflate, decoded in pieces of at most :data:`PIECE` bytes."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._wbits = _WBITS[name]
        self._inflate = zlib.decompressobj(self._wbits)
        self._started = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        # Loop until the input is used up AND a step came back short: zlib may hold output
        # back after consuming all input when a step filled its max_length.
        while not self._inflate.eof:
            try:
                piece = self._inflate.decompress(data, PIECE)
            except zlib.error as exc:
                if self.name == "deflate" and not self._started:
                    # "deflate" is often sent raw, without the zlib header (as httpx allows).
                    self._wbits = -zlib.MAX_WBITS
                    self._inflate = zlib.decompressobj(self._wbits)
                    self._started = True
                    continue
                raise httpx.DecodingError(f"the body is not valid {self.name} ({exc})") from None
            self._started = True
            if piece:
                yield piece
            data = self._inflate.unconsumed_tail
            if not data and len(piece) < PIECE:
                return
        # Bytes after the end of the stream are ignored, as httpx and browsers do.


def _through(layers: list[_Layer], data: bytes) -> Iterator[bytes]:
    """``data`` decoded through ``layers`` (outermost first), lazily."""
    if not layers:
        yield data
        return
    for piece in layers[0].feed(data):
        yield from _through(layers[1:], piece)


class _BoundedStream(httpx.AsyncByteStream):
    def __init__(self, raw: httpx.AsyncByteStream, layers: list[_Layer]) -> None:
        self._raw = raw
        self._layers = layers

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._raw:
            for piece in _through(self._layers, chunk):
                yield piece

    async def aclose(self) -> None:
        await self._raw.aclose()


class _RefusedStream(httpx.AsyncByteStream):
    def __init__(self, raw: httpx.AsyncByteStream, reason: str) -> None:
        self._raw = raw
        self._reason = reason

    async def __aiter__(self) -> AsyncIterator[bytes]:
        raise httpx.DecodingError(self._reason)
        yield b""  # pragma: no cover  (makes this an async generator)

    async def aclose(self) -> None:
        await self._raw.aclose()


async def bound_decoding(response: httpx.Response) -> None:
    """An httpx response hook: decode the body's Content-Encoding ourselves, boundedly."""
    values = response.headers.get_list("content-encoding", split_commas=True)
    names = [value.strip().lower() for value in values if value.strip()]
    if not names:
        return
    response.extensions[ENCODING] = ", ".join(names)
    # httpx must not decode it again: without the header it passes the bytes through.
    del response.headers["content-encoding"]
    coded = [name for name in names if name != "identity"]
    raw = cast(httpx.AsyncByteStream, response.stream)  # an async client's responses
    unknown = sorted({name for name in coded if name not in _WBITS})
    if unknown:
        reason = (
            f"the body is encoded as {', '.join(unknown)}, which was not asked for "
            f"(Accept-Encoding: {ACCEPT_ENCODING})"
        )
        response.stream = _RefusedStream(raw, reason)
    elif len(coded) > _MAX_LAYERS:
        reason = f"the body is compressed {len(coded)} times over (at most {_MAX_LAYERS})"
        response.stream = _RefusedStream(raw, reason)
    elif coded:
        # Encodings are listed in the order applied: the last one comes off first.
        response.stream = _BoundedStream(raw, [_Layer(name) for name in reversed(coded)])


def client_settings() -> dict[str, object]:
    """``httpx.AsyncClient`` keyword arguments every client of ours uses."""
    return {
        "event_hooks": {"response": [bound_decoding]},
        "headers": {"Accept-Encoding": ACCEPT_ENCODING},
    }


def encoding_note(response: httpx.Response) -> str:
    """`` (Content-Encoding: gzip, gzip)`` when the body was compressed, else ``""``."""
    sent = response.extensions.get(ENCODING)
    return f" (Content-Encoding: {sent})" if sent else ""
