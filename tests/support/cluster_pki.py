"""A throwaway cluster CA, as every real API server has: its serving certificate and a client
certificate, made in the test with ``cryptography`` (nothing is read from the machine)."""

from __future__ import annotations

import base64
import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class ClusterPKI:
    """PEM files of one cluster: the CA, the API server's serving pair, a client pair."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    client_user: str

    def data(self, path: Path) -> str:
        """A file as kubeconfig's ``*-data`` fields hold it: base64 of the PEM."""
        return base64.b64encode(path.read_bytes()).decode()

    def uvicorn(self) -> dict[str, Any]:
        """``serve()`` settings for HTTPS with this serving pair."""
        return {"ssl_certfile": str(self.server_cert), "ssl_keyfile": str(self.server_key)}


def _pem(directory: Path, name: str, cert: Any, key: Any) -> tuple[Path, Path]:
    cert_path, key_path = directory / f"{name}.crt", directory / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def _signed(subject: str, issuer: Any, issuer_key: Any, extensions: list[Any]) -> Any:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer.subject if issuer is not None else name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
    )
    for extension, critical in extensions:
        builder = builder.add_extension(extension, critical=critical)
    return builder.sign(issuer_key or key, hashes.SHA256()), key


def make_cluster_pki(
    directory: Path, names: tuple[str, ...] = ("kubernetes.default.svc",), ips: tuple[str, ...] = ()
) -> ClusterPKI:
    """A CA, a serving certificate for ``names`` and ``ips`` (as kubeadm's lists the API
    server's names), and a client certificate for user ``deployer`` in group
    ``system:masters`` (CN and O, as Kubernetes reads them)."""
    ca_cert, ca_key = _signed(
        "kubernetes", None, None, [(x509.BasicConstraints(ca=True, path_length=None), True)]
    )
    sans = [x509.DNSName(n) for n in names] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    server = _signed(
        "kube-apiserver",
        ca_cert,
        ca_key,
        [
            (x509.BasicConstraints(ca=False, path_length=None), True),
            (x509.SubjectAlternativeName(sans), False),
            (x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False),
        ],
    )
    client = _signed(
        "deployer",
        ca_cert,
        ca_key,
        [
            (x509.BasicConstraints(ca=False, path_length=None), True),
            (x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), False),
        ],
    )
    ca_path, _ = _pem(directory, "ca", ca_cert, ca_key)
    server_cert, server_key = _pem(directory, "apiserver", *server)
    client_cert, client_key = _pem(directory, "deployer", *client)
    return ClusterPKI(ca_path, server_cert, server_key, client_cert, client_key, "deployer")
