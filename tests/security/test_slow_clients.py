"""Slow and greedy clients against the real ``a2a-models serve`` process, with raw sockets."""

from __future__ import annotations

import socket
import time
from typing import Any

import httpx

LIMITS = ("--header-timeout", "1", "--body-timeout", "1", "--keep-alive-timeout", "1")


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    return sock


def _read_all(sock: socket.socket) -> tuple[bytes, float]:
    """Everything until the server closes, and how long that took."""
    start = time.monotonic()
    data = b""
    while chunk := sock.recv(4096):
        data += chunk
    return data, time.monotonic() - start


def test_half_sent_headers_get_408_and_close(serve: Any) -> None:
    server = serve(*LIMITS)
    with _connect(_port(server)) as sock:
        sock.sendall(b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        data, took = _read_all(sock)
    assert data.startswith(b"HTTP/1.1 408 "), data
    assert took < 5, took


def test_silent_connection_is_closed(serve: Any) -> None:
    server = serve(*LIMITS)
    with _connect(_port(server)) as sock:
        data, took = _read_all(sock)
    assert data == b"" and 0.5 < took < 5, (data, took)


def test_dripped_headers_hit_the_deadline(serve: Any) -> None:
    """Slowloris: one byte every 0.2 s never finishes the headers; the deadline is total."""
    server = serve(*LIMITS)
    request = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: " + b"a" * 200
    start = time.monotonic()
    with _connect(_port(server)) as sock:
        sock.settimeout(0.2)
        closed = b""
        for byte in request:
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                break
            try:
                closed = sock.recv(4096)
                if closed or closed == b"":
                    break
            except TimeoutError:
                continue
    took = time.monotonic() - start
    assert closed.startswith(b"HTTP/1.1 408"), closed
    assert took < 5, took


def test_half_sent_body_gets_408(serve: Any) -> None:
    server = serve(*LIMITS)
    with _connect(_port(server)) as sock:
        sock.sendall(
            b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b'Content-Length: 200\r\n\r\n{"jsonrpc": "2.0",'
        )
        data, took = _read_all(sock)
    assert data.startswith(b"HTTP/1.1 408 "), data
    assert took < 5, took


def test_idle_keep_alive_connection_is_closed(serve: Any) -> None:
    server = serve(*LIMITS)
    with _connect(_port(server)) as sock:
        sock.sendall(b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        data, took = _read_all(sock)
    assert data.startswith(b"HTTP/1.1 200 "), data[:100]
    assert b'"name"' in data and took < 5, took


def test_connections_over_the_limit_get_503(serve: Any) -> None:
    server = serve("--max-connections", "4", "--header-timeout", "30")
    held = [_connect(_port(server)) for _ in range(4)]
    try:
        time.sleep(0.3)  # the server has accepted them
        with _connect(_port(server)) as extra:
            data, took = _read_all(extra)
        assert data.startswith(b"HTTP/1.1 503 "), data
        assert took < 3
    finally:
        for sock in held:
            sock.close()
    time.sleep(0.3)
    ok = httpx.get(server.url + "/.well-known/agent-card.json", timeout=10)
    assert ok.status_code == 200  # room again once they are gone


def test_well_behaved_keep_alive_requests_pass(serve: Any) -> None:
    server = serve(*LIMITS)
    with httpx.Client(timeout=10) as client:
        for _ in range(3):
            assert client.get(server.url + "/.well-known/agent-card.json").status_code == 200
            time.sleep(0.5)  # under the keep-alive timeout: the connection is reused


def _port(server: Any) -> int:
    return int(server.port)
