"""Agent-card signatures (spec §8.4): JWS over the RFC 8785 canonical card.

>>> signer = CardSigner.from_text(open("card-key.pem").read(), jku="https://me/jwks.json")
>>> signed = signer.sign(card)                                      # doctest: +SKIP
>>> CardVerifier(keys=signer.jwks()).verify(signed)                 # doctest: +SKIP

The signed payload is the card's 1.0 ProtoJSON without ``signatures``,
with empty strings, lists and objects left out (as a protobuf encoder
leaves them out), canonicalized by RFC 8785 (JCS). Each signature is a JWS
with a detached payload: ``protected`` (base64url JSON header with ``alg``,
``kid``, ``typ: JOSE`` and usually ``jku``) and ``signature``. This is the
form the official ``a2a-sdk`` signs and verifies, so cards signed by either
verify with the other.

Cryptography comes from PyJWT (the library the a2a-sdk uses for the same
job, with ``cryptography`` for the keys) and canonical JSON from
``rfc8785``; both are imported only when signing or verifying
(``pip install 'a2a-models[security]'``).

Verification takes the *trusted* keys (a JWKS from a file or a URL the
caller chose): a ``jku`` in a signature is not trusted by itself, since
whoever changed the card could change the key set it points to. Only
asymmetric algorithms are accepted (no ``none``, no HMAC), and the key's
type must match the algorithm.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal

from . import codec
from . import models as m
from .errors import A2AError, DecodeError, EncodeError

__all__ = [
    "ASYMMETRIC_ALGORITHMS",
    "CardSignatureError",
    "CardSigner",
    "CardVerifier",
    "VerifyMode",
    "fetch_jwks",
    "load_jwks",
    "signing_payload",
]

#: Algorithms a card signature may use: public-key ones only.
ASYMMETRIC_ALGORITHMS: Final = (
    "ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA",
)  # fmt: skip
_KEY_TYPES: Final = {"ES": "EC", "RS": "RSA", "PS": "RSA", "Ed": "OKP"}
VerifyMode = Literal["require", "verify-if-present", "ignore"]
_MISSING = "install the signing support: pip install 'a2a-models[security]'"


class CardSignatureError(A2AError):
    """A card's signature is missing or does not verify.

    ``reason`` is one of ``"unsigned"``, ``"unknown key"``, ``"bad signature"``
    and ``"card changed"`` (a well-formed signature by a trusted key that does
    not match the card: the card was changed after it was signed).
    """

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(f"agent card signature check failed ({reason}): {message}")
        self.reason = reason
        self.detail = message


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_decode(text: str) -> bytes:
    if not isinstance(text, str) or any(c in text for c in "+/= \n"):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _drop_empty(value: Any) -> Any:
    """``value`` without empty strings, lists and objects (``None``: it is empty itself)."""
    if isinstance(value, dict):
        out = {k: c for k, v in value.items() if (c := _drop_empty(v)) is not None}
        return out or None
    if isinstance(value, list):
        items = [c for v in value if (c := _drop_empty(v)) is not None]
        return items or None
    if value == "" or value is None:
        return None
    return value


def _canonical(value: Any) -> bytes:
    try:
        import rfc8785
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        raise ImportError(_MISSING) from exc
    try:
        return bytes(rfc8785.dumps(value))
    except (rfc8785.CanonicalizationError, ValueError, TypeError) as exc:
        raise CardSignatureError(
            f"the card has no canonical JSON form: {exc}", "bad signature"
        ) from None


def signing_payload(card: m.AgentCard | Mapping[str, Any]) -> bytes:
    """The bytes a signature covers: JCS of the 1.0 card without ``signatures`` or empty values.

    A card given as JSON (a mapping) is taken as it is (minus ``signatures``);
    an :class:`~a2a_models.models.AgentCard` is encoded as 1.0 ProtoJSON first.
    """
    wire: Any = codec.to_wire(card, "1.0") if isinstance(card, m.AgentCard) else dict(card)
    wire = {k: v for k, v in wire.items() if k != "signatures"}
    return _canonical(_drop_empty(wire) or {})


def load_jwks(text: str | bytes | Mapping[str, Any]) -> dict[str, Any]:
    """A JWKS (``{"keys": [...]}``) from its JSON; a single JWK becomes a set of one."""
    data = json.loads(text) if isinstance(text, str | bytes) else dict(text)
    if not isinstance(data, dict):
        raise ValueError("a JWKS is a JSON object")
    if "keys" not in data and "kty" in data:
        data = {"keys": [data]}
    keys = data.get("keys")
    if not isinstance(keys, list) or not all(isinstance(k, dict) for k in keys):
        raise ValueError("a JWKS needs a 'keys' list of JWK objects")
    return data


async def fetch_jwks(
    source: str, *, http_client: Any = None, timeout: float = 10.0
) -> dict[str, Any]:
    """A JWKS from a URL (``http(s)://``) or a file path; :class:`ValueError` if unusable."""
    if source.startswith(("http://", "https://")):
        import httpx

        client = http_client if http_client is not None else httpx.AsyncClient()
        try:
            response = await client.get(
                source, headers={"Accept": "application/json"}, timeout=timeout
            )
        except httpx.HTTPError as exc:
            raise ValueError(f"fetching the JWKS {source} failed: {exc!r}") from None
        finally:
            if http_client is None:
                await client.aclose()
        if response.status_code != 200:
            raise ValueError(f"fetching the JWKS {source} failed: HTTP {response.status_code}")
        text: str | bytes = response.content
    else:
        try:
            with open(source, "rb") as file:
                text = file.read()
        except OSError as exc:
            raise ValueError(f"cannot read the JWKS file {source!r}: {exc.strerror}") from None
    try:
        return load_jwks(text)
    except ValueError as exc:
        raise ValueError(f"{source} is not a JWKS: {exc}") from None


class CardSigner:
    """Signs cards with one private key (``alg`` and ``kid`` chosen from it unless given)."""

    def __init__(
        self,
        private_key: Any,
        *,
        alg: str | None = None,
        kid: str | None = None,
        jku: str | None = None,
    ) -> None:
        try:
            from jwt.algorithms import get_default_algorithms  # noqa: F401
        except ImportError as exc:  # pragma: no cover
            raise ImportError(_MISSING) from exc
        self._key = private_key
        self.alg = alg or _alg_for(private_key)
        if self.alg not in ASYMMETRIC_ALGORITHMS:
            raise ValueError(f"card signatures need a public-key algorithm, not {self.alg!r}")
        self._public = _public_jwk(private_key, self.alg)
        self.kid = kid or _thumbprint(self._public)
        self._public["kid"] = self.kid
        self.jku = jku

    @classmethod
    def from_text(cls, text: str, *, kid: str | None = None, jku: str | None = None) -> CardSigner:
        """A signer from a PEM private key or a private JWK (its ``kid``/``alg`` are used)."""
        stripped = text.strip()
        if stripped.startswith("{"):
            from jwt import PyJWK

            try:
                data = json.loads(stripped)
                jwk = PyJWK(data)
            except (ValueError, Exception) as exc:
                raise ValueError(f"the card-signing key is not a usable JWK: {exc}") from None
            if not hasattr(jwk.key, "private_bytes") and not hasattr(jwk.key, "sign"):
                raise ValueError("the card-signing JWK holds no private key")
            return cls(jwk.key, alg=data.get("alg"), kid=kid or data.get("kid"), jku=jku)
        from cryptography.hazmat.primitives.serialization import load_pem_private_key

        try:
            key = load_pem_private_key(stripped.encode(), password=None)
        except (ValueError, TypeError) as exc:
            raise ValueError(
                f"the card-signing key is neither a JWK nor an unencrypted PEM private key: {exc}"
            ) from None
        return cls(key, kid=kid, jku=jku)

    def public_jwk(self) -> dict[str, Any]:
        """The verification key as a public JWK (with ``kid``, ``alg`` and ``use: sig``)."""
        return dict(self._public)

    def jwks(self) -> dict[str, Any]:
        """``{"keys": [public JWK]}``, to publish at :attr:`jku`."""
        return {"keys": [self.public_jwk()]}

    def signature(self, card: m.AgentCard | Mapping[str, Any]) -> m.AgentCardSignature:
        """A signature over ``card`` (its existing signatures are not covered)."""
        from jwt import api_jws

        header: dict[str, Any] = {"alg": self.alg, "kid": self.kid, "typ": "JOSE"}
        if self.jku:
            header["jku"] = self.jku
        token = api_jws.encode(signing_payload(card), self._key, algorithm=self.alg, headers=header)
        protected, _, signature = token.split(".")
        return m.AgentCardSignature(protected=protected, signature=signature)

    def sign(self, card: m.AgentCard) -> m.AgentCard:
        """``card`` with this key's signature added (others are kept; an old one by this key
        is replaced)."""
        import attrs

        kept = tuple(s for s in card.signatures if _header_of(s).get("kid") != self.kid)
        return attrs.evolve(card, signatures=(*kept, self.signature(card)))


def _header_of(signature: m.AgentCardSignature | Mapping[str, Any]) -> dict[str, Any]:
    protected = (
        signature.protected
        if isinstance(signature, m.AgentCardSignature)
        else signature.get("protected")
    )
    try:
        header = json.loads(_b64url_decode(str(protected)))
    except (ValueError, UnicodeDecodeError):
        return {}
    return header if isinstance(header, dict) else {}


def _alg_for(key: Any) -> str:
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    if isinstance(key, ec.EllipticCurvePrivateKey):
        return {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}[key.curve.name]
    if isinstance(key, rsa.RSAPrivateKey):
        return "RS256"
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return "EdDSA"
    raise ValueError(f"unsupported card-signing key type {type(key).__name__}")


def _public_jwk(key: Any, alg: str) -> dict[str, Any]:
    from jwt.algorithms import get_default_algorithms

    algorithm = get_default_algorithms()[alg]
    jwk = json.loads(algorithm.to_jwk(key.public_key()))
    jwk.update({"alg": alg, "use": "sig"})
    return dict(jwk)


def _thumbprint(jwk: Mapping[str, Any]) -> str:
    """RFC 7638 JWK thumbprint (SHA-256, base64url)."""
    import hashlib

    members = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}
    required = {k: jwk[k] for k in members[str(jwk["kty"])]}
    data = json.dumps(required, separators=(",", ":"), sort_keys=True).encode()
    return _b64url(hashlib.sha256(data).digest())


def _signature_size(jwk: Mapping[str, Any], alg: str) -> int | None:
    """The byte length of a well-formed ``alg`` signature by ``jwk`` (``None``: unknown)."""
    fixed = {"ES256": 64, "ES384": 96, "ES512": 132, "EdDSA": 64}
    if alg in fixed:
        return fixed[alg]
    try:
        return len(_b64url_decode(str(jwk["n"]))) if jwk.get("kty") == "RSA" else None
    except (KeyError, ValueError):
        return None


class CardVerifier:
    """Checks card signatures against trusted keys.

    ``keys``: a JWKS (mapping) or JWK objects. ``mode``: ``"require"`` (an
    unsigned card is an error), ``"verify-if-present"`` (the default: an
    unsigned card passes, a signed one must verify) or ``"ignore"``. A card
    passes when at least one of its signatures verifies.
    """

    def __init__(
        self,
        keys: Mapping[str, Any] | Iterable[Mapping[str, Any]] = (),
        *,
        mode: VerifyMode = "verify-if-present",
        algorithms: Sequence[str] = ASYMMETRIC_ALGORITHMS,
    ) -> None:
        if mode not in ("require", "verify-if-present", "ignore"):
            raise ValueError(f"mode must be require, verify-if-present or ignore, not {mode!r}")
        unsafe = [a for a in algorithms if a not in ASYMMETRIC_ALGORITHMS]
        if unsafe:
            raise ValueError(f"not public-key algorithms: {unsafe}")
        jwks = load_jwks(keys) if isinstance(keys, Mapping) else {"keys": [dict(k) for k in keys]}
        self.keys: list[dict[str, Any]] = jwks["keys"]
        self.mode: VerifyMode = mode
        self.algorithms = tuple(algorithms)

    def verify(self, card: m.AgentCard | Mapping[str, Any]) -> str | None:
        """Check ``card``; the ``kid`` that verified (``None``: unsigned or ignored).

        Raises :class:`CardSignatureError` naming the reason. A card given as
        JSON is checked as received and, failing that, in its 1.0 re-encoding
        (a card served with 0.3 fields merged in verifies either way).
        """
        if self.mode == "ignore":
            return None
        if isinstance(card, m.AgentCard):
            signatures: list[Any] = list(card.signatures)
            payloads = [signing_payload(card)]
        else:
            raw = card.get("signatures") or []
            signatures = list(raw) if isinstance(raw, list) else []
            payloads = [signing_payload(card)]
            # Signers that keep empty values sign the card exactly as served.
            exact = _canonical({k: v for k, v in card.items() if k != "signatures"})
            if exact not in payloads:
                payloads.append(exact)
            try:
                model = codec.from_wire(m.AgentCard, dict(card), "1.0")
            except (DecodeError, EncodeError, ValueError):
                model = None
            if model is not None and (again := signing_payload(model)) not in payloads:
                payloads.append(again)
        if not signatures:
            if self.mode == "require":
                raise CardSignatureError("the agent card is not signed", "unsigned")
            return None
        problems: list[CardSignatureError] = []
        for i, signature in enumerate(signatures):
            try:
                return self._check(i, signature, payloads)
            except CardSignatureError as exc:
                problems.append(exc)
        rank = {"card changed": 0, "bad signature": 1, "unknown key": 2}
        worst = min(problems, key=lambda p: rank.get(p.reason, 3))
        if len(problems) > 1:
            raise CardSignatureError(
                "no signature of the card verifies: " + "; ".join(p.detail for p in problems),
                worst.reason,
            )
        raise worst

    def _check(self, i: int, signature: Any, payloads: Sequence[bytes]) -> str:
        import jwt
        from jwt import PyJWK

        where = f"signatures[{i}]"
        protected: Any
        sig: Any
        if isinstance(signature, m.AgentCardSignature):
            protected, sig = signature.protected, signature.signature
        elif isinstance(signature, Mapping):
            protected, sig = signature.get("protected"), signature.get("signature")
        else:
            raise CardSignatureError(f"{where} is not a signature object", "bad signature")
        if not isinstance(protected, str) or not isinstance(sig, str):
            raise CardSignatureError(
                f"{where} needs protected and signature strings", "bad signature"
            )
        header = _header_of({"protected": protected})
        if not header:
            raise CardSignatureError(
                f"{where}: the protected header is not base64url JSON", "bad signature"
            )
        alg, kid = header.get("alg"), header.get("kid")
        if alg not in self.algorithms:
            raise CardSignatureError(
                f"{where}: algorithm {alg!r} is not accepted (only {', '.join(self.algorithms)})",
                "bad signature",
            )
        jwk = next((k for k in self.keys if k.get("kid") == kid), None)
        if jwk is None:
            raise CardSignatureError(f"{where}: no trusted key has kid {kid!r}", "unknown key")
        expected = _KEY_TYPES.get(str(alg)[:2])
        if jwk.get("kty") != expected:
            raise CardSignatureError(
                f"{where}: key {kid!r} is a {jwk.get('kty')} key, not usable with {alg}",
                "bad signature",
            )
        try:
            key = PyJWK({k: v for k, v in jwk.items() if k != "alg"}, algorithm=str(alg))
            raw = _b64url_decode(sig)
        except (jwt.PyJWTError, ValueError) as exc:
            raise CardSignatureError(f"{where}: {exc}", "bad signature") from None
        size = _signature_size(jwk, str(alg))
        if not raw or (size is not None and len(raw) != size):
            raise CardSignatureError(
                f"{where}: the signature is malformed ({len(raw)} bytes, {alg} makes {size})",
                "bad signature",
            )
        for payload in payloads:
            token = f"{protected}.{_b64url(payload)}.{sig}"
            try:
                jwt.api_jws.decode_complete(token, key, algorithms=[str(alg)])
            except jwt.InvalidSignatureError:
                continue
            except jwt.PyJWTError as exc:
                raise CardSignatureError(f"{where}: {exc}", "bad signature") from None
            return str(kid)
        raise CardSignatureError(
            f"{where}: the signature by key {kid!r} does not match the card: "
            "the card was changed after it was signed",
            "card changed",
        )
