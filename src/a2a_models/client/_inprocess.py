"""A client wired straight to a server object: no sockets, same bytes.

Used by tests and by applications that embed an agent. Every request still
goes through the full JSON-RPC encode/decode path of both sides.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from ..server import A2AServer, Reply
from ._base import A2AClient, StreamChunk

__all__ = ["InProcessClient"]


class InProcessClient(A2AClient):
    """An :class:`A2AClient` whose transport is a direct call to ``server.handle``."""

    def __init__(self, server: A2AServer, **options: Any) -> None:
        super().__init__(**options)
        self.server = server
        #: Response headers of the most recent call (e.g. activated extensions).
        self.last_headers: Mapping[str, str] = {}

    async def send_bytes(self, body: bytes, headers: Mapping[str, str]) -> bytes:
        reply = await self.server.handle(body, headers)
        self.last_headers = reply.headers
        if not isinstance(reply, Reply):
            await reply.aclose()
            raise TypeError("the server answered a non-streaming call with a stream")
        return reply.body or b""

    async def stream_bytes(
        self, body: bytes, headers: Mapping[str, str]
    ) -> AsyncIterator[StreamChunk]:
        reply = await self.server.handle(body, headers)
        self.last_headers = reply.headers
        if isinstance(reply, Reply):
            # An error answered before the stream started.
            if reply.body:
                yield StreamChunk(reply.body)
            return
        try:
            async for event in reply.events:
                yield StreamChunk(event.data, event.id)
        finally:
            await reply.aclose()
