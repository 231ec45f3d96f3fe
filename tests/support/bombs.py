"""Compression bombs and a hostile MCP server that sends them (a stand-in: no real server
compresses on purpose like this).

``gzip, gzip``: 1 GiB of zeros gzipped twice, about 1.8 KB on the wire. ``gzip`` and
``deflate``: the same gigabyte compressed once, about 1 MB. The server answers
``initialize`` with the bomb as its JSON body (``where="body"``), as a 500 error page
(``where="error"``), or as an SSE stream (``where="sse"``).
"""

from __future__ import annotations

import functools
import zlib
from typing import Any

from tests.faultservers import lifespan, parse_message, read_body, respond

GIB = 1 << 30
_MIB = bytes(1 << 20)
ENCODINGS = ("gzip, gzip", "gzip", "deflate")


@functools.lru_cache(maxsize=2)
def gzip_of_zeros(size: int = GIB) -> bytes:
    """``size`` zero bytes, gzipped (built a MiB at a time: never ``size`` in memory)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    parts = [packer.compress(_MIB) for _ in range(size >> 20)]
    return b"".join(parts) + packer.flush()


@functools.lru_cache(maxsize=6)
def bomb(encoding: str, size: int = GIB) -> bytes:
    """``size`` zero bytes in ``encoding``: ``gzip``, ``deflate`` (zlib) or ``gzip, gzip``."""
    once = gzip_of_zeros(size)
    if encoding == "gzip":
        return once
    if encoding == "gzip, gzip":
        packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
        return packer.compress(once) + packer.flush()
    if encoding == "deflate":
        # The same raw deflate stream, re-framed: zlib header, body, Adler-32 of the data.
        adler = 1
        for _ in range(size >> 20):
            adler = zlib.adler32(_MIB, adler)
        return b"\x78\xda" + once[10:-8] + adler.to_bytes(4, "big")
    raise ValueError(encoding)


def bomb_app(encoding: str, where: str = "body", size: int = GIB) -> Any:
    """An MCP endpoint that answers every request with a bomb; ``app.sent`` counts them."""
    payload = bomb(encoding, size)
    sent = {"bombs": 0}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        message = parse_message(await read_body(receive))
        if "id" not in message:
            await respond(send, 202, b"")
            return
        sent["bombs"] += 1
        status, kind = {
            "body": (200, "application/json"),
            "error": (500, "text/html"),
            "sse": (200, "text/event-stream"),
        }[where]
        await respond(send, status, payload, kind, [(b"content-encoding", encoding.encode())])

    app.sent = sent  # type: ignore[attr-defined]
    return app
