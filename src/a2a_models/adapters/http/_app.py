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

The app is a Starlette app with a shortcut: a JSON-RPC ``POST`` to the base
path that needs no CORS handling (no ``Origin`` header, or CORS off) goes
straight to the JSON-RPC endpoint, without the middleware stack and the
router it would otherwise pass (which cost about as much as the rest of a
small request). The endpoint is the same either way; the shortcut adds what
the skipped layers would have (the ``Vary: Origin`` of the CORS middleware,
the 500 answer of Starlette's error middleware) and steps aside when the app
is given more middleware or a body size limit of Starlette's own. (A route
added later for ``POST`` at the base path is therefore not reached by such
requests: the base path is the JSON-RPC endpoint's.)
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping

import attrs
from starlette.applications import Starlette
from starlette.datastructures import QueryParams
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.errors import ServerErrorMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ...errors import InternalError, MethodNotFoundError, quote_input
from ...protocol import RestRouteError, sse_frame
from ...server import A2AServer, ServerSentEvent, StreamingReply, refuse
from ._auth import Authenticator
from ._common import (
    JSON,
    VERSION_PARAM,
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
from ._health import health_routes
from ._rest import RestBinding
from ._streaming import SSEResponse

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
    ``GET /healthz`` and ``GET /readyz`` (store and broker answer) are served
    at the root without authentication.
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
    rpc = JSONRPCEndpoint(gateway)
    card_endpoint = _card_endpoint(gateway)
    routes: list[BaseRoute] = list(health_routes(server))
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
    app = _App(
        routes=routes,
        middleware=middleware,
        exception_handlers={HTTPException: _http_exception},
        lifespan=lifespan,
    )
    # Starlette answers a path with a trailing slash by a 307 to the one without,
    # its Location built from the Host header: "/tasks/%2F" (the task "/") went
    # to ListTasks, and a client that follows redirects re-sends its body there.
    # No A2A route ends with a slash; such a path is a 404 that says so.
    app.router.redirect_slashes = False
    app.state.a2a_gateway = gateway
    app.set_shortcut(
        frozenset({prefix or "/", prefix + "/"}),
        JSONRPCEndpoint(gateway, vary_origin=bool(cors)),
        cors=bool(cors),
    )
    return app


class _App(Starlette):
    """Starlette, plus the shortcut for JSON-RPC requests (see the module's docstring)."""

    _rpc_paths: frozenset[str] = frozenset()
    _rpc_endpoint: JSONRPCEndpoint | None = None
    _own_middleware: tuple[Middleware, ...] = ()
    _cors = False
    #: The endpoint behind the error middleware; ``None`` while the shortcut is off.
    _shortcut: ASGIApp | None = None

    def set_shortcut(self, paths: frozenset[str], endpoint: JSONRPCEndpoint, *, cors: bool) -> None:
        """Serve JSON-RPC ``POST`` s to ``paths`` with ``endpoint`` directly (when allowed)."""
        self._rpc_paths = paths
        self._rpc_endpoint = endpoint
        self._cors = cors
        self._own_middleware = tuple(self.user_middleware)

    def build_middleware_stack(self) -> ASGIApp:
        stack = super().build_middleware_stack()
        # Built once, on the first request (middleware cannot be added after
        # that): the shortcut is on when the stack is still just ours.
        self._shortcut = None
        endpoint = self._rpc_endpoint
        mine = len(self.user_middleware) == len(self._own_middleware) and all(
            a is b for a, b in zip(self.user_middleware, self._own_middleware, strict=True)
        )
        if endpoint is not None and mine and getattr(self, "max_body_size", None) is None:
            handler = None  # picked as Starlette picks its 500 handler
            for key, value in self.exception_handlers.items():
                if key in (500, Exception):
                    handler = value
            self._shortcut = ServerErrorMiddleware(endpoint, handler=handler, debug=self.debug)
        return stack

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        shortcut = self._shortcut
        if (
            shortcut is not None
            and scope["type"] == "http"
            and scope["method"] == "POST"
            and _route_path(scope) in self._rpc_paths
            and not (self._cors and _has_origin(scope))
        ):
            scope["app"] = self
            scope.setdefault("router", self.router)
            await shortcut(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


def _route_path(scope: Scope) -> str:
    # What Starlette's router matches (starlette.routing.get_route_path).
    path: str = scope["path"]
    root_path: str = scope.get("root_path", "")
    if root_path and path.startswith(root_path):
        if path == root_path:
            return ""
        if path[len(root_path)] == "/":
            return path[len(root_path) :]
    return path


def _has_origin(scope: Scope) -> bool:
    for name, _ in scope["headers"]:
        if name == b"origin" or (len(name) == 6 and name.lower() == b"origin"):
            return True
    return False


def gateway_of(app: object) -> Gateway | None:
    """The :class:`Gateway` of an app made by :func:`create_app` (else ``None``)."""
    state = getattr(app, "state", None)
    gateway = getattr(state, "a2a_gateway", None)
    return gateway if isinstance(gateway, Gateway) else None


async def _http_exception(request: Request, exc: Exception) -> Response:
    """Routing failures (unknown path 404, wrong method 405) as ``google.rpc.Status``."""
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        message = (
            f"Method {quote_input(request.method)} is not allowed on "
            f"{quote_input(request.url.path)}"
        )
    elif exc.status_code == 404:
        message = f"No A2A route at {quote_input(request.url.path)}"
        if len(request.url.path) > 1 and request.url.path.endswith("/"):
            message += " (A2A paths have no trailing slash)"
    else:
        message = str(exc.detail)
    error = refuse(
        RestRouteError(message, status=exc.status_code)
        if exc.status_code in (404, 405)
        else MethodNotFoundError(message),
        "HTTP request",
        headers=request.headers,
    )
    return status_error_response(
        error, status=exc.status_code, media_type=JSON, headers=exc.headers
    )


#: What the refusal lines (:func:`~a2a_models.server.refuse`) of this endpoint call a request.
_JSONRPC = "JSON-RPC request"


class JSONRPCEndpoint:
    """``POST {base}``: the JSON-RPC endpoint, as a plain ASGI app.

    Routed by Starlette, or called directly by the app's shortcut; then
    ``vary_origin`` adds the ``Vary: Origin`` the CORS middleware adds to
    every answer.
    """

    def __init__(self, gateway: Gateway, *, vary_origin: bool = False) -> None:
        self.gateway = gateway
        self.vary_origin = vary_origin

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        gateway = self.gateway
        # The service parameters: headers lowercased, repeats joined (as service_headers).
        headers: dict[str, str] = {}
        for raw_name, raw_value in scope["headers"]:
            name = raw_name.decode("latin-1").lower()
            value = raw_value.decode("latin-1")
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        request: Request | None = None
        principal = None
        if gateway.authenticator is not None:
            request = Request(scope, receive)
            try:
                principal = await gateway.authenticator.authenticate(request)
            except Exception as exc:
                error = refuse(exc, _JSONRPC, headers=headers)
                response = jsonrpc_error_response(error, status=error.http_status)
                for challenge in challenges_of(error):
                    response.headers.append("WWW-Authenticate", challenge)
                await self._respond(response, scope, receive, send)
                return
        content_type = _first(scope, headers, "content-type")
        if not is_json_media_type(content_type):
            error = refuse(unsupported_media(content_type, JSON), _JSONRPC, headers=headers)
            response = jsonrpc_error_response(error, status=415)
            await self._respond(response, scope, receive, send)
            return
        try:
            if request is not None:
                body = await read_body(request, gateway.max_body_bytes)
            else:
                declared = _first(scope, headers, "content-length")
                maybe = await _receive_body(receive, gateway.max_body_bytes, declared)
                if maybe is None:
                    return  # the client went away
                body = maybe
        except BodyTooLargeError as exc:
            error = refuse(too_large(exc.limit), _JSONRPC, headers=headers)
            response = jsonrpc_error_response(error, status=413)
            await self._respond(response, scope, receive, send)
            return
        except ClientDisconnect:
            return  # nobody to answer
        if VERSION_PARAM not in headers and scope.get("query_string"):
            for key, value in QueryParams(scope["query_string"]).multi_items():
                if key.lower() == VERSION_PARAM:
                    headers[VERSION_PARAM] = value
                    break
        token = Gateway.bind(principal) if gateway.authenticator is not None else None
        try:
            reply = await gateway.target.handle(body, headers)
        except Exception:
            log.exception("JSON-RPC handling failed")
            response = jsonrpc_error_response(InternalError(), status=500)
            await self._respond(response, scope, receive, send)
            return
        finally:
            if token is not None:
                Gateway.unbind(token)
        if isinstance(reply, StreamingReply):
            stream = SSEResponse(
                _frames(reply.events),
                headers=reply.headers,
                on_close=reply.aclose,
                registry=gateway.streams,
                keepalive=gateway.sse_keepalive,
            )
            await self._respond(stream, scope, receive, send)
            return
        # What Response(body, media_type=JSON, headers=reply.headers) would send.
        raw = _raw_headers(reply.headers)
        if reply.body is None:
            status, body_out = 204, b""
        else:
            status, body_out = 200, reply.body
            if not reply.headers or not any(k == b"content-length" for k, _ in raw):
                raw.append((b"content-length", str(len(body_out)).encode("latin-1")))
            if not reply.headers or not any(k == b"content-type" for k, _ in raw):
                raw.append((b"content-type", b"application/json"))
        if self.vary_origin:
            _add_vary_origin(raw)
        await send({"type": "http.response.start", "status": status, "headers": raw})
        await send({"type": "http.response.body", "body": body_out})

    async def _respond(
        self, response: Response, scope: Scope, receive: Receive, send: Send
    ) -> None:
        if self.vary_origin:
            _add_vary_origin(response.raw_headers)
        await response(scope, receive, send)


def _first(scope: Scope, headers: Mapping[str, str], name: str) -> str | None:
    """The first value of header ``name`` (what ``request.headers.get`` gives)."""
    value = headers.get(name)
    if value is None or ", " not in value:
        return value
    wanted = name.encode("latin-1")
    for raw_name, raw_value in scope["headers"]:
        if raw_name.lower() == wanted:
            first: str = raw_value.decode("latin-1")
            return first
    return value  # pragma: no cover (the name came from these headers)


async def _receive_body(receive: Receive, limit: int, declared: str | None) -> bytes | None:
    """The request body (``None``: the client disconnected), as :func:`read_body` reads it."""
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLargeError(limit)
    message = await receive()
    if message["type"] == "http.request" and not message.get("more_body", False):
        body: bytes = message.get("body", b"")
        if len(body) > limit:
            raise BodyTooLargeError(limit)
        return body
    chunks: list[bytes] = []
    size = 0
    while True:
        if message["type"] == "http.disconnect":
            return None
        if message["type"] == "http.request":
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise BodyTooLargeError(limit)
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)
        message = await receive()


def _raw_headers(headers: Mapping[str, str]) -> list[tuple[bytes, bytes]]:
    if not headers:
        return []
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]


def _add_vary_origin(raw: list[tuple[bytes, bytes]]) -> None:
    """``Vary: Origin``, merged into an existing ``Vary`` (as the CORS middleware does)."""
    existing = [v for k, v in raw if k == b"vary"]
    if existing:
        raw[:] = [(k, v) for k, v in raw if k != b"vary"]
    raw.append((b"vary", b", ".join([*existing, b"Origin"])))


async def _frames(events: AsyncIterator[ServerSentEvent]) -> AsyncIterator[bytes]:
    async for event in events:
        yield sse_frame(event.data, id=event.id, event=event.event)


def _card_endpoint(gateway: Gateway) -> Callable[[Request], Awaitable[Response]]:
    async def card(request: Request) -> Response:
        current = gateway.server.card
        if current is None:
            error = MethodNotFoundError("this server has no agent card")
            refuse(error, "agent card request", headers=request.headers)
            return status_error_response(error, media_type=JSON)
        version = service_headers(request).get("a2a-version")
        return gateway.cards.response(current, version, request.headers.get("if-none-match"))

    return card
