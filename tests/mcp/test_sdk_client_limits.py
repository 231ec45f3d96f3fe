"""Why parts of ``langop_infra/mcp/`` are ours and not the official SDK's: each test pins one
behaviour of the installed ``mcp`` client (2.3.0) that the adapter works around, and its
docstring names the piece of ours it keeps alive. When a test here fails after an SDK
upgrade, the SDK has caught up: that piece can go, and docs/mcp-client.md says less.

The SDK's ``ClientSession`` runs over in-memory streams against a scripted peer (a stand-in
server written here: no real server sends a malformed listing on purpose).
"""

from __future__ import annotations

import inspect
from typing import Any

import anyio
import mcp_types
import pytest
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.auth.oauth2 import PKCEParameters
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.auth import OAuthMetadata, OAuthToken
from mcp.shared.message import SessionMessage
from pydantic import BaseModel, ConfigDict, ValidationError

INITIALIZED = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "scripted", "version": "1"},
}
# A listing whose second tool has no name: schema sync refuses it with its own message.
NAMELESS = {"tools": [{"name": "a", "inputSchema": {"type": "object"}}, {"description": "x"}]}


class AnyResult(BaseModel):
    """The most permissive result type ``send_request`` takes: any object at all."""

    model_config = ConfigDict(extra="allow")


async def _listing_through_sdk(listing: dict[str, Any], *, raw: bool) -> object:
    """What ``tools/list`` through the SDK's ``ClientSession`` gives (its result, or the
    exception it raised), a scripted peer answering."""
    to_server, from_client = anyio.create_memory_object_stream[SessionMessage](8)
    to_client, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](8)

    async def peer() -> None:
        async for item in from_client:
            message = item.message.model_dump(by_alias=True, mode="json", exclude_none=True)
            if "id" in message:
                result = INITIALIZED if message["method"] == "initialize" else listing
                answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
                parsed = mcp_types.jsonrpc_message_adapter.validate_python(answer)
                await to_client.send(SessionMessage(parsed))

    async with anyio.create_task_group() as group:
        group.start_soon(peer)
        try:
            async with ClientSession(from_server, to_server) as session:
                await session.initialize()
                try:
                    if raw:
                        request = mcp_types.ListToolsRequest()
                        return await session.send_request(request, AnyResult)
                    return await session.list_tools()
                except ValidationError as exc:
                    return exc
        finally:
            group.cancel_scope.cancel()


def test_the_sdk_session_refuses_a_malformed_listing_with_a_pydantic_error() -> None:
    """Keeps ``_session.py`` and ``_paging.py`` on our own requests: schema sync records a
    listing as sent and refuses a malformed one with "answered tools/list without a list of
    named tools" (tests/test_schema_sync_faults.py), not a pydantic dump."""
    refused = anyio.run(lambda: _listing_through_sdk(NAMELESS, raw=False))
    assert isinstance(refused, ValidationError)
    assert "tools.1.name\n  Field required" in str(refused)


def test_even_a_raw_result_type_does_not_get_the_result_unvalidated() -> None:
    """The same: ``send_request`` validates the result against the method's own model
    whatever ``result_type`` it is handed, so no result reaches us as the server sent it."""
    valid = {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}
    taken = anyio.run(lambda: _listing_through_sdk(valid, raw=True))
    assert isinstance(taken, AnyResult) and taken.model_dump() == valid  # the type takes all
    refused = anyio.run(lambda: _listing_through_sdk(NAMELESS, raw=True))
    assert isinstance(refused, ValidationError)
    assert "tools.1.name\n  Field required" in str(refused)


def test_the_sdk_session_numbers_requests_itself() -> None:
    """Keeps ``_bridge.py``'s errors by request id with our own ids: the bridge files the
    actionable error of each failed HTTP exchange (a 401 quoting ``WWW-Authenticate``, a cap,
    a confinement refusal) under the JSON-RPC id it carried, and ``send_request`` takes no id
    to match it with."""
    parameters = inspect.signature(ClientSession.send_request).parameters
    assert list(parameters) == [
        "self",
        "request",
        "result_type",
        "request_read_timeout_seconds",
        "metadata",
        "progress_callback",
    ]


def test_sdk_oauth_metadata_needs_an_authorization_endpoint() -> None:
    """Keeps ``oauth/_discovery.py``'s own metadata reading: RFC 8414 lets a server that
    grants client credentials only leave out ``authorization_endpoint`` (our test
    authorization server does), and the SDK's model, which its providers read metadata
    into, requires it."""
    document = {
        "issuer": "https://as.example",
        "token_endpoint": "https://as.example/token",
        "grant_types_supported": ["client_credentials"],
        "response_types_supported": [],
    }
    with pytest.raises(ValidationError, match="authorization_endpoint\n  Field required"):
        OAuthMetadata.model_validate(document)


def test_sdk_oauth_models_print_their_secrets() -> None:
    """Keeps ``oauth/_tokens.py``'s own token holder: SECURITY.md promises tokens never in a
    log line or error, and the SDK's models show the access token, the refresh token and
    the PKCE verifier in their repr, which any ``%r`` or traceback prints."""
    token = OAuthToken(access_token="canary-access", refresh_token="canary-refresh")
    assert "canary-access" in repr(token) and "canary-refresh" in repr(token)
    pkce = PKCEParameters.generate()
    assert pkce.code_verifier in repr(pkce)


def test_an_sdk_oauth_provider_serves_one_server() -> None:
    """Keeps ``oauth/_flow.py``'s ``OAuth2Auth``, whose tokens are kept per server origin
    within one ``auth=`` (the CLI's and the agent's sessions to several tools): the SDK's
    provider is made for one ``server_url``."""
    parameters = inspect.signature(ClientCredentialsOAuthProvider.__init__).parameters
    assert parameters["server_url"].default is inspect.Parameter.empty


def test_the_sdk_stdio_client_has_no_bound_on_a_line() -> None:
    """Keeps ``_stdio.py``: a stdio server's line is read up to ``max_response_bytes`` and
    refused beyond (tests/mcp/test_mcp_cli_tracebacks.py), where the SDK's ``stdio_client`` joins
    chunks until a newline comes, with no setting to bound them."""
    assert list(StdioServerParameters.model_fields) == [
        "command",
        "args",
        "env",
        "cwd",
        "encoding",
        "encoding_error_handler",
    ]
    assert list(inspect.signature(stdio_client).parameters) == ["server", "errlog"]
