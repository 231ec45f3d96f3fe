"""The legacy HTTP+SSE transport (protocol 2024-11-05).

GET the SSE URL; the first ``endpoint`` event names where to POST messages; every response
arrives as a ``message`` event on the GET stream, which a reader task hands to the waiting
request.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Mapping

import httpx

import langop_infra.mcp._confinement as confinement
import langop_infra.mcp._jsonrpc as jsonrpc
from langop_infra.mcp._errors import ConfinementError, MCPError, MCPTimeout, TransportError
from langop_infra.mcp._http import HTTPConnection, display_url, http_failure, origin, too_large
from langop_infra.mcp._jsonrpc import Message, PendingRequests
from langop_infra.mcp._sse import EventTooLarge, ServerSentEvent, SSEDecoder
from langop_infra.mcp._timeouts import timeout_after

_POST_HEADERS = {"Content-Type": "application/json"}


class LegacySSETransport:
    """An open event stream plus the message endpoint it announced."""

    name = "sse"

    def __init__(
        self,
        http: HTTPConnection,
        url: str,
        stream: httpx.Response,
        events: AsyncIterator[ServerSentEvent],
        endpoint: httpx.URL,
    ) -> None:
        self._http = http
        self.url = url
        self.label = display_url(url)
        self._stream = stream
        self._endpoint = endpoint
        self._pending = PendingRequests()
        self.protocol_version: str | None = None
        self.on_notification: Callable[[Message], None] | None = None
        self._reader = asyncio.create_task(self._read(events))

    @classmethod
    async def connect(
        cls, http: HTTPConnection, url: str, *, probe: bool = False
    ) -> LegacySSETransport | None:
        """Open the event stream and wait for its ``endpoint`` event.

        With ``probe``, a URL that does not answer with an event stream gives ``None``
        instead of an error (auto mode trying whether a server is a legacy one).
        """
        label = display_url(url)
        try:
            stream = await http.send(
                "GET", url, headers={"Accept": "text/event-stream"}, what="the event stream"
            )
        except ConfinementError:
            raise  # a probe must not hide it behind the status that prompted the probe
        except MCPError:
            if probe:
                return None
            raise
        is_sse = stream.headers.get("content-type", "").startswith("text/event-stream")
        if stream.status_code != 200 or not is_sse:
            # A probe's GET refused for want of a permission says more than the POST's 405
            # that prompted it (e.g. an API server proxy allowing create but not get).
            if probe and stream.status_code not in (401, 403):
                await stream.aclose()
                return None
            if stream.status_code >= 400:
                raise await http.status_error(stream, "the event stream")
            await stream.aclose()
            raise TransportError(
                f"{label} did not open an event stream (HTTP {stream.status_code}, "
                f"{stream.headers.get('content-type', 'no content type')}); "
                "it is not a legacy SSE endpoint: try --transport streamable-http",
                target=label,
            )
        events = _events(stream, http, label)
        try:
            async with timeout_after(http.options.timeout):
                async for event in events:
                    if event.event == "endpoint":
                        endpoint = _endpoint_url(stream.request.url, event.data, label)
                        confine = http.options.confine_to
                        if confine is not None and confinement.outside_reason(endpoint, confine):
                            raise _outside(label, endpoint, confine)
                        return cls(http, url, stream, events, endpoint)
        except TimeoutError:
            await stream.aclose()
            if probe:
                return None
            raise MCPTimeout(
                f"{label} opened an event stream but sent no endpoint event within "
                f"{http.options.timeout:g}s; it is not a legacy SSE endpoint: "
                "try --transport streamable-http",
                target=label,
            ) from None
        except BaseException:
            await stream.aclose()
            raise
        await stream.aclose()
        if probe:
            return None
        raise TransportError(
            f"{label} closed the event stream without an endpoint event; "
            "it is not a legacy SSE endpoint: try --transport streamable-http",
            target=label,
        )

    def diagnostics(self) -> str:
        """Nothing beyond what errors carry."""
        return ""

    def reset_session(self) -> None:
        """A legacy session lives as long as its stream; nothing to forget."""
        self.protocol_version = None

    @property
    def received_bytes(self) -> int:
        """Bytes of events read so far."""
        return self._http.received

    async def listen(self) -> None:
        """The event stream is already the server-to-client channel."""

    async def request(self, message: Message, headers: Mapping[str, str] | None = None) -> Message:
        """POST a request to the endpoint and wait for its response on the stream."""
        future = self._pending.expect(message["id"])
        try:
            if not future.done():  # done already: the stream is gone, do not POST in vain
                await self.notify(message)
            return await future
        finally:
            self._pending.forget(message["id"])

    async def notify(self, message: Message) -> None:
        """POST a message that expects no response."""
        what = message.get("method", "a response")
        headers = dict(_POST_HEADERS)
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        response = await self._http.send(
            "POST", self._endpoint, headers=headers, content=jsonrpc.encode(message), what=what
        )
        if response.status_code >= 400:
            raise await self._http.status_error(response, what)
        await self._http.discard(response)

    async def _read(self, events: AsyncIterator[ServerSentEvent]) -> None:
        try:
            async for event in events:
                if event.event != "message" or not event.data:
                    continue
                for message in jsonrpc.decode(event.data, source=self.label):
                    if self._pending.deliver(message):
                        continue
                    if jsonrpc.is_server_request(message):
                        await self.notify(jsonrpc.answer_to(message))
                    elif "method" in message and self.on_notification is not None:
                        self.on_notification(message)
        except MCPError as exc:
            self._pending.fail_all(exc)
            return
        self._pending.fail_all(
            TransportError(
                f"{self.label} closed the event stream; the server restarted or dropped the "
                "session: connect again",
                target=self.label,
            )
        )

    async def aclose(self) -> None:
        """Stop reading and close the event stream (which ends a legacy session)."""
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader
        await self._stream.aclose()


async def _events(
    stream: httpx.Response, http: HTTPConnection, label: str
) -> AsyncIterator[ServerSentEvent]:
    limit = http.options.max_response_bytes
    decoder = SSEDecoder(limit)
    try:
        async for chunk in stream.aiter_bytes():
            http.received += len(chunk)
            for event in decoder.feed(chunk):
                yield event
    except EventTooLarge as exc:
        raise too_large(
            stream.request.url, "one event of the stream", limit, exc.size, stream
        ) from None
    except httpx.HTTPError as exc:
        raise http_failure(exc, stream.request.url, "the event stream") from None


def _outside(label: str, endpoint: httpx.URL, confine: str) -> ConfinementError:
    reason = confinement.outside_reason(endpoint, confine)
    return ConfinementError(
        f"{label} announced a message endpoint {display_url(endpoint)} outside {confine} "
        f"({reason}); refusing to send requests there: a client confined to that prefix "
        "sends its credentials nowhere else",
        target=label,
    )


def _endpoint_url(sse_url: httpx.URL, data: str, label: str) -> httpx.URL:
    try:
        endpoint = sse_url.join(data.strip())
    except httpx.InvalidURL:
        endpoint = None
    if endpoint is None or origin(endpoint) != origin(sse_url):
        raise TransportError(
            f"{label} announced a message endpoint on another host or an invalid one "
            f"({data.strip()[:80]!r}); refusing to send requests there",
            target=label,
        )
    return endpoint
