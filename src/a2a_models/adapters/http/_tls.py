"""TLS and mutual TLS for the HTTP server.

:class:`TLSConfig` makes :class:`HTTPServer` serve HTTPS; with ``client_ca``
it requires a client certificate signed by that CA (the handshake fails
without one), and :class:`MutualTLSAuthenticator` makes the certificate's
subject (an RFC 4514 distinguished name, e.g. ``CN=alice,O=Example``) the
caller. The card then declares a ``mtlsSecurityScheme`` (see
:func:`with_mtls_security`).
"""

from __future__ import annotations

import ssl
from typing import Any

import attrs
from starlette.requests import HTTPConnection

from ... import models as m
from ._auth import AuthenticationError, Principal

__all__ = ["MutualTLSAuthenticator", "TLSConfig", "client_tls_context", "with_mtls_security"]

#: The card's name for the mutual-TLS scheme ``serve`` declares.
MTLS_SCHEME = "mtls"


@attrs.frozen(slots=True, kw_only=True)
class TLSConfig:
    """Certificate chain and key files (PEM); ``client_ca``: require client certificates."""

    cert: str
    key: str
    key_password: str | None = attrs.field(default=None, repr=False)
    client_ca: str | None = None

    def uvicorn_options(self) -> dict[str, Any]:
        """The ``uvicorn.Config`` arguments."""
        options: dict[str, Any] = {
            "ssl_certfile": self.cert,
            "ssl_keyfile": self.key,
            "ssl_keyfile_password": self.key_password,
        }
        if self.client_ca:
            options["ssl_ca_certs"] = self.client_ca
            options["ssl_cert_reqs"] = ssl.CERT_REQUIRED
        return options

    def check(self) -> None:
        """Load the files once, so a bad one is a clear :class:`ValueError` at start."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        try:
            context.load_cert_chain(self.cert, self.key, self.key_password)
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(
                f"cannot load the TLS certificate {self.cert!r} with key {self.key!r}: "
                f"{getattr(exc, 'reason', None) or exc.strerror or exc}"
            ) from None
        if self.client_ca:
            try:
                context.load_verify_locations(self.client_ca)
            except (OSError, ssl.SSLError) as exc:
                raise ValueError(
                    f"cannot load the client CA {self.client_ca!r}: "
                    f"{getattr(exc, 'reason', None) or exc.strerror or exc}"
                ) from None


def client_tls_context(
    cert: str | None = None,
    key: str | None = None,
    *,
    ca: str | None = None,
    password: str | None = None,
) -> ssl.SSLContext:
    """A client-side TLS context: trust ``ca`` (default: the system's CAs) and, for mutual
    TLS, present ``cert`` (with ``key``). Pass it as ``tls=`` to the HTTP clients."""
    context = ssl.create_default_context(cafile=ca)
    if cert is not None:
        context.load_cert_chain(cert, key, password)
    return context


class MutualTLSAuthenticator:
    """The verified client certificate's subject is the caller.

    Reads the ASGI TLS extension (``scope["extensions"]["tls"]``) that
    :class:`HTTPServer` fills in; the certificate was verified against the
    client CA during the handshake.
    """

    def __init__(self, *, scheme: str = MTLS_SCHEME) -> None:
        self.scheme = scheme

    async def authenticate(self, request: HTTPConnection) -> Principal | None:
        tls = request.scope.get("extensions", {}).get("tls") or {}
        name = tls.get("client_cert_name")
        if not name:
            raise AuthenticationError(
                "Authentication required: this server needs a TLS client certificate",
                missing=True,
            )
        return Principal(str(name), scheme=self.scheme)


def with_mtls_security(card: m.AgentCard, *, scheme: str = MTLS_SCHEME) -> m.AgentCard:
    """``card`` declaring (and requiring) mutual TLS under ``scheme``."""
    schemes = dict(card.security_schemes)
    schemes[scheme] = m.MutualTlsSecurityScheme(description="a client certificate from our CA")
    requirement = m.SecurityRequirement(schemes={scheme: ()})
    return attrs.evolve(
        card,
        security_schemes=schemes,
        security_requirements=(*card.security_requirements, requirement),
    )
