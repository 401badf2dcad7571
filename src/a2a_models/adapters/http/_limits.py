"""Slow and greedy clients: read timeouts and a connection limit for uvicorn.

uvicorn closes idle keep-alive connections (``timeout_keep_alive``) but sets
no deadline on a request being read: a client that sends half a header and
waits holds a connection (and a file descriptor) forever. :func:`protocol_class`
returns uvicorn's HTTP protocol class with three more rules:

* ``header_timeout``: a request's headers must arrive within this many
  seconds of the connection opening (or of the previous response ending).
  A client that sent part of a request gets ``408 Request Timeout``; one that
  sent nothing is just closed.
* ``body_timeout``: while a request body is being read, a pause longer than
  this ends the request with 408 (the app sees a disconnect).
* ``max_connections``: a connection beyond this many open ones is answered
  ``503`` at once and closed, before it costs anything else.
* at shutdown, a connection whose client stopped reading (bytes wait to be
  sent and none left for :data:`STALLED_AT_SHUTDOWN` seconds) is dropped:
  the end of its response could never go out, and uvicorn would wait its
  whole graceful timeout for it, then cancel the response with a traceback.

The protocol's own parser (h11, httptools) is untouched; the rules only
watch ``data_received`` and the request cycle uvicorn creates.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any, Final

import attrs

__all__ = ["ConnectionLimits", "protocol_class"]

_TIMEOUT_408: Final = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: 37\r\n\r\nThe request was not sent in time.\r\n\r\n"
)
_BUSY_503: Final = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\nretry-after: 1\r\ncontent-length: 30\r\n\r\nToo many connections; retry.\r\n"
)


#: Seconds without any byte taken by a client, at shutdown, before its connection is dropped.
STALLED_AT_SHUTDOWN: Final = 1.0


def _positive(_: object, attribute: attrs.Attribute[Any], value: float) -> None:
    if not 0 < value < math.inf:  # NaN too
        raise ValueError(f"{attribute.name} must be a positive number, not {value!r}")


@attrs.frozen(slots=True, kw_only=True)
class ConnectionLimits:
    """How long a client may take and how many may be connected (defaults documented in
    ``docs/security.md``)."""

    header_timeout: float = attrs.field(default=10.0, validator=_positive)
    body_timeout: float = attrs.field(default=30.0, validator=_positive)
    keep_alive_timeout: float = attrs.field(default=5.0, validator=_positive)
    max_connections: int = attrs.field(default=1000, validator=_positive)


def protocol_class(limits: ConnectionLimits, base: type[asyncio.Protocol] | None = None) -> type:
    """uvicorn's HTTP protocol (``base``, default its ``auto`` choice) enforcing ``limits``."""
    if base is None:
        from uvicorn.protocols.http.auto import AutoHTTPProtocol

        base = AutoHTTPProtocol
    return type(f"Limited{base.__name__}", (_Guard, base), {"_limits": limits})


def _client_certificate(transport: asyncio.Transport) -> dict[str, Any] | None:
    """The verified client certificate as the ASGI TLS extension (``None``: no TLS)."""
    ssl_object = transport.get_extra_info("ssl_object")
    if ssl_object is None:
        return None
    der = ssl_object.getpeercert(binary_form=True)
    info: dict[str, Any] = {
        "server_cert": None,
        "client_cert_chain": [],
        "client_cert_name": None,
        "client_cert_error": None,
        "tls_version": None,
        "cipher_suite": None,
    }
    if der:
        import ssl

        info["client_cert_chain"] = [ssl.DER_cert_to_PEM_cert(der)]
        info["client_cert_name"] = _rfc4514(ssl_object.getpeercert() or {})
    return info


def _rfc4514(cert: dict[str, Any]) -> str | None:
    """The subject of a ``getpeercert()`` dict as an RFC 4514 string (most specific first)."""
    names = {
        "commonName": "CN",
        "organizationName": "O",
        "organizationalUnitName": "OU",
        "countryName": "C",
        "localityName": "L",
        "stateOrProvinceName": "ST",
        "domainComponent": "DC",
        "userId": "UID",
        "emailAddress": "emailAddress",
    }
    parts: list[str] = []
    for rdn in reversed(cert.get("subject", ())):
        pieces = []
        for key, value in rdn:
            escaped = "".join("\\" + c if c in ',+"\\<>;=' else c for c in value)
            pieces.append(f"{names.get(key, key)}={escaped}")
        parts.append("+".join(pieces))
    return ",".join(parts) or None


class _Guard:
    """Mixed in before uvicorn's protocol class (see :func:`protocol_class`).

    Uses these attributes of uvicorn's h11 and httptools protocols:
    ``connections``, ``transport``, ``loop`` and ``cycle`` (its ``more_body``,
    ``response_started``, ``response_complete``, ``disconnected``,
    ``message_event``).
    """

    _limits: ConnectionLimits
    connections: set[Any]
    transport: asyncio.Transport
    cycle: Any
    loop: asyncio.AbstractEventLoop
    _a2a_timer: asyncio.TimerHandle | None = None
    _a2a_cycle: Any = None
    _a2a_seen: bool = False
    _a2a_tls: dict[str, Any] | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        if len(self.connections) > self._limits.max_connections:
            self.connections.discard(self)
            transport.write(_BUSY_503)
            transport.close()
            return
        self._a2a_tls = _client_certificate(transport)
        self._a2a_between_requests()

    def _a2a_arm(self, delay: float, callback: Any) -> None:
        self._a2a_stop()
        self._a2a_timer = self.loop.call_later(delay, callback)

    def _a2a_stop(self) -> None:
        if self._a2a_timer is not None:
            self._a2a_timer.cancel()
            self._a2a_timer = None

    def _a2a_between_requests(self) -> None:
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:  # a pipelined request began
            self._a2a_request_began(cycle)
            return
        self._a2a_cycle = cycle
        self._a2a_seen = False
        self._a2a_arm(self._limits.header_timeout, self._a2a_header_expired)

    def _a2a_request_began(self, cycle: Any) -> None:
        self._a2a_cycle = cycle
        if self._a2a_tls is not None:  # the ASGI TLS extension, for MutualTLSAuthenticator
            cycle.scope.setdefault("extensions", {})["tls"] = self._a2a_tls
        if cycle.more_body:
            self._a2a_arm(self._limits.body_timeout, self._a2a_body_expired)
        else:
            self._a2a_stop()

    def _a2a_header_expired(self) -> None:
        self._a2a_timer = None
        if self.transport.is_closing() or self.cycle is not self._a2a_cycle:
            return
        if self._a2a_seen:
            self.transport.write(_TIMEOUT_408)
        self.transport.close()

    def _a2a_body_expired(self) -> None:
        self._a2a_timer = None
        cycle = self.cycle
        if self.transport.is_closing() or cycle is None or not cycle.more_body:
            return
        started = cycle.response_started
        cycle.disconnected = True
        cycle.message_event.set()
        if not started:
            self.transport.write(_TIMEOUT_408)
        self.transport.close()

    def data_received(self, data: bytes) -> None:
        self._a2a_seen = True
        super().data_received(data)  # type: ignore[misc]
        cycle = self.cycle
        if cycle is not self._a2a_cycle:
            self._a2a_request_began(cycle)  # the headers are complete
        elif cycle is not None and cycle.more_body and not cycle.response_complete:
            self._a2a_arm(self._limits.body_timeout, self._a2a_body_expired)  # body progress

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        if not self.transport.is_closing():
            self._a2a_between_requests()

    def shutdown(self) -> None:
        super().shutdown()  # type: ignore[misc]
        self._a2a_watch_unsent(-1)

    def _a2a_watch_unsent(self, before: int) -> None:
        """Drop the connection if its unsent bytes did not shrink since the last look."""
        self._a2a_timer = None
        unsent = self.transport.get_write_buffer_size()
        if unsent and unsent == before:
            self.transport.abort()  # the server sees a disconnect
        elif unsent:
            self._a2a_arm(STALLED_AT_SHUTDOWN, lambda: self._a2a_watch_unsent(unsent))

    def connection_lost(self, exc: Exception | None) -> None:
        self._a2a_stop()
        super().connection_lost(exc)  # type: ignore[misc]
