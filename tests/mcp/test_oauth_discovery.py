"""Pure parts of OAuth: challenges, discovery URLs, resource checks, redirects, settings."""

from __future__ import annotations

import pytest
from mcp.shared.auth_utils import check_resource_allowed, resource_url_from_server_url

from langop_infra.mcp.oauth import OAuth2Auth, OAuthError
from langop_infra.mcp.oauth._discovery import Challenge, metadata_urls, prm_urls
from langop_infra.mcp.oauth._redirect import code_from_redirect
from langop_infra.mcp.oauth._tokens import PKCE


def test_challenge_reads_quoted_and_bare_parameters_of_the_bearer_scheme() -> None:
    header = (
        'DPoP algs="ES256", Bearer realm="x", error=insufficient_scope, '
        'scope="a:read b:write", resource_metadata="https://h/.well-known/x?q=\\"1\\""'
    )
    challenge = Challenge.parse(header)
    assert challenge == Challenge(
        scope=("a:read", "b:write"),
        resource_metadata='https://h/.well-known/x?q="1"',
        error="insufficient_scope",
    )
    assert Challenge.parse(None) == Challenge()


def test_protected_resource_metadata_urls_go_hint_path_then_root() -> None:
    assert prm_urls("https://h:8443/tools/mcp", "https://h/custom.json") == [
        "https://h/custom.json",
        "https://h:8443/.well-known/oauth-protected-resource/tools/mcp",
        "https://h:8443/.well-known/oauth-protected-resource",
    ]
    assert prm_urls("https://h/", None) == ["https://h/.well-known/oauth-protected-resource"]


def test_metadata_urls_insert_the_issuer_path_for_oauth_and_openid() -> None:
    assert metadata_urls("https://as/tenant1") == [
        "https://as/.well-known/oauth-authorization-server/tenant1",
        "https://as/.well-known/openid-configuration/tenant1",
        "https://as/tenant1/.well-known/openid-configuration",
    ]
    assert metadata_urls("https://as/") == [
        "https://as/.well-known/oauth-authorization-server",
        "https://as/.well-known/openid-configuration",
    ]


def test_resource_metadata_may_only_speak_for_its_own_origin_and_path() -> None:
    """The SDK's RFC 8707 helpers, as discovery uses them: the resource indicator sent, and
    which ``resource`` of protected resource metadata may speak for the server."""
    assert resource_url_from_server_url("HTTPS://Tool.Example/mcp#x") == "https://tool.example/mcp"

    def resource_allowed(server_url: str, claimed: str) -> bool:
        return check_resource_allowed(resource_url_from_server_url(server_url), claimed)

    assert resource_allowed("https://tool.example/mcp", "https://tool.example/mcp")
    assert resource_allowed("https://tool.example/mcp", "https://tool.example/")
    assert not resource_allowed("https://tool.example/mcp", "https://evil.example/mcp")
    assert not resource_allowed("https://tool.example/mcp", "https://tool.example/mcp2")
    assert not resource_allowed("https://tool.example/mcp", "http://tool.example/mcp")


def test_pkce_challenge_is_the_s256_of_the_verifier() -> None:
    import base64
    import hashlib

    pkce = PKCE.generate()
    assert 43 <= len(pkce.code_verifier) <= 128
    digest = hashlib.sha256(pkce.code_verifier.encode()).digest()
    assert pkce.code_challenge == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    assert pkce.code_verifier not in repr(pkce) and pkce.code_verifier not in str(pkce)


def test_redirect_code_needs_the_right_state_and_reports_refusals() -> None:
    assert code_from_redirect("http://127.0.0.1/cb?code=c1&state=s", "s") == "c1"
    with pytest.raises(OAuthError, match="wrong state"):
        code_from_redirect("http://127.0.0.1/cb?code=c1&state=other", "s")
    with pytest.raises(OAuthError, match="refused authorization: access_denied \\(no\\)"):
        code_from_redirect("http://127.0.0.1/cb?error=access_denied&error_description=no", "s")


def test_redirect_from_another_issuer_is_refused_before_its_error_is_shown() -> None:
    ok = "http://127.0.0.1/cb?code=c1&state=s&iss=https%3A%2F%2Fas.example"
    assert code_from_redirect(ok, "s", issuer="https://as.example") == "c1"
    assert code_from_redirect("http://127.0.0.1/cb?code=c1&state=s", "s", issuer="x") == "c1"
    forged = "http://127.0.0.1/cb?error=evil_text&state=s&iss=https%3A%2F%2FAS.example"
    with pytest.raises(OAuthError, match="iss mismatch") as caught:
        code_from_redirect(forged, "s", issuer="https://as.example")
    assert "evil_text" not in str(caught.value)
    with pytest.raises(OAuthError, match="iss missing"):
        code_from_redirect("http://127.0.0.1/cb?code=c&state=s", "s", issuer="x", iss_required=True)


def test_settings_are_checked_before_any_request() -> None:
    with pytest.raises(ValueError, match="needs its client_id"):
        OAuth2Auth(client_secret="x")
    with pytest.raises(ValueError, match="client_credentials grant needs"):
        OAuth2Auth(client_id="a", grant="client_credentials")
    with pytest.raises(ValueError, match="grant must be one of"):
        OAuth2Auth(grant="password")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="https URL with a path"):
        OAuth2Auth(client_metadata_url="http://example.com/client.json")
    assert "x-secret" not in repr(OAuth2Auth(client_id="a", client_secret="x-secret"))
