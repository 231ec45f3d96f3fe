"""``langop_infra.mcp.oauth._flow``: the issuer pin (#28 §3). The client secret or key goes
only to the authorization server whose metadata names the pinned issuer; without a secret or
key, or without a pin, there is nothing to refuse. tests/test_oauth_issuer.py shows the same
over two loopback origins."""

from __future__ import annotations

import pytest

from langop_infra.mcp.oauth import OAuth2Auth, OAuthError
from langop_infra.mcp.oauth._discovery import AuthorizationServer

PINNED = "https://as.example/t1"
SECRET = "pin-canary-9f1d"


def server(issuer: str) -> AuthorizationServer:
    metadata = {"issuer": issuer, "token_endpoint_auth_methods_supported": ["client_secret_basic"]}
    return AuthorizationServer("https://mcp.example/mcp", issuer, metadata)


def test_a_secret_is_refused_to_another_issuer_naming_both() -> None:
    auth = OAuth2Auth(client_id="ci", client_secret=SECRET, issuer=PINNED)
    with pytest.raises(OAuthError) as caught:
        auth._check_pin(server("https://evil.example/t1"))
    assert str(caught.value) == (
        "the MCP server names the authorization server https://evil.example/t1, but the "
        "client secret is pinned to https://as.example/t1 (schemaSync.auth.issuer, "
        "--oauth-issuer); refusing to send it elsewhere. If that server is trusted, pin its "
        "issuer URL instead"
    )
    assert caught.value.target == "https://evil.example/t1"
    assert SECRET not in str(caught.value)


def test_a_private_key_is_pinned_too() -> None:
    auth = OAuth2Auth(client_id="ci", private_key="-----BEGIN KEY-----", issuer=PINNED)
    with pytest.raises(OAuthError):
        auth._check_pin(server("https://evil.example/t1"))


def test_the_pinned_issuer_passes_with_or_without_a_trailing_slash() -> None:
    auth = OAuth2Auth(client_id="ci", client_secret=SECRET, issuer=PINNED + "/")
    assert auth._check_pin(server(PINNED)) is None
    client = auth._configured_client(server(PINNED))
    assert (client.client_id, client.client_secret, client.auth_method) == (
        "ci",
        SECRET,
        "client_secret_basic",
    )


def test_the_pin_is_checked_before_a_client_is_configured() -> None:
    auth = OAuth2Auth(client_id="ci", client_secret=SECRET, issuer=PINNED)
    with pytest.raises(OAuthError, match="refusing to send it elsewhere"):
        auth._configured_client(server("https://evil.example/t1"))


def test_without_a_pin_or_without_a_secret_nothing_is_refused() -> None:
    unpinned = OAuth2Auth(client_id="ci", client_secret=SECRET)
    assert unpinned._check_pin(server("https://any.example")) is None
    public = OAuth2Auth(client_id="ci", issuer=PINNED)
    assert public._check_pin(server("https://any.example")) is None
