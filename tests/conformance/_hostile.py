"""Hostile and broken HTTP peers for the harness: raw asyncio servers, one behaviour each.

Each speaks just enough HTTP/1.1 (or not at all) to be a bad A2A agent: never answers,
answers garbage, trickles or never ends its agent card, serves a card of a given size,
sends non-UTF-8, redirects in a loop, or serves a good card whose JSON-RPC endpoint
streams badly (an endless stream, one endless SSE line, a connection cut mid-stream).
:func:`hostile` serves one on a free loopback port (in a thread) and yields its URL.
``python -m tests.conformance._hostile MODE [PORT] [SIZE]`` serves one until interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import sys
import threading
from collections.abc import Iterator
from typing import Any

MODES = (
    "silent",
    "garbage",
    "card-trickle",
    "card-endless",
    "card-huge",
    "card-non-utf8",
    "redirect-loop",
    "stream-endless",
    "stream-long",
    "stream-slow",
    "stream-endless-line",
    "stream-cut",
    "body-endless",
)


def card(url: str, description: str = "hostile") -> dict[str, Any]:
    """A 1.0 card with the conformance skill and streaming, JSON-RPC at ``url``."""
    return {
        "name": "hostile",
        "description": description,
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": True, "pushNotifications": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "a2a-conformance", "name": "c", "description": "c", "tags": ["c"]}],
    }


def _head(status: str, ctype: str, extra: str = "") -> bytes:
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nTransfer-Encoding: chunked\r\n"
        f"Connection: close\r\n{extra}\r\n"
    ).encode()


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def _whole(status: str, ctype: str, body: bytes, extra: str = "") -> bytes:
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
        f"Connection: close\r\n{extra}\r\n"
    ).encode() + body


class Hostile:
    """One misbehaving server; ``counts`` records requests per path."""

    def __init__(self, mode: str, size: int = 1 << 20) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        self.mode, self.size = mode, size
        self.url = ""
        self.requests = 0
        self.bytes_sent = 0

    async def _send(self, writer: asyncio.StreamWriter, data: bytes) -> None:
        writer.write(data)
        self.bytes_sent += len(data)
        await writer.drain()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            body = await reader.readexactly(length) if length else b""
            self.requests += 1
            await self.respond(method, path, body, writer)
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def respond(self, method: str, path: str, body: bytes, w: asyncio.StreamWriter) -> None:
        mode, is_card = self.mode, path.endswith("agent-card.json")
        if mode == "silent":
            await asyncio.sleep(3600)
        elif mode == "garbage":
            await self._send(w, b"\x00\xffthis is not HTTP\r\n\r\n" * 10)
        elif mode == "redirect-loop":
            await self._send(w, _whole("302 Found", "text/plain", b"", f"Location: {path}\r\n"))
        elif is_card and mode == "card-trickle":
            await self._send(w, _head("200 OK", "application/json"))
            while True:  # a byte every 0.3 s: every read succeeds, the body never ends
                await self._send(w, _chunk(b" "))
                await asyncio.sleep(0.3)
        elif is_card and mode == "card-endless":
            await self._send(w, _head("200 OK", "application/json") + _chunk(b'{"name": "'))
            block = _chunk(b"x" * 65536)
            while True:
                await self._send(w, block)
        elif is_card and mode == "card-huge":
            doc = json.dumps(card(self.url, "x" * self.size)).encode()
            await self._send(w, _whole("200 OK", "application/json", doc))
        elif is_card and mode == "card-non-utf8":
            doc = json.dumps(card(self.url, "@@")).encode().replace(b"@@", b"\xff\xfe\xc3(")
            await self._send(w, _whole("200 OK", "application/json", doc))
        elif is_card:
            doc = json.dumps(card(self.url)).encode()
            await self._send(w, _whole("200 OK", "application/json", doc))
        elif mode == "card-non-utf8":
            await self._send(w, _whole("200 OK", "application/json", b'{"x": "\xff\xfe"}'))
        elif mode == "body-endless":
            await self._send(w, _head("200 OK", "application/json") + _chunk(b'{"jsonrpc": "'))
            block = _chunk(b"y" * 65536)
            while True:
                await self._send(w, block)
        elif mode.startswith("stream-"):
            await self.stream(body, w)
        else:
            await self._send(w, _whole("404 Not Found", "text/plain", b"no"))

    async def stream(self, body: bytes, w: asyncio.StreamWriter) -> None:
        try:
            rid = json.loads(body).get("id")
        except ValueError:
            rid = None
        await self._send(w, _head("200 OK", "text/event-stream"))
        task = {
            "id": "t1",
            "contextId": "c1",
            "status": {"state": "TASK_STATE_WORKING", "timestamp": "2026-01-01T00:00:00Z"},
        }
        first = {"jsonrpc": "2.0", "id": rid, "result": {"task": task}}
        await self._send(w, _chunk(b"data: " + json.dumps(first).encode() + b"\n\n"))
        if self.mode == "stream-cut":
            w.transport.abort()  # no terminating chunk: the connection just ends
            return
        if self.mode == "stream-endless-line":
            await self._send(w, _chunk(b"data: "))
            block = _chunk(b"z" * 65536)
            while True:
                await self._send(w, block)
        update = {
            "jsonrpc": "2.0",
            "id": rid,
            "result": {
                "statusUpdate": {
                    "taskId": "t1",
                    "contextId": "c1",
                    "status": {"state": "TASK_STATE_WORKING", "timestamp": "2026-01-01T00:00:00Z"},
                }
            },
        }
        frame = b"data: " + json.dumps(update).encode() + b"\n\n"
        if self.mode == "stream-long":  # ``size`` working updates, then completed
            for _ in range(self.size // 64):
                await self._send(w, _chunk(frame * 64))
            if self.size % 64:
                await self._send(w, _chunk(frame * (self.size % 64)))
            done = json.dumps(update).replace("TASK_STATE_WORKING", "TASK_STATE_COMPLETED")
            await self._send(w, _chunk(b"data: " + done.encode() + b"\n\n") + b"0\r\n\r\n")
            return
        if self.mode == "stream-slow":  # a working update every 0.5 s, never an end
            while True:
                await self._send(w, _chunk(frame))
                await asyncio.sleep(0.5)
        block = _chunk(frame * 64)
        while True:
            await self._send(w, block)


@contextlib.contextmanager
def hostile(mode: str, size: int = 1 << 20, port: int = 0) -> Iterator[Hostile]:
    """Serve a :class:`Hostile` on 127.0.0.1 in a thread; stop it when the block ends."""
    server = Hostile(mode, size)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    server.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    loop = asyncio.new_event_loop()
    started = threading.Event()
    stop: list[asyncio.Future[None]] = []

    async def main() -> None:
        srv = await asyncio.start_server(server.handle, sock=sock)
        stop.append(loop.create_future())
        started.set()
        await stop[0]
        srv.close()
        for t in asyncio.all_tasks():  # handlers that would run forever
            if t is not asyncio.current_task():
                t.cancel()

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    started.wait(10)
    try:
        yield server
    finally:
        loop.call_soon_threadsafe(stop[0].set_result, None)
        thread.join(5)


if __name__ == "__main__":
    with hostile(
        sys.argv[1],
        int(sys.argv[3]) if len(sys.argv) > 3 else 1 << 20,
        int(sys.argv[2]) if len(sys.argv) > 2 else 0,
    ) as h:
        print(h.url, flush=True)
        threading.Event().wait()
