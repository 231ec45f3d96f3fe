"""The HTTP layer shared by the streamable HTTP and legacy SSE transports.

One :class:`HTTPConnection` (one ``httpx2.AsyncClient``) per session. It adds the options'
headers, retries a refused connection with backoff, follows redirects only within the same
origin (and remembers a permanent one), caps how much of a body it reads and counts what it
read, and turns every httpx2 failure into an
:class:`~langop_infra.mcp._errors.MCPError` whose message names the URL and the fix.
"""

from __future__ import annotations

import asyncio
import functools
import html
import re
import ssl
from collections.abc import AsyncIterator, Mapping
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

import httpx2

import langop_infra._json as _json
import langop_infra.mcp._confinement as confinement
from langop_infra.mcp._decoding import ACCEPT_ENCODING, bound_decoding, encoding_note
from langop_infra.mcp._errors import (
    ConfinementError,
    HTTPStatusError,
    MCPError,
    MCPTimeout,
    ResponseTooLarge,
    ServerUnreachable,
    TransportError,
)
from langop_infra.mcp._options import ClientOptions
from langop_infra.mcp._ports import effective_port
from langop_infra.mcp._timeouts import timeout_after

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_PERMANENT = frozenset({301, 308})
_MAX_REDIRECTS = 5
ERROR_BODY_BYTES = 16 * 1024
_DRAIN_BYTES = 64 * 1024
_DRAIN_SECONDS = 0.05
_TAG = re.compile(r"<(script|style)\b.*?</\1\s*>|<[^>]*>", re.DOTALL | re.IGNORECASE)


def display_url(url: str | httpx2.URL) -> str:
    """``url`` without credentials, query or fragment: safe to show in messages and logs."""
    try:
        parts = urlsplit(str(url))
    except ValueError:  # a server's Location with an unclosed IPv6 bracket, say
        return "an invalid URL"
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def origin(url: str | httpx2.URL) -> tuple[str, str, int | None]:
    """Scheme, host and effective port: what must match for a redirect to be followed."""
    url = httpx2.URL(str(url))
    return url.scheme, url.host, effective_port(url.scheme, url.port)


@functools.lru_cache(maxsize=8)
def tls_context(verify: bool | str, cert: str | tuple[str, str] | None) -> ssl.SSLContext:
    """A TLS context per (verify, cert), built once per process.

    Building one loads the CA bundle (tens of milliseconds), which httpx2 would otherwise
    repeat for every client, that is for every session.
    """
    if verify is False:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif isinstance(verify, str):
        context = ssl.create_default_context(cafile=verify)
    else:
        import certifi  # httpx2's own default trust store; imported only for HTTPS

        context = ssl.create_default_context(cafile=certifi.where())
    if isinstance(cert, str):
        context.load_cert_chain(cert)
    elif cert is not None:
        context.load_cert_chain(*cert)
    return context


@functools.lru_cache(maxsize=1)
def _plain_http_context() -> ssl.SSLContext:
    # Plain-HTTP sessions never use TLS (an https redirect changes origin and is refused);
    # this empty context only spares loading CA certificates, and trusts nothing.
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


class HTTPConnection:
    """An ``httpx2.AsyncClient`` configured from :class:`ClientOptions`, for one session."""

    def __init__(
        self,
        url: str,
        options: ClientOptions,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        self.options = options
        try:
            verify = (
                tls_context(options.verify, options.cert)
                if url.startswith("https:")
                else _plain_http_context()
            )
        except (OSError, ssl.SSLError) as exc:
            raise TransportError(
                f"cannot load TLS files (verify={options.verify!r}, cert={options.cert!r}): "
                f"{exc}; check the CA bundle and client certificate paths",
                target=display_url(url),
            ) from None
        # Set while a refused connection is being retried: a timeout then means "refused".
        self.refused: tuple[httpx2.URL, int] | None = None
        # Bytes of response bodies and events read so far: what a listing's total cap counts.
        self.received = 0
        # Same-origin permanent redirects seen: later messages go straight to the new URL.
        self._moved: dict[httpx2.URL, httpx2.URL] = {}
        self._client = httpx2.AsyncClient(
            headers={"Accept-Encoding": ACCEPT_ENCODING, **options.headers},
            event_hooks={"response": [bound_decoding]},
            timeout=httpx2.Timeout(options.timeout),
            verify=verify,
            follow_redirects=False,
            auth=options.auth,
            transport=transport,
        )

    async def send(
        self,
        method: str,
        url: str | httpx2.URL,
        *,
        headers: Mapping[str, str] | None = None,
        content: bytes | None = None,
        what: str,
    ) -> httpx2.Response:
        """Send a request and return the response with its body unread (the caller closes it).

        ``what`` names the operation in error messages ("tools/list", "the event stream").
        """
        asked = httpx2.URL(url)
        target = self._moved.get(asked, asked)
        confine = self.options.confine_to
        response: httpx2.Response | None = None
        for _ in range(_MAX_REDIRECTS + 1):
            confinement.check(target, confine, what)
            request = self._client.build_request(
                method, target, headers=headers, content=content, extensions=self._tls_name(target)
            )
            response = await self._send_retrying(request, what)
            location = response.headers.get("location")
            if response.status_code not in _REDIRECTS or not location:
                return response
            await response.aclose()
            try:
                next_url = target.join(location)
            except httpx2.InvalidURL:
                shown = "an invalid URL" if confine is not None else display_url(location)
                raise self._redirect_error(
                    response, shown, "it is not a valid URL", confine
                ) from None
            shown = display_url(next_url)
            if confine is not None:
                raise self._redirect_error(response, shown, "", confine)
            if origin(next_url) != origin(target):
                raise self._redirect_error(response, shown, "it leads to another host")
            if method != "GET" and response.status_code not in (307, 308):
                raise self._redirect_error(response, shown, f"it would turn {method} into GET")
            if response.status_code in _PERMANENT:
                self._moved[asked] = next_url
            target = next_url
        raise HTTPStatusError(
            f"{display_url(url)} redirected more than {_MAX_REDIRECTS} times; "
            "use the final URL of the MCP endpoint",
            status=response.status_code if response is not None else 0,
            target=display_url(url),
        )

    def _tls_name(self, target: httpx2.URL) -> dict[str, str]:
        # httpcore checks the certificate against (and sends as SNI) this name, not the host.
        name = self.options.tls_server_name
        return {"sni_hostname": name} if name and target.scheme == "https" else {}

    async def _send_retrying(self, request: httpx2.Request, what: str) -> httpx2.Response:
        retries = self.options.connect_retries
        for attempt in range(retries + 1):
            try:
                response = await self._client.send(request, stream=True)
            except httpx2.ConnectError as exc:
                if attempt < retries and _refused(exc):
                    self.refused = (request.url, attempt + 1)
                    await asyncio.sleep(self.options.retry_backoff * 2**attempt)
                    continue
                self.refused = None
                raise http_failure(exc, request.url, what, attempts=attempt + 1) from None
            except httpx2.HTTPError as exc:
                self.refused = None
                raise http_failure(exc, request.url, what) from None
            self.refused = None
            return response
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _redirect_error(
        response: httpx2.Response, shown: str, why: str, confine: str | None = None
    ) -> MCPError:
        """Why the redirect to ``shown`` was not followed: ``why``, or the ``confine`` prefix."""
        source = display_url(response.request.url)
        said = f"{source} redirected ({response.status_code}) to {shown}, not followed"
        if confine is not None:
            return ConfinementError(
                f"{said}: a client confined to {confine} follows no redirect, since its "
                "credentials are valid beyond the server; use the final URL directly",
                target=source,
            )
        return HTTPStatusError(
            f"{said} because {why}; if that is the real MCP endpoint, use its URL directly",
            status=response.status_code,
            target=source,
        )

    async def read_body(self, response: httpx2.Response, what: str) -> bytes:
        """The whole body of ``response``, never more than ``max_response_bytes``."""
        limit = self.options.max_response_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            await response.aclose()
            raise too_large(response.request.url, what, limit, int(declared), response)
        body = bytearray()
        try:
            async for chunk in response.aiter_bytes():
                body += chunk
                self.received += len(chunk)
                if len(body) > limit:
                    raise too_large(response.request.url, what, limit, len(body), response)
        except httpx2.HTTPError as exc:
            raise http_failure(exc, response.request.url, what) from None
        finally:
            await response.aclose()
        return bytes(body)

    async def discard(
        self, response: httpx2.Response, chunks: AsyncIterator[bytes] | None = None
    ) -> None:
        """Read what is left of a body we do not need, briefly, then close the response.

        A response read to its end lets its connection serve the next request; closing it
        half-read drops the connection, and the next request pays a new TCP (and TLS)
        handshake. A body that is large or slow to end is cut off instead.
        """
        drained = 0
        try:
            async with timeout_after(_DRAIN_SECONDS):
                async for chunk in chunks if chunks is not None else response.aiter_bytes():
                    drained += len(chunk)
                    if drained > _DRAIN_BYTES:
                        break
        except (TimeoutError, httpx2.HTTPError, httpx2.StreamError):
            pass  # only a lost chance to reuse the connection
        finally:
            await response.aclose()

    async def aclose(self) -> None:
        """Close every pooled connection."""
        await self._client.aclose()


async def error_body(response: httpx2.Response) -> bytes:
    """The first ``ERROR_BODY_BYTES`` of a failure's body (the status says enough without
    it: a body cut short only loses the detail); closes the response."""
    body = bytearray()
    try:
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) >= ERROR_BODY_BYTES:
                break
    except httpx2.HTTPError:
        pass
    finally:
        await response.aclose()
    return bytes(body[:ERROR_BODY_BYTES])


def status_failure(response: httpx2.Response, body: bytes, what: str) -> HTTPStatusError:
    """An actionable :class:`HTTPStatusError` for ``response`` (status ≥ 400)."""
    url = display_url(response.request.url)
    status = response.status_code
    reason = f"HTTP {status} {response.reason_phrase}".rstrip()
    challenge = response.headers.get("www-authenticate")
    content_type = response.headers.get("content-type", "")
    kube = kubernetes_status(body, content_type)
    detail = kube or _body_summary(body, content_type)
    if detail.lower() in reason.lower():
        detail = ""  # "Not Found" after "HTTP 404 Not Found" tells nothing new
    if status == 403 and kube:
        # A Kubernetes API server (or its proxy) forbids it: no header of ours would help.
        message = (
            f"{url} refused {what} with {reason}: the Kubernetes API server's authorizer "
            f"said: {kube}; grant that permission to the kubeconfig's user"
        )
    elif status in (401, 403):
        message = (
            f"{url} refused {what} with {reason}: credentials are missing or wrong; "
            "pass the right header (e.g. 'Authorization: Bearer <token>')"
        )
        if challenge:
            message += f"; the server asks for: WWW-Authenticate: {challenge}"
        elif detail:
            message += f"; server said: {detail}"
    elif status == 421 or "invalid host header" in detail.lower():
        host = response.request.headers.get("host", "")
        message = (
            f"{url} refused {what} with {reason}" + (f" ({detail})" if detail else "") + ": "
            f"the server does not accept the Host header {host!r} (DNS-rebinding protection); "
            "allow that host in the server's allowed hosts, or call it by a name it allows"
        )
    elif status >= 500:
        message = f"{url} failed with {reason} on {what}"
        message += f": {detail}" if detail else ""
        message += "; the server is broken or overloaded: check its logs"
    elif status == 404:
        message = f"{url} answered {reason} to {what}: no MCP endpoint at this path"
        message += f" ({detail})" if detail else ""
        message += (
            "; check the URL's path (tools serve MCP at /mcp by default; "
            "legacy SSE servers at /sse)"
        )
    else:
        message = f"{url} answered {reason} to {what}"
        message += f": {detail}" if detail else ""
        message += "; check the URL, the transport and the headers"
    return HTTPStatusError(
        message,
        status=status,
        target=url,
        www_authenticate=challenge,
        detail=detail,
        kubernetes_status=bool(kube),
    )


def kubernetes_status(body: bytes, content_type: str, limit: int = 240) -> str:
    """The message of a Kubernetes API ``Status`` failure body (what an API server and its
    proxy answer themselves), on one line; "" for any other body."""
    if "json" not in content_type:
        return ""
    payload = json_object(body.decode("utf-8", "replace")) or {}
    if payload.get("kind") != "Status":
        return ""
    text = " ".join(str(payload.get("message") or payload.get("reason") or "").split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def json_object(body: bytes | str) -> dict[str, Any] | None:
    """``body`` parsed, when it is a JSON object; else None."""
    try:
        parsed: object = _json.read(body)
    except ValueError:
        return None
    return cast("dict[str, Any]", parsed) if isinstance(parsed, dict) else None


def _body_summary(body: bytes, content_type: str, limit: int = 160) -> str:
    """A short one-line text of an error body: a JSON-RPC error message, or text sans HTML."""
    text = body.decode("utf-8", "replace")
    reply = (json_object(text) if "json" in content_type else None) or {}
    error = reply.get("error")
    if isinstance(error, dict) and cast("dict[str, Any]", error).get("message"):
        text = str(cast("dict[str, Any]", error)["message"])
    elif isinstance(error, str):
        text = error
    if "<" in text:
        text = html.unescape(_TAG.sub(" ", text))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def too_large(
    url: httpx2.URL | str,
    what: str,
    limit: int,
    size: int,
    response: httpx2.Response | None = None,
) -> ResponseTooLarge:
    """The error for a body or event over ``limit`` bytes (decoded bytes, when compressed)."""
    note = encoding_note(response) if response is not None else ""
    if note:
        note = f" decoded, from a compressed body{note}: decoding stopped there"
    return ResponseTooLarge(
        f"{display_url(url)} sent more than {limit} bytes for {what} (at least {size}{note}); "
        "raise max_response_bytes if the server really returns that much",
        limit=limit,
        target=display_url(url),
    )


def http_failure(
    exc: Exception, url: httpx2.URL | str, what: str, *, attempts: int = 1
) -> MCPError:
    """The :class:`MCPError` for an httpx2 exception raised while talking to ``url``."""
    shown = display_url(url)
    tries = f" (tried {attempts} times)" if attempts > 1 else ""
    if isinstance(exc, httpx2.ConnectTimeout):
        return ServerUnreachable(
            f"timed out connecting to {shown}{tries}: check the host, port and network policy",
            target=shown,
        )
    if isinstance(exc, httpx2.TimeoutException):
        return MCPTimeout(
            f"no answer from {shown} for {what} in time: the server is stuck or slow; "
            "raise the timeout or check its logs",
            target=shown,
        )
    cause = _root_cause(exc)
    if isinstance(exc, httpx2.ConnectError):
        if _refused(exc):
            message = f"connection refused by {shown}{tries}: is the server running on that port?"
        elif isinstance(cause, ssl.SSLCertVerificationError):
            message = (
                f"TLS certificate of {shown} not trusted ({cause.verify_message}): "
                "pass its CA bundle (verify=PATH, --ca-bundle PATH)"
            )
        elif isinstance(cause, ssl.SSLError):
            message = (
                f"TLS handshake with {shown} failed ({cause.reason or cause}): check https vs "
                "http, and the client certificate (cert=...) if the server requires one"
            )
        elif isinstance(cause, OSError) and cause.errno is not None and cause.errno < 0:
            message = f"cannot resolve the host of {shown} ({cause.strerror}): check the hostname"
        else:
            message = f"cannot connect to {shown}{tries}: {cause}; check the URL and network"
        return ServerUnreachable(message, target=shown)
    if isinstance(exc, httpx2.DecodingError):
        message = (
            f"{shown} sent an undecodable body for {what}: {exc}; check the server's "
            "compression settings"
        )
    elif isinstance(exc, (httpx2.UnsupportedProtocol, httpx2.InvalidURL)):
        message = f"cannot use {shown}: {exc}; give an http(s) URL"
    elif isinstance(cause, ssl.SSLError):
        message = (
            f"TLS with {shown} failed during {what} ({cause.reason or cause}): the server may "
            "require a client certificate (cert=...) or reject the one sent"
        )
    else:
        hint = "check the server's logs"
        if shown.startswith("https:") and isinstance(
            exc, (httpx2.ReadError, httpx2.RemoteProtocolError)
        ):
            hint += " (over HTTPS this can also mean it wants a client certificate: cert=...)"
        message = (
            f"connection to {shown} broke during {what}: {str(exc) or type(exc).__name__}; {hint}"
        )
    return TransportError(message, target=shown)


def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain and len(chain) < 10:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _root_cause(exc: BaseException) -> BaseException:
    # A TLS failure first: raised while a sync caller's loop was looked up, its own
    # __context__ can be an unrelated "no running event loop", which would hide it.
    chain = _causes(exc)
    return next((c for c in chain if isinstance(c, ssl.SSLError)), chain[-1])


def _refused(exc: BaseException) -> bool:
    return any(isinstance(e, ConnectionRefusedError) for e in _causes(exc))
