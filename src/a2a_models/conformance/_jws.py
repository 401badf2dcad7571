"""JCS (RFC 8785) canonical JSON and JWS (RFC 7515) verification of agent-card signatures.

Verification needs the optional ``cryptography`` package; without it the
signature check reports a skip.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable
from typing import Any

__all__ = ["b64url_decode", "canonicalize", "verify_jws"]


def b64url_decode(value: str) -> bytes:
    """Base64url (padding optional); raises ValueError."""
    if not isinstance(value, str) or any(c in value for c in "+/ \n"):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))


def _number(value: float) -> str:
    if math.isnan(value) or math.isinf(value):
        raise ValueError("NaN and Infinity are not JSON")
    if value == 0:
        return "0"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" in text:
        mant, exp = text.split("e")
        sign = "-" if exp.startswith("-") else "+"
        text = f"{mant}e{sign}{exp.lstrip('+-').lstrip('0') or '0'}"
    return text


def canonicalize(value: Any) -> str:
    """The RFC 8785 canonical form of a JSON value."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ",".join(canonicalize(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: k.encode("utf-16-be"))
        return "{" + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{canonicalize(value[k])}"
                              for k in keys) + "}"
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def verify_jws(alg: str, jwk: dict[str, Any], signing_input: bytes, signature: bytes) -> bool:
    """Whether ``signature`` over ``signing_input`` verifies with ``jwk``.

    Raises ImportError without ``cryptography`` and NotImplementedError for
    an algorithm or key type it does not handle.
    """
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa, utils

    hash_for: dict[str, Callable[[], hashes.HashAlgorithm]] = {
        "256": hashes.SHA256, "384": hashes.SHA384, "512": hashes.SHA512}
    try:
        if alg.startswith("ES") and jwk.get("kty") == "EC":
            curves: dict[str, Callable[[], ec.EllipticCurve]] = {
                "P-256": ec.SECP256R1, "P-384": ec.SECP384R1, "P-521": ec.SECP521R1}
            curve = curves[str(jwk.get("crv"))]()
            x = int.from_bytes(b64url_decode(str(jwk["x"])), "big")
            y = int.from_bytes(b64url_decode(str(jwk["y"])), "big")
            ec_key = ec.EllipticCurvePublicNumbers(x, y, curve).public_key()
            half = len(signature) // 2
            der = utils.encode_dss_signature(
                int.from_bytes(signature[:half], "big"), int.from_bytes(signature[half:], "big")
            )
            ec_key.verify(der, signing_input, ec.ECDSA(hash_for[alg[2:]]()))
            return True
        if alg[:2] in ("RS", "PS") and jwk.get("kty") == "RSA":
            n = int.from_bytes(b64url_decode(str(jwk["n"])), "big")
            e = int.from_bytes(b64url_decode(str(jwk["e"])), "big")
            rsa_key = rsa.RSAPublicNumbers(e, n).public_key()
            h = hash_for[alg[2:]]()
            pad: padding.AsymmetricPadding = (
                padding.PKCS1v15()
                if alg.startswith("RS")
                else padding.PSS(mgf=padding.MGF1(h), salt_length=h.digest_size)
            )
            rsa_key.verify(signature, signing_input, pad, h)
            return True
        if alg in ("EdDSA", "Ed25519") and jwk.get("kty") == "OKP" and jwk.get("crv") == "Ed25519":
            ed_key = ed25519.Ed25519PublicKey.from_public_bytes(b64url_decode(str(jwk["x"])))
            ed_key.verify(signature, signing_input)
            return True
    except InvalidSignature:
        return False
    except KeyError as exc:
        raise NotImplementedError(f"unsupported {alg} key: missing {exc}") from None
    raise NotImplementedError(f"algorithm {alg} with key type {jwk.get('kty')} is not supported")
