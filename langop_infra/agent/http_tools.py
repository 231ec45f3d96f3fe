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
  secret form-urlencoded as RFC 6749 §2.3.1 demands) from an https ``tokenUrl`` (plain
  http only on loopback) and cached until shortly before it expires. A token the tool
  refuses with 401 is replaced (a refused replacement only after a backoff:
  :mod:`langop_infra.agent._http_tool_auth`) and the request is sent once more if it is
  idempotent or the challenge says ``invalid_token``. A value that is not a JSON object is
  used as a ready access token (``Bearer``).

A credential's trailing CR/LF is trimmed; any other control character makes the tool
unusable, with a message that names the env var and never the value. Every result (and
every error) passes the one :class:`~langop_infra.core._redact.Scrubber`, which knows each
credential sent, as sent and as encoded: nothing the tool echoes of them reaches the model.
GET and DELETE keep the query of the configured URL; an argument naming one of its
parameters is refused.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import unquote_plus

import httpx
from jsonschema import Draft7Validator
from jsonschema.exceptions import SchemaError

import langop_infra._json as _json
from langop_infra.agent._expand import ExpansionProblem, entry_url
from langop_infra.agent._http_tool_auth import (
    CredentialProblem,
    Token,
    TokenKeeper,
    checked_credential,
    header_value,
    lifetime,
    may_resend,
    oauth_settings,
    token_url_problem,
)
from langop_infra.agent._rate_limit import RateLimitProblem, TokenBucket, rate_limit
from langop_infra.core._redact import Scrubber
from langop_infra.mcp._session import ToolCallResult
from langop_infra.mcp.oauth._tokens import basic_authorization

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
ERROR_TEXT_LIMIT = 2000  # characters of an error result (a refusing tool's body, cut)


@dataclass(frozen=True)
class HttpToolEntry:
    """One HTTP tool as the agent calls it; ``credential`` is the secret (never shown)."""

    name: str
    url: str = field(repr=False)  # expanded: it may carry a routed query credential
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
    # The query credentials ``url`` took from its entry's ``env`` (scrubbed like the rest).
    url_secrets: tuple[str, ...] = field(default=(), repr=False)

    def definition(self) -> dict[str, Any]:
        """The tool as an MCP ``tools/list`` entry (what an LLM is shown)."""
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": dict(self.input_schema) or {"type": "object"},
        }


def load_http_tools(
    document: Mapping[str, object], env: Mapping[str, str]
) -> tuple[list[HttpToolEntry], list[tuple[str, str]]]:
    """The HTTP tools of a config.yaml document, and ``(name, problem)`` of each entry that
    cannot be used (the caller reports it; the other tools stay usable)."""
    tools: list[HttpToolEntry] = []
    failures: list[tuple[str, str]] = []
    specs: object = document.get("webhookTools") or []
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
            schema = _json.read(schema)
        except ValueError:
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
        try:
            credential = checked_credential(where, auth_type, env[variable], variable)
        except CredentialProblem as exc:
            raise _Unusable(str(exc)) from None
    try:
        per_minute, burst = rate_limit(where, fields.get("rateLimit"))
    except RateLimitProblem as exc:
        raise _Unusable(str(exc)) from None
    timeout = fields.get("timeoutSeconds", 30)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise _Unusable(f"{where}.timeoutSeconds: must be a positive number of seconds")
    try:
        url, url_secrets = entry_url(where, fields, env, "tool")
    except ExpansionProblem as exc:
        raise _Unusable(str(exc)) from None
    return HttpToolEntry(
        name=str(fields["name"]),
        url=url,
        method=method,
        description=str(fields.get("description") or ""),
        input_schema=dict(input_schema),
        timeout=float(timeout),
        auth_type=auth_type,
        header_name=str(auth.get("headerName") or "Authorization"),
        credential_env=variable,
        credential=credential,
        requests_per_minute=per_minute,
        burst=burst,
        url_secrets=url_secrets,
    )


class HttpToolCaller:
    """Calls HTTP tools; one token bucket and one cached OAuth token per tool, and one
    :class:`~langop_infra.core._redact.Scrubber` for everything returned."""

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
        self._keeper = TokenKeeper()
        self.scrubber = Scrubber([_sent_secrets(tool) for tool in tools])
        self.token_fetches = 0  # OAuth token requests made (the cache's witness)

    async def call(self, name: str, arguments: Mapping[str, object] | None) -> ToolCallResult:
        """Call tool ``name``; any failure is an ``is_error`` result naming the tool. What
        the result holds of a credential sent is replaced by a mark."""
        try:
            result = await self._call(name, dict(arguments or {}))
        except Exception as exc:  # the contract: a result, never an exception
            result = error_result(f"tool {name}: failed: {type(exc).__name__}: {exc}")
        if result.is_error:
            text = " ".join(str(b.get("text", "")) for b in result.content)
            return error_result(self.scrubber.text(text))
        return ToolCallResult(
            content=self.scrubber.value(result.content),
            is_error=False,
            structured_content=self.scrubber.value(result.structured_content),
        )

    async def _call(self, name: str, arguments: dict[str, object]) -> ToolCallResult:
        tool = self.tools.get(name)
        if tool is None:
            return error_result(f"no HTTP tool named {name!r}")
        problem = _invalid_arguments(tool, arguments) or _query_overrides(tool, arguments)
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

    async def _send(self, tool: HttpToolEntry, arguments: dict[str, object]) -> ToolCallResult:
        headers = await self._auth_headers(tool)
        response = await self._open(tool, arguments, headers)
        if response.status_code == 401 and _fetches_tokens(tool):
            response = await self._refused(tool, arguments, headers, response)
        if response.status_code != 401 and _fetches_tokens(tool):
            self._keeper.worked(tool.name)
        try:
            body = await self._read_capped(response)
        finally:
            await response.aclose()
        text = body.decode(response.encoding or "utf-8", errors="replace")
        if not response.is_success:
            return error_result(
                f"tool {tool.name}: HTTP {response.status_code} {response.reason_phrase}: "
                f"{text[:ERROR_TEXT_LIMIT]}"
            )
        structured = _json_object(text, response.headers.get("content-type", ""))
        return ToolCallResult(
            content=[{"type": "text", "text": text}], is_error=False, structured_content=structured
        )

    async def _refused(
        self,
        tool: HttpToolEntry,
        arguments: dict[str, object],
        headers: dict[str, str],
        response: httpx.Response,
    ) -> httpx.Response:
        """The tool refused a token we fetched (revoked, or expired before its expires_in):
        replace it (:class:`TokenKeeper` bounds how often) and send once more where that is
        safe (:func:`may_resend`). A second 401 is the tool's answer: no loop."""
        refused = headers[tool.header_name].removeprefix("Bearer ")
        settings = oauth_settings(tool.credential or "") or {}
        fresh = await self._keeper.replace(
            tool.name, refused, lambda: self._fetch_token(tool, settings)
        )
        if fresh is None or not may_resend(tool.method, response):
            return response
        await response.aclose()
        return await self._open(tool, arguments, {tool.header_name: f"Bearer {fresh}"})

    async def _open(
        self, tool: HttpToolEntry, arguments: dict[str, Any], auth: dict[str, str]
    ) -> httpx.Response:
        headers = {"Accept": "application/json", **auth}
        if tool.method in QUERY_METHODS:
            # Merged into the configured URL's query: httpx's params= would replace it.
            url = httpx.URL(tool.url).copy_merge_params(_query(arguments))
            request = self._client.build_request(tool.method, url, headers=headers)
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
        if tool.auth_type == "none":
            return {}
        value = tool.credential or ""
        if oauth_settings(value) is None:
            try:  # load_http_tools checked it; an entry built by hand is checked here
                value = header_value(value, tool.name, tool.credential_env)
            except CredentialProblem as exc:
                raise _CallFailed(str(exc)) from None
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

    async def _oauth_token(self, tool: HttpToolEntry) -> str:
        """The tool's access token: cached until shortly before it expires."""
        settings = oauth_settings(tool.credential or "")
        if settings is None:  # a ready access token (STOA's access_token key)
            return header_value(tool.credential or "", tool.name, tool.credential_env)
        return await self._keeper.token(tool.name, lambda: self._fetch_token(tool, settings))

    async def _fetch_token(self, tool: HttpToolEntry, settings: Mapping[str, object]) -> Token:
        missing = [k for k in ("tokenUrl", "clientId", "clientSecret") if not settings.get(k)]
        if missing:
            raise _CallFailed(
                f"oauth2: the JSON in {tool.credential_env} lacks {', '.join(missing)}"
            )
        problem = token_url_problem(str(settings["tokenUrl"]))
        if problem:
            raise _CallFailed(problem)
        client_id, secret = str(settings["clientId"]), str(settings["clientSecret"])
        # client_id in the body too: some servers (the MCP SDK's) look the client up there.
        form = {"grant_type": "client_credentials", "client_id": client_id}
        if settings.get("scope"):
            form["scope"] = str(settings["scope"])
        self.token_fetches += 1
        # RFC 6749 §2.3.1: form-urlencoded before base64 (httpx's auth= is not)
        authorization = basic_authorization(client_id, secret)
        self.scrubber.add(authorization)  # per tool: one value
        response = await self._client.post(
            str(settings["tokenUrl"]),
            data=form,
            headers={"Accept": "application/json", "Authorization": authorization},
        )
        try:
            answer = _json.read(response.content)
        except ValueError:
            answer = {}
        reply: dict[str, object] = (
            cast("dict[str, Any]", answer) if isinstance(answer, dict) else {}
        )
        token = reply.get("access_token")
        if not response.is_success or not isinstance(token, str):
            error = reply.get("error")
            raise _CallFailed(
                f"oauth2: the token endpoint answered HTTP {response.status_code}"
                + (f" ({str(error)[:60]})" if error else "")
                + " without an access_token"
            )
        self.scrubber.learn(token)
        return Token(token, lifetime(reply))

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


def _query(arguments: Mapping[str, object]) -> dict[str, Any]:
    """Query parameters: scalars as text, lists repeated, objects as JSON."""
    query: dict[str, object] = {}
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
        value = _json.read(text)
    except ValueError:
        return None
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def _query_overrides(tool: HttpToolEntry, arguments: Mapping[str, object]) -> str:
    """The arguments of a GET or DELETE that name a parameter of the configured URL's query
    (its ``apikey``, say): the model may add to that query, never change it."""
    if tool.method not in QUERY_METHODS:
        return ""
    configured = {key for key, _ in httpx.URL(tool.url).params.multi_items()}
    clash = sorted(configured & set(arguments))
    if not clash:
        return ""
    return f"{', '.join(clash)}: set by the tool's URL; arguments cannot override them"


def _sent_secrets(tool: HttpToolEntry) -> list[str]:
    """What calling ``tool`` may send of its credential: the value, an oauth2 document's
    client secret, and a basic credential's password."""
    value = tool.credential or ""
    found = [value, *tool.url_secrets, *(unquote_plus(s) for s in tool.url_secrets)]
    settings = oauth_settings(value) if tool.auth_type == "oauth2" else None
    if settings is not None:
        found.append(str(settings.get("clientSecret") or ""))
    elif tool.auth_type == "basic":
        found.append(value.partition(":")[2])
    return [item for item in found if item]


def _fetches_tokens(tool: HttpToolEntry) -> bool:
    """Whether the tool's token comes from a token endpoint (not a ready access token)."""
    return tool.auth_type == "oauth2" and oauth_settings(tool.credential or "") is not None
