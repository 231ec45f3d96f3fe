"""``langop_infra.mcp.oauth._discovery``: the issuer comparison the client-secret pin rests on
(RFC 8414 §3.3: exact, a trailing slash forgiven), and the URLs discovery tries."""

from __future__ import annotations

import pytest

from langop_infra.mcp.oauth import _discovery as d


@pytest.mark.parametrize(
    ("pinned", "issuers"),
    [
        ("https://as.example/t1", ["https://as.example/t1"]),
        ("https://as.example/t1/", ["https://as.example/t1"]),
        ("https://as.example/t1", ["https://as.example/t1/"]),
        ("https://as.example/t1", ["https://other.example", "https://as.example/t1"]),
    ],
)
def test_the_same_issuer(pinned: str, issuers: list[str]) -> None:
    assert d.same_issuer(pinned, issuers) is True


@pytest.mark.parametrize(
    ("pinned", "issuers"),
    [
        ("https://as.example/t1", []),
        ("https://as.example/t1", ["https://as.example/t2"]),
        ("https://as.example/t1", ["https://as.example/t1/x"]),
        ("https://as.example/t1", ["http://as.example/t1"]),
        ("https://as.example/t1", ["https://as.example:8443/t1"]),
        ("https://as.example/t1", ["https://AS.example/t1"]),
        ("https://as.example", ["https://as.example.evil"]),
        # only slashes are forgiven at the end, nothing else
        ("https://as.example/tX", ["https://as.example/t"]),
        ("https://as.example/t", ["https://as.example/tX"]),
    ],
)
def test_another_issuer(pinned: str, issuers: list[str]) -> None:
    assert d.same_issuer(pinned, issuers) is False


def test_is_loopback() -> None:
    for url in ("http://localhost:1/", "http://a.localhost/", "http://127.0.0.2/", "http://[::1]/"):
        assert d.is_loopback(url), url
    for url in ("http://example.com/", "http://10.0.0.1/", "http://localhost.example/"):
        assert not d.is_loopback(url), url


def test_metadata_urls_are_path_aware_in_spec_order() -> None:
    assert d.metadata_urls("https://as.example/t1") == [
        "https://as.example/.well-known/oauth-authorization-server/t1",
        "https://as.example/.well-known/openid-configuration/t1",
        "https://as.example/t1/.well-known/openid-configuration",
    ]
