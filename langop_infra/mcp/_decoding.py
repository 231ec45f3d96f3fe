"""Content-Encoding we asked for, decoded by httpx2 in bounded pieces; anything else refused.

httpx2 decodes lazily, at most ``MAX_DECODE_CHUNK_SIZE`` (1 MiB) per step and layer, and
only as fast as the reader asks: a reader that stops at its cap stops the decompression
too, so a size cap holds on decoded bytes. :func:`bound_decoding`, a response hook on every
client of ours, refuses what we did not ask for (brotli, zstd, more than three layers)
and notes what the server sent, for the messages of caps.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import cast

import httpx2

ACCEPT_ENCODING = "gzip, deflate"  # what we ask for: exactly what we accept
ENCODING = "langop.content_encoding"  # response.extensions key: what the server sent
_ACCEPTED = frozenset({"gzip", "x-gzip", "deflate"})
_MAX_LAYERS = 3


class _RefusedStream(httpx2.AsyncByteStream):
    def __init__(self, raw: httpx2.AsyncByteStream, reason: str) -> None:
        self._raw = raw
        self._reason = reason

    async def __aiter__(self) -> AsyncIterator[bytes]:
        raise httpx2.DecodingError(self._reason)
        yield b""  # pragma: no cover  (makes this an async generator)

    async def aclose(self) -> None:
        await self._raw.aclose()


async def bound_decoding(response: httpx2.Response) -> None:
    """An httpx2 response hook: note the body's Content-Encoding, refuse one not asked for."""
    values = response.headers.get_list("content-encoding", split_commas=True)
    names = [value.strip().lower() for value in values if value.strip()]
    if not names:
        return
    response.extensions[ENCODING] = ", ".join(names)
    coded = [name for name in names if name != "identity"]
    unknown = sorted({name for name in coded if name not in _ACCEPTED})
    if unknown:
        reason = (
            f"the body is encoded as {', '.join(unknown)}, which was not asked for "
            f"(Accept-Encoding: {ACCEPT_ENCODING})"
        )
    elif len(coded) > _MAX_LAYERS:
        reason = f"the body is compressed {len(coded)} times over (at most {_MAX_LAYERS})"
    else:
        return
    del response.headers["content-encoding"]  # httpx2 must not try to decode it
    response.stream = _RefusedStream(cast(httpx2.AsyncByteStream, response.stream), reason)


def client_settings() -> dict[str, object]:
    """``httpx2.AsyncClient`` keyword arguments every client of ours uses."""
    return {
        "event_hooks": {"response": [bound_decoding]},
        "headers": {"Accept-Encoding": ACCEPT_ENCODING},
    }


def encoding_note(response: httpx2.Response) -> str:
    """`` (Content-Encoding: gzip, gzip)`` when the body was compressed, else ``""``."""
    sent = response.extensions.get(ENCODING)
    return f" (Content-Encoding: {sent})" if sent else ""
