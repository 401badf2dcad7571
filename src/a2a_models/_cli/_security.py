"""``a2a-models serve`` security options: parsed here, enforced by the HTTP adapter.

Secrets never need to be on the command line (where ``ps`` and
``/proc/PID/cmdline`` show them): every secret option has a file form and an
environment variable.

======================== ===================================================
Environment variable     Meaning
======================== ===================================================
``A2A_AUTH_TOKENS``      bearer tokens, separated by commas or whitespace
``A2A_AUTH_TOKEN_FILE``  a file of bearer tokens, one per line
``A2A_SIGN_CARD_KEY``    the card-signing private key itself (PEM or JWK)
``A2A_TLS_KEY_PASSWORD`` the password of an encrypted ``--tls-key``
``A2A_STORE``            the store URL (it may hold a database password)
======================== ===================================================

Nothing here imports the HTTP adapter: ``a2a-models --help`` stays light.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from .._argtypes import positive_number, whole_number

__all__ = [
    "SecurityOptions",
    "add_push_delivery_options",
    "add_security_arguments",
    "security_from_args",
]

#: Defaults of the slow-client protections (seconds; connections).
HEADER_TIMEOUT = 10.0
BODY_TIMEOUT = 30.0
KEEP_ALIVE_TIMEOUT = 5.0
MAX_CONNECTIONS = 1000


@attrs.frozen(slots=True, kw_only=True)
class SecurityOptions:
    """What ``serve`` enforces beyond the static tokens of :class:`ServeOptions`.

    Secrets (``sign_card_key``, ``tls_key_password``) are values here,
    already read from their files or variables, and are kept out of
    ``repr``. Bearer tokens are :attr:`ServeOptions.auth_tokens`.
    """

    # push notifications
    push_allowlist: tuple[str, ...] = ()
    push_max_configs: int = 10
    push_rate: float = 5.0
    # slow clients
    header_timeout: float = HEADER_TIMEOUT
    body_timeout: float = BODY_TIMEOUT
    keep_alive_timeout: float = KEEP_ALIVE_TIMEOUT
    max_connections: int = MAX_CONNECTIONS
    # card signing: the key's text (PEM or JWK JSON)
    sign_card_key: str | None = attrs.field(default=None, repr=False)
    sign_card_kid: str | None = None
    # OAuth 2 / OpenID Connect
    oidc_issuer: str | None = None
    oidc_jwks: str | None = None
    oidc_audience: str | None = None
    oidc_owner_claim: str = "sub"
    oidc_scopes: tuple[str, ...] = ()
    # TLS
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_key_password: str | None = attrs.field(default=None, repr=False)
    tls_client_ca: str | None = None
    # MCP guard


def add_push_delivery_options(parser: Any) -> None:
    """``--push-allow`` and ``--push-rate``: what every command that delivers push
    notifications (``serve``, ``agent run``, ``worker``) lets a user set."""
    parser.add_argument(
        "--push-allow",
        action="append",
        default=[],
        metavar="HOST|CIDR",
        help="a private webhook host or network push notifications may reach (repeatable)",
    )
    parser.add_argument(
        "--push-rate",
        type=positive_number,
        default=5.0,
        metavar="PER_SECOND",
        help="webhook deliveries per second per task (default: 5, bursts of 20)",
    )


def add_security_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the security flags to the ``serve`` parser."""
    auth = parser.add_argument_group("authentication (secrets: prefer files or variables)")
    auth.add_argument(
        "--auth-token-file",
        action="append",
        default=[],
        metavar="FILE",
        help="accept the bearer tokens in FILE, one per line (repeatable; also A2A_AUTH_TOKEN_FILE"
        ", or A2A_AUTH_TOKENS)",
    )
    auth.add_argument(
        "--oidc-issuer",
        metavar="URL",
        help="accept JWT access tokens from this OpenID Connect issuer",
    )
    auth.add_argument(
        "--oidc-jwks",
        metavar="URL|FILE",
        help="the issuer's JWKS (default: from the issuer's discovery document)",
    )
    auth.add_argument(
        "--oidc-audience",
        metavar="AUD",
        help="the audience tokens must name (default: the served URL)",
    )
    auth.add_argument(
        "--oidc-owner-claim",
        default="sub",
        metavar="CLAIM",
        help="the claim naming the task owner (default: sub)",
    )
    auth.add_argument(
        "--oidc-scope",
        action="append",
        default=[],
        metavar="SCOPE",
        help="a scope every token must carry (repeatable)",
    )
    auth.add_argument("--tls-cert", metavar="FILE", help="serve HTTPS with this certificate chain")
    auth.add_argument(
        "--tls-key",
        metavar="FILE",
        help="the certificate's private key (password: A2A_TLS_KEY_PASSWORD)",
    )
    auth.add_argument(
        "--tls-client-ca",
        metavar="FILE",
        help="require client certificates signed by this CA (mutual TLS); the "
        "certificate's subject becomes the task owner",
    )
    auth.add_argument(
        "--sign-card-key",
        metavar="FILE",
        help="sign the agent card(s) with this private key, PEM or JWK "
        "(or the key itself in A2A_SIGN_CARD_KEY)",
    )
    auth.add_argument(
        "--sign-card-kid",
        metavar="KID",
        help="the key id in the signature (default: the key's RFC 7638 thumbprint)",
    )
    guard = parser.add_argument_group("abuse protection")
    add_push_delivery_options(guard)
    guard.add_argument(
        "--push-max-configs",
        type=whole_number(1),
        default=10,
        metavar="N",
        help="most push configs per task (default: 10)",
    )
    guard.add_argument(
        "--header-timeout",
        type=positive_number,
        default=HEADER_TIMEOUT,
        metavar="SECONDS",
        help=f"time to send a request's headers (default: {HEADER_TIMEOUT:g})",
    )
    guard.add_argument(
        "--body-timeout",
        type=positive_number,
        default=BODY_TIMEOUT,
        metavar="SECONDS",
        help=f"longest pause inside a request body (default: {BODY_TIMEOUT:g})",
    )
    guard.add_argument(
        "--keep-alive-timeout",
        type=positive_number,
        default=KEEP_ALIVE_TIMEOUT,
        metavar="SECONDS",
        help=f"idle keep-alive connections close after (default: {KEEP_ALIVE_TIMEOUT:g})",
    )
    guard.add_argument(
        "--max-connections",
        type=whole_number(1),
        default=MAX_CONNECTIONS,
        metavar="N",
        help=f"open connections at most; more are refused with 503 (default: {MAX_CONNECTIONS})",
    )


def _read(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read the {what} file {path!r}: {exc.strerror or exc}") from None


def _tokens_in(text: str) -> list[str]:
    return [t for t in text.replace(",", " ").split() if t]


def security_from_args(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> tuple[SecurityOptions, tuple[str, ...], tuple[str, ...]]:
    """The :class:`SecurityOptions` for parsed ``serve`` arguments, the bearer tokens
    (``--auth-token``, the token files, ``A2A_AUTH_TOKENS``) and warnings to print.

    Raises :class:`ValueError` (naming the file, never its content) when a
    file cannot be read or an option is out of range.
    """
    env = os.environ if environ is None else environ
    warnings: list[str] = []
    tokens: list[str] = list(getattr(args, "auth_token", []) or [])
    if tokens:
        warnings.append(
            "--auth-token puts the secret on the command line, visible to every user "
            "(ps, /proc); use --auth-token-file FILE or A2A_AUTH_TOKENS instead"
        )
    files = list(args.auth_token_file)
    if env.get("A2A_AUTH_TOKEN_FILE"):
        files.append(env["A2A_AUTH_TOKEN_FILE"])
    for path in files:
        found = _tokens_in(_read(path, "token"))
        if not found:
            raise ValueError(f"the token file {path!r} holds no token")
        tokens += found
    tokens += _tokens_in(env.get("A2A_AUTH_TOKENS", ""))
    key: str | None = None
    if args.sign_card_key:
        key = _read(args.sign_card_key, "card-signing key")
    elif env.get("A2A_SIGN_CARD_KEY"):
        key = env["A2A_SIGN_CARD_KEY"]
    if bool(args.tls_cert) != bool(args.tls_key):
        raise ValueError("--tls-cert and --tls-key go together")
    if args.tls_client_ca and not args.tls_cert:
        raise ValueError("--tls-client-ca needs --tls-cert and --tls-key")
    if args.oidc_jwks and not args.oidc_issuer:
        raise ValueError("--oidc-jwks needs --oidc-issuer (the tokens' iss)")
    options = SecurityOptions(
        push_allowlist=tuple(args.push_allow),
        push_max_configs=args.push_max_configs,
        push_rate=args.push_rate,
        header_timeout=args.header_timeout,
        body_timeout=args.body_timeout,
        keep_alive_timeout=args.keep_alive_timeout,
        max_connections=args.max_connections,
        sign_card_key=key,
        sign_card_kid=args.sign_card_kid,
        oidc_issuer=args.oidc_issuer,
        oidc_jwks=args.oidc_jwks,
        oidc_audience=args.oidc_audience,
        oidc_owner_claim=args.oidc_owner_claim,
        oidc_scopes=tuple(args.oidc_scope),
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        tls_key_password=env.get("A2A_TLS_KEY_PASSWORD") or None,
        tls_client_ca=args.tls_client_ca,
    )
    return options, tuple(dict.fromkeys(tokens)), tuple(warnings)


def store_from_env(store: str, default: str, environ: Mapping[str, str] | None = None) -> str:
    """``A2A_STORE`` when ``--store`` was left at its default."""
    env = os.environ if environ is None else environ
    return env.get("A2A_STORE") or store if store == default else store


def warn(messages: tuple[str, ...], *, file: Any = None) -> None:
    """Print each warning to stderr as ``a2a-models serve: warning: ...``."""
    for message in messages:
        print(f"a2a-models serve: warning: {message}", file=file or sys.stderr, flush=True)
