"""``serve``'s security options turned into a card, an authenticator and limits.

What the card declares is what is enforced: every scheme added to the card
here comes with the authenticator that checks it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import attrs
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from .. import models as m
from ..adapters.http import (
    MTLS_SCHEME,
    Authenticator,
    CardAuthenticator,
    ConnectionLimits,
    MutualTLSAuthenticator,
    authenticator_for_card,
    with_mtls_security,
)

if TYPE_CHECKING:
    from ..signing import CardSigner
    from ._security import SecurityOptions

__all__ = ["JWKS_PATH", "JWKSApp", "Secured", "limits_of", "secure_card"]


def limits_of(security: SecurityOptions | None) -> ConnectionLimits:
    """The :class:`ConnectionLimits` of ``serve``'s options (defaults without any)."""
    if security is None:
        return ConnectionLimits()
    return ConnectionLimits(
        header_timeout=security.header_timeout,
        body_timeout=security.body_timeout,
        keep_alive_timeout=security.keep_alive_timeout,
        max_connections=security.max_connections,
    )


@attrs.frozen(slots=True)
class Secured:
    """What :func:`secure_card` makes: the card, its enforcer, and the signer (if any)."""

    card: m.AgentCard
    authenticator: Authenticator | None
    signer: CardSigner | None = None


def secure_card(
    card: m.AgentCard,
    security: SecurityOptions,
    url: str,
    *,
    bearer: Authenticator | None = None,
) -> Secured:
    """``card`` declaring what ``security`` configures, and the authenticator enforcing it.

    ``bearer`` is the static-token authenticator (already declared as the
    card's ``bearer`` scheme), if any. The card is signed last, when a key
    is configured.
    """
    given: dict[str, Any] = {}
    if bearer is not None:
        given["bearer"] = bearer
    if security.oidc_issuer:
        from ..adapters.http import JWTAuthenticator, with_oidc_security

        jwt_auth = JWTAuthenticator(
            issuer=security.oidc_issuer,
            audience=security.oidc_audience or url,
            keys=security.oidc_jwks,
            owner_claim=security.oidc_owner_claim,
            required_scopes=security.oidc_scopes,
        )
        card = with_oidc_security(card, jwt_auth)
        given[jwt_auth.scheme] = jwt_auth
    if security.tls_client_ca:
        card = with_mtls_security(card)
        given[MTLS_SCHEME] = MutualTLSAuthenticator()
    authenticator: Authenticator | None = bearer
    if len(given) > 1 or (given and bearer is None):
        built: CardAuthenticator | None = authenticator_for_card(card, authenticators=given)
        authenticator = built
    signer = None
    if security.sign_card_key:
        from ..signing import CardSigner

        signer = CardSigner.from_text(
            security.sign_card_key, kid=security.sign_card_kid, jku=_origin(url) + JWKS_PATH
        )
        card = signer.sign(card)
    return Secured(card, authenticator, signer)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


class JWKSApp:
    """``app`` that also answers ``GET /.well-known/jwks.json`` with ``jwks`` (public keys)."""

    def __init__(self, app: ASGIApp, jwks: dict[str, Any]) -> None:
        self.app = app
        self.state = getattr(app, "state", None)  # gateway_of() looks here
        self._body = json.dumps(jwks).encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == JWKS_PATH:
            if scope["method"] in ("GET", "HEAD"):
                response = Response(
                    self._body,
                    media_type="application/jwk-set+json",
                    headers={"Cache-Control": "public, max-age=300"},
                )
            else:
                response = Response(status_code=405, headers={"Allow": "GET, HEAD"})
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


#: Where ``serve`` publishes the public key(s) of its card signatures.
JWKS_PATH = "/.well-known/jwks.json"
