"""Keys and certificates generated for a test (``cryptography``); nothing is checked in."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID
from jwt.algorithms import ECAlgorithm, RSAAlgorithm


def ec_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def pem(key: Any) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


def public_jwk(key: Any, kid: str) -> dict[str, Any]:
    algorithm = ECAlgorithm if isinstance(key, ec.EllipticCurvePrivateKey) else RSAAlgorithm
    jwk = json.loads(algorithm.to_jwk(key.public_key()))
    jwk["kid"] = kid
    return dict(jwk)


def private_jwk(key: Any, kid: str, alg: str) -> str:
    algorithm = ECAlgorithm if isinstance(key, ec.EllipticCurvePrivateKey) else RSAAlgorithm
    jwk = json.loads(algorithm.to_jwk(key))
    jwk.update({"kid": kid, "alg": alg})
    return json.dumps(jwk)


def _name(common: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, common),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "a2a-models tests"),
        ]
    )


def certificate(
    subject: str,
    key: Any,
    issuer: tuple[x509.Certificate, Any] | None = None,
    *,
    ca: bool = False,
    server: bool = False,
) -> x509.Certificate:
    now = dt.datetime.now(dt.UTC)
    issuer_cert, issuer_key = issuer if issuer else (None, key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer_cert.subject if issuer_cert else _name(subject))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.DNSName("localhost"),
                    x509.IPAddress(__import__("ipaddress").ip_address("127.0.0.1")),
                ]
            ),
            critical=False,
        )
    return builder.sign(issuer_key, hashes.SHA256())


def write_pki(directory: Path) -> dict[str, Path]:
    """A CA, a server certificate for 127.0.0.1, client certificates CN=alice and CN=bob, and
    CN=mallory from another CA, as files."""
    ca_key = ec_key()
    ca = certificate("test CA", ca_key, ca=True)
    server_key = ec_key()
    server = certificate("127.0.0.1", server_key, (ca, ca_key), server=True)
    client_key = ec_key()
    client = certificate("alice", client_key, (ca, ca_key))
    bob_key = ec_key()
    bob = certificate("bob", bob_key, (ca, ca_key))
    other_ca_key = ec_key()
    other_ca = certificate("other CA", other_ca_key, ca=True)
    mallory_key = ec_key()
    mallory = certificate("mallory", mallory_key, (other_ca, other_ca_key))
    files = {
        "ca": (ca, None),
        "server": (server, server_key),
        "client": (client, client_key),
        "mallory": (mallory, mallory_key),
        "bob": (bob, bob_key),
    }
    out: dict[str, Path] = {}
    for name, (cert, key) in files.items():
        out[name] = directory / f"{name}.crt"
        out[name].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        if key is not None:
            out[name + "_key"] = directory / f"{name}.key"
            out[name + "_key"].write_text(pem(key))
    return out
