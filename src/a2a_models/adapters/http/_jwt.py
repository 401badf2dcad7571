"""OAuth 2 / OpenID Connect access tokens: JWTs checked against the issuer's keys.

>>> auth = JWTAuthenticator(issuer="https://id.example.com", audience="https://agent.example.com")

The keys come from the issuer's discovery document
(``{issuer}/.well-known/openid-configuration`` → ``jwks_uri``), a JWKS URL or
a JWKS file. They are cached (``max_age``, default 10 minutes) and fetched
again when a token names an unknown ``kid`` (at most once per
``refresh_cooldown`` seconds, so random ``kid`` values cannot make the
server hammer the issuer).

A token is accepted when its signature verifies with the issuer key its
``kid`` names, using a public-key algorithm matching that key's type (``none``
and HMAC are refused, so an RSA public key can never be used as an HMAC
secret), and its ``iss``, ``aud``, ``exp`` and ``nbf`` are right (with
``leeway`` seconds for clock skew). The owner of the caller's tasks is the
``owner_claim`` (default ``sub``); the ``scope`` (space-separated) or ``scp``
(list) claim gives the scopes a card's security requirements are checked
against. Verification is PyJWT's.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs
import httpx
from starlette.requests import HTTPConnection

from ... import models as m
from ...signing import ASYMMETRIC_ALGORITHMS, load_jwks
from ._auth import AuthenticationError, PermissionDeniedError, Principal

__all__ = ["JWKSSource", "JWTAuthenticator", "with_oidc_security"]

_KEY_TYPES = {"ES": "EC", "RS": "RSA", "PS": "RSA", "Ed": "OKP"}
DISCOVERY_PATH = "/.well-known/openid-configuration"


class JWKSSource:
    """An issuer's signing keys: from its discovery document, a JWKS URL or a JWKS file.

    ``source``: ``None`` (discover from ``issuer``), an ``http(s)://`` URL or a
    file path.
    """

    def __init__(
        self,
        issuer: str,
        source: str | None = None,
        *,
        max_age: float = 600.0,
        refresh_cooldown: float = 2.0,
        timeout: float = 10.0,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self.issuer = issuer
        self.source = source
        self.max_age = max_age
        self.refresh_cooldown = refresh_cooldown
        self.timeout = timeout
        self._http = http_client
        self._keys: dict[str, dict[str, Any]] = {}
        self._fetched = -float("inf")
        self._lock = asyncio.Lock()

    async def _get(self, url: str) -> Any:
        client = self._http or httpx.AsyncClient(trust_env=False, follow_redirects=False)
        try:
            response = await client.get(
                url, headers={"Accept": "application/json"}, timeout=self.timeout
            )
        except httpx.HTTPError as exc:
            raise ValueError(f"fetching {url} failed: {type(exc).__name__}") from None
        finally:
            if self._http is None:
                await client.aclose()
        if response.status_code != 200:
            raise ValueError(f"fetching {url} failed: HTTP {response.status_code}")
        try:
            return json.loads(response.content)
        except ValueError:
            raise ValueError(f"{url} did not answer JSON") from None

    async def _load(self) -> dict[str, dict[str, Any]]:
        source = self.source
        if source is None:
            document = await self._get(self.issuer.rstrip("/") + DISCOVERY_PATH)
            if not isinstance(document, dict) or document.get("issuer") != self.issuer:
                raise ValueError(
                    f"the discovery document of {self.issuer} names another issuer "
                    f"({document.get('issuer') if isinstance(document, dict) else None!r})"
                )
            source = document.get("jwks_uri")
            if not isinstance(source, str) or not source.startswith(("https://", "http://")):
                raise ValueError(f"the discovery document of {self.issuer} has no jwks_uri")
        if source.startswith(("https://", "http://")):
            data = await self._get(source)
        else:
            data = json.loads(await asyncio.to_thread(Path(source).read_bytes))
        jwks = load_jwks(data)
        return {str(k.get("kid", "")): k for k in jwks["keys"] if k.get("use", "sig") == "sig"}

    async def key(self, kid: str) -> dict[str, Any] | None:
        """The JWK named ``kid``, fetching the keys when stale or when ``kid`` is new."""
        now = time.monotonic()
        stale = now - self._fetched > self.max_age
        unknown = kid not in self._keys and now - self._fetched > self.refresh_cooldown
        if stale or unknown:
            async with self._lock:
                if time.monotonic() - self._fetched > min(self.refresh_cooldown, self.max_age):
                    try:
                        self._keys = await self._load()
                        self._fetched = time.monotonic()
                    except (ValueError, OSError) as exc:
                        if not self._keys:
                            raise AuthenticationError(
                                f"cannot check the token: the issuer's keys are unavailable ({exc})"
                            ) from None
        return self._keys.get(kid)


class JWTAuthenticator:
    """``Authorization: Bearer <JWT>`` checked against an issuer's keys (see the module docs)."""

    def __init__(
        self,
        *,
        issuer: str,
        audience: str | Iterable[str],
        keys: JWKSSource | str | None = None,
        owner_claim: str = "sub",
        required_scopes: Iterable[str] = (),
        leeway: float = 30.0,
        algorithms: Iterable[str] = ASYMMETRIC_ALGORITHMS,
        scheme: str = "oidc",
        realm: str = "a2a",
    ) -> None:
        self.issuer = issuer
        self.audience = [audience] if isinstance(audience, str) else list(audience)
        if not self.audience:
            raise ValueError("tokens must name an audience: pass audience=")
        self.keys = keys if isinstance(keys, JWKSSource) else JWKSSource(issuer, keys)
        self.owner_claim = owner_claim
        self.required_scopes = frozenset(required_scopes)
        self.leeway = leeway
        self.algorithms = tuple(algorithms)
        unsafe = [a for a in self.algorithms if a not in ASYMMETRIC_ALGORITHMS]
        if unsafe:
            raise ValueError(f"only public-key algorithms are accepted, not {unsafe}")
        self.scheme = scheme
        self.realm = realm

    def challenge(self, error: str | None = None, description: str | None = None) -> str:
        value = f'Bearer realm="{self.realm}"'
        if error:
            value += f', error="{error}"'
        if description:
            value += ', error_description="' + description.replace('"', "'") + '"'
        return value

    def _refuse(self, description: str) -> AuthenticationError:
        return AuthenticationError(
            f"Invalid access token: {description}",
            challenges=[self.challenge("invalid_token", description)],
        )

    async def authenticate(self, request: HTTPConnection) -> Principal | None:
        header = request.headers.get("authorization")
        if not header:
            raise AuthenticationError(
                "Authentication required: send an 'Authorization: Bearer <access token>' header",
                challenges=[self.challenge()],
                missing=True,
            )
        kind, _, token = header.strip().partition(" ")
        if kind.lower() != "bearer" or not token.strip():
            raise AuthenticationError(
                "Authentication required: the Authorization header is not a Bearer token",
                challenges=[self.challenge("invalid_request")],
            )
        claims = await self.verify(token.strip())
        owner = claims.get(self.owner_claim)
        if not isinstance(owner, str) or not owner:
            raise self._refuse(f"the token has no {self.owner_claim!r} claim naming the caller")
        scopes = _scopes_of(claims)
        missing = self.required_scopes - scopes
        if missing:
            needed = " ".join(sorted(self.required_scopes))
            raise PermissionDeniedError(
                f"Permission denied: the token lacks the scope(s) {', '.join(sorted(missing))}",
                challenges=[
                    f'Bearer realm="{self.realm}", error="insufficient_scope", scope="{needed}"'
                ],
            )
        return Principal(owner, scopes=scopes, scheme=self.scheme)

    async def verify(self, token: str) -> dict[str, Any]:
        """The claims of a valid ``token``; :class:`AuthenticationError` saying what is wrong."""
        import jwt

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise self._refuse("not a JWT") from None
        alg, kid = header.get("alg"), header.get("kid")
        if alg not in self.algorithms:
            raise self._refuse(f"algorithm {alg!r} is not accepted")
        if not isinstance(kid, str):
            raise self._refuse("the token names no key (kid)")
        jwk = await self.keys.key(kid)
        if jwk is None:
            raise self._refuse(f"unknown signing key {kid!r}")
        if jwk.get("kty") != _KEY_TYPES.get(str(alg)[:2]) or jwk.get("alg", alg) != alg:
            raise self._refuse(f"key {kid!r} is not a {alg} key")
        try:
            key = jwt.PyJWK({k: v for k, v in jwk.items() if k != "alg"}, algorithm=str(alg))
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=[str(alg)],
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.ExpiredSignatureError:
            raise self._refuse("the token has expired") from None
        except jwt.ImmatureSignatureError:
            raise self._refuse("the token is not valid yet (nbf/iat)") from None
        except jwt.InvalidAudienceError:
            raise self._refuse("the token is for another audience") from None
        except jwt.InvalidIssuerError:
            raise self._refuse("the token is from another issuer") from None
        except jwt.InvalidSignatureError:
            raise self._refuse("the signature does not verify") from None
        except jwt.MissingRequiredClaimError as exc:
            raise self._refuse(f"the token has no {exc.claim!r} claim") from None
        except jwt.PyJWTError as exc:
            raise self._refuse(type(exc).__name__) from None
        return claims


def _scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    scope = claims.get("scope")
    if isinstance(scope, str):
        return frozenset(scope.split())
    scp = claims.get("scp")
    if isinstance(scp, list):
        return frozenset(str(s) for s in scp)
    if isinstance(scp, str):
        return frozenset(scp.split())
    return frozenset()


def with_oidc_security(card: m.AgentCard, auth: JWTAuthenticator) -> m.AgentCard:
    """``card`` declaring the OpenID Connect scheme ``auth`` enforces (and its scopes)."""
    schemes = dict(card.security_schemes)
    schemes[auth.scheme] = m.OpenIdConnectSecurityScheme(
        open_id_connect_url=auth.issuer.rstrip("/") + DISCOVERY_PATH,
        description=f"access tokens (JWT) from {auth.issuer}",
    )
    requirement = m.SecurityRequirement(schemes={auth.scheme: tuple(sorted(auth.required_scopes))})
    return attrs.evolve(
        card,
        security_schemes=schemes,
        security_requirements=(*card.security_requirements, requirement),
    )
