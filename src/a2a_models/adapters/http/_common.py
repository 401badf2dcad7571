"""Plumbing shared by the JSON-RPC, HTTP+JSON and agent-card endpoints.

Everything here is about HTTP, not A2A: service parameters from headers (and
the ``A2A-Version`` query parameter), content types, bounded body reads, and
the two error body shapes (a JSON-RPC envelope and a ``google.rpc.Status``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.requests import HTTPConnection, Request
from starlette.responses import Response

from ... import codec
from ...errors import A2AError, InvalidRequestError, JSONRPCError, quote_input
from ...protocol import rest_error_body

__all__ = [
    "A2A_JSON",
    "JSON",
    "VERSION_PARAM",
    "BodyTooLargeError",
    "is_json_media_type",
    "json_response",
    "jsonrpc_error_response",
    "read_body",
    "service_headers",
    "status_error_response",
]

#: Media type of JSON-RPC bodies (spec §9.1).
JSON = "application/json"
#: Media type of 1.0 HTTP+JSON bodies (spec §11.1, a SHOULD since 1.0.1).
A2A_JSON = "application/a2a+json"

#: The ``A2A-Version`` service parameter, as a header (lowercased) or query parameter.
VERSION_PARAM = "a2a-version"
_VERSION_PARAM = VERSION_PARAM


class BodyTooLargeError(A2AError):
    """The request body exceeds the app's limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"the request body exceeds the limit of {limit} bytes")


def is_json_media_type(value: str | None) -> bool:
    """True for a missing content type, ``application/json`` or any ``+json`` type."""
    if value is None:
        return True
    media = value.split(";", 1)[0].strip().lower()
    if not media:
        return True
    return media == JSON or (media.startswith("application/") and media.endswith("+json"))


def service_headers(request: HTTPConnection) -> dict[str, str]:
    """The request headers, lowercased, repeated ones joined with ``", "``.

    ``A2A-Version`` may also come as a query parameter (spec §3.6); the
    header wins when both are present.
    """
    out: dict[str, str] = {}
    for raw_name, raw_value in request.scope["headers"]:
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        out[name] = f"{out[name]}, {value}" if name in out else value
    if _VERSION_PARAM not in out:
        for key, value in request.query_params.multi_items():
            if key.lower() == _VERSION_PARAM:
                out[_VERSION_PARAM] = value
                break
    return out


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, or :class:`BodyTooLargeError` as soon as it passes ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLargeError(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLargeError(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def json_response(
    value: Any,
    *,
    status: int = 200,
    media_type: str = JSON,
    headers: Mapping[str, str] | None = None,
) -> Response:
    """``value`` as compact JSON."""
    return Response(codec.dumps(value), status_code=status, media_type=media_type, headers=headers)


def status_error_response(
    error: JSONRPCError,
    *,
    status: int | None = None,
    media_type: str = A2A_JSON,
    headers: Mapping[str, str] | None = None,
) -> Response:
    """An HTTP+JSON error: the error's HTTP status and ``google.rpc.Status`` body (§11.6)."""
    body = rest_error_body(error, status)
    return json_response(
        body, status=status or error.http_status, media_type=media_type, headers=headers
    )


def jsonrpc_error_response(
    error: JSONRPCError,
    *,
    status: int,
    version: str = "1.0",
    headers: Mapping[str, str] | None = None,
) -> Response:
    """A JSON-RPC error envelope (``id`` null) sent with an HTTP error ``status``.

    Used for failures found before the body is read (authentication, size,
    content type); everything after that is the server base's business.
    """
    body = {"jsonrpc": "2.0", "id": None, "error": error.to_jsonrpc(version)}
    return json_response(body, status=status, headers=headers)


def too_large(limit: int) -> InvalidRequestError:
    """The error reported for an oversized body."""
    return InvalidRequestError(f"Request body too large: the limit is {limit} bytes")


def unsupported_media(value: str | None, accepted: str) -> InvalidRequestError:
    """The error reported for a body that is not JSON (``accepted``: the binding's media type)."""
    also = "" if accepted == "application/json" else " (application/json is accepted too)"
    return InvalidRequestError(
        f"Unsupported Content-Type {quote_input(value or '')}: send {accepted}{also}"
    )
