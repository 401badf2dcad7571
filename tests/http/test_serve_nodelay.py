"""HTTPServer / ``a2a-models serve``: no Nagle stall on keep-alive connections."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from a2a_models.adapters.http import HTTPServer


async def test_accepted_connections_have_tcp_nodelay() -> None:
    seen: list[int] = []
    holder: dict[str, HTTPServer] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        # The server's own view of the connection this request came on.
        server = holder["http"]._server
        assert server is not None
        for connection in server.server_state.connections:
            sock = connection.transport.get_extra_info("socket")
            seen.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        await send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]}
        )
        await send({"type": "http.response.body", "body": b"ok"})

    http = HTTPServer(app)
    holder["http"] = http
    async with http:
        reader, writer = await asyncio.open_connection("127.0.0.1", http.port)
        try:
            for _ in range(2):  # a keep-alive connection: two requests on it
                writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                head = await reader.readuntil(b"\r\n\r\n")
                assert head.startswith(b"HTTP/1.1 200"), head
                await reader.readexactly(2)
        finally:
            writer.close()
    assert len(seen) == 2
    assert all(seen), f"TCP_NODELAY not set on accepted connections: {seen}"
