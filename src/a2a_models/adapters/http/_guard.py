"""A guard in front of an endpoint a browser could be tricked into calling (the MCP endpoint).

The MCP specification requires servers to validate ``Origin`` (DNS
rebinding: a web page whose domain resolves to 127.0.0.1 can otherwise
drive a local server from the victim's browser). :class:`MCPGuard` checks,
for every HTTP request:

1. ``Host``: one of ``allowed_hosts`` when given; otherwise, when the server
   is bound to a loopback address, a loopback name (``localhost``,
   ``127.0.0.1``, ``[::1]``, any port). Refused with 421.
2. ``Origin`` (when sent): one of ``allowed_origins`` when given; otherwise a
   loopback origin when bound to loopback, or the request's own ``Host``.
   ``Origin: null`` is refused. Refused with 403.
3. The ``authenticator`` (the A2A endpoints' one, when the guard is made by
   :meth:`MCPServer.mount`): 401/403 as on the A2A endpoints. The caller's
   :class:`Principal` is put in ``scope["a2a.principal"]``.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

import attrs
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Receive, Scope, Send

from ._auth import AuthenticationError, Authenticator, PermissionDeniedError

__all__ = ["MCPGuard"]

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "ip6-localhost"})


def _is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _split_host(value: str) -> tuple[str, str | None]:
    """``("name", "port")`` of a Host header value (IPv6 literals keep no brackets)."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return value, None
        rest = value[end + 1 :]
        return value[1:end], rest[1:] if rest.startswith(":") else None
    name, sep, port = value.rpartition(":")
    if sep and port.isdigit():
        return name, port
    return value, None


def _norm_origin(origin: str) -> str:
    return origin.strip().rstrip("/").lower()


@attrs.frozen(slots=True, kw_only=True)
class MCPGuard:
    """``Host``/``Origin`` validation and authentication for an endpoint (see the module docs)."""

    allowed_hosts: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    allowed_origins: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    authenticator: Authenticator | None = None

    def wrap(self, app: ASGIApp) -> ASGIApp:
        """``app`` behind this guard."""
        return _Guarded(app, self)

    def host_problem(self, scope: Scope, host: str | None) -> str | None:
        """Why the ``Host`` header is refused (``None``: accepted)."""
        if not host:
            return "the request has no Host header"
        name, port = _split_host(host)
        if self.allowed_hosts:
            allowed = {h.lower() for h in self.allowed_hosts}
            if name in allowed or (port and f"{name}:{port}" in allowed):
                return None
            return f"Host {host!r} is not an allowed host of this server"
        if _bound_to_loopback(scope) and not _is_loopback(name):
            return f"Host {host!r} is not a loopback name (this server listens on loopback only)"
        return None

    def origin_problem(self, scope: Scope, origin: str | None, host: str | None) -> str | None:
        """Why the ``Origin`` header is refused (``None``: accepted or absent)."""
        if origin is None:
            return None
        if self.allowed_origins:
            allowed = {_norm_origin(o) for o in self.allowed_origins}
            if "*" in allowed or _norm_origin(origin) in allowed:
                return None
            return f"Origin {origin!r} is not allowed"
        parts = urlsplit(origin.strip())
        if origin.strip() == "null" or parts.scheme not in ("http", "https") or not parts.hostname:
            return f"Origin {origin!r} is not allowed"
        if _bound_to_loopback(scope):
            if _is_loopback(parts.hostname):
                return None
            return f"Origin {origin!r} is not a loopback origin"
        if host and parts.netloc.lower() == host.strip().lower():
            return None  # same origin
        return f"Origin {origin!r} is not this server's origin (allow it with allowed_origins)"


def _bound_to_loopback(scope: Scope) -> bool:
    server = scope.get("server")
    return server is not None and _is_loopback(str(server[0]))


async def _refuse(
    send: Send, status: int, message: str, headers: Iterable[tuple[str, str]] = ()
) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": message}}
    ).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


class _Guarded:
    def __init__(self, app: ASGIApp, guard: MCPGuard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: dict[str, Any] = {}
        for key, value in scope.get("headers", ()):
            headers.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
        host, origin = headers.get("host"), headers.get("origin")
        problem = self.guard.host_problem(scope, host)
        if problem is not None:
            await _refuse(send, 421, f"Misdirected request: {problem}")
            return
        problem = self.guard.origin_problem(scope, origin, host)
        if problem is not None:
            await _refuse(send, 403, f"Forbidden: {problem}")
            return
        if self.guard.authenticator is not None:
            try:
                principal = await self.guard.authenticator.authenticate(HTTPConnection(scope))
            except (AuthenticationError, PermissionDeniedError) as exc:
                status = exc.http_status or 401
                await _refuse(
                    send,
                    status,
                    exc.message,
                    [("www-authenticate", c) for c in exc.challenges],
                )
                return
            scope = {**scope, "a2a.principal": principal}
        await self.app(scope, receive, send)
