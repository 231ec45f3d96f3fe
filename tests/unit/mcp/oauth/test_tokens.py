"""``langop_infra.mcp.oauth._tokens``: the private_key_jwt client assertion (RFC 7523), signed
by the SDK's ``SignedJWTParameters``, and its failure told without the key."""

from __future__ import annotations

import asyncio

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from langop_infra.mcp.oauth import OAuthError
from langop_infra.mcp.oauth._discovery import AuthorizationServer
from langop_infra.mcp.oauth._tokens import Client, _client_assertion

ISSUER = "https://as.example/t1"
SERVER = AuthorizationServer("https://mcp.example/mcp", ISSUER, {"issuer": ISSUER})


def test_the_assertion_names_the_client_and_the_issuer_and_lives_five_minutes() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    client = Client("ci", private_key=pem, auth_method="private_key_jwt")
    assertion = asyncio.run(_client_assertion(client, SERVER))
    claims = jwt.decode(assertion, key.public_key(), algorithms=["ES256"], audience=ISSUER)
    assert (claims["iss"], claims["sub"], claims["aud"]) == ("ci", "ci", ISSUER)
    assert claims["exp"] - claims["iat"] == 300
    assert jwt.get_unverified_header(assertion)["alg"] == "ES256"


def test_a_key_that_cannot_sign_is_told_without_the_key() -> None:
    client = Client("ci", private_key="not-a-pem-canary-7d1", auth_method="private_key_jwt")
    with pytest.raises(OAuthError) as caught:
        asyncio.run(_client_assertion(client, SERVER))
    said = "cannot sign the client assertion with the ES256 private key"
    assert str(caught.value).startswith(said)
    assert "not-a-pem-canary-7d1" not in str(caught.value)
