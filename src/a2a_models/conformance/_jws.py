"""Card-signature helpers of the conformance checks: thin views of :mod:`a2a_models.signing`.

One verifier for the whole package: the checks verify with the same
:class:`~a2a_models.signing.CardVerifier` the discovery client and
``a2a-models card --verify-with`` use (PyJWT for the JWS, ``rfc8785`` for
the canonical JSON: the ``security`` extra). Without them the signature
check reports a skip.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

__all__ = ["b64url_decode", "canonicalize", "signing_available", "verify_card", "verify_jws"]


def b64url_decode(value: str) -> bytes:
    """Base64url (padding optional); raises ValueError."""
    if not isinstance(value, str) or any(c in value for c in "+/ \n"):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))


def signing_available() -> bool:
    """Whether the ``security`` extra (PyJWT with cryptography, rfc8785) is installed."""
    try:
        import cryptography  # noqa: F401
        import jwt  # noqa: F401
        import rfc8785  # noqa: F401
    except ImportError:
        return False
    return True


def canonicalize(value: Any) -> str:
    """The RFC 8785 canonical form of a JSON value."""
    import rfc8785

    return bytes(rfc8785.dumps(value)).decode("utf-8")


def verify_jws(alg: str, jwk: dict[str, Any], signing_input: bytes, signature: bytes) -> bool:
    """Whether ``signature`` over ``signing_input`` verifies with ``jwk`` (public-key ``alg`` only).

    Raises NotImplementedError for an algorithm or key it does not accept.
    """
    from jwt.algorithms import get_default_algorithms
    from jwt.exceptions import InvalidKeyError

    from ..signing import ASYMMETRIC_ALGORITHMS

    if alg not in ASYMMETRIC_ALGORITHMS:
        raise NotImplementedError(f"algorithm {alg!r} is not a public-key algorithm")
    algorithm = get_default_algorithms()[alg]
    try:
        key = algorithm.from_jwk(dict(jwk))
    except (InvalidKeyError, ValueError, KeyError) as exc:
        raise NotImplementedError(f"{alg} with key type {jwk.get('kty')}: {exc}") from None
    return bool(algorithm.verify(signing_input, key, signature))


def verify_card(card: Mapping[str, Any], jwks: Mapping[str, Any] | list[dict[str, Any]]) -> str:
    """The ``kid`` that verifies one of ``card``'s signatures with ``jwks``.

    Raises :class:`~a2a_models.signing.CardSignatureError` (its ``reason``
    says why) when none does or the card is unsigned.
    """
    from ..signing import CardVerifier

    kid = CardVerifier(jwks, mode="require").verify(card)
    assert kid is not None
    return kid
