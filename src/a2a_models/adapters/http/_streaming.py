"""Server-Sent Events: an ASGI response that ends cleanly (framing is in ``protocol``).

:class:`SSEResponse` sends each frame as soon as it is produced and stops
(closing what produces the frames) when the client disconnects, when the
app shuts down (:class:`StreamRegistry`), or when the frames run out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ..._closing import aclose_if_closable

__all__ = ["SSEResponse", "StreamRegistry"]

log = logging.getLogger("a2a_models.adapters.http")


class StreamRegistry:
    """The app's open SSE streams, and the switch that ends them all at shutdown."""

    def __init__(self) -> None:
        self._closing = asyncio.Event()
        self.open_streams = 0

    @property
    def closing(self) -> asyncio.Event:
        """Set when the app shuts down: every stream ends."""
        return self._closing

    def close_all(self) -> None:
        """End every open stream (and refuse to hold new ones open)."""
        self._closing.set()

    def reopen(self) -> None:
        """Accept streams again (the app is starting, maybe after a stop)."""
        if self._closing.is_set():
            self._closing = asyncio.Event()


class SSEResponse(Response):
    """A ``text/event-stream`` response fed by an async iterator of ready frames.

    ``on_close`` runs exactly once when the response ends, whatever the
    reason, after the frame iterator has stopped. ``keepalive`` seconds of
    silence send an SSE comment so proxies keep the connection open.
    """

    media_type = "text/event-stream"

    def __init__(
        self,
        frames: AsyncIterator[bytes],
        *,
        headers: Mapping[str, str] | None = None,
        on_close: Callable[[], Awaitable[None]] | None = None,
        registry: StreamRegistry | None = None,
        keepalive: float | None = None,
    ) -> None:
        self.frames = frames
        self.on_close = on_close
        self.registry = registry
        self.keepalive = keepalive
        self.status_code = 200
        self.background = None
        merged = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        merged.update(headers or {})
        self.init_headers(merged)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        lock = asyncio.Lock()
        last_sent = asyncio.get_running_loop().time()

        async def emit(chunk: bytes) -> None:
            nonlocal last_sent
            async with lock:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                last_sent = asyncio.get_running_loop().time()

        async def pump() -> None:
            async for frame in self.frames:
                await emit(frame)

        async def disconnected() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        async def keep_alive(period: float) -> None:
            loop = asyncio.get_running_loop()
            while True:
                await asyncio.sleep(max(0.0, last_sent + period - loop.time()))
                if loop.time() - last_sent >= period:
                    await emit(b": keep-alive\n\n")

        tasks: dict[str, asyncio.Task[None]] = {}
        client_gone = False
        if self.registry is not None:
            self.registry.open_streams += 1
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": self.status_code,
                    "headers": self.raw_headers,
                }
            )
            tasks["pump"] = asyncio.create_task(pump())
            tasks["disconnect"] = asyncio.create_task(disconnected())
            if self.registry is not None:
                closing = self.registry.closing
                tasks["shutdown"] = asyncio.create_task(_wait_event(closing))
            if self.keepalive:
                tasks["keepalive"] = asyncio.create_task(keep_alive(self.keepalive))
            done, _ = await asyncio.wait(tasks.values(), return_when=asyncio.FIRST_COMPLETED)
            client_gone = tasks["disconnect"] in done
            pump_task = tasks["pump"]
            if pump_task in done and not pump_task.cancelled():
                exc = pump_task.exception()
                if isinstance(exc, OSError):
                    client_gone = True
                elif exc is not None:
                    log.error("SSE stream failed", exc_info=exc)
        except OSError:
            client_gone = True
        finally:
            for task in tasks.values():
                task.cancel()
            # Their own cancellations are results here; a cancellation of
            # this response itself still propagates.
            await asyncio.gather(*tasks.values(), return_exceptions=True)
            if self.registry is not None:
                self.registry.open_streams -= 1
            await self._close()
        if not client_gone:
            with contextlib.suppress(OSError):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _close(self) -> None:
        try:
            await aclose_if_closable(self.frames)
        finally:
            if self.on_close is not None:
                await self.on_close()


async def _wait_event(event: asyncio.Event) -> None:
    await event.wait()
