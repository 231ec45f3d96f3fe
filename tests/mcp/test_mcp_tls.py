"""HTTPS: verification on by default, a CA bundle option, and client certificates.

The certificates are made on the fly (a throwaway CA signing a 127.0.0.1 server certificate
and a client certificate) with ``cryptography``.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langop_infra.mcp import ClientOptions, MCPError, ServerUnreachable, fetch_tool_listing

x509 = pytest.importorskip("cryptography.x509")
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID  # noqa: E402

pytestmark = pytest.mark.anyio


def _write_pair(directory: Path, name: str, cert: Any, key: Any) -> tuple[str, str]:
    cert_path, key_path = directory / f"{name}.pem", directory / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return str(cert_path), str(key_path)


def _certificate(
    subject: str, issuer_cert: Any, issuer_key: Any, *, ca: bool = False, server: bool = False
) -> tuple[Any, Any]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer_cert.subject if issuer_cert is not None else name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        ).add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
    elif not ca:
        builder = builder.add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False
        )
    return builder.sign(issuer_key or key, hashes.SHA256()), key


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    directory = tmp_path_factory.mktemp("pki")
    ca_cert, ca_key = _certificate("test CA", None, None, ca=True)
    server_cert, server_key = _certificate("127.0.0.1", ca_cert, ca_key, server=True)
    client_cert, client_key = _certificate("agent", ca_cert, ca_key)
    return {
        "ca": _write_pair(directory, "ca", ca_cert, ca_key)[0],
        "server": _write_pair(directory, "server", server_cert, server_key),
        "client": _write_pair(directory, "client", client_cert, client_key),
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
