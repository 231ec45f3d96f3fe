"""The streamable HTTP transport: POST each message, read a JSON or an SSE response.

Spec: modelcontextprotocol.io, "Transports", revisions 2025-03-26 to 2026-07-28. On a
stateful session the server may also offer a GET stream for its own requests and
notifications (:meth:`StreamableHTTPTransport.listen`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from contextlib import suppress
from typing import Any

import httpx

import langop_infra.mcp._jsonrpc as jsonrpc
from langop_infra.mcp._errors import (
    ConfinementError,
    HTTPStatusError,
    MalformedResponse,
    MCPError,
    SessionExpired,
    TransportError,
)
from langop_infra.mcp._http import (
    HTTPConnection,
    display_url,
    http_failure,
    status_failure,
    too_large,
)
from langop_infra.mcp._jsonrpc import Message
from langop_infra.mcp._sse import EventTooLarge, SSEDecoder
from langop_infra.mcp._timeouts import timeout_after

_POST_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
}
_RESUME_ATTEMPTS = 2
_LISTEN_WAIT = 2.0  # seconds a session waits for the server to answer its GET stream
_MAX_RETRY_WAIT = 5.0  # seconds: a server's "retry:" hint above this is not worth waiting for
_ERROR_BODY_BYTES = 16 * 1024  # decoded bytes of an error body worth reading


class StreamableHTTPTransport:
    """One MCP endpoint URL; keeps the session id and negotiated version for its headers."""

    name = "streamable-http"

    def __init__(self, http: HTTPConnection, url: str) -> None:
        self._http = http
        self.url = url
        self.label = display_url(url)
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        # Called with each notification the server sends (on a POST's stream or the GET one).
        self.on_notification: Callable[[Message], None] | None = None
        self._listener: asyncio.Task[None] | None = None
        self.listening = False
        # Responses that arrived on the server's GET stream instead of the request's own
        # (some servers answer there after the request's stream ends), by request id.
        self._answers: dict[Any, asyncio.Future[Message]] = {}

    @property
    def received_bytes(self) -> int:
        """Bytes of responses read so far (bodies and events)."""
        return self._http.received

    def diagnostics(self) -> str:
        """Nothing beyond the HTTP status and body, which errors already carry."""
        return ""

    def _headers(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        headers = dict(_POST_HEADERS)
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        headers.update(extra or {})
        return headers

    def reset_session(self) -> None:
        """Forget the session id and version, before initializing again."""
        self.session_id = None
        self.protocol_version = None

    async def request(self, message: Message, headers: Mapping[str, str] | None = None) -> Message:
        """POST a request and return the response whose id matches.

        A JSON-RPC error a server sends with a 4xx status (as 2026-07-28 servers do for
        -32020 and -32022) is returned as the response it is.
        """
        method = message["method"]
        sent_session = self.session_id
        response = await self._http.send(
            "POST",
            self.url,
            headers=self._headers(headers),
            content=jsonrpc.encode(message),
            what=method,
        )
        try:
            if response.status_code >= 400:
                return await self._error_response(response, message, sent_session)
            if method == "initialize":
                self.session_id = response.headers.get("mcp-session-id") or None
            if response.status_code in (202, 204):
                raise MalformedResponse(
                    f"{self.label} accepted {method} (HTTP {response.status_code}) but sent no "
                    "response; the server does not follow MCP",
                    target=self.label,
                )
            content_type = response.headers.get("content-type", "")
            if content_type.startswith("text/event-stream"):
                return await self._response_from_stream(response, message)
            body = await self._http.read_body(response, method)
            for candidate in jsonrpc.decode(body, source=self.label):
                if jsonrpc.is_response_to(candidate, message["id"]):
                    return candidate
            raise MalformedResponse(
                f"{self.label} answered {method} without a JSON-RPC response to it "
                f"({jsonrpc.preview(body)}); the server does not follow MCP",
                target=self.label,
            )
        finally:
            await response.aclose()

    async def notify(self, message: Message) -> None:
        """POST a notification or a response; the server owes us nothing back."""
        method = message.get("method", "a response")
        sent_session = self.session_id
        response = await self._http.send(
            "POST", self.url, headers=self._headers(), content=jsonrpc.encode(message), what=method
        )
        try:
            if response.status_code in (401, 403) or (response.status_code == 404 and sent_session):
                await self._raise_status(response, method, sent_session)
            # Anything else is tolerated: simple servers answer notifications with an error
            # body or a 4xx, and no result is expected anyway.
            await self._http.discard(response)
        finally:
            await response.aclose()

    async def _error_response(
        self, response: httpx.Response, message: Message, sent_session: str | None
    ) -> Message:
        """The JSON-RPC error in a 4xx body, else raise the HTTP status as an error."""
        status, method = response.status_code, message["method"]
        is_json = "json" in response.headers.get("content-type", "")
        if not is_json or status in (401, 403) or status >= 500 or (status == 404 and sent_session):
            await self._raise_status(response, method, sent_session)
        body = bytearray()
        try:
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > _ERROR_BODY_BYTES:
                    break
        except httpx.HTTPError:
            pass
        try:
            candidates = jsonrpc.decode(bytes(body[:_ERROR_BODY_BYTES]), source=self.label)
        except MalformedResponse:
            candidates = []
        for candidate in candidates:
            if isinstance(candidate.get("error"), dict) and candidate.get("id") in (
                None,
                message["id"],
            ):
                return {**candidate, "id": message["id"]}
        await response.aclose()
        raise status_failure(response, bytes(body[:_ERROR_BODY_BYTES]), method)

    async def _raise_status(
        self, response: httpx.Response, method: str, sent_session: str | None
    ) -> None:
        error = await self._http.status_error(response, method)
        if response.status_code == 404 and sent_session:
            raise SessionExpired(
                f"{self.label} no longer knows our session (HTTP 404 to {method}); "
                "it restarted or expired the session: connect again",
                status=404,
                target=self.label,
            )
        raise error

    async def _response_from_stream(self, response: httpx.Response, message: Message) -> Message:
        answer = self._answers.setdefault(message["id"], asyncio.get_running_loop().create_future())
        try:
            return await self._read_answer(response, message, answer)
        finally:
            self._answers.pop(message["id"], None)

    async def _first(
        self, scan: Awaitable[Message | None], answer: asyncio.Future[Message]
    ) -> Message | None:
        """What the request's stream yields, or the answer the GET stream brought first."""
        task = asyncio.ensure_future(scan)
        # Its outcome is always retrieved: when the caller times out during the wait, the
        # scan is cancelled and may still end in an error (the stream breaking) that would
        # otherwise print "Task exception was never retrieved".
        task.add_done_callback(_retrieved)
        try:
            done, _ = await asyncio.wait({task, answer}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            task.cancel()
            raise
        if task in done:
            return task.result() or (answer.result() if answer.done() else None)
        task.cancel()
        with suppress(asyncio.CancelledError, Exception):
            await task
        return answer.result()

    async def _read_answer(
        self, response: httpx.Response, message: Message, answer: asyncio.Future[Message]
    ) -> Message:
        decoder = SSEDecoder(self._http.options.max_response_bytes)
        found = await self._first(self._scan_stream(response, decoder, message), answer)
        # The server may end a stream before the response and let us resume it with GET
        # (2025-11-25 "SSE polling"); that needs an event id to resume from.
        for _ in range(_RESUME_ATTEMPTS):
            # An id HTTP cannot carry back in a header means the stream cannot be resumed.
            resumable = decoder.last_event_id.isascii() and decoder.last_event_id.isprintable()
            if found is not None or not decoder.last_event_id or not resumable:
                break
            if decoder.retry:
                await self._first(asyncio.sleep(min(decoder.retry / 1000, _MAX_RETRY_WAIT)), answer)
            if answer.done():
                found = answer.result()
                break
            headers = self._headers()
            headers["Accept"] = "text/event-stream"
            headers["Last-Event-ID"] = decoder.last_event_id
            resumed = await self._http.send(
                "GET", self.url, headers=headers, what=f"resuming the {message['method']} stream"
            )
            try:
                if resumed.status_code >= 400:
                    await self._refused_resume(resumed, message["method"])
                found = await self._first(self._scan_stream(resumed, decoder, message), answer)
            finally:
                await resumed.aclose()
        if found is None:
            raise TransportError(
                f"{self.label} closed the event stream before answering {message['method']}; "
                "the server crashed or dropped the request: check its logs",
                target=self.label,
            )
        return found

    async def _refused_resume(self, response: httpx.Response, method: str) -> None:
        if response.status_code == 404 and self.session_id:
            await self._raise_status(response, method, self.session_id)
        error = await self._http.status_error(response, f"resuming the {method} stream")
        raise HTTPStatusError(
            f"{self.label} ended the event stream of {method} before answering and then "
            f"refused to resume it (GET with Last-Event-ID answered HTTP {error.status}): "
            "the server's stream resumption is broken or disabled; retry, or check its "
            "event store",
            status=error.status,
            target=self.label,
        )

    async def _scan_stream(
        self, response: httpx.Response, decoder: SSEDecoder, message: Message
    ) -> Message | None:
        method = message["method"]
        limit = self._http.options.max_response_bytes
        received = 0
        chunks = response.aiter_bytes()
        try:
            async for chunk in chunks:
                received += len(chunk)
                self._http.received += len(chunk)
                if received > limit:
                    raise too_large(self.url, method, limit, received, response)
                for event in decoder.feed(chunk):
                    if not event.data or event.event != "message":
                        continue  # priming events carry only an id; other types are not MCP's
                    for candidate in jsonrpc.decode(event.data, source=self.label):
                        if jsonrpc.is_response_to(candidate, message["id"]):
                            await self._http.discard(response, chunks)
                            return candidate
                        await self._from_server(candidate)
        except EventTooLarge as exc:
            raise too_large(self.url, method, limit, exc.size, response) from None
        except httpx.HTTPError as exc:
            raise http_failure(exc, self.url, method) from None
        return None

    async def _from_server(self, message: Message) -> None:
        """Answer a server's request; hand a notification to ``on_notification``; pass a
        response to the request waiting for it."""
        key = message.get("id")
        is_answer = "method" not in message and isinstance(key, (str, int))
        answer = self._answers.get(key) if is_answer else None
        if answer is not None and not answer.done():
            answer.set_result(message)
        elif jsonrpc.is_server_request(message):
            await self.notify(jsonrpc.answer_to(message))
        elif "method" in message and self.on_notification is not None:
            self.on_notification(message)

    async def listen(self) -> None:
        """Open the server's GET stream in the background, if it offers one, and return once
        the server has answered the GET (or after a short wait): a request sent afterwards
        never races the stream's opening, so nothing the server sends there is missed.

        A server without one answers 405; that is not an error. The stream is not resumed
        once it ends: it only carries what a one-session client can act on (pings,
        requests it refuses, list-changed notifications).
        """
        # A stream that ended (its session expired, say) is opened again for the new one.
        if (self._listener is None or self._listener.done()) and self.session_id:
            headers = self._headers({"Accept": "text/event-stream"})
            headers.pop("Content-Type", None)
            opened = asyncio.Event()
            self._listener = asyncio.create_task(self._events("GET", headers, None, opened))
            with suppress(TimeoutError, asyncio.TimeoutError):
                await asyncio.wait_for(opened.wait(), _LISTEN_WAIT)

    def subscribe(self, message: Message, headers: Mapping[str, str]) -> None:
        """POST ``subscriptions/listen`` (2026-07-28) and read its stream in the background."""
        if self._listener is None:
            content = jsonrpc.encode(message)
            self._listener = asyncio.create_task(
                self._events("POST", self._headers(headers), content)
            )

    async def _events(
        self,
        method: str,
        headers: dict[str, str],
        content: bytes | None,
        opened: asyncio.Event | None = None,
    ) -> None:
        try:
            with suppress(MCPError):
                response = await self._http.send(
                    method, self.url, headers=headers, content=content, what="the server's stream"
                )
                if opened is not None:
                    opened.set()
                await self._read_events(response)
        finally:
            if opened is not None:
                opened.set()

    async def _read_events(self, response: httpx.Response) -> None:
        with suppress(MCPError):
            try:
                is_sse = response.headers.get("content-type", "").startswith("text/event-stream")
                if response.status_code != 200 or not is_sse:
                    return
                self.listening = True
                decoder = SSEDecoder(self._http.options.max_response_bytes)
                async for chunk in response.aiter_bytes():
                    for event in decoder.feed(chunk):
                        if event.data and event.event == "message":
                            for message in jsonrpc.decode(event.data, source=self.label):
                                await self._from_server(message)
            except (EventTooLarge, httpx.HTTPError):
                pass  # the stream is a courtesy channel: losing it fails no request
            finally:
                self.listening = False
                await response.aclose()

    async def aclose(self) -> None:
        """End the server's session with DELETE; a server that refuses or fails is ignored."""
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.cancel()
            with suppress(asyncio.CancelledError, Exception):
                await listener
        session_id, self.session_id = self.session_id, None
        if not session_id:
            return
        headers = {"Mcp-Session-Id": session_id}
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        # Ending a session is a courtesy: it must never hang or fail a finished operation,
        # unless the server tried to steer it out of the client's confinement.
        try:
            async with timeout_after(min(self._http.options.timeout, 2.0)):
                response = await self._http.send(
                    "DELETE", self.url, headers=headers, what="ending the session"
                )
                await self._http.discard(response)
        except ConfinementError:
            raise
        except (MCPError, TimeoutError, asyncio.TimeoutError):
            pass


def _retrieved(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()
