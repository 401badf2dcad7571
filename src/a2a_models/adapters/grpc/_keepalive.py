"""HTTP/2 keep-alive pings of the gRPC binding (client and server channel options).

gRPC streams carry nothing while an agent is quiet (SSE's keep-alive comments
have no protobuf form), and gRPC sends no pings by default. Without them a
long-silent stream cannot tell a dead peer from a quiet one, and proxies or
NATs with an idle limit cut it. So both sides ping:

* the server every :data:`SERVER_KEEPALIVE_TIME` seconds: keeps the connection
  warm through idle limits and finds clients that vanished (their stream
  handlers and subscriptions are released);
* the client every :data:`CLIENT_KEEPALIVE_TIME` seconds: finds a server that
  vanished (SIGSTOP, a dropped network) and resumes its streams.

A peer that does not answer a ping within the keep-alive timeout is dropped.
Servers refuse pings that come more often than they allow (gRPC's default: one
per 5 minutes without data; the third early one gets a ``too_many_pings``
GOAWAY, which lets the calls in flight finish and doubles the client's ping
interval). This package's server allows one every
:data:`MIN_CLIENT_PING_INTERVAL` seconds, below its clients' interval.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CLIENT_KEEPALIVE_TIME",
    "KEEPALIVE_TIMEOUT",
    "MIN_CLIENT_PING_INTERVAL",
    "SERVER_KEEPALIVE_TIME",
    "client_options",
    "server_options",
]

#: Seconds of silence after which the client pings the server.
CLIENT_KEEPALIVE_TIME = 60.0
#: Seconds of silence after which the server pings a client.
SERVER_KEEPALIVE_TIME = 30.0
#: Seconds a ping may go unanswered before the connection is taken for dead.
KEEPALIVE_TIMEOUT = 20.0
#: The shortest interval between a client's pings the server accepts.
MIN_CLIENT_PING_INTERVAL = 10.0


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def _check(name: str, seconds: float) -> None:
    if not seconds > 0:
        raise ValueError(f"{name} must be a positive number of seconds, not {seconds!r}")


def client_options(time: float | None, timeout: float) -> list[tuple[str, Any]]:
    """Channel options that ping every ``time`` s of silence (``None``: never)."""
    if time is None:
        return []
    _check("keepalive_time", time)
    _check("keepalive_timeout", timeout)
    return [
        *_pinging(time, timeout),
        # gRPC stops after 2 pings without data by default: a quiet stream is
        # exactly when pings are needed.
        ("grpc.http2.max_pings_without_data", 0),
    ]


def _pinging(time: float, timeout: float) -> list[tuple[str, Any]]:
    return [
        ("grpc.keepalive_time_ms", _ms(time)),
        ("grpc.keepalive_timeout_ms", _ms(timeout)),
        # gRPC core waits for a ping's answer this long (default 60 s), whatever
        # keepalive_timeout says: without it a frozen peer is found a minute late.
        ("grpc.http2.ping_timeout_ms", _ms(timeout)),
    ]


def server_options(
    time: float | None, timeout: float, min_client_interval: float
) -> list[tuple[str, Any]]:
    """Server options: ping every ``time`` s (``None``: never); accept client pings
    ``min_client_interval`` s apart."""
    _check("min_client_ping_interval", min_client_interval)
    options: list[tuple[str, Any]] = [
        ("grpc.http2.min_ping_interval_without_data_ms", _ms(min_client_interval)),
    ]
    if time is not None:
        _check("keepalive_time", time)
        _check("keepalive_timeout", timeout)
        options += [*_pinging(time, timeout), ("grpc.http2.max_pings_without_data", 0)]
    return options
