"""``serve``'s security options turned into a card, an authenticator and limits.

What the card declares is what is enforced: every scheme added to the card
here comes with the authenticator that checks it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ... import models as m
from ._auth import Authenticator, CardAuthenticator, authenticator_for_card
from ._limits import ConnectionLimits
from ._tls import MTLS_SCHEME, MutualTLSAuthenticator, with_mtls_security

if TYPE_CHECKING:
    from ..._cli._security import SecurityOptions

__all__ = ["limits_of", "secure_card"]


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


def secure_card(
    card: m.AgentCard,
    security: SecurityOptions,
    url: str,
    *,
    bearer: Authenticator | None = None,
) -> tuple[m.AgentCard, Authenticator | None]:
    """``card`` declaring what ``security`` configures, and the authenticator enforcing it.

    ``bearer`` is the static-token authenticator (already declared as the
    card's ``bearer`` scheme), if any. The card is signed last, when a key
    is configured.
    """
    given: dict[str, Any] = {}
    if bearer is not None:
        given["bearer"] = bearer
    if security.oidc_issuer:
        from ._jwt import JWTAuthenticator, with_oidc_security

        jwt_auth = JWTAuthenticator.from_options(security, audience=security.oidc_audience or url)
        card = with_oidc_security(card, jwt_auth)
        given[jwt_auth.scheme] = jwt_auth
    if security.tls_client_ca:
        card = with_mtls_security(card)
        given[MTLS_SCHEME] = MutualTLSAuthenticator()
    authenticator: Authenticator | None = bearer
    if len(given) > 1 or (given and bearer is None):
        built: CardAuthenticator | None = authenticator_for_card(card, authenticators=given)
        authenticator = built
    if security.sign_card_key:
        from ._signing import CardSigner

        signer = CardSigner.from_text(
            security.sign_card_key, kid=security.sign_card_kid, jku=url.rstrip("/") + JWKS_PATH
        )
        card = signer.sign(card)
    return card, authenticator


#: Where ``serve`` publishes the public key(s) of its card signatures.
JWKS_PATH = "/.well-known/jwks.json"
