"""A2A over HTTP: an ASGI server (Starlette + uvicorn) and an httpx client.

Needs the ``http`` extra (``pip install a2a-models[http]``)::

    from a2a_models.adapters.http import HTTPServer, connect
    from a2a_models.server import AgentServer

    async with HTTPServer(AgentServer(MyAgent(), card)) as http:   # uvicorn, 127.0.0.1
        async with await connect(http.url) as client:               # reads the card
            task = await client.send_message(Message.user("hi"))

Server side:

* :func:`create_app` - JSON-RPC at the base path, the 1.0 HTTP+JSON routes
  (and ``/{tenant}/...``), 0.3's ``/v1/...`` routes, the well-known card;
  CORS, body limits, SSE streams that end on disconnect and at shutdown.
* :class:`HTTPServer` - uvicorn in the current event loop (127.0.0.1 by default).
* Authentication: :class:`Authenticator` (the protocol), :class:`Principal`,
  :class:`BearerTokenAuthenticator`, :class:`APIKeyAuthenticator`,
  :func:`authenticator_for_card`; refusals are :class:`AuthenticationError`
  (401) and :class:`PermissionDeniedError` (403).
* :class:`WebhookPushSender` - push notifications with retries and an SSRF guard.
* ``a2a-models serve`` is built on these (its start-up code is ``a2a_models._cli._run``).

Client side: :class:`HTTPClient` (JSON-RPC), :class:`RESTClient` (HTTP+JSON),
:func:`resolve_card`, :func:`card_urls` and :func:`connect` (discovery). (The SSE parser is
:class:`a2a_models.protocol.SSEParser`; its names stay importable here.)

Names load on first use, so the command line starts fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...protocol import SSEError as SSEError
    from ...protocol import SSEEvent as SSEEvent
    from ...protocol import SSEParser as SSEParser
    from ...protocol import format_comment as format_comment
    from ...protocol import format_event as format_event
    from ._app import (
        DEFAULT_MAX_BODY_BYTES as DEFAULT_MAX_BODY_BYTES,
    )
    from ._app import (
        CORSConfig as CORSConfig,
    )
    from ._app import (
        create_app as create_app,
    )
    from ._app import (
        normalize_base_path as normalize_base_path,
    )
    from ._auth import (
        APIKeyAuthenticator as APIKeyAuthenticator,
    )
    from ._auth import (
        AuthenticationError as AuthenticationError,
    )
    from ._auth import (
        Authenticator as Authenticator,
    )
    from ._auth import (
        BearerTokenAuthenticator as BearerTokenAuthenticator,
    )
    from ._auth import (
        CardAuthenticator as CardAuthenticator,
    )
    from ._auth import (
        Credentials as Credentials,
    )
    from ._auth import (
        PermissionDeniedError as PermissionDeniedError,
    )
    from ._auth import (
        Principal as Principal,
    )
    from ._auth import (
        SecretVerifier as SecretVerifier,
    )
    from ._auth import (
        authenticator_for_card as authenticator_for_card,
    )
    from ._auth import current_principal as current_principal
    from ._auth import skill_allowed as skill_allowed
    from ._card import combined_card as combined_card
    from ._client import (
        A2A_MEDIA_TYPE as A2A_MEDIA_TYPE,
    )
    from ._client import (
        JSON_MEDIA_TYPE as JSON_MEDIA_TYPE,
    )
    from ._client import (
        SSE_MEDIA_TYPE as SSE_MEDIA_TYPE,
    )
    from ._client import (
        BaseHTTPClient as BaseHTTPClient,
    )
    from ._client import (
        HTTPClient as HTTPClient,
    )
    from ._client import (
        HTTPStatusError as HTTPStatusError,
    )
    from ._client import (
        HTTPTransportError as HTTPTransportError,
    )
    from ._client import (
        Reconnect as Reconnect,
    )
    from ._client import (
        RESTClient as RESTClient,
    )
    from ._client import (
        StreamDisconnectedError as StreamDisconnectedError,
    )
    from ._client import (
        Timeouts as Timeouts,
    )
    from ._discovery import (
        AGENT_CARD_PATH as AGENT_CARD_PATH,
    )
    from ._discovery import (
        CARD_TIMEOUT as CARD_TIMEOUT,
    )
    from ._discovery import (
        DEFAULT_BINDINGS as DEFAULT_BINDINGS,
    )
    from ._discovery import (
        LEGACY_AGENT_CARD_PATH as LEGACY_AGENT_CARD_PATH,
    )
    from ._discovery import (
        MAX_CARD_BYTES as MAX_CARD_BYTES,
    )
    from ._discovery import (
        CardResolutionError as CardResolutionError,
    )
    from ._discovery import (
        NoCompatibleInterfaceError as NoCompatibleInterfaceError,
    )
    from ._discovery import (
        card_urls as card_urls,
    )
    from ._discovery import (
        connect as connect,
    )
    from ._discovery import (
        decode_card as decode_card,
    )
    from ._discovery import (
        fetch_card as fetch_card,
    )
    from ._discovery import (
        resolve_card as resolve_card,
    )
    from ._discovery import (
        select_interface as select_interface,
    )
    from ._guard import MCPGuard as MCPGuard
    from ._jwt import JWKSSource as JWKSSource
    from ._jwt import JWTAuthenticator as JWTAuthenticator
    from ._jwt import with_oidc_security as with_oidc_security
    from ._limits import ConnectionLimits as ConnectionLimits
    from ._push import (
        NOTIFICATION_TOKEN_HEADER as NOTIFICATION_TOKEN_HEADER,
    )
    from ._push import (
        UnsafeWebhookURLError as UnsafeWebhookURLError,
    )
    from ._push import (
        WebhookDeliveryError as WebhookDeliveryError,
    )
    from ._push import (
        WebhookPushSender as WebhookPushSender,
    )
    from ._serve import HTTPServer as HTTPServer
    from ._tls import MTLS_SCHEME as MTLS_SCHEME
    from ._tls import MutualTLSAuthenticator as MutualTLSAuthenticator
    from ._tls import TLSConfig as TLSConfig
    from ._tls import client_tls_context as client_tls_context
    from ._tls import with_mtls_security as with_mtls_security

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(
        ["DEFAULT_MAX_BODY_BYTES", "CORSConfig", "create_app", "normalize_base_path"], "_app"
    ),
    **dict.fromkeys(
        [
            "APIKeyAuthenticator",
            "AuthenticationError",
            "Authenticator",
            "BearerTokenAuthenticator",
            "CardAuthenticator",
            "Credentials",
            "PermissionDeniedError",
            "Principal",
            "SecretVerifier",
            "authenticator_for_card",
            "current_principal",
            "skill_allowed",
        ],
        "_auth",
    ),
    "combined_card": "_card",
    **dict.fromkeys(
        [
            "A2A_MEDIA_TYPE",
            "JSON_MEDIA_TYPE",
            "SSE_MEDIA_TYPE",
            "BaseHTTPClient",
            "HTTPClient",
            "HTTPStatusError",
            "HTTPTransportError",
            "Reconnect",
            "RESTClient",
            "StreamDisconnectedError",
            "Timeouts",
        ],
        "_client",
    ),
    **dict.fromkeys(
        [
            "AGENT_CARD_PATH",
            "CARD_TIMEOUT",
            "DEFAULT_BINDINGS",
            "LEGACY_AGENT_CARD_PATH",
            "MAX_CARD_BYTES",
            "CardResolutionError",
            "card_urls",
            "NoCompatibleInterfaceError",
            "connect",
            "decode_card",
            "fetch_card",
            "resolve_card",
            "select_interface",
        ],
        "_discovery",
    ),
    **dict.fromkeys(
        [
            "NOTIFICATION_TOKEN_HEADER",
            "UnsafeWebhookURLError",
            "WebhookDeliveryError",
            "WebhookPushSender",
        ],
        "_push",
    ),
    "MCPGuard": "_guard",
    **dict.fromkeys(["JWKSSource", "JWTAuthenticator", "with_oidc_security"], "_jwt"),
    "ConnectionLimits": "_limits",
    **dict.fromkeys(
        [
            "MTLS_SCHEME",
            "MutualTLSAuthenticator",
            "TLSConfig",
            "client_tls_context",
            "with_mtls_security",
        ],
        "_tls",
    ),
    "HTTPServer": "_serve",
    # Kept here for existing imports; they live in a2a_models.protocol.
    **dict.fromkeys(
        ["SSEError", "SSEEvent", "SSEParser", "format_comment", "format_event"],
        "a2a_models.protocol",
    ),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    path = module if module.startswith("a2a_models.") else f"{__name__}.{module}"
    value = getattr(importlib.import_module(path), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
