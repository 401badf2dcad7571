"""The ASGI app: :func:`create_app` puts an :class:`A2AServer` on HTTP.

One app serves, relative to ``base_path``:

* JSON-RPC 2.0 (both protocol versions) at ``POST /`` - the body goes to
  :meth:`A2AServer.handle` untouched; streams come back as SSE;
* HTTP+JSON: the 1.0 routes (also under ``/{tenant}``) and 0.3's ``/v1/...``
  routes (see :mod:`._rest`);
* the public agent card at ``/.well-known/agent-card.json`` (and the legacy
  ``/.well-known/agent.json``), at the root and under ``base_path``.

Authentication (when an :class:`Authenticator` is given) applies to every
route except the public card and CORS preflights.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

import attrs
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from ...errors import InternalError, MethodNotFoundError
from ...server import A2AServer, ServerSentEvent, StreamingReply
from ._auth import AuthenticationError, Authenticator, PermissionDeniedError
from ._common import (
    JSON,
    BodyTooLargeError,
    is_json_media_type,
    jsonrpc_error_response,
    read_body,
    service_headers,
    status_error_response,
    too_large,
    unsupported_media,
)
from ._gateway import Gateway, challenges_of
from ._rest import RestBinding
from ._streaming import SSEResponse, sse_frame

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "CORSConfig",
    "create_app",
    "gateway_of",
    "normalize_base_path",
]

log = logging.getLogger("a2a_models.adapters.http")

#: Default request body limit: 10 MiB.
DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024

WELL_KNOWN_CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")


def _tuple(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)  # type: ignore[attr-defined]


@attrs.frozen(slots=True, kw_only=True)
class CORSConfig:
    """Cross-origin access for browser clients (Starlette's ``CORSMiddleware``).

    The default lets any origin call the agent without cookies, which suits
    bearer tokens and API keys in headers. Set ``allow_credentials`` (with
    explicit ``allow_origins``) for cookie-authenticated browser clients.
    """

    allow_origins: tuple[str, ...] = attrs.field(default=("*",), converter=_tuple)
    allow_origin_regex: str | None = None
    allow_methods: tuple[str, ...] = attrs.field(
        default=("GET", "POST", "DELETE", "OPTIONS"), converter=_tuple
    )
    allow_headers: tuple[str, ...] = attrs.field(default=("*",), converter=_tuple)
    allow_credentials: bool = False
    expose_headers: tuple[str, ...] = attrs.field(
        default=("A2A-Extensions", "X-A2A-Extensions", "ETag", "WWW-Authenticate"),
        converter=_tuple,
    )
    max_age: int = 600

    def middleware(self) -> Middleware:
        """The Starlette middleware entry."""
        return Middleware(
            CORSMiddleware,
            allow_origins=self.allow_origins,
            allow_origin_regex=self.allow_origin_regex,
            allow_methods=self.allow_methods,
            allow_headers=self.allow_headers,
            allow_credentials=self.allow_credentials,
            expose_headers=self.expose_headers,
            max_age=self.max_age,
        )


def normalize_base_path(base_path: str) -> str:
    """``"/a2a/"``, ``"a2a"`` → ``"/a2a"``; ``""``, ``"/"`` → ``""`` (the root)."""
    stripped = base_path.strip().strip("/")
    return "/" + stripped if stripped else ""


def create_app(
    server: A2AServer,
    *,
    base_path: str = "",
    cors: bool | CORSConfig = True,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    authenticator: Authenticator | None = None,
    serve_rest: bool = True,
    serve_v03_rest: bool = True,
    sse_keepalive: float | None = 15.0,
    card_max_age: int = 300,
) -> Starlette:
    """The Starlette app serving ``server`` over JSON-RPC, HTTP+JSON and the well-known card.

    ``base_path`` (slashes trimmed) prefixes the JSON-RPC endpoint and the
    REST routes; the well-known card is served at the root and under it.
    ``cors`` is on by default (``False`` turns it off, a :class:`CORSConfig`
    tunes it). Bodies over ``max_body_bytes`` get 413. ``authenticator``
    decides the caller (the task owner) of every non-public request; without
    one the server's own :meth:`A2AServer.authenticate` does. A card that
    declares security with neither is refused (:class:`ValueError`) rather
    than served unprotected. ``serve_v03_rest`` adds 0.3's ``/v1/...``
    routes. ``sse_keepalive`` seconds of silence send an SSE comment
    (``None``: never). ``card_max_age`` is the card's ``Cache-Control``.
    """
    if max_body_bytes <= 0:
        raise ValueError("max_body_bytes must be positive")
    card = server.card
    declares_security = card is not None and bool(
        card.security_schemes or card.security_requirements
    )
    if (
        declares_security
        and authenticator is None
        and type(server).authenticate is A2AServer.authenticate
    ):
        raise ValueError(
            "the agent card declares security schemes but nothing checks them: pass "
            "authenticator=authenticator_for_card(card, ...) (or another Authenticator), "
            "or override A2AServer.authenticate"
        )
    gateway = Gateway(
        server,
        authenticator=authenticator,
        max_body_bytes=max_body_bytes,
        sse_keepalive=sse_keepalive,
        card_max_age=card_max_age,
    )
    prefix = normalize_base_path(base_path)
    rpc = _jsonrpc_endpoint(gateway)
    card_endpoint = _card_endpoint(gateway)
    routes: list[BaseRoute] = []
    for path in WELL_KNOWN_CARD_PATHS:
        routes.append(Route(path, card_endpoint, methods=["GET"]))
        if prefix:
            routes.append(Route(prefix + path, card_endpoint, methods=["GET"]))
    routes.append(Route(prefix or "/", rpc, methods=["POST"]))
    if prefix:
        routes.append(Route(prefix + "/", rpc, methods=["POST"]))
    if serve_rest:
        routes.extend(RestBinding(gateway).routes(prefix, v03=serve_v03_rest))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        gateway.streams.reopen()
        try:
            yield
        finally:
            gateway.streams.close_all()

    middleware: list[Middleware] = []
    if cors:
        middleware.append((cors if isinstance(cors, CORSConfig) else CORSConfig()).middleware())
    app = Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers={HTTPException: _http_exception},
        lifespan=lifespan,
    )
    app.state.a2a_gateway = gateway
    return app


def gateway_of(app: object) -> Gateway | None:
    """The :class:`Gateway` of an app made by :func:`create_app` (else ``None``)."""
    state = getattr(app, "state", None)
    gateway = getattr(state, "a2a_gateway", None)
    return gateway if isinstance(gateway, Gateway) else None


async def _http_exception(request: Request, exc: Exception) -> Response:
    """Routing failures (unknown path 404, wrong method 405) as ``google.rpc.Status``."""
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        message = f"Method {request.method} is not allowed on {request.url.path}"
    elif exc.status_code == 404:
        message = f"No A2A route at {request.url.path}"
    else:
        message = str(exc.detail)
    return status_error_response(
        MethodNotFoundError(message), status=exc.status_code, media_type=JSON, headers=exc.headers
    )


def _jsonrpc_endpoint(gateway: Gateway) -> Callable[[Request], Awaitable[Response]]:
    async def jsonrpc(request: Request) -> Response:
        try:
            principal = await gateway.principal(request)
        except (AuthenticationError, PermissionDeniedError) as exc:
            response = jsonrpc_error_response(exc, status=exc.http_status)
            for challenge in challenges_of(exc):
                response.headers.append("WWW-Authenticate", challenge)
            return response
        except Exception as exc:
            error = gateway.target._error(exc, "authenticate")
            return jsonrpc_error_response(error, status=error.http_status)
        content_type = request.headers.get("content-type")
        if not is_json_media_type(content_type):
            return jsonrpc_error_response(unsupported_media(content_type, JSON), status=415)
        try:
            body = await read_body(request, gateway.max_body_bytes)
        except BodyTooLargeError as exc:
            return jsonrpc_error_response(too_large(exc.limit), status=413)
        headers = service_headers(request)
        token = Gateway.bind(principal)
        try:
            reply = await gateway.target.handle(body, headers)
        except Exception:
            log.exception("JSON-RPC handling failed")
            return jsonrpc_error_response(InternalError(), status=500)
        finally:
            Gateway.unbind(token)
        if isinstance(reply, StreamingReply):
            return SSEResponse(
                _frames(reply.events),
                headers=reply.headers,
                on_close=reply.aclose,
                registry=gateway.streams,
                keepalive=gateway.sse_keepalive,
            )
        if reply.body is None:
            return Response(status_code=204, headers=reply.headers)
        return Response(reply.body, media_type=JSON, headers=reply.headers)

    return jsonrpc


async def _frames(events: AsyncIterator[ServerSentEvent]) -> AsyncIterator[bytes]:
    async for event in events:
        yield sse_frame(event.data, id=event.id)


def _card_endpoint(gateway: Gateway) -> Callable[[Request], Awaitable[Response]]:
    async def card(request: Request) -> Response:
        current = gateway.server.card
        if current is None:
            return status_error_response(
                MethodNotFoundError("this server has no agent card"), media_type=JSON
            )
        version = service_headers(request).get("a2a-version")
        return gateway.cards.response(current, version, request.headers.get("if-none-match"))

    return card
