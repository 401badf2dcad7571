"""The HTTP+JSON (REST) endpoints: Starlette moves the bytes, the server answers.

The routes, their mapping and the answers are the I/O-free binding of
:mod:`a2a_models.protocol` (``REST_ROUTES``) driven by
:meth:`A2AServer.handle_rest <a2a_models.server.A2AServer.handle_rest>`.
This module registers one Starlette route per path template of that table
(so Starlette answers unknown paths and wrong methods as before), and for
each request authenticates the caller (when the app has an authenticator),
checks the content type and size of the body, and hands method, path,
query, headers and body to the server.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from ...protocol import REST_ROUTES, V0_3, RestRoute, rest_media_type, sse_frame
from ...server import ServerSentEvent, StreamingReply, refuse
from ._common import (
    BodyTooLargeError,
    is_json_media_type,
    read_body,
    status_error_response,
    too_large,
    unsupported_media,
)
from ._gateway import Gateway, challenges_of
from ._streaming import SSEResponse

__all__ = ["RestBinding"]

log = logging.getLogger("a2a_models.adapters.http")


#: What the refusal lines (:func:`~a2a_models.server.refuse`) of these routes call a request.
_REST = "HTTP+JSON request"


class RestBinding:
    """Builds the REST routes of one app around its :class:`Gateway`."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway

    def routes(self, prefix: str, *, v03: bool) -> list[BaseRoute]:
        """One route per path template of ``REST_ROUTES``, in its order (0.3's only if ``v03``)."""
        templates: dict[str, list[RestRoute]] = {}
        for route in REST_ROUTES:
            if route.version == V0_3 and not v03:
                continue
            templates.setdefault(route.path, []).append(route)
        out: list[BaseRoute] = []
        for path, routes in templates.items():
            methods = sorted({m for r in routes for m in r.methods})
            endpoint = self._endpoint(prefix, routes[0].version)
            out.append(Route(prefix + path, endpoint, methods=methods))
        return out

    def _endpoint(self, prefix: str, version: str) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            return await self.call(request, prefix, version)

        endpoint.__name__ = "a2a_rest"
        return endpoint

    async def call(self, request: Request, prefix: str, version: str) -> Response:
        """Answer one request below ``prefix`` (``version``: of its route, for early errors)."""
        gateway = self.gateway
        media = rest_media_type(version)
        principal = None
        try:
            if gateway.authenticator is not None:
                principal = await gateway.authenticator.authenticate(request)
            body: bytes | None = None
            if request.method == "POST":
                content_type = request.headers.get("content-type")
                if not is_json_media_type(content_type):
                    error = refuse(
                        unsupported_media(content_type, media), _REST, headers=request.headers
                    )
                    return status_error_response(error, status=415, media_type=media)
                body = await read_body(request, gateway.max_body_bytes)
        except BodyTooLargeError as exc:
            error = refuse(too_large(exc.limit), _REST, headers=request.headers)
            return status_error_response(error, status=413, media_type=media)
        except ClientDisconnect:
            # Gone before its body came: nobody to answer, and no failure of ours (it was
            # logged as an unexpected error, with a traceback).
            return Response(status_code=400)
        except Exception as exc:  # the authenticator's refusal (or its failure)
            error = refuse(exc, _REST, headers=request.headers)
            response = status_error_response(error, media_type=media)
            for challenge in challenges_of(error):
                response.headers.append("WWW-Authenticate", challenge)
            return response
        headers: dict[str, str] = {}
        for raw_name, raw_value in request.scope["headers"]:
            name = raw_name.decode("latin-1").lower()
            value = raw_value.decode("latin-1")
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        path = _relative(request, prefix)
        query = request.query_params.multi_items()
        token = Gateway.bind(principal) if gateway.authenticator is not None else None
        try:
            reply = await gateway.target.handle_rest(request.method, path, query, headers, body)
        finally:
            if token is not None:
                Gateway.unbind(token)
        if isinstance(reply, StreamingReply):
            return SSEResponse(
                _frames(reply.events),
                headers=reply.headers,
                on_close=reply.aclose,
                registry=gateway.streams,
                keepalive=gateway.sse_keepalive,
            )
        return Response(
            reply.body,
            status_code=reply.status,
            media_type=reply.media_type,
            headers=dict(reply.headers),
        )


def _relative(request: Request, prefix: str) -> str:
    # What Starlette's router matched (starlette.routing.get_route_path), minus the prefix.
    path: str = request.scope["path"]
    root_path: str = request.scope.get("root_path", "")
    if root_path and path.startswith(root_path) and path[len(root_path) :][:1] in ("", "/"):
        path = path[len(root_path) :]
    return path[len(prefix) :] if prefix and path.startswith(prefix) else path


async def _frames(events: AsyncIterator[ServerSentEvent]) -> AsyncIterator[bytes]:
    async for event in events:
        yield sse_frame(event.data, id=event.id, event=event.event)
