"""The agent's HTTP tools (STOA ``Tool``, ark inline webhook tools): read, authorised, called.

:func:`load_http_tools` reads ``webhookTools`` of ``/etc/agent/config.yaml`` (inline tools and
the namespace's ``HttpTool`` resources share that one shape) and takes each credential from
the env var its ``valueFromEnv`` names. :class:`HttpToolCaller` calls a tool: it checks the
arguments against ``inputSchema`` (JSON Schema draft-07), waits for the tool's token bucket,
adds the credential, sends the arguments (the query for GET and DELETE, a JSON body
otherwise) and reads at most ``max_response_bytes`` within the tool's timeout. Every failure
is an ``is_error`` result the LLM can read (AgentLab's rule), never an exception.

Credentials, by ``authentication.type``:

- ``bearer``: ``<headerName>: Bearer <value>`` (``headerName`` defaults to Authorization);
- ``basic``: the value is ``user:password``; sent as ``Authorization: Basic base64(value)``;
- ``apiKey``: the raw value in ``headerName``;
- ``oauth2``: the value is JSON ``{"tokenUrl", "clientId", "clientSecret", "scope"?}``: a
  client-credentials token is fetched (client authentication ``client_secret_basic``, id and
  secret form-urlencoded as RFC 6749 §2.3.1 demands) and cached until shortly before it
  expires; a tool that answers 401 to a cached token gets one fresh token and one retry. A
  value that is not a JSON object is used as a ready access token (``Bearer``).
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import httpx
from jsonschema import Draft7Validator
from jsonschema.exceptions import SchemaError

from langop_infra.mcp.oauth.tokens import basic_authorization
from langop_infra.mcp.session import ToolCallResult

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "HttpToolCaller",
    "HttpToolEntry",
    "TokenBucket",
    "load_http_tools",
]

DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024
AUTH_TYPES = ("none", "bearer", "basic", "apiKey", "oauth2")
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
QUERY_METHODS = ("GET", "DELETE")
# A cached OAuth token is renewed this long before it expires (clock skew, request time).
TOKEN_MARGIN_SECONDS = 30.0


@dataclass(frozen=True)
class HttpToolEntry:
    """One HTTP tool as the agent calls it; ``credential`` is the secret (never shown)."""

    name: str
    url: str
    method: str = "POST"
    description: str = ""
    input_schema: Mapping[str, Any] = field(default_factory=dict[str, Any])
    timeout: float = 30.0
    auth_type: str = "none"
    header_name: str = "Authorization"
    credential_env: str = ""
    credential: str | None = field(default=None, repr=False)
    requests_per_minute: int | None = None
    burst: int | None = None

    def definition(self) -> dict[str, Any]:
        """The tool as an MCP ``tools/list`` entry (what an LLM is shown)."""
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": dict(self.input_schema) or {"type": "object"},
        }


def load_http_tools(
    document: Mapping[str, Any], env: Mapping[str, str]
) -> tuple[list[HttpToolEntry], list[tuple[str, str]]]:
    """The HTTP tools of a config.yaml document, and ``(name, problem)`` of each entry that
    cannot be used (the caller reports it; the other tools stay usable)."""
    tools: list[HttpToolEntry] = []
    failures: list[tuple[str, str]] = []
    specs: Any = document.get("webhookTools") or []
    if not isinstance(specs, list):
        return [], [("webhookTools", "webhookTools: must be a list")]
    for index, spec in enumerate(cast("list[Any]", specs)):
        try:
            tools.append(_entry(f"webhookTools[{index}]", spec, env))
        except _Unusable as exc:
            name = cast("dict[str, Any]", spec).get("name") if isinstance(spec, dict) else None
            failures.append((str(name or f"webhookTools[{index}]"), str(exc)))
    return tools, failures


class _Unusable(Exception):
    """A webhookTools entry the agent cannot call."""


def _entry(where: str, spec: Any, env: Mapping[str, str]) -> HttpToolEntry:
    fields: dict[str, Any] = cast("dict[str, Any]", spec) if isinstance(spec, dict) else {}
    if not fields.get("name") or not fields.get("url"):
        raise _Unusable(f"{where}: needs a name and a url")
    method = str(fields.get("method") or "POST").upper()
    if method not in METHODS:
        raise _Unusable(f"{where}.method: must be one of {', '.join(METHODS)}")
    schema: Any = fields.get("inputSchema") or {}
    if isinstance(schema, str):  # ark's form, which config.yaml and env carry
        try:
            schema = json.loads(schema)
        except (json.JSONDecodeError, RecursionError):
            raise _Unusable(f"{where}.inputSchema: not a JSON object") from None
    if not isinstance(schema, dict):
        raise _Unusable(f"{where}.inputSchema: not a JSON object")
    input_schema = cast("dict[str, Any]", schema)
    try:
        Draft7Validator.check_schema(input_schema)
    except SchemaError as exc:
        raise _Unusable(
            f"{where}.inputSchema: not valid JSON Schema draft-07: {exc.message}"
        ) from None
    auth: Any = fields.get("authentication") or {}
    auth_type = str(auth.get("type") or "none")
    if auth_type not in AUTH_TYPES:
        raise _Unusable(f"{where}.authentication.type: must be one of {', '.join(AUTH_TYPES)}")
    variable, credential = str(auth.get("valueFromEnv") or ""), None
    if auth_type != "none":
        if not variable or variable not in env:
            raise _Unusable(
                f"{where}.authentication: the credential's env var {variable or '(none)'} "
                "is not set"
            )
        credential = env[variable]
    limit: Any = fields.get("rateLimit") or {}
    timeout = fields.get("timeoutSeconds", 30)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise _Unusable(f"{where}.timeoutSeconds: must be a positive number of seconds")
    return HttpToolEntry(
        name=str(fields["name"]),
        url=str(fields["url"]),
        method=method,
        description=str(fields.get("description") or ""),
        input_schema=dict(input_schema),
        timeout=float(timeout),
        auth_type=auth_type,
        header_name=str(auth.get("headerName") or "Authorization"),
        credential_env=variable,
        credential=credential,
        requests_per_minute=limit.get("requestsPerMinute"),
        burst=limit.get("burst"),
    )


class TokenBucket:
    """``burst`` tokens, refilled at ``per_minute`` a minute; a caller reserves the next one.

    :meth:`reserve` answers how long to wait for a token, or ``None`` when that is longer
    than the caller may wait (then nothing is taken). Reserving ahead keeps concurrent
    callers in order without a lock held across the wait.
    """

    def __init__(self, per_minute: float, burst: int, clock: Any = time.monotonic) -> None:
        self.rate = per_minute / 60.0
        self.capacity = float(burst)
        self.tokens = float(burst)
        self._clock = clock
        self._updated = clock()

    def reserve(self, max_wait: float) -> float | None:
        now = self._clock()
        self.tokens = min(self.capacity, self.tokens + (now - self._updated) * self.rate)
        self._updated = now
        wait = 0.0 if self.tokens >= 1 else (1 - self.tokens) / self.rate
        if wait > max_wait:
            return None
        self.tokens -= 1
        return wait


@dataclass
class _Token:
    value: str
    expires: float


class HttpToolCaller:
    """Calls HTTP tools; one token bucket and one cached OAuth token per tool."""

    def __init__(
        self,
        tools: list[HttpToolEntry] | tuple[HttpToolEntry, ...] = (),
        *,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.tools = {tool.name: tool for tool in tools}
        self.max_response_bytes = max_response_bytes
        self._transport = transport
        self._http: httpx.AsyncClient | None = None  # made on first use: TLS setup costs ~0.1 s
        self._buckets = {
            tool.name: TokenBucket(tool.requests_per_minute, tool.burst or 1)
            for tool in tools
            if tool.requests_per_minute
        }
        self._tokens: dict[str, _Token] = {}
        self._token_locks: dict[str, asyncio.Lock] = {}
        self.token_fetches = 0  # OAuth token requests made (the cache's witness)

    async def call(self, name: str, arguments: Mapping[str, Any] | None) -> ToolCallResult:
        """Call tool ``name``; any failure is an ``is_error`` result naming the tool."""
        tool = self.tools.get(name)
        if tool is None:
            return error_result(f"no HTTP tool named {name!r}")
        arguments = dict(arguments or {})
        problem = _invalid_arguments(tool, arguments)
        if problem:
            return error_result(f"tool {name}: invalid arguments: {problem}")
        deadline = time.monotonic() + tool.timeout
        bucket = self._buckets.get(name)
        if bucket is not None:
            wait = bucket.reserve(tool.timeout)
            if wait is None:
                return error_result(
                    f"tool {name}: rate limit of {tool.requests_per_minute} requests a minute "
                    f"(burst {tool.burst}) reached; no request slot within its "
                    f"{tool.timeout:g}s timeout: try again later"
                )
            await asyncio.sleep(wait)
        try:
            return await asyncio.wait_for(
                self._send(tool, arguments), max(deadline - time.monotonic(), 0.001)
            )
        except (asyncio.TimeoutError, httpx.TimeoutException):
            return error_result(f"tool {name}: no answer within its {tool.timeout:g}s timeout")
        except httpx.HTTPError as exc:
            return error_result(f"tool {name}: request failed: {type(exc).__name__}: {exc}")
        except _CallFailed as exc:
            return error_result(f"tool {name}: {exc}")

    async def _send(self, tool: HttpToolEntry, arguments: dict[str, Any]) -> ToolCallResult:
        headers = await self._auth_headers(tool)
        response = await self._open(tool, arguments, headers)
        if response.status_code == 401 and _fetches_tokens(tool):
            # The tool refused a token we fetched (revoked, or expired before its
            # expires_in): drop it, fetch one fresh token and send once more. A second 401
            # is the tool's answer: no loop.
            await response.aclose()
            refused = headers[tool.header_name].removeprefix("Bearer ")
            headers = {tool.header_name: f"Bearer {await self._oauth_token(tool, refused)}"}
            response = await self._open(tool, arguments, headers)
        try:
            body = await self._read_capped(response)
        finally:
            await response.aclose()
        text = body.decode(response.encoding or "utf-8", errors="replace")
        if not response.is_success:
            return error_result(
                f"tool {tool.name}: HTTP {response.status_code} {response.reason_phrase}: "
                f"{text[:2000]}"
            )
        structured = _json_object(text, response.headers.get("content-type", ""))
        return ToolCallResult(
            content=[{"type": "text", "text": text}], is_error=False, structured_content=structured
        )

    async def _open(
        self, tool: HttpToolEntry, arguments: dict[str, Any], auth: dict[str, str]
    ) -> httpx.Response:
        headers = {"Accept": "application/json", **auth}
        if tool.method in QUERY_METHODS:
            request = self._client.build_request(
                tool.method, tool.url, params=_query(arguments), headers=headers
            )
        else:
            request = self._client.build_request(
                tool.method, tool.url, json=arguments, headers=headers
            )
        return await self._client.send(request, stream=True)

    async def _read_capped(self, response: httpx.Response) -> bytes:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > self.max_response_bytes:
                raise _CallFailed(
                    f"the response is larger than {self.max_response_bytes} bytes; "
                    "ask for less (filters, paging)"
                )
            chunks.append(chunk)
        return b"".join(chunks)

    async def _auth_headers(self, tool: HttpToolEntry) -> dict[str, str]:
        value = tool.credential or ""
        if tool.auth_type == "none":
            return {}
        if tool.auth_type == "bearer":
            return {tool.header_name: f"Bearer {value}"}
        if tool.auth_type == "apiKey":
            return {tool.header_name: value}
        if tool.auth_type == "basic":
            if ":" not in value:
                raise _CallFailed(
                    f"basic authentication: the value of {tool.credential_env} must be "
                    "user:password"
                )
            return {"Authorization": "Basic " + base64.b64encode(value.encode()).decode()}
        return {tool.header_name: f"Bearer {await self._oauth_token(tool)}"}

    async def _oauth_token(self, tool: HttpToolEntry, refused: str | None = None) -> str:
        """The tool's access token: cached until shortly before it expires, and never the
        ``refused`` one again (the tool answered 401 to it)."""
        settings = _oauth_settings(tool.credential or "")
        if settings is None:
            return tool.credential or ""  # a ready access token (STOA's access_token key)
        lock = self._token_locks.setdefault(tool.name, asyncio.Lock())
        async with lock:  # concurrent calls share one token request
            cached = self._tokens.get(tool.name)
            if (
                cached is not None
                and cached.value != refused  # else a concurrent call already replaced it
                and time.monotonic() < cached.expires
            ):
                return cached.value
            self._tokens[tool.name] = await self._fetch_token(tool, settings)
            return self._tokens[tool.name].value

    async def _fetch_token(self, tool: HttpToolEntry, settings: Mapping[str, str]) -> _Token:
        missing = [k for k in ("tokenUrl", "clientId", "clientSecret") if not settings.get(k)]
        if missing:
            raise _CallFailed(
                f"oauth2: the JSON in {tool.credential_env} lacks {', '.join(missing)}"
            )
        client_id, secret = str(settings["clientId"]), str(settings["clientSecret"])
        # client_id in the body too: some servers (the MCP SDK's) look the client up there.
        form = {"grant_type": "client_credentials", "client_id": client_id}
        if settings.get("scope"):
            form["scope"] = str(settings["scope"])
        self.token_fetches += 1
        response = await self._client.post(
            str(settings["tokenUrl"]),
            data=form,
            headers={
                "Accept": "application/json",
                # RFC 6749 §2.3.1: form-urlencoded before base64 (httpx's auth= is not)
                "Authorization": basic_authorization(client_id, secret),
            },
        )
        try:
            answer = response.json()
        except ValueError:
            answer = {}
        reply: dict[str, Any] = cast("dict[str, Any]", answer) if isinstance(answer, dict) else {}
        token = reply.get("access_token")
        if not response.is_success or not isinstance(token, str):
            error = reply.get("error")
            raise _CallFailed(
                f"oauth2: the token endpoint answered HTTP {response.status_code}"
                + (f" ({error})" if error else "")
                + " without an access_token"
            )
        given = reply.get("expires_in")
        lifetime = float(given) if isinstance(given, (int, float)) else 3600.0
        return _Token(token, time.monotonic() + max(lifetime - TOKEN_MARGIN_SECONDS, 0.0))

    @property
    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(transport=self._transport, follow_redirects=False)
        return self._http

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()


class _CallFailed(Exception):
    """A call that cannot go on; its message becomes the error result."""


def error_result(text: str) -> ToolCallResult:
    return ToolCallResult(content=[{"type": "text", "text": text}], is_error=True)


def _invalid_arguments(tool: HttpToolEntry, arguments: Mapping[str, Any]) -> str:
    validator = Draft7Validator(tool.input_schema or {})
    # typeshed's jsonschema stub leaves iter_errors' deprecated overload untyped.
    errors = validator.iter_errors(arguments)  # pyright: ignore[reportUnknownMemberType]
    problems = sorted(errors, key=lambda e: list(e.absolute_path))
    return "; ".join(
        f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in problems[:5]
    )


def _query(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Query parameters: scalars as text, lists repeated, objects as JSON."""
    query: dict[str, Any] = {}
    for key, value in arguments.items():
        if isinstance(value, bool):
            query[key] = "true" if value else "false"
        elif isinstance(value, list):
            items = cast("list[Any]", value)
            query[key] = [v if isinstance(v, str) else json.dumps(v) for v in items]
        elif isinstance(value, dict):
            query[key] = json.dumps(value, separators=(",", ":"))
        elif value is not None:
            query[key] = value
    return query


def _json_object(text: str, content_type: str) -> dict[str, Any] | None:
    if "json" not in content_type:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def _fetches_tokens(tool: HttpToolEntry) -> bool:
    """Whether the tool's token comes from a token endpoint (not a ready access token)."""
    return tool.auth_type == "oauth2" and _oauth_settings(tool.credential or "") is not None


def _oauth_settings(value: str) -> dict[str, Any] | None:
    if not value.lstrip().startswith("{"):
        return None
    try:
        settings = json.loads(value)
    except ValueError:
        return None
    return cast("dict[str, Any]", settings) if isinstance(settings, dict) else None
