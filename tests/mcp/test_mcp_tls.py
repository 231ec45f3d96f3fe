"""HTTPS: verification on by default, a CA bundle option, and client certificates.

The certificates are made on the fly (a throwaway CA signing a 127.0.0.1 server certificate
and a client certificate) with ``cryptography``, by tests/support/cluster_pki.py.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langop_infra.mcp import ClientOptions, MCPError, ServerUnreachable, fetch_tool_listing

pytest.importorskip("cryptography.x509")
from tests.support.cluster_pki import make_cluster_pki

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    made = make_cluster_pki(tmp_path_factory.mktemp("pki"), names=(), ips=("127.0.0.1",))
    return {
        "ca": str(made.ca),
        "server": (str(made.server_cert), str(made.server_key)),
        "client": (str(made.client_cert), str(made.client_key)),
    }


@pytest.fixture(scope="module")
def https_url(pki: dict[str, Any], serve_app: Any, server_module: Any) -> Iterator[str]:
    certfile, keyfile = pki["server"]
    app = server_module("seed").build_app()
    with serve_app(app, ssl_certfile=certfile, ssl_keyfile=keyfile) as base:
        yield base + "/mcp"


@pytest.fixture(scope="module")
def mtls_url(pki: dict[str, Any], serve_app: Any, server_module: Any) -> Iterator[str]:
    certfile, keyfile = pki["server"]
    app = server_module("seed").build_app()
    with serve_app(
        app,
        ssl_certfile=certfile,
        ssl_keyfile=keyfile,
        ssl_ca_certs=pki["ca"],
        ssl_cert_reqs=ssl.CERT_REQUIRED,
    ) as base:
        yield base + "/mcp"


async def test_untrusted_certificate_is_refused_by_default(https_url: str) -> None:
    with pytest.raises(ServerUnreachable) as caught:
        await fetch_tool_listing(https_url, ClientOptions(timeout=5))
    assert f"TLS certificate of {https_url} not trusted" in str(caught.value)
    assert "pass its CA bundle" in str(caught.value)


async def test_ca_bundle_makes_it_trusted(https_url: str, pki: dict[str, Any]) -> None:
    listing = await fetch_tool_listing(https_url, ClientOptions(timeout=5, verify=pki["ca"]))
    assert [tool["name"] for tool in listing.tools] == ["remember", "recall"]


async def test_client_certificate(mtls_url: str, pki: dict[str, Any]) -> None:
    without = ClientOptions(timeout=5, verify=pki["ca"], connect_retries=0)
    with pytest.raises(MCPError) as caught:
        await fetch_tool_listing(mtls_url, without)
    assert caught.value.kind in {"unreachable", "transport"}
    assert "127.0.0.1" in str(caught.value)
    assert "client certificate" in str(caught.value)
    with_cert = ClientOptions(timeout=5, verify=pki["ca"], cert=tuple(pki["client"]))
    listing = await fetch_tool_listing(mtls_url, with_cert)
    assert [tool["name"] for tool in listing.tools] == ["remember", "recall"]


async def test_missing_ca_bundle_file_is_reported(https_url: str, tmp_path: Path) -> None:
    options = ClientOptions(verify=str(tmp_path / "missing-ca.pem"))
    with pytest.raises(MCPError) as caught:
        await fetch_tool_listing(https_url, options)
    assert caught.value.kind == "transport"
    assert "cannot load TLS files" in str(caught.value)
